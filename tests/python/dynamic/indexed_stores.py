"""Stores into a caller's list at an index that changes per call: a ring buffer longer than the
recompile limit (the position advanced after the store, and before it), an item added to in
place at the index, a table of outputs filled
by an argument's index, a store read back in the same call (the index fixed by its value then),
through two names of one list, after an append, and indexes that stop fitting (a float, out of
range, negative) where the program raises or stores as Python does. Every result and every list
equals eager's. Prints `translations <name> <n>` per case."""
import symtrace as st

x = st.tensor([1.0, -2.0, 3.0])


def count(name, run):
    before = st.stats()["translations"]
    run()
    print("translations", name, st.stats()["translations"] - before)


def same(a, b):
    if isinstance(a, st.Tensor):
        return isinstance(b, st.Tensor) and a.tolist() == b.tolist()
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    return a == b


class Ring:
    """Twelve slots, the position advanced after the store."""

    def __init__(self, n=12):
        self.buf = [None] * n
        self.pos = 0

    def __call__(self, x):
        y = x * (self.pos + 1)
        self.buf[self.pos] = y
        self.pos = (self.pos + 1) % len(self.buf)
        return y - 1


class RingAhead:
    """The position advanced before the store: the store's index is the new position."""

    def __init__(self, n=10):
        self.buf = [0.0] * n
        self.pos = 0

    def __call__(self, x):
        self.pos = (self.pos + 1) % 10
        self.buf[self.pos] = x.sum() * self.pos
        return x + self.pos


class Accumulate:
    """`buf[pos] += x`: the item read at the changing index, then stored back at it; the
    counts in a list of ints beside it."""

    def __init__(self):
        self.buf = [st.zeros(3) for _ in range(9)]
        self.hits = [0] * 9
        self.pos = 0

    def __call__(self, x):
        self.buf[self.pos] += x * self.pos
        self.hits[self.pos] = self.hits[self.pos] + 1
        self.pos = (self.pos + 2) % 9
        return x * self.pos


class ReadBack:
    """The store read back in the same call (stacked, and through another name)."""

    def __init__(self):
        self.a = self.b = [st.zeros(3) for _ in range(4)]
        self.i = 0

    def __call__(self, x):
        self.a[self.i % 4] = x * self.i
        self.i += 1
        return st.stack(self.b).sum(0), len(self.a)


class AfterAppend:
    """An append, then a store at a changing index within what the list then holds."""

    def __init__(self):
        self.log = [0]
        self.i = 0

    def __call__(self, x):
        self.log.append(self.i)
        self.log[self.i] = -self.i
        self.i += 1
        return x * len(self.log)


def fill(table, i, x):
    # The index is an argument: a table of outputs filled step by step.
    table[i] = x * i
    return x + i


@st.disable  # as written: only the compiled calls are translated, not the driver with them inlined
def compare(make, calls, args=lambda k: (x,)):
    h, eager = make(), make()
    f = st.compile(h)
    for k in range(calls):
        a, b = f(*args(k)), eager(*args(k))
        assert same(a, b), (make, k, a, b)
    assert same(list(vars(h).values()), list(vars(eager).values())), (vars(h), vars(eager))


@st.disable
def ring():
    compare(Ring, 30)


@st.disable
def ring_ahead():
    compare(RingAhead, 25)


@st.disable
def accumulate():
    compare(Accumulate, 30)


@st.disable
def read_back():
    compare(ReadBack, 9)


@st.disable
def after_append():
    compare(AfterAppend, 5)


@st.disable
def argument_index():
    table, eager = [None] * 16, [None] * 16
    f = st.compile(fill)
    for i in range(16):
        assert same(f(table, i, x), fill(eager, i, x))
    assert same(table, eager)


def put(table, i, x):
    table[i] = x * i
    return x - i


def raised(fn, *args):
    try:
        return fn(*args)
    except Exception as e:
        return type(e).__name__


@st.disable
def indexes_that_stop_fitting():
    table, eager = [None] * 4, [None] * 4
    f = st.compile(put)
    for i in [0, 1, 2, 3, 2.0, 4, -1, -4, -5, 1, True]:
        a, b = raised(f, table, i, x), raised(put, eager, i, x)
        assert same(a, b), (i, a, b)
        assert same(table, eager), (i, table, eager)


count("ring", ring)
count("ring_ahead", ring_ahead)
count("accumulate", accumulate)
count("read_back", read_back)
count("after_append", after_append)
count("argument_index", argument_index)
count("indexes_that_stop_fitting", indexes_that_stop_fitting)
print("INDEXED STORES OK", st.stats())
