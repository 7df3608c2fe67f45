"""Stores into the closure cells of the caller's functions, inlined by a traced frame: a
counter a factory made (`inc` and `peek` over one `count`), a decorator counting the calls
of what it wraps. Each store is replayed by the replacement into the same cell; reads after
it see it, through the same function or another holding the cell; on calls where two
functions hold one cell, or no longer do, the guards on the cells' identities tell. Each
case runs as written and compiled from the same fresh counters, its results and the
counters afterwards compared, its translations counted, and explain()'s graphs and breaks.
Prints one line per case; `FAIL` marks a failed one."""
import functools

import symtrace as st
from symtrace import nn
from case_report import eager_then_traced

failures = []
CALLS = 5


def make_counter():
    count = 0

    def inc(x):
        nonlocal count
        old = count
        count += 1
        return x * old  # the value read before the store, used after it

    def peek():
        return count

    return inc, peek


counters = []


def reset():
    counters[:] = [make_counter() for _ in range(3)]


def state():
    return [peek() for _, peek in counters]


def case(name, fn, make_args, most, graphs, breaks):
    eager_then_traced(name, fn, make_args, most, graphs, breaks, calls=CALLS, reset=reset,
                      state=state, failures=failures)


def twice(inc, peek, x):
    a = inc(x)
    b = inc(x + 1.0)
    return a + b, peek()


def with_break(inc, peek, x):
    a = inc(x)
    st.graph_break()
    b = inc(x + 1.0)
    return a + b, peek()


def in_loop(inc, peek, xs):
    total = 0.0
    for x in xs:
        total = total + inc(x)
        if peek() > 100:
            st.graph_break()
    return total, peek()


x = st.arange(3.0)
# The count becomes a number input after its first change (automatic dynamic): 2 translations.
case("a factory's counter, stored twice, read through another function", twice,
     lambda i: (*counters[0], x), 2, 1, 0)
# `peek` of another counter on every other call: the cells are told apart by a guard.
case("two counters' functions, sharing a cell on some calls", twice,
     lambda i: (counters[0][0], counters[i % 2][1], x), 4, 1, 0)
case("a counter stored on both sides of a break", with_break,
     lambda i: (*counters[1], x), 4, 2, 1)
case("a counter stored in a loop", in_loop,
     lambda i: (*counters[2], [x, x * 2.0, x * 3.0]), 2, 1, 0)


def count_calls(fn):
    calls = 0

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        nonlocal calls
        calls += 1
        return fn(*args, **kwargs)

    wrapper.calls = lambda: calls
    return wrapper


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    @count_calls
    def forward(self, x):
        return self.fc(x).relu()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(2)])

    def forward(self, x):
        for b in self.blocks:
            x = x + b(x)
        return x


st.manual_seed(0)
net = Net()
start = [0]  # the decorator's count when a run starts: each run counts its own calls


def reset_calls():
    start[0] = Block.forward.calls()


eager_then_traced("a decorator counting the calls of a module's forward", net,
                  lambda i: (x.reshape(1, 3),), 1, 1, 0, calls=CALLS, reset=reset_calls,
                  state=lambda: Block.forward.calls() - start[0], failures=failures)
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
