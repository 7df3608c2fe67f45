"""In-place updates of the caller's tensors: a KV cache written at a position that moves, a
running mean, a step counter, arguments updated with `+=` and `t[i] = v`, one tensor under
two names. Each case runs eager on one set of tensors and traced on another, made alike:
every call's result and every tensor afterwards must be equal, the tensor the caller holds
stays that object, and explain() counts the graphs and breaks on a third set. Prints one line
per case; `FAIL` marks a failed one."""
import symtrace as st
import symtrace.nn as nn
from case_report import count_problems, report, same

failures = []


class Cache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k", st.zeros(2, 12, 3))
        self.register_buffer("steps", st.zeros(()))

    def forward(self, x, pos):
        T = x.shape[1]
        self.k[:, pos:pos + T] = x
        self.steps += 1.0
        return self.k[:, :pos + T].sum(1) * self.steps


class Running(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", st.zeros(3))

    def forward(self, x):
        if self.training:
            self.mean *= 0.9
            self.mean += 0.1 * x.mean(0)
        return x - self.mean


class Adds(nn.Module):
    def __init__(self, buf):
        super().__init__()
        self.buf = buf

    def forward(self, x):
        self.buf += x
        return self.buf * 2.0


class TwoAdds(nn.Module):
    def __init__(self, shared):
        super().__init__()
        first = st.zeros(2)
        self.a = Adds(first)
        self.b = Adds(first if shared else st.zeros(2))

    def forward(self, x):
        return self.a(x) + self.b(x)


def update_and_return(a, v):
    a[0] = v
    a *= 2.0
    return a


def two_names(a, b):
    a += 1.0
    return a * b, b.sum()


def then_break(a):
    a *= 2.0
    st.graph_break()
    print("a break")
    a += 1.0
    return a.sum()


def helper_that_breaks(t):
    t += 1.0
    t.tolist()  # not simulated: the inlined call is rolled back
    return t * 3.0


def inlined_and_rolled_back(a):
    b = a * 2.0
    return helper_that_breaks(a) + b


def in_a_list(ts):
    for t in ts:
        t += 1.0
    return ts[0] * ts[1]


def cast_raises(a):
    a += 1.5
    return a


def masked(a, rows, v):
    # A bool mask over all of `a`, one over its rows, a 0-d tensor as the value.
    a[a > 2.0] = 0.5
    a[rows] = v
    b = a * 1.0
    b[b < 1.0] = -1.0
    return b


def accumulated(x):
    # A tensor the call makes from constants, held by a list, then updated in place: the
    # list sees the update, as eagerly.
    total = st.zeros(3)
    held = [total]
    for k in range(3):
        total += x * k
    return held[0], held[0] is total


def bumps(t):
    t += 1.0
    t.tolist()  # not simulated: the inlined call is rolled back, and `t` made whole again
    return t


def made_then_rolled_back(x):
    base = st.ones(3) * 2.0
    y = bumps(base)
    return y + x, base


def indexed(a, cols, labels):
    # Int tensors and lists as indices: columns of the caller's tensor, a one-hot made in the
    # call (`out[st.arange(n), labels] = 1.0`), rows picked by a list and updated with `+=`.
    a[:, cols] = -1.0
    a[1, cols[:1]] = 7.0
    out = st.zeros(labels.shape[0], 4)
    out[st.arange(labels.shape[0]), labels] = 1.0
    a[[0, 2]] += 10.0
    return out * a.sum()


def states(make):
    return make(), make(), make()


@st.disable
def check(name, make, call, calls, graphs, breaks, translations=None):
    """`make()` gives the state (a tuple); `call(state, i)` gives the function and its
    arguments for call `i`."""
    eager_state, traced_state, explain_state = states(make)
    problems = []
    compiled = {}
    st.reset()
    for i in range(calls):
        fn, args = call(eager_state, i)
        try:
            e = fn(*args)
        except Exception as exc:
            e = type(exc).__name__
        fn, targs = call(traced_state, i)
        c = compiled.setdefault(id(fn), st.compile(fn))
        try:
            t = c(*targs)
        except Exception as exc:
            t = type(exc).__name__
        # The result, and whether it is one of the arguments (the same object).
        e_is = [e is a for a in args]
        t_is = [t is a for a in targs]
        if not same(t, e) or e_is != t_is:
            problems.append(f"call {i}: {t} != {e} (is args: {t_is} != {e_is})")
        tensors = lambda s: [x for x in s if isinstance(x, st.Tensor)] + [
            b for m in s if isinstance(m, nn.Module) for b in m.buffers()]
        if not same(tuple(tensors(traced_state)), tuple(tensors(eager_state))):
            problems.append(f"call {i}: the state differs after the call")
    made = st.stats()["translations"]
    if translations is not None and made != translations:
        problems.append(f"{made} translations (expected {translations})")
    if graphs is not None:
        fn, args = call(explain_state, 0)
        problems += count_problems(st.explain(fn, *args), graphs, breaks)
    report(name, problems, failures)


ones = lambda *s: st.ones(*s)
check("a KV cache written at a moving position, and a step counter",
      lambda: (Cache(),), lambda s, i: (s[0], (ones(2, 1, 3) * (i + 1), i)), 10, 1, 0, 2)
check("a running mean updated in training, read in eval",
      lambda: (Running(),),
      lambda s, i: (s[0].train(i % 3 != 2), (ones(4, 3) * i,)), 6, 1, 0)
check("one buffer shared by two modules, and two buffers, alternating",
      lambda: (TwoAdds(True), TwoAdds(False)),
      lambda s, i: (s[i % 2], (ones(2) * (i + 1),)), 6, 1, 0, 2)
check("an argument stored into, updated and returned: the same object",
      lambda: (st.arange(3.0),), lambda s, i: (update_and_return, (s[0], float(i))), 3, 1, 0)
check("one tensor under two names on some calls",
      lambda: (st.ones(3), st.ones(3)),
      lambda s, i: (two_names, (s[0], s[0] if i % 2 else s[1])), 5, 1, 0, 2)
check("an update, a graph break, an update",
      lambda: (st.ones(2),), lambda s, i: (then_break, (s[0],)), 3, 2, 1)
check("an update in an inlined call that is rolled back",
      lambda: (st.ones(2),), lambda s, i: (inlined_and_rolled_back, (s[0],)), 3, 4, 2)
check("tensors in a list updated in a loop",
      lambda: (st.ones(2), st.ones(2) * 3.0),
      lambda s, i: (in_a_list, ([s[0], s[1] if i % 2 else s[0]],)), 4, 1, 0, 2)
check("an update that cannot cast raises as eagerly",
      lambda: (st.tensor([1, 2]),), lambda s, i: (cast_raises, (s[0],)), 2, None, None)
check("masked stores into an argument and a local",
      lambda: (st.arange(6.0).reshape(3, 2),),
      lambda s, i: (masked, (s[0], st.tensor([i % 2 == 0, False, True]), st.tensor(float(i)))),
      4, 1, 0, 1)
check("a tensor made from constants, held by a list, updated in place",
      lambda: (st.ones(3),), lambda s, i: (accumulated, (s[0] * i,)), 3, 1, 0)
check("a tensor made from constants updated in an inlined call that is rolled back",
      lambda: (st.ones(3),), lambda s, i: (made_then_rolled_back, (s[0] * i,)), 3, 1, 2)
check("stores through int tensor and list indices, into an argument and a one-hot",
      lambda: (st.arange(12.0).reshape(3, 4),),
      lambda s, i: (indexed, (s[0], st.tensor([i % 4, 3]), st.tensor([1, 0, 3, 2][: 2 + i % 2]))),
      4, 1, 0, 2)


def filled_constant(x):
    # A tensor made from constants, filled in place and stored into: its ops fold to
    # constants while the frame is recorded (the folding once re-entered the recorder, which
    # panicked, and the frame ran as written).
    y = x.new_zeros(3).fill_(1.0)
    z = st.zeros(3)
    z[0] = 5.0
    z += 1.0
    return x * 2.0 + y + z


check("tensors made from constants, filled and stored into",
      lambda: (st.ones(3),), lambda s, i: (filled_constant, (s[0] * i,)), 3, 1, 0, 1)
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
