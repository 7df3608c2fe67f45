"""Traced vs eager on the fork: the demos' forward passes at a tiny size (batch 1, 16
features: the interpreter dominates) and a large one (the kernels dominate), the per-call
cost of a cache hit for a 10-guard entry, and translation time per frame. Run by
benches/translate.sh twice, as a user runs a program: `rustpython translate.py DEMOS eager`
and `rustpython --plugin symtrace translate.py DEMOS traced`; the call measured is the same
plain `forward(layers, x)` in both. Prints `name key=value` lines."""
import sys
import time
import symtrace as st
from timing import per_call

sys.path.insert(0, sys.argv[1])
MODE = sys.argv[2]
import mlp
import attention


def first_call(fn, args):
    st.reset()
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def first(result):
    return (result if isinstance(result, st.Tensor) else result[0]).tolist()


def compare(name, fn, args, repeats=5):
    if MODE == "eager":
        print(f"{name} eager={per_call(fn, args, repeats=repeats):.9f}")
        return
    translation = first_call(fn, args)
    traced = per_call(fn, args, repeats=repeats)
    same = first(fn(*args)) == first(st.disable(fn)(*args))
    print(f"{name} traced={traced:.9f} translation={translation - traced:.6f} same={same}")


st.manual_seed(0)
compare("mlp_tiny", mlp.forward, (mlp.init([16, 16, 16, 16]), st.randn(1, 16)))
# At the large size a call takes milliseconds and uses both cores: more runs, so that the
# best of them is not at the mercy of one disturbed run.
compare("mlp_large", mlp.forward, (mlp.init([512, 1024, 1024, 10]), st.randn(256, 512)), repeats=9)
compare("attention_tiny", attention.attention, (attention.init(16), st.randn(1, 4, 16)))
compare("attention_large", attention.attention, (attention.init(128), st.randn(8, 128, 128)), repeats=9)


def ten_guards(x, a, b, c, d, e, f, g, h, i):
    return x * (a + b + c + d + e + f + g + h + i)


x = st.randn(1)
args = (x, 1, 2, 3, 4, 5, 6, 7, 8, 9)
if MODE == "eager":
    print(f"cache_hit eager={per_call(ten_guards, args):.9f}")
else:
    st.reset()
    # The graph ten_guards' translation installs among the module's globals (the frames of
    # this script translated before it installed theirs).
    before = {k for k in globals() if k.startswith("__symtrace_graph_")}
    explained = st.explain(ten_guards, *args)
    ten_guards(*args)
    graph = [v for k, v in globals().items() if k.startswith("__symtrace_graph_") and k not in before][-1]
    hit = per_call(ten_guards, args)
    graph_only = per_call(graph, (x,))
    print(f"cache_hit guards={len(explained.out_guards)} per_call={hit:.9f} graph_call={graph_only:.9f}")


def empty(layers, x):
    return x


# The interpreter's own floor under every tiny figure: a Python function that does nothing,
# called the way the forward passes are (the hand-written limit includes no such call).
if MODE == "eager":
    print(f"call_floor eager={per_call(empty, (None, x)):.9f}")
