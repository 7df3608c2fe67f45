"""Cache hits whose replacement would only call the graph and return its result: the hook
returns the result itself (`direct_hits`). Each case prints its name, whether the traced
results equal eager ones, and how many of its hits were direct."""
import sys
import traceback

import symtrace as st
import symtrace.nn as nn

st.manual_seed(0)


@st.disable(recursive=False)  # the counts are of fn's own hits: the checker runs as written
def hits_of(name, fn, *args, calls=3):
    before = st.stats()
    results = [fn(*args) for _ in range(calls)]
    after = st.stats()
    eager = st.disable(fn)(*args)
    same = all(r.tolist() == eager.tolist() for r in results)
    print(f"{name}: same={same} hits={after['cache_hits'] - before['cache_hits']} "
          f"direct={after['direct_hits'] - before['direct_hits']}")


def forward(layers, x):
    for w, b in layers:
        x = st.relu(x @ w + b)
    return x.softmax(dim=-1)


layers = [(st.randn(8, 8), st.randn(8)) for _ in range(3)]
hits_of("arguments", forward, layers, st.randn(2, 8))

model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
hits_of("module", model, st.randn(2, 8))

SCALE = st.randn(8)


def uses_a_global(x):
    return (x * SCALE + 1).sum(dim=0)


hits_of("global root", uses_a_global, st.randn(3, 8))

log = []


def with_an_effect(x):
    log.append(1)
    return x * 2 + 1


hits_of("side effect", with_an_effect, st.randn(4))
print("effects replayed:", len(log))


def times(x, n):
    return x * n + 1


x = st.tensor([1.0, 2.0, 3.0])
for n in [1, 2, 3, 4]:
    times(x, n)
before = st.stats()
try:
    times(x, 2**70)
except OverflowError:
    tb = traceback.extract_tb(sys.exc_info()[2])
    print("overflow raised in:", tb[-1].name, "line", tb[-1].lineno)
after = st.stats()
print("overflow: hits", after["cache_hits"] - before["cache_hits"],
      "direct", after["direct_hits"] - before["direct_hits"])


# An int too large for the graph's int64 input fails a guard: the frame runs its original
# code, which raises from the instruction that raises without the plugin: the same traceback
# entry, carets included.
def last_entry(call):
    try:
        call()
    except OverflowError:
        return traceback.format_exc().splitlines()[-3:]


traced_entry = last_entry(lambda: times(x, 2**70))
eager_entry = last_entry(lambda: st.disable(times)(x, 2**70))
print("traceback entry as eager's:", traced_entry == eager_entry, traced_entry[1].strip())


# The inputs a direct call passes are the values its guards have just read: a tensor put
# where another one was (same shape, so the guards still hold) is the one computed with.
@st.disable  # the harness itself is not traced (it would inline `fn`): only `fn` is
def replaced(name, fn, args, replace):
    eager = st.disable(fn)
    fn = st.compile(fn)
    fn(*args)
    fn(*args)
    before = st.stats()
    replace()
    result = fn(*args)
    after = st.stats()
    same = result.tolist() == eager(*args).tolist()
    print(f"{name}: same={same} direct={after['direct_hits'] - before['direct_hits']}")


def set_layer():
    layers[1] = (st.randn(8, 8), st.randn(8))


replaced("list item replaced", forward, (layers, st.randn(2, 8)), set_layer)


def set_global():
    global SCALE
    SCALE = st.randn(8)


replaced("global rebound", uses_a_global, (st.randn(3, 8),), set_global)

params = {"w": st.randn(4, 4), "b": st.randn(4)}


def from_a_dict(p, x):
    return x @ p["w"] + p["b"]


def set_key():
    params["w"] = st.randn(4, 4)


replaced("dict value replaced", from_a_dict, (params, st.randn(4)), set_key)


def set_weight():
    model[0].weight = nn.Parameter(st.randn(16, 8))


replaced("parameter replaced", model, (st.randn(2, 8),), set_weight)
