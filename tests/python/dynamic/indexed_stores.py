"""Stores into a caller's list at an index that changes per call, and into a caller's dict by such
a key (outputs kept by step, read back in the same call): a ring buffer longer than the
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
    if isinstance(a, dict):
        return type(a) is type(b) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


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


class StepOutputs:
    """Outputs kept by step in a dict, a memo keyed by the step modulo 5 (overwritten), and a
    dict of the caller's read by a str key after the stores (another dict)."""

    def __init__(self):
        self.out = {}
        self.memo = {}
        self.cfg = {"scale": 0.5}
        self.step = 0

    def __call__(self, x):
        y = x * self.cfg["scale"] + self.step
        self.out[self.step] = y
        self.memo[self.step % 5] = self.step
        self.step += 1
        return y * self.cfg["scale"]


class DictReadBack:
    """Stores by a changing key and by a constant one, in both orders, the dict read back
    (the key fixed by its value then): the constant's entry, the length, another key."""

    def __init__(self):
        self.d = {}
        self.e = {}
        self.i = 0

    def __call__(self, x):
        self.d[self.i] = x
        self.d[3] = x * 2
        self.e[3] = x * 3
        self.e[self.i] = x * 4
        self.i = (self.i + 1) % 6
        return self.d[3], self.e[3], len(self.d), self.e.get(0)


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
def step_outputs():
    compare(StepOutputs, 20)


@st.disable
def dict_read_back():
    compare(DictReadBack, 8)


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


def record(d, i, x):
    d[i] = x * 2
    return x + 1


@st.disable
def keys_that_stop_fitting():
    d, eager = {}, {}
    f = st.compile(record)
    for i in [0, 1, 2, 3, 2.0, True, 4, "a", -7, 2**70, 5]:
        a, b = raised(f, d, i, x), raised(record, eager, i, x)
        assert same(a, b), (i, a, b)
        assert same(d, eager) and [type(k) for k in d] == [type(k) for k in eager], (i, d, eager)


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
count("step_outputs", step_outputs)
count("dict_read_back", dict_read_back)
count("read_back", read_back)
count("after_append", after_append)
count("argument_index", argument_index)
count("indexes_that_stop_fitting", indexes_that_stop_fitting)
count("keys_that_stop_fitting", keys_that_stop_fitting)
print("INDEXED STORES OK", st.stats())
