"""Graph breaks in frames with closures: a frame that makes a lambda or a nested function (its
variables become cells), or that is itself a nested function (free variables), keeps its graph
at a break; the resume function is a closure over the frame's cells, so a function made before
the break sees, and its `nonlocal` stores reach, what the frame does after it. Each case runs
eager and compiled from the same start over several calls and compares every result and the
state after; explain() counts the graphs and breaks; later calls translate nothing new.
Prints one line per case; `FAIL` marks a failed one."""
import types
import symtrace as st
from symtrace import nn
from case_report import eager_then_traced, report

failures = []
st.manual_seed(0)
x = st.randn(2, 4)


def case(name, fn, args, graphs, breaks, *, reset=lambda: None, calls=3, most=2):
    """`fn` run eager, then compiled, `calls` times each from what `reset()` restores."""
    eager_then_traced(name, fn, args, most, graphs, breaks, calls=calls, reset=reset,
                      state=lambda: None, failures=failures)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.scale = 2.0

    def forward(self, x):
        act = lambda y: st.relu(y) * self.scale  # `self` is a cell
        h = act(self.lin(x))
        st.graph_break()
        return act(h + 1.0)


model = Scaled()
# Module.__call__ runs as written (its call of forward breaks, and it returns right after):
# a GB-FRAME besides forward's own break.
case("a lambda over self, used on both sides of a break", model, lambda i: (x * (i + 1),), 2, 2)


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return st.relu(self.lin(x))


class Doubled(Plain):
    def forward(self, x):
        h = super().forward(x) * 2.0  # super() reads the free variable __class__
        st.graph_break()
        return super().forward(h)


doubled = Doubled()
case("a method calling super() on both sides of a break", doubled, lambda i: (x - i,), 2, 2)


def counter():
    def step(x):
        total = 0

        def add(v):
            nonlocal total
            total += 1
            return v * 2.0

        a = add(x)
        st.graph_break()
        b = add(a)  # the store reaches the frame's cell: the resume function holds it
        return b, total

    return step


case("a nonlocal counter across a break", counter(), lambda i: (x,), 2, 1)


def block(w):
    def run(x):  # w is a free variable of the frame
        y = x @ w
        st.graph_break()
        return st.tanh(y) + w.sum()

    return run


case("a nested function with a free variable", block(x.T), lambda i: (x + i,), 2, 1)


def rebinding():
    def run(x):
        scale = 2.0
        act = lambda y: y * scale
        a = act(x)
        scale = 3.0  # stored into the cell before the break: the lambda sees it after
        st.graph_break()
        b = act(x)
        scale = 5.0
        return a, b, act(x)

    return run


case("a cell rebound on both sides of a break", rebinding(), lambda i: (x,), 2, 1)


def parameter_cell():
    def run(x, scale):
        act = lambda y: y * scale
        scale = scale + 1  # a parameter that is a cell, changed before the break
        z = act(x)
        st.graph_break()
        return act(x), scale, z

    return run


case("a parameter that is a cell, changed before a break", parameter_cell(), lambda i: (x, 2.0), 2, 1)


def made_functions():
    def run(x, m):
        def g(y, k=2.0, *, j=m):  # defaults made in the call, kept by the function
            return y * k + j

        def rec(y, n):  # holds itself in its cell
            return y if n == 0 else rec(y + 1.0, n - 1)

        fs = [g, g]
        y = rec(g(x), 2)
        st.graph_break()
        return rec(g(y, 1.0, j=0.5), 1), fs[0] is g, fs[1] is fs[0]

    return run


case("functions made in the call, held at a break", made_functions(), lambda i: (x, 1.5), 2, 1)


def computed_default():
    def run(x, s):
        act = lambda y, k=s * 2.0: y * k  # a new defaults tuple on every call
        a = act(x)
        st.graph_break()
        return act(a)

    return run


case("a lambda with a computed default, across a break", computed_default(), lambda i: (x + i, 1.5), 2, 1)


def looped():
    def run(x, n):
        scale = 2.0
        seen = 0

        def act(y):
            nonlocal seen
            seen += 1
            return st.relu(y * scale) + 1.0

        for i in range(n):
            x = act(x) * 0.5
            x = x + 1.0
            st.graph_break()  # the loop is split: body and driver are closures too
            scale = scale + 1.0
            if i == 5:
                return x, -1
        return act(x), scale, seen

    return run


def late_binding():
    def run(x, n):
        fs = []
        for i in range(n):
            fs.append(lambda: i)  # one cell for every iteration: each lambda sees the last i
            x = x * 2.0 + 1.0
            x = x - 0.5
            st.graph_break()
        return x, [g() for g in fs]

    return run


case("lambdas over a loop variable of a split loop", late_binding(), lambda i: (x, 3), 1, 2, most=3)


# Graphs: the body before its break, and after the loop; breaks: the loop, the call in it.
case("a break inside a loop, with closures over the frame's cells", looped(),
     lambda i: (x, 2 + i % 2), 2, 2, most=4)


def make_act(scale):
    count = 0

    def act(y):
        nonlocal count
        count += 1
        return st.relu(y) * scale + count

    def calls():
        return count

    return act, calls


def helper_closures():
    def run(x):
        act, calls = make_act(2.0)  # inlined: its cells are made in the call, held by both
        a = act(x)
        st.graph_break()
        return act(a), calls(), act(x), calls()

    return run


# After the break the two functions are made again over one new cell; the resume function
# stores into it as into any cell of the caller's functions, read back through both.
case("closures of an inlined helper, sharing its cell across a break", helper_closures(),
     lambda i: (x,), 2, 1, most=3)


def _raise_if(fail):
    if fail:
        raise ValueError("asked to")


raise_if = st.disable(_raise_if)  # an opaque call: the graph breaks there


def handled():
    def run(x, fail):
        scale = 2.0
        act = lambda y: y * scale
        try:
            y = act(x)
            raise_if(fail)  # breaks under the handler: the handler function is a closure too
            scale = 3.0
        except ValueError:
            scale = 10.0  # stored into the cell by the handler, run as written
            y = x + 1.0
        return act(y), scale

    return run


# Translations: the frame, its resume function, and the lambda on its own (the handler
# function runs as written and calls it).
case("a break under a try/except, the call raising on the second call", handled(),
     lambda i: (x, i == 1), 2, 1, most=3)


def returns_closure():
    def run(x):
        s = x.sum() * 2.0
        k = 3

        def g(y):
            return y * s + k

        return g

    return run


@st.disable
def closure_values(i):
    return (x + i,)


def closure_returned(name):
    """The returned function is called after each call: its cells hold the graph's value."""
    box = {}

    def results(f):
        box["f"] = returns_closure()
        out = []
        for i in range(3):
            g = f(box["f"])(*closure_values(i))
            out.append((g(st.ones(4)).tolist(), g.__code__.co_freevars))
        return out

    eager = results(lambda f: st.disable(f))
    traced = results(lambda f: st.compile(f))
    e = st.explain(returns_closure(), x)
    problems = []
    if traced != eager:
        problems.append(f"{traced} != {eager}")
    if (e.graph_count, e.graph_break_count) != (1, 0):
        problems.append(f"{e.graph_count} graphs, {e.graph_break_count} breaks: {e.break_reasons}")
    report(name, problems, failures)


closure_returned("a closure over a graph value, returned")


def decorated():
    def deco(fn):
        def wrapper(*a, **k):
            r = fn(*a, **k)
            st.graph_break()
            return r * 2.0

        return wrapper

    @deco
    def g(x):
        return st.relu(x) + 1.0

    return g


case("a decorator's wrapper breaking after the call", decorated(), lambda i: (x - i,), 2, 1)


def shared_cell_pair():
    total = 0

    def add():
        return total

    def run(x):
        nonlocal total
        total = total + 5  # a store the inlined `add` must see: it shares the cell
        return x * add()

    return run


def cell_reset(f, name, value):
    def reset():
        f.__closure__[f.__code__.co_freevars.index(name)].cell_contents = value
    return reset


shared = shared_cell_pair()
# A counter read from a cell: guarded by value first, then left to change (2 translations).
case("an inlined closure sharing the frame's cell", shared, lambda i: (x,), 1, 0,
     reset=cell_reset(shared, "total", 0))


def foreign_cell_pair():
    """`run`'s free variables as in shared_cell_pair, but `add` given a cell of its own: the
    translation of the shared pair must not be reused (a guard on the cells' identity)."""
    shared = shared_cell_pair()
    own = types.CellType(100)
    add = types.FunctionType(shared.__closure__[0].cell_contents.__code__, globals(), "add", None, (own,))
    total = types.CellType(0)
    return types.FunctionType(shared.__code__, globals(), "run", None, (types.CellType(add), total))


foreign = foreign_cell_pair()
case("an inlined closure with a cell of its own", foreign, lambda i: (x,), 1, 0,
     reset=cell_reset(foreign, "total", 0))
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
