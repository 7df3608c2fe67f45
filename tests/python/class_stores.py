"""Stores into the caller's classes (`Counter.calls += 1`, `type(self).count += 1`,
`cls.seen += k` in a class method, a tensor kept on a class): replayed after the graph, seen
by later reads in the call (on the class and through instances), and guarded so that the
class's changing version does not make every call translate again: a class the call writes
is guarded entry by entry, the scalars read from it by value, and a counter read as a number
once its value changed. Also what a class guard must still catch: a method replaced between
calls, a value changed from outside, a new attribute.

For each case: the class state is reset, the function runs `CALLS` times as written, the state
is reset again, and it runs `CALLS` times compiled; the results of every call and the class
state afterwards are equal. The compiled calls translate at most `most` times, and explain()
of one more call counts the expected graphs and breaks. Prints one line per case; `FAIL`
marks a failed one."""
import symtrace as st
import symtrace.nn as nn
from case_report import eager_then_traced, plain

failures = []
CALLS = 6


class Counter(nn.Module):
    calls = 0

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        Counter.calls += 1
        return self.lin(x) * self.calls


class Base(nn.Module):
    count = 0

    def forward(self, x):
        type(self).count += 1
        return x * self.count


class Derived(Base):
    pass


class Stats:
    running = None
    n = 0


def running_mean(x):
    m = x.mean(0)
    Stats.running = m if Stats.running is None else Stats.running * 0.9 + m * 0.1
    Stats.n += 1
    return x - Stats.running, Stats.n


class Registry:
    seen = 0

    @classmethod
    def bump(cls, k):
        cls.seen += k
        return cls.seen


def class_method_counter(x):
    return x + Registry.bump(2)


class Schedule:
    scale = 2.0


def float_on_class(x):
    Schedule.scale = Schedule.scale * 0.5 + 0.25
    return x * Schedule.scale


class Knob:
    k = 1


def read_knob(x):
    return x * Knob.k


class Patched:
    calls = 0

    def f(self, x):
        return x + 1.0


def patched_method(x):
    Patched.calls += 1
    return Patched().f(x) * Patched.calls


class Hooks:
    pass


def function_into_class(x):
    Hooks.fn = lambda self, v: v * 3.0
    return Hooks().fn(x)


class Doc:
    """old"""


def dunder_store(x):
    Doc.__doc__ = "new"
    return x + 1.0


class Shared:
    total = 0


def writer(x):
    Shared.total += 1
    return x * 2.0


def reader(x):
    return x * Shared.total


def writer_then_reader(x):
    return reader(st.disable(writer)(x))


def class_state():
    return {
        "Counter.calls": Counter.calls,
        "Base.count": Base.count,
        "Derived.count": Derived.__dict__.get("count", "<unset>"),
        "Stats": (plain(Stats.running), Stats.n),
        "Registry.seen": Registry.seen,
        "Schedule.scale": Schedule.scale,
        "Knob.k": Knob.k,
        "Patched": (Patched.calls, Patched.__dict__["f"].__name__),
        "Hooks.fn": "fn" in Hooks.__dict__,
        "Doc.__doc__": Doc.__doc__,
        "Shared.total": Shared.total,
    }


def original_f(self, x):
    return x + 1.0


def reset():
    Counter.calls = 0
    Base.count = 0
    if "count" in Derived.__dict__:
        del Derived.count
    Stats.running, Stats.n = None, 0
    Registry.seen = 0
    Schedule.scale = 2.0
    Knob.k = 1
    Patched.calls = 0
    Patched.f = original_f
    if "fn" in Hooks.__dict__:
        del Hooks.fn
    Doc.__doc__ = "old"
    Shared.total = 0


def check(name, fn, make_args, most, graphs, breaks, between=None):
    eager_then_traced(name, fn, make_args, most, graphs, breaks, calls=CALLS, reset=reset,
                      state=class_state, failures=failures, between=between)


def replace_method(i):
    if i == 3:
        Patched.f = lambda self, x: x * 10.0


def set_knob(i):
    Knob.k = i % 3 + 1


st.manual_seed(0)
xs = [st.randn(2, 3) for _ in range(CALLS + 1)]
check("a counter on the module's class", Counter(), lambda i: (xs[i],), 2, 1, 0)
check("type(self).count += 1, on a subclass", Derived(), lambda i: (xs[i],), 3, 1, 0)
check("a tensor kept on a class", running_mean, lambda i: (xs[i],), 2, 1, 0)
check("cls.seen += k in a class method", class_method_counter, lambda i: (xs[i],), 2, 1, 0)
check("a float on a class", float_on_class, lambda i: (xs[i],), 2, 1, 0)
check("a class attribute the caller changes", read_knob, lambda i: (xs[i],), 3, 1, 0, between=set_knob)
check("a method replaced between calls", patched_method, lambda i: (xs[i],), 3, 1, 0, between=replace_method)
check("a function stored into a class, called through an instance", function_into_class, lambda i: (xs[i],), CALLS, None, None)
# The store runs as written; what follows it is a graph of its own (a break before any
# tensor work).
check("a special name stored into a class", dunder_store, lambda i: (xs[i],), CALLS, 1, 1)
# The frame breaks at `st.disable(...)` and at the call, before any tensor work; `reader`,
# inlined in the last resume function, reads a class the disabled call changes each time.
check("one frame writes a class, another reads it", writer_then_reader, lambda i: (xs[i],), 5, None, None)

# `Module.__call__` is one code object for every module class: a miss on another class's
# version (the type of another module) is not a change of the class, which stays guarded by
# its version tag, not entry by entry (tests/side_effects.rs reads the guards logged).
seq, lin = nn.Sequential(nn.Linear(3, 3), nn.ReLU()), nn.Linear(3, 3)
for m in (seq, lin, seq, lin):
    m(xs[0])
print("ALL OK" if not failures else f"FAILED {len(failures)}: {failures}", len(failures))
