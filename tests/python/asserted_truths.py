"""Asserts on a tensor's truth in traced code (`assert not x.isnan().any()`, `assert cond,
msg`, `if isnan(loss): raise ValueError(...)`, `torch._assert`): the truth is checked by the
graph, as TorchDynamo keeps such an assert (`torch._assert_async`), and the frame is captured
whole. Where the truth does not hold, the frame runs as written: the program's exception,
message and line, after the prints and appends it made before. Each case runs eagerly and
compiled over the same calls (the failing ones among them); what each call returns or
raises (class, message, the line of the raise), what it printed and the state it left must
be equal, and explain() of a passing call must count one graph and no break. Prints one line
per case; `FAIL` marks a failed one."""
import contextlib
import io
import traceback

import symtrace as st
import symtrace.nn as nn
from case_report import count_problems, report

failures = []


def plain(v):
    if isinstance(v, st.Tensor):
        return ("tensor", tuple(v.shape), repr(v.tolist()))
    if isinstance(v, (list, tuple)):
        return [plain(i) for i in v]
    return v


def outcome(fn, args):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            r = fn(*args)
        return ("ok", plain(r), out.getvalue())
    except Exception as e:
        line = traceback.extract_tb(e.__traceback__)[-1]
        return ("raises", type(e).__name__, str(e), line.name, line.lineno, out.getvalue())


@st.disable
def check(name, make, calls, passing, graphs=1, breaks=0):
    eager_fn, eager_log = make()
    eager = [outcome(eager_fn, a + (eager_log,)) for a in calls], eager_log
    fn, log = make()
    compiled = st.compile(fn)
    before = st.stats()["translations"]
    traced = [outcome(compiled, a + (log,)) for a in calls], log
    made = st.stats()["translations"] - before
    problems = []
    if traced != eager:
        problems.append(f"traced {traced} != eager {eager}")
    if made == 0:
        problems.append("never translated")
    problems += count_problems(st.explain(fn, *passing, []), graphs, breaks)
    report(f"{name} ({made} translations)", problems, failures)


good, nan, negative = st.ones(2, 3), st.tensor([[1.0, float("nan"), 0.0]]), -st.ones(2, 3)
calls = [(good,), (nan,), (good,), (negative,), (good,)]


def asserts():
    def f(x, log):
        y = x * 2.0
        log.append("before")
        assert not st.isnan(y).any(), "a NaN in y"
        assert (y > 0).all()
        log.append("after")
        return y.sum(-1)
    return f, []


check("assert not isnan(y).any(), and assert (y > 0).all()", asserts, calls, (good,))


def messages():
    def f(x, log):
        print("checking", len(log))
        log.append(1)
        total = x.sum()
        assert total > 0, f"total {total.item():.1f} of {x.shape}"
        return total * 3.0
    return f, []


check("an assert's message made only when it fails, after a print", messages, calls, (good,))


def raises():
    def f(x, log):
        loss = (x * x).mean()
        if st.isnan(loss):
            raise ValueError(f"loss is NaN at step {len(log)}")
        st._assert(loss >= 0.5, "loss under one half")
        log.append(loss.shape)
        return loss / 2.0
    return f, []


check("if isnan(loss): raise ValueError, then torch._assert", raises,
      calls + [(st.zeros(2, 3),)], (good,))


class Checked(nn.Module):
    """An assert in a submodule's forward, inlined into the caller's graph."""

    def __init__(self):
        super().__init__()
        st.manual_seed(0)
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        assert x.abs().max() < 10, "input out of range"
        return self.lin(x).relu()


def inlined():
    m = Checked()

    def f(x, log):
        log.append("call")
        return m(x) + m(x * 2.0)
    return f, []


check("an assert in an inlined submodule", inlined,
      [(good,), (good * 20.0,), (good,), (good * 4.0,)], (good,))


def ambiguous():
    def f(x, log):
        assert x > 0, "positive"
        return x
    return f, []


# Not one element: bool() raises in Python, so the truth is no check; that call runs as
# written (a branch on a tensor's value), the one-element calls are captured.
check("an assert on a tensor of many elements raises as eager", ambiguous,
      [(st.ones(1),), (st.ones(3),), (-st.ones(1),), (st.ones(1),)], (st.ones(1),))


def under_handler():
    def f(x, log):
        y = x + 1.0
        try:
            assert (y > 1).all(), "not above one"
            log.append("held")
        except AssertionError as e:
            log.append(str(e))
        return y
    return f, []


check("an assert under a handler in the same frame", under_handler, calls, (good,))

def in_a_loop():
    # The compiler puts the raise after the loop's back jump: the check jumps to it.
    def f(x, log):
        parts = {"x": x, "double": x * 2.0, "shifted": x - 0.5}
        for name, value in parts.items():
            valid = value == value
            if not valid.all():
                raise ValueError(f"{name} holds NaN")
            log.append(name)
        return parts["double"] + parts["shifted"]
    return f, []


check("a check in a loop, its raise after the loop", in_a_loop, calls, (good,))


class checked_property(property):
    """A property subclass that leaves access alone, as torch's `dependent_property`."""


class Box:
    def __init__(self, x):
        self.x = x

    @checked_property
    def doubled(self):
        return self.x * 2.0


def constant_truths():
    # A tensor made from constants has one value on every call: its truth is no break.
    def f(x, log):
        ones = st.ones_like(x)
        if not (ones > 0).all():
            log.append("never")
        if st.tensor(0.0):
            log.append("never either")
        y = Box(x).doubled
        assert (y == y).all(), "NaN"
        return y + ones
    return f, []


check("a property subclass and the truths of constant tensors", constant_truths, calls, (good,))

print("ASSERTED TRUTHS", "FAILED " + ", ".join(failures) if failures else "OK")
