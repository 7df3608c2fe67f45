"""Constructs that once gave wrong answers when traced (issue 19), each printing what it
computes. tests/wrong_answers.rs runs this script plain, under `--plugin symtrace`, with
`trace_all=1` and with `backend=roundtrip`, and requires the same output from every run: the
program behaves exactly as without the plugin. Each case calls its function several times,
changing what a translation relied on between calls; a case that raises prints what."""
import collections
import operator
import weakref

import symtrace as st


def show(name, value):
    if isinstance(value, st.Tensor):
        value = value.tolist()
    print(f"{name}: {value}")


def case(name):
    """Run the decorated function now; what it raises is printed with the case's name."""
    def run(fn):
        try:
            fn()
        except Exception as e:
            print(f"{name} raised {type(e).__name__}: {e}")
        return fn
    return run


# 1. where() with a traced condition: the condition was copied into a constant of zeros.
def where_function(x):
    return st.where(x > 0, x, -x)


def where_method(x):
    return x.where(x > 0, 0.0)


def where_mixed(x, y):
    return st.where(y > x, y, 1.0) + st.call_op("where", x < 0, x, y)


@case("where")
def _():
    for _ in range(3):
        x = st.tensor([-1.0, 2.0, -3.0])
        show("where function", where_function(x))
        show("where method", where_method(x))
        show("where mixed", where_mixed(x, st.tensor([0.5, 0.5, 0.5])))


# 2. A split loop inside another loop: the driver read a local bound only after the loops.
def nested_split_loops(x):
    for a in range(2):
        for i in range(2):
            x = x + x * 2.0 + 1.0
            if x.sum() > 0:
                x = x - 1.0
    y = x * 0.5
    return y


def nested_split_loops_with_del(x):
    for a in range(3):
        for i in range(2):
            x = x * 2.0 + 1.0 - x
            if x.sum() > 0:
                x = x - 0.5
        t = a
        del t
    return x


@case("nested split loops")
def _():
    for _ in range(3):
        show("nested split loops", nested_split_loops(st.tensor([1.0, 2.0])))
        show("nested split loops, del", nested_split_loops_with_del(st.tensor([1.0, -2.0])))


# 3. `in` on strings is a substring test.
def substrings(x, s, t):
    found = ("ab" in s, "" in s, "q" not in s, t in s, s in "xxabyy")
    return x * 2.0, found


@case("substrings")
def _():
    for s, t in [("xaby", "by"), ("abc", "z"), ("ab", "ab")]:
        show("substrings", substrings(st.ones(2), s, t)[1])


# 4. dict views are live: what is stored after the view is taken is in it.
def views(x):
    d = {"a": x, "b": x * 2.0}
    keys, values, items = d.keys(), d.values(), d.items()
    d["c"] = x * 3.0
    n = (len(keys), len(values), len(items), "c" in keys, list(keys))
    total = x * 0.0
    for v in values:
        total = total + v
    for k, v in items:
        total = total + v
    return total, n


@case("live views")
def _():
    for _ in range(3):
        total, n = views(st.ones(2))
        show("live views", n)
        show("live views total", total)


# 5. A method looked up on an object is guarded on its class and on the instance.
class Scaler:
    def scale(self, x):
        return x * 2.0


def use_method(m, x):
    return m.scale(x) + 1.0


def triple(self, x):
    return x * 3.0


@case("method")
def _():
    m = Scaler()
    x = st.ones(2)
    show("method", use_method(m, x))
    show("method", use_method(m, x))
    Scaler.scale = triple
    show("method rebound on the class", use_method(m, x))
    m.scale = lambda x: x * 10.0
    show("method shadowed on the instance", use_method(m, x))
    del m.scale
    show("method no longer shadowed", use_method(m, x))


def double_t(self):
    return self * 2.0


def triple_t(self):
    return self * 3.0


def tensor_method(t):
    return t.scaled() + 0.5


@case("function on Tensor")
def _():
    st.Tensor.scaled = double_t
    show("function on Tensor", tensor_method(st.ones(2)))
    show("function on Tensor", tensor_method(st.ones(2)))
    st.Tensor.scaled = triple_t
    show("function on Tensor rebound", tensor_method(st.ones(2)))


# 6. A property set on Tensor is Python code: it runs as often as when run as written.
reads = []


def loud(self):
    reads.append(1)
    return self * 5.0


def read_property(t):
    return t.loud + 1.0


@case("property on Tensor")
def _():
    st.Tensor.loud = property(loud)
    for _ in range(3):
        show("property on Tensor", read_property(st.ones(2)))
    show("property on Tensor, reads", len(reads))


# 7. A delete that raises is caught where it raises; `del x` of an unbound local raises.
class Box:
    pass


def deletes(x, obj, d):
    try:
        del obj.a
        got = "deleted a"
    except AttributeError:
        got = "no a"
    try:
        del d["k"]
        got += ", deleted k"
    except KeyError:
        got += ", no k"
    return x + 1.0, got


def delete_unbound(x, flag):
    if flag:
        y = x
    try:
        del y
        return "deleted"
    except UnboundLocalError:
        return "unbound"


@case("deletes")
def _():
    for state in [(True, True), (False, False), (True, False), (False, True)]:
        b = Box()
        if state[0]:
            b.a = 1
        d = {"k": 2} if state[1] else {}
        show("deletes", deletes(st.ones(1), b, d)[1])
        show("deletes, after", (hasattr(b, "a"), "k" in d))


@case("del of a local")
def _():
    for flag in [True, False, True]:
        show("del of a local", delete_unbound(st.ones(1), flag))


# 8. An in-place operator after its site was specialized on floats calls __isub__ (the VM).
class Account:
    def __init__(self):
        self.log = []

    def __sub__(self, other):
        self.log.append("sub")
        return self

    def __isub__(self, other):
        self.log.append("isub")
        return self

    def __add__(self, other):
        self.log.append("add")
        return self

    def __iadd__(self, other):
        self.log.append("iadd")
        return self

    def __mul__(self, other):
        self.log.append("mul")
        return self

    def __imul__(self, other):
        self.log.append("imul")
        return self


def step(q, k):
    q -= 1.0
    q += 1.0
    q *= 2.0
    k -= 1
    k += 1
    return q, k


def concat(s, t):
    s += t
    return s


@case("in-place after specialization")
def _():
    for _ in range(40):
        step(3.0, 4)
        concat("a", "b")
    acc = Account()
    step(acc, acc)
    show("in-place after specialization", acc.log)
    text = Account()
    concat(text, "b")
    show("str += after specialization", text.log)


# 9. Found by the fuzzer: a local read unbound after a graph break (the resume function's
# parameter held None, and the read ran in the replacement, which saw it).
def unbound_after_break(x, d):
    d["a"] = x * 2.0
    if "a" in d:
        pass
    else:
        t = x
    y = x * 3.0 + 1.0
    return y + t * 2.0


@case("unbound after a break")
def _():
    for _ in range(3):
        show("unbound after a break", unbound_after_break(st.ones(2), {}))


# 10. The simulation asked a callable it did not model for its __name__ (to find builtins)
# and its __qualname__ (to name it in a break): its __getattr__ ran during translation.
class Named:
    """A proxy, as wrappers are: what it lacks, __getattr__ is asked for."""
    asked = []

    def __getattr__(self, name):
        Named.asked.append(name)
        raise AttributeError(name)

    def __call__(self, t):
        return t * 2.0


def call_named(f, x):
    return f(x + 1.0) * 3.0


@case("names of callables")
def _():
    f = Named()
    for _ in range(3):
        show("names of callables", call_named(f, st.ones(2)))
    show("names of callables asked", Named.asked)


# 11. A descriptor's __get__ rebound on the descriptor's class: the translation inlined the
# old __get__ and guarded only the owner's class.
class Tripled:
    def __get__(self, obj, owner):
        return obj.__dict__["raw"] * 3.0

    def __set__(self, obj, value):
        obj.__dict__["raw"] = value


class Holder:
    value = Tripled()

    def __init__(self, v):
        self.value = v


def read_descriptor(t, h):
    return t + h.value


@case("descriptor rebound")
def _():
    h = Holder(2.0)
    for i in range(3):
        show("descriptor rebound", read_descriptor(st.ones(2), h))
        Tripled.__get__ = lambda self, obj, owner, i=i: obj.__dict__["raw"] * -i


# 12. Keys of a caller's dict read after the call stored others (counters in a stats dict):
# the store is replayed later, so a read of that key sees the stored value, a read of
# another key the dict's own; two sources are one dict only on some calls.
def keyed(t, a, b):
    a["x"] = a.get("x", 0) + 1
    b["y"] = 5
    b["x"] = b.get("x", 10) * 2
    if "q" in a:
        del a["q"]
    return t * a["x"], b.get("x", -1), a.get("y", -2), "y" in a, a.setdefault("z", 3)


@case("keys after stores")
def _():
    d1, d2 = {"q": 1}, {}
    for a, b in [(d1, d2), (d1, d1), (d2, d1), ({}, {}), (d1, d2), (d2, d2)]:
        show("keys after stores", keyed(st.ones(2), a, b))
        show("keys after stores, dicts", (sorted(a.items()), sorted(b.items())))


# 13. A function of the tracer's own module that changes its state (here the default dtype)
# ran once, when the frame was translated, and never again: a later call left the default
# as it was.
def sets_the_default(t):
    st.set_default_dtype(st.float32)
    return t * 2


@case("tracer state")
def _():
    for i in range(3):
        st.set_default_dtype(st.float64)
        show("tracer state", sets_the_default(st.ones(2)))
        show("tracer state, default after the call", st.get_default_dtype())
    st.set_default_dtype(st.float64)


# 14. A tensor method that changes its tensor (`requires_grad_`) ran on the translation's
# fake, and the tensor passed in was never changed.
def marks_for_grad(t):
    t.requires_grad_(True)
    return t * 2


@case("in-place method")
def _():
    for i in range(3):
        t = st.ones(2)
        show("in-place method", marks_for_grad(t))
        show("in-place method, requires_grad", t.requires_grad)


# 15. A key of an instance's `__dict__` read after the call set that attribute: the dict
# was read as it was before the call (the store is replayed after the graph), whether the
# dict was reached through the instance or passed in as another argument.
class Holder:
    def __init__(self):
        self.x = 1


def dict_after_attribute(t, a, d):
    a.x = a.x + 1
    return t * d["x"]


@case("dict after attribute")
def _():
    a = Holder()
    other = {"x": 5}
    for obj, d in [(a, other), (a, a.__dict__), (a, other), (Holder(), other)]:
        show("dict after attribute", dict_after_attribute(st.ones(2), obj, d))
        show("dict after attribute, x", obj.x)
    b = Holder()
    for _ in range(2):
        show("dict after attribute, own dict", dict_after_attribute(st.ones(2), b, b.__dict__))


# 16. A tensor's `requires_grad`, read by `isinstance(t, nn.Parameter)` through the
# parameter class's `__instancecheck__`: each tensor passed in has its own mark.
def parameter_branch(t):
    if isinstance(t, st.nn.Parameter):
        return t + 1
    return t * 2


def marked(t):
    return t * 3 if t.requires_grad else t - 3


@case("requires_grad")
def _():
    plain, param = st.ones(2) * 3, st.nn.Parameter(st.ones(2) * 3)
    for t in [plain, param, plain, param]:
        show("requires_grad, isinstance", parameter_branch(t))
        show("requires_grad, read", marked(t))


# 17. Item assignment into a tensor the graph computed (`y[:, 0] = 0`): recorded as an op
# whose result takes the tensor's place, seen through every name for it; a value computed
# in the graph is read as the graph computes it (it was once read as the stand-in's zeros).
def stores(x):
    y = x * 2
    keep = y
    before = y * 1
    y[:, 0] = 0.0
    y[1] = y[1] * 3
    y[..., -1] = x.sum()
    z = y.contiguous()
    z[0, 1:] = st.ones(2) * 7
    y[2, 1] = 5  # an int, cast to the tensor's dtype
    return keep + 1, before, y


def store_into_input(x):
    x[0] = 5.0
    return x * 2


@case("tensor stores")
def _():
    for n in (3, 3, 4):
        x = st.arange(n * 3.0).reshape(n, 3)
        show("tensor stores", [t.tolist() for t in stores(x)])
        show("tensor stores, input", store_into_input(x))
        show("tensor stores, input after", x)
    e = st.explain(stores, st.ones(3, 3))
    show("tensor stores, graphs", (e.graph_count, e.graph_break_count))


# 18. isinstance and issubclass as the interpreter asks them: a metaclass's
# `__instancecheck__` written in Python (here with a side effect) runs as often as eagerly,
# a tuple stops at its first hit, and `int | float` is a union; all in one graph.
checks = []


class Shaped(type):
    def __instancecheck__(cls, inst):
        checks.append(type(inst).__name__)
        return hasattr(inst, "shape") and len(inst.shape) == 2


class Matrix(metaclass=Shaped):
    pass


def class_tests(x, y):
    r = x * 1
    if isinstance(x, Matrix):
        r = r + 1
    if isinstance(y, (int, Matrix)):
        r = r * 2
    if isinstance(y, int | float):
        r = r - 1
    if issubclass(type(x), (Matrix, st.Tensor)):
        r = r * 3
    return r


@case("class tests")
def _():
    for args in [(st.ones(2, 2), 3), (st.ones(2), 2.5), (st.ones(2, 2), st.ones(3, 3)),
                 (st.ones(3), "s"), (st.ones(2, 2), 3)]:
        checks.clear()
        show("class tests", class_tests(*args))
        show("class tests, checks", list(checks))
    e = st.explain(class_tests, st.ones(2, 2), 3)
    show("class tests, graphs", (e.graph_count, e.graph_break_count))


# 19. Enum members: compared by identity (`is`, and `==`, which an Enum leaves to object),
# their `value` and `name` read; a member changed between calls is seen. One graph.
import enum


class Mode(enum.Enum):
    SUM = 1
    MEAN = 2


class Config:
    def __init__(self, mode):
        self.mode = mode


def by_mode(x, cfg):
    r = x.sum() if cfg.mode is Mode.SUM else x.mean()
    if cfg.mode == Mode.MEAN:
        r = r * 10
    return r * cfg.mode.value, cfg.mode.name


# An IntEnum's members read from its class (the class's `int` base changes nothing there),
# compared with ints and with each other as ints compare.
class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def by_level(x, level):
    y = x * 2.0 if level is Level.HIGH else x - 1.0
    return y + 10.0 if level >= 2 and level != Level.LOW and Level.LOW < level else y


# Their `value` and `name` (enum's own properties: the member's `_value_` and `_name_`).
def by_level_value(x, level):
    return x * level.value + len(level.name), level.name


@case("enums")
def _():
    x = st.arange(4.0)
    for mode in (Mode.SUM, Mode.MEAN, Mode.SUM, Mode.MEAN):
        r, name = by_mode(x, Config(mode))
        show("enums", (r.tolist(), name))
    e = st.explain(by_mode, x, Config(Mode.SUM))
    show("enums, graphs", (e.graph_count, e.graph_break_count))
    for level in (Level.LOW, Level.HIGH, Level.LOW):
        show("int enums", by_level(x, level).tolist())
    e = st.explain(by_level, x, Level.HIGH)
    show("int enums, graphs", (e.graph_count, e.graph_break_count))
    for level in (Level.LOW, Level.HIGH, Level.LOW):
        r, name = by_level_value(x, level)
        show("int enums, value and name", (r.tolist(), name))
    e = st.explain(by_level_value, x, Level.HIGH)
    show("int enums, value and name, graphs", (e.graph_count, e.graph_break_count))


# 20. An instance's `__dict__` iterated while an attribute store adds a key to it: Python
# raises RuntimeError; traced, the loop ran over a copy of the keys. Also when the dict
# iterated is an argument that is the instance's `__dict__` only on a later call.
class Bag:
    pass


def iterate_own_dict(x, o):
    n = 0
    for k in o.__dict__:
        o.added = 5
        n += 1
    return x * n


def iterate_a_dict(x, d, o):
    n = 0
    for k in d:
        o.added = 5
        n += 1
    return x * n


@case("dict iterated while changed")
def _():
    for same in (False, False, True):
        o = Bag()
        o.a = 1
        try:
            show("dict iterated while changed, own", iterate_own_dict(st.ones(2), o))
        except RuntimeError as e:
            show("dict iterated while changed, own raised", e)
        o = Bag()
        o.a = 1
        try:
            show("dict iterated while changed, argument",
                 iterate_a_dict(st.ones(2), vars(o) if same else {"a": 1}, o))
        except RuntimeError as e:
            show("dict iterated while changed, argument raised", e)


# 21. `(y,) + seq` where seq is a list or a str: Python raises TypeError; traced, a tuple
# of the items came out. `+` and `*` of lists and tuples in the graph otherwise.
def concatenated(x, seq):
    try:
        t = (x * 2,) + seq
    except TypeError:
        return "TypeError"
    return (t[0] * len(t)).tolist()


class History:
    def __init__(self):
        self.items = [st.ones(2)]


def grown(x, h, n):
    h.items = h.items + [x * 2]
    rows = h.items * n
    return st.stack(rows).sum(0) * len((1,) * n)


@case("sequence operators")
def _():
    for seq in ([2, 3], "ab", (4, 5), [1]):
        show("sequence operators, concatenated", concatenated(st.ones(1), seq))
    h = History()
    for n in (2, 2, 3, 0 + 1):
        show("sequence operators, grown", grown(st.ones(2), h, n))
    show("sequence operators, grown items", len(h.items))
    e = st.explain(grown, st.ones(2), History(), 2)
    show("sequence operators, graphs", (e.graph_count, e.graph_break_count))


# 22. A caller's list changed, then an effect that raises when replayed (a delete of a missing
# key), then the list changed again: Python leaves the second change unmade; traced, the
# list's shadow was written back whole before the delete, with the second change in it.
def change_raise_change(x, table, log):
    y = x * 2.0
    log.insert(0, 7)
    del table["gone"]
    log[1:2] = [8, 8]
    return y


@case("list changed around a raising delete")
def _():
    log = [0, 1, 2]
    for table in ({"gone": 1}, {}, {}, {"gone": 2}):
        try:
            show("list changed around a raising delete", change_raise_change(st.ones(2), table, log).tolist())
        except KeyError as e:
            show("list changed around a raising delete, raised", repr(e))
        show("list changed around a raising delete, list", (log, table))


# 23. A 0-d tensor as masked_fill's value (`x.masked_fill(mask, v)`, as torch accepts it):
# its element was read out while tracing, from the stand-in, which holds zeros: the value
# was baked in as 0.0. Now it is an operand of the graph. The same for `t[mask] = v`.
def masked_by_tensor(x, v):
    y = x * 1.0
    y[y > 2.5] = v
    return x.masked_fill(x < 1.5, v), y


@case("masked_fill with a 0-d tensor")
def _():
    for k in (1.0, 7.0, -3.0):
        a, b = masked_by_tensor(st.arange(5.0), st.tensor(k))
        show("masked_fill with a 0-d tensor", (a.tolist(), b.tolist()))


# 24. An instance of a class with `__del__` made in a call and dropped there: the simulation
# kept it as a value of its own, the replacement never made it, and its finalizer never ran
# (a count kept by `__init__` and `__del__` grew by one per call). Such a class is called as
# written. And a count kept on the class itself (`Tracked.live += 1`), a store into a class.
class Tracked:
    live = 0
    made = 0

    def __init__(self, v):
        Tracked.live += 1
        Tracked.made += 1
        self.v = v

    def __del__(self):
        Tracked.live -= 1
        print("finalized", self.v.tolist())


def make_and_drop(x):
    t = Tracked(x * 2.0)
    return t.v + 1.0


@case("finalizers")
def _():
    for k in (1.0, 2.0, 3.0):
        show("finalizers", make_and_drop(st.full((2,), k)).tolist())
        show("finalizers, live and made", (Tracked.live, Tracked.made))


# 25. Objects made in a call that link to each other (a tree's parent links, a list that holds
# itself, a partial that holds itself): building the replacement's template recursed without
# end and the interpreter died of a stack overflow (SIGSEGV; CPython's test_optparse under
# `trace_all=1`). Such a value is turned away; the frame runs as written.
class TreeNode:
    def __init__(self, parent=None):
        self.parent = parent
        self.children = []
        if parent is not None:
            parent.children.append(self)


def linked(x):
    root = TreeNode()
    TreeNode(TreeNode(root))
    loop = [x]
    loop.append(loop)
    return x * 2.0, root, loop


def partial_holding_itself(x):
    import functools
    held = []
    p = functools.partial(len, held)
    held.append(p)
    return x + 1.0, p


def read_holding_itself(x):
    # A list that holds itself read by native code, printed and measured (walking it to hand
    # it over recursed without end: the interpreter died of a stack overflow, CPython's
    # test_list.test_repr under the plugin once unittest's type-keyed lookups were simulated).
    a = [x, 2]
    a.append(a)
    print("values that hold themselves, printed:", a[1], len(a), a[2][2][1])
    print("values that hold themselves, printed whole:", a)
    return x.reshape(a[1], -1) * len(a), a == a, repr(a)[-8:]


@case("values that hold themselves")
def _():
    for k in (1.0, 2.0, 3.0):
        y, root, loop = linked(st.full((2,), k))
        child = root.children[0]
        show("values that hold themselves", (y.tolist(), child.parent is root,
                                             child.children[0].parent is child, loop[1] is loop))
        z, p = partial_holding_itself(st.full((2,), k))
        show("values that hold themselves, partial", (z.tolist(), p(), p.args[0][0] is p))
        r, same, text = read_holding_itself(st.full((2,), k))
        show("values that hold themselves, read", (r.tolist(), same, text))


# 26. A class entry shadowed by its metaclass's data descriptor: `type.__base__` and
# `type.__name__` come before a class's own `__base__ = None` or `__name__ = "Spam"` (the
# simulation read the class's entries), and a metaclass attribute whose class gains
# `__get__`/`__set__` after a translation comes before the class's entry from then on (the
# translation guarded the metaclass, not the descriptor's class). CPython's test_opcache
# under `trace_all=1`.
class Shadowed:
    __base__ = None
    __name__ = "Spam"


def type_descriptors(x):
    return x + 1.0, Shadowed.__base__ is object, Shadowed.__name__


class Plain:
    pass


class WithDescriptor(type):
    attribute = Plain()


class UsesMeta(metaclass=WithDescriptor):
    attribute = "the class's"


def metaclass_attribute(x):
    return x + 1.0, UsesMeta.attribute


@case("metaclass data descriptors")
def _():
    for k in (1.0, 2.0):
        show("metaclass data descriptors, type's", type_descriptors(st.full((2,), k))[1:])
    # Called once before the change: RustPython's own attribute cache, specialized after
    # some calls, misses this change too (test_opcache fails it without the plugin).
    show("metaclass data descriptors, user's", metaclass_attribute(st.full((2,), 1.0))[1:])
    Plain.__get__ = lambda self, instance, owner: "the descriptor's"
    Plain.__set__ = lambda self, instance, value: None
    for k in (1.0, 2.0):
        show("metaclass data descriptors, user's", metaclass_attribute(st.full((2,), k))[1:])


# 27. A draw, then a deletion that fails on a later call: the graph (which draws) ran before
# the replayed `del` raised KeyError, so the random numbers drawn after it differed from the
# program's (fuzz seed 580274). A graph that draws with a deletion to replay runs as written.
def delete_then_draw(x, data):
    del data["a"]
    return x + st.rand_like(x)


@case("draws after a failing deletion")
def _():
    data = {"a": 1}
    st.manual_seed(7)
    for call in range(3):
        try:
            show("draws after a failing deletion, result", delete_then_draw(st.ones(2), data))
        except KeyError as e:
            show("draws after a failing deletion, raised", repr(e))
        show("draws after a failing deletion, next draw", st.rand(2))


# 28. A caller's tensor written, then a deletion that fails on a later call, then the tensor
# written again: its write-back, placed at its first write and carrying its final value, ran
# before the replayed `del` raised KeyError, so the write the program never made (after the
# raise) was in the caller's tensor (fuzz seed 600691). A write-back before a deletion to
# replay runs as written.
def write_delete_write(x, data):
    x.mul_(2.0)
    del data["a"]
    x[..., [0, -1]] = 2.0


@case("a write after a failing deletion")
def _():
    data = {"a": 1}
    x = st.tensor([1.0, 3.0, 5.0])
    for call in range(3):
        try:
            write_delete_write(x, data)
        except KeyError as e:
            show("a write after a failing deletion, raised", repr(e))
        show("a write after a failing deletion, tensor", x)


# 29. A tuple made in the call and held twice (`t = (a, b); return t, t`, a field of a
# `ModelOutput` both an entry and an attribute): the replacement built it from its template
# at each place, so the program saw two tuples where it had one (`a is b` false). A value
# made in the call and held more than once is built once and loaded again; lists, dicts and
# objects held twice (which made the frame run as written) too.
class Holder:
    def __init__(self, value):
        self.value = value


def held_twice(x):
    t = (x + 1.0, x * 2.0)
    l = [x]
    d = {"l": l, "t": t}
    h = Holder(d)
    return t, t, l, d, h, (h, t)


def held_twice_across_a_break(x):
    l = [x + 1.0]
    h = Holder(l)
    st.graph_break()
    print("held twice, a break")
    l.append(x * 3.0)
    return l, h


@case("values held twice")
def _():
    for k in (1.0, 2.0, 3.0):
        t, u, l, d, h, pair = held_twice(st.full((2,), k))
        show("values held twice", (t is u, d["l"] is l, d["t"] is t, h.value is d,
                                   pair[0] is h, pair[1] is t, t[0].tolist()))
        l, h = held_twice_across_a_break(st.full((2,), k))
        show("values held twice, across a break", (h.value is l, len(l), l[1].tolist()))


# 30. `chunk` of a tensor along a dimension whose size changes: the size was to be checked
# per call (the pieces' bounds hold for it alone), but the check read a copy of the fake,
# which the recorder does not know, so none was made; the graph recorded at 5 rows (pieces
# of 2, 2, 1) answered at 6 rows with a last piece of 1 row where eager has 2.
def last_chunk(x):
    return x.chunk(3)[-1] * 2.0, len(x.split(2))


@case("chunk along a changing size")
def _():
    for n in (4, 5, 6, 7, 6, 9):
        piece, count = last_chunk(st.arange(n * 2, dtype=st.float64).reshape(n, 2))
        show("chunk along a changing size", (n, piece.tolist(), count))


# 31. `a is b` of two values of the caller's that are lists or tuples (`o.extras is o.extras`,
# `l is l` after `l.append(...)`): the simulation compared the lists it made from their
# items, two new objects, and answered False. The objects themselves are compared now, and
# whether two sources are one object is guarded.
class WithExtras:
    def __init__(self):
        self.extras = []


def same_lists(x, o, l, other):
    o.extras.append(x * 2.0)
    l.append(x + 1.0)
    a, b = o.extras, o.extras
    return a is b, l is l, l is other, o.extras is other, len(l)


@case("identity of the caller's lists")
def _():
    shared = []
    for call in range(4):
        o = WithExtras()
        mine = [] if call % 2 else shared
        other = mine if call < 2 else o.extras
        show("identity of the caller's lists", same_lists(st.full((2,), 1.0), o, mine, other))


# 32. The defaults of a function inlined in a traced call (`def scaled(x, s=2.0)`) were
# taken as constants of the graph: after `scaled.__defaults__ = (3.0,)` (or a keyword-only
# default changed in `__kwdefaults__`) the graph went on scaling by 2. Which defaults tuple
# the function holds is guarded now, and a keyword-only default is read through its dict.
def scaled(x, s=2.0, *, shift=0.0):
    return x * s + shift


def calls_scaled(x):
    return scaled(x)


@case("defaults of an inlined function")
def _():
    x = st.ones(2)
    results = [calls_scaled(x).tolist()]
    scaled.__defaults__ = (3.0,)
    results.append(calls_scaled(x).tolist())
    scaled.__kwdefaults__["shift"] = 1.0
    results.append(calls_scaled(x).tolist())
    show("defaults of an inlined function", results)


# 33. A tensor the call computes from constants, held by a local and passed to a call the
# graph breaks at (`base = st.ones(3) * 2.0; y = bump(base)`): the replacement made it twice
# from one graph constant, so the call updated one copy in place and the local held the
# other, unchanged. One tensor is made now, wherever it is held.
def bump_and_break(t):
    t += 1.0
    t.tolist()  # not simulated: the inlined call is rolled back, the caller breaks at it
    return t


def made_then_bumped(x):
    z = x * 5.0
    base = st.ones(3) * 2.0
    y = bump_and_break(base)
    return (y + z).tolist(), base.tolist(), y is base


@case("a constant tensor held twice at a break")
def _():
    for call in range(3):
        show("a constant tensor held twice at a break", made_then_bumped(st.ones(3) * call))


# A dict keyed by the caller's tensors (an optimizer's state): the key read from its own
# source per call. The parameters are swapped for new tensors (absent keys: the state is
# made again), then one becomes an alias of the other (one state shared), then the dict is
# read whole after its keys changed.
class KeyedState:
    def __init__(self, params):
        self.params = params
        self.state = {}

    def step(self, g):
        for p in self.params:
            s = self.state.setdefault(p, {})
            s["n"] = s.get("n", 0) + 1
            p.add_(g * s["n"])
        return [s["n"] for s in self.state.values()], len(self.state)


@case("a dict keyed by tensors, the tensors swapped and aliased")
def _():
    opt = KeyedState([st.zeros(2), st.zeros(2)])
    for call in range(8):
        if call == 3:
            opt.params = [st.zeros(2), st.zeros(2)]
        if call == 5:
            opt.params[1] = opt.params[0]
        counts, n = opt.step(st.ones(2))
        show("a dict keyed by tensors", (counts, n, [p.tolist() for p in opt.params]))


# An op of the graph that raises on the data (an index out of range): the side effects the
# frame made before it (a log, a counter, a draw) were lost, as the replacement replays them
# after the graph. The frame runs as written when its graph raises.
raised_log = []


def log_then_gather(x, i):
    raised_log.append(len(raised_log))
    noise = st.rand(2)
    y = x * 2 + noise.sum()
    return y.gather(0, i)


def log_then_gather_then_break(x, i):
    raised_log.append(-1)
    y = x.gather(0, i) * 3
    y.tolist()  # a graph break after the graph
    return y


@case("a graph that raises on its data, after side effects")
def _():
    for fn in (log_then_gather, log_then_gather_then_break):
        st.manual_seed(7)
        for index in ([0, 1], [1, 2], [0, 5], [2, 0], [-9, 0]):
            try:
                out = fn(st.ones(3), st.tensor(index)).tolist()
            except IndexError as e:
                out = f"IndexError: {e}"
            show("a graph that raises on its data", (out, list(raised_log), st.rand(1).tolist()))


# 34. A closure inlined in a traced call that shares a cell with the traced frame (two
# functions of one enclosing call, `nonlocal total` in one, `total` read by the other): the
# inlined closure read the cell's value from before the call, not what the frame had stored
# into it. The inlined closure's cell is the frame's own now, the sharing guarded.
def shared_total():
    total = 0

    def read():
        return total

    def add_then_read(x):
        nonlocal total
        total = total + 5
        return x * read()

    return add_then_read


@case("a cell shared with an inlined closure")
def _():
    f = shared_total()
    show("a cell shared with an inlined closure", [f(st.ones(2)).tolist() for _ in range(3)])


# 20. Numbers drawn from Python's random module: the replacement draws them first, so a frame
# where the program might stop before a draw (a graph that raises on its data and then runs
# as written, a print that fails) must not draw them first. The draws, results and the
# generator's state after each call are the same as eagerly.
import random


def drawn_then_indexed(x, idx):
    r = random.random()
    picked = x.index_select(0, idx)
    return picked * r + random.uniform(0.0, 1.0)


def drawn_and_printed(x):
    y = x * random.gauss(0.0, 1.0)
    print("drawn and printed", y.shape)
    return y * random.random()


def drawn_unused(x):
    # A draw nothing reads: the replacement still draws it (a cache hit that only runs the
    # graph would not).
    random.random()
    return x * 2


def drawn_branch(x, box):
    box["p"] = random.random()
    if box["p"] < 0.5:
        return x * 2 + random.randint(1, 3)
    return x - box["p"]


@case("random draws")
def _():
    random.seed(11)
    x = st.arange(6.0).reshape(3, 2)
    box = {}
    for idx in ([0, 2], [1, 1], [5, 0], [2, 0]):
        try:
            show("random draws, indexed", drawn_then_indexed(x, st.tensor(idx)))
        except IndexError as e:
            show("random draws, indexed raised", type(e).__name__)
        show("random draws, state", random.getrandbits(16))
    for _ in range(3):
        show("random draws, unused", drawn_unused(x))
        show("random draws, state after an unused one", random.getrandbits(16))
        show("random draws, printed", drawn_and_printed(x))
        show("random draws, branch", drawn_branch(x, box))
        show("random draws, box", round(box["p"], 12))
    show("random draws, state at the end", random.getrandbits(32))


# 35. A set made in the call and changed while a loop iterates it: Python raises
# RuntimeError; the simulation iterated a copy of its items and returned a result. A set's
# iterator held at the end was made again over a tuple of its items (another type, blind to
# a later change of the set: CPython's test_iterlen), and a deque's over `islice` of it
# (reporting no length left); a deque's reversed, over a tuple of its items, and stepped
# in a loop over a copy (blind to the deque growing).
def set_grown_in_loop(x):
    s = {1, 2, 3}
    for v in s:
        x = x + v
        if v == 1:
            s.add(10)
    return x


def set_shrunk_between_steps(x):
    s = {1, 2, 3}
    it = iter(s)
    next(it)
    s.discard(3)
    return x + next(it)


def set_iterator_kept(x):
    s = {1, 2, 3}
    return x * 2, iter(s), s.pop


def deque_iterator_kept(x):
    d = collections.deque(range(5))
    it = iter(d)
    next(it)
    return x * 2, it, d.pop


def deque_grown_in_reversed_loop(x):
    d = collections.deque([1, 2, 3])
    for v in reversed(d):
        x = x + v
        if v == 2:
            d.append(9)
    return x


def reversed_deque_kept(x):
    d = collections.deque(range(5))
    it = reversed(d)
    next(it)
    return x * 2, it, d.pop


def step_after_a_change(it, change, name):
    change()
    try:
        next(it)
        show(name, "no error")
    except RuntimeError as e:
        show(f"{name} raised", e)


@case("sets changed while iterated")
def _():
    for _ in range(2):
        for fn in (set_grown_in_loop, set_shrunk_between_steps, deque_grown_in_reversed_loop):
            try:
                show(f"{fn.__name__}", fn(st.ones(2)))
            except RuntimeError as e:
                show(f"{fn.__name__} raised", e)
        y, it, pop = set_iterator_kept(st.ones(2))
        show("set iterator kept, type", type(it).__name__)
        show("set iterator kept, first", next(it))
        step_after_a_change(it, pop, "set iterator kept")
        for name, kept in (("deque iterator kept", deque_iterator_kept), ("reversed deque kept", reversed_deque_kept)):
            y, it, pop = kept(st.ones(2))
            show(name, (type(it).__name__, operator.length_hint(it), next(it)))
            step_after_a_change(it, pop, name)


# 36. An item of a list read at a counter that the call then increments (an iterator class's
# `__next__`): the replacement read the item after replaying the increment, at the next
# index (IndexError at the end; CPython's test_itertools under trace_all=1).
class Stepping:
    def __init__(self, items):
        self.items, self.i = items, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= len(self.items):
            raise StopIteration
        v = self.items[self.i]
        self.i += 1
        return v


@case("an item read at a counter, then the counter incremented")
def _():
    show("stepping", list(Stepping([1, 2, 3, 4, 5])))
    show("stepping, scaled", [st.ones(1) * v for v in Stepping([0.5, 1.5, 2.5])])


# 37. A caller's deque appended to, then read back in the same call: the read sees the
# appends (the deque on entry, then the replayed changes, past `maxlen` dropped), and read
# through another name, it is the changed deque only while the two names are one deque.
class Histories:
    def __init__(self):
        self.a = collections.deque(maxlen=2)
        self.b = self.a

    def __call__(self, x):
        self.a.append(x * 2)
        self.b.appendleft(x + 1)
        return st.stack(list(self.b)).sum(0), len(self.a), self.a[0]


@case("a caller's deque appended to, then read back")
def _():
    h = Histories()
    for i in range(6):
        if i == 3:
            h.b = collections.deque([st.ones(2)], maxlen=4)
        if i == 5:
            h.b = h.a
        show("histories", h(st.ones(2) * i))
    show("histories after", (list(h.a), list(h.b)))


# 38. A value read from a container of the caller's, then another container changed, which
# is the same one on a later call (`v = self.m[0]; self.l.insert(0, x)` once `self.m is
# self.l`): the replacement loaded the value after replaying the change, reading the item
# the change put there. A read from a container is loaded before the effects once a
# container changes.
class Aliased:
    def __init__(self):
        self.l, self.m = [st.zeros(2)], [st.ones(2)]
        self.d, self.e = {"k": st.zeros(2)}, {"k": st.ones(2)}

    def __call__(self, x):
        v, w = self.m[0], self.e["k"]
        self.l.insert(0, x * 5)
        self.d["k"] = x * 7
        return v, w, x + 1


@case("a container read, then another changed that is the same one")
def _():
    a = Aliased()
    for i in range(5):
        if i == 3:
            a.m, a.e = a.l, a.d
        show("aliased", a(st.ones(2) * i))


# 39. A graph break at `super().__new__(cls, ...)` (LOAD_SUPER_ATTR's method form) after
# tensor work: a static method's load leaves a NULL beside it, which the replacement passed to
# the resume function as an argument, and the interpreter stopped on it. The NULL is made
# again inside the resume function, as for LOAD_ATTR's method form; a method bound to `self`
# the same way.
from collections import namedtuple


class Pair(namedtuple("Pair", ["a", "b"])):
    __slots__ = ()

    def __new__(cls, a, b=None):
        if b is None:
            b = a * 2
        return super().__new__(cls, a, b)


class Scaled(list):
    def append(self, x):
        x = x * 3
        return super().append(x + 1)


@case("super() method loads after tensor work")
def _():
    f = st.compile(lambda x: Pair(x).b + 1)
    for i in range(3):
        show("super new", f(st.ones(2) * i))
    s = Scaled()
    g = st.compile(lambda x: (s.append(x), len(s)))
    for i in range(3):
        show("super method", g(st.ones(2) * i)[1])
    show("super method list", [t.tolist() for t in s])


# 40. Iterators read as far as Python reads them (more-itertools' `seekable.seek` under
# trace_all=1): `islice(it, n, n)` gives nothing but still reads n inputs (`consume`'s
# idiom), and an islice with a step reads on to its stop before it ends; the simulation gave
# nothing without reading. `x in iterator` read the whole iterator where Python stops at the
# first match.
import itertools


def islice_reads(data, bounds):
    it = iter(data)
    given = list(itertools.islice(it, *bounds))
    return given, next(it, "end")


def islice_stepped(data, bounds):
    it = iter(data)
    s = itertools.islice(it, *bounds)
    return next(s, None), next(it, "end"), next(s, None), next(it, "end")


def member_of_iterator(data, x):
    it = iter(data)
    found = x in it
    return found, list(it)


def member_of_generator(data, x):
    it = (v * 2 for v in data)
    return x in it, next(it, "end")


@case("iterators read as far as Python reads them")
def _():
    for bounds in [(2, 2), (0, 5, 3), (5, 2), (1, None, 2), (3,), (4, 9, 2), (None, 3)]:
        show(f"islice {bounds}", islice_reads(list(range(10)), bounds))
        show(f"islice stepped {bounds}", islice_stepped(list(range(10)), bounds))
    for x in [2, 9]:
        show(f"in iterator {x}", member_of_iterator([1, 2, 3, 4], x))
        show(f"in generator {x}", member_of_generator([1, 2, 3, 4], x * 2))


# 41. `dict(m)`, a dict subclass's `C(m)` and `d.update(m)` where `m` is not a dict but an
# instance made in the call of a class written on dict (sympy's `PolyElement.copy`,
# `self.__class__(self)`, under trace_all=1): the simulation read `m` as an iterable of pairs,
# its keys unpacked (`{(1, 0): 1}` became `{1: 0}`). A mapping is read through its keys and
# items, as the interpreter reads any object with `keys`.
class Poly(dict):
    def copy(self):
        return self.__class__(self)

    def __add__(self, other):
        p = self.copy()
        for k, v in other.items():
            p[k] = p.get(k, 0) + v
        return p


class Keyed:
    def __init__(self, d):
        self.d = d

    def keys(self):
        return list(self.d)

    def __getitem__(self, k):
        return self.d[k] * 10

    def __iter__(self):
        return iter([("x", "y")])


class OwnKeys(dict):
    def keys(self):
        return ["only"]

    def __getitem__(self, k):
        return "own"


def mappings_made_here(n):
    p = Poly()
    for i in range(n):
        p += Poly({(i, 1): 1})
    return p, dict(p), Poly(p)


def mappings_merged(n):
    p = Poly({(n, 0): n}) + Poly({(0, n): 1})
    d = {}
    d.update(p)
    return d, {**p}


def mappings_read_through_their_methods(n):
    own = OwnKeys({(1, 2): 3})
    return dict(Keyed({"a": n})), dict(own), Poly(own)


@case("mappings made in the call read as mappings")
def _():
    for n in [1, 2, 3]:
        show("mappings", mappings_made_here(n))
        show("mappings merged", mappings_merged(n))
        show("mappings by methods", mappings_read_through_their_methods(n))


class StepKeys:
    """keys() a generator: the interpreter steps it between the reads of the entries."""

    def __init__(self):
        self.log = []

    def keys(self):
        for k in ("a", "b"):
            self.log.append("key " + k)
            yield k

    def __getitem__(self, k):
        self.log.append("get " + k)
        return len(self.log)


class GrowingKeys:
    """keys() a list that the reads extend: the interpreter reads the new keys too."""

    def __init__(self):
        self.ks = ["a"]

    def keys(self):
        return self.ks

    def __getitem__(self, k):
        if len(self.ks) < 3:
            self.ks.append(k + "x")
        return len(self.ks)


class ChangingView:
    """keys() a view of a dict that the reads change: the interpreter raises."""

    def __init__(self):
        self.d = {"a": 1, "b": 2}

    def keys(self):
        return self.d.keys()

    def __getitem__(self, k):
        self.d["c"] = 3
        return self.d[k]


def merged(m):
    try:
        return dict(m), getattr(m, "log", None)
    except RuntimeError as e:
        return f"RuntimeError: {e}"


@case("mappings of the caller's read through keys() and their items")
def _():
    for _ in range(3):
        show("caller mappings", [merged(StepKeys()), merged(GrowingKeys()), merged(ChangingView())])


# 43. A class whose `__getattr__` is not a function written in Python but a native method
# (`class AttrDict(dict): __getattr__ = dict.__getitem__`, the EasyDict idiom): the lookup
# took it for a class without `__getattr__` and raised AttributeError, which a handler
# caught; the interpreter calls `dict.__getitem__`, which returns the entry or raises
# KeyError.
class AttrDict(dict):
    __getattr__ = dict.__getitem__


def attr_dict_read(x, cfg):
    try:
        s = cfg.scale
    except AttributeError:
        s = 10.0
    try:
        t = cfg.shift
    except AttributeError:
        t = 100.0
    except KeyError:
        t = 1000.0
    return x * s + t


@case("native __getattr__")
def _():
    cfg = AttrDict(scale=2.0)
    for i in range(3):
        cfg["calls"] = i
        show("native __getattr__", (attr_dict_read(st.ones(2), cfg).tolist(), sorted(cfg.items())))


# 44. The referent of a caller's weak reference, read through it (`owner = self.owner()`):
# a side effect of the call may drop the last strong reference to it elsewhere (a list
# cleared, an attribute deleted) while the frame's variable keeps it alive. Loaded after
# the side effects are replayed, it would be gone (None) where the program still has it.
class WeakOwner:
    def __init__(self, scale):
        self.scale = scale


class WeakPart:
    def __init__(self, owner):
        self.owner = weakref.ref(owner)
        self.keep = [owner]


def weakly_owned(x, part):
    owner = part.owner()
    part.keep.clear()
    owner.scale += 1.0
    st.graph_break()
    return x * owner.scale, owner is None


@case("a weak reference's referent kept alive by the frame")
def _():
    for i in range(3):
        part = WeakPart(WeakOwner(float(i)))
        show("weak referent", weakly_owned(st.ones(2), part)[0].tolist())


# 45. A class written on tuple whose own `__contains__` tests something else than its items
# (sqlparse's token types: `ttype in T.Keyword` is a prefix test), one whose `__contains__` is
# a static method, one whose `__eq__` is its own: read as tuples, the simulation tested
# membership and equality over their items as tuple does, and answered what the classes
# never do.
class TokenType(tuple):
    def __contains__(self, item):
        return item is not None and (self is item or item[:len(self)] == self)


class Anything(tuple):
    __contains__ = staticmethod(lambda item: True)


class Loose(tuple):
    def __eq__(self, other):
        return True

    __hash__ = tuple.__hash__


KEYWORD = TokenType(("Keyword",))


def token_tests(x, ttype, bag, loose):
    return x * 2, ttype in KEYWORD, "q" in bag, loose == (9,), loose != (9,)


@case("classes on tuple with their own protocols")
def _():
    bag, loose = Anything(("a",)), Loose((1,))
    for ttype in [TokenType(("Keyword", "DML")), TokenType(("Name",)), TokenType(("Keyword",))]:
        show("tuple protocols", token_tests(st.ones(1), ttype, bag, loose)[1:])


# 46. A dict keyed by enum members, read by a member: the values and the keys change
# between calls (a value replaced, a member added and removed, a str key beside them).
class Stage(enum.Enum):
    A = 1
    B = 2


def staged(x, table, stage):
    return x * table.get(stage, -1.0), stage in table, len([k for k in table])


@case("a dict keyed by enum members that changes between calls")
def _():
    table = {Stage.A: 2.0}
    for i in range(6):
        if i == 1:
            table[Stage.A] = 3.0
        if i == 2:
            table[Stage.B] = 5.0
        if i == 3:
            del table[Stage.A]
        if i == 4:
            table["A"] = 7.0
        r = staged(st.ones(1), table, Stage.A if i % 2 == 0 else Stage.B)
        show("enum table", (r[0].tolist(), r[1], r[2]))


# 47. A str or float argument, and a caller's dict keyed by str, where a later call passes an
# instance of a subclass with the same value (markupsafe's `Markup("a") == "a"`, a member of
# a `(str, Enum)`): the guards compared values only, so the translation made for the plain
# value ran, answering for str's and float's methods where the subclass has its own (jinja's
# `x is escaped` test, `hasattr(value, "__html__")`, said False of a Markup).
class Html(str):
    def __html__(self):
        return self


class Ratio(float):
    def describe(self):
        return "a ratio"


class Color(str, enum.Enum):
    RED = "red"


def escaped(x, value, ratio, table):
    kinds = [type(k).__name__ for k in table]
    return x * 2, hasattr(value, "__html__"), hasattr(ratio, "describe"), kinds


@case("subclasses of str and float equal to a constant")
def _():
    for value, ratio, key in [
        ("a", 0.5, "red"),
        (Html("a"), 0.5, "red"),
        ("a", Ratio(0.5), "red"),
        ("a", 0.5, Color.RED),
    ]:
        show("same value, other class", escaped(st.ones(1), value, ratio, {key: 1})[1:])


# 48. A float compared with itself (`val != val`, natsort's test for NaN) once its value
# changes per call: the comparison's outcome was computed as a container compares its items,
# identity first, which makes a NaN equal to itself where `!=` says it is not.
def nan_key(x, val):
    if val != val:
        return x * 0, "nan"
    if val == val:
        return x * val, "number"
    return x, "neither"


@case("a float compared with itself")
def _():
    for val in [57.0, 3.5, float("nan"), 2.0, float("nan")]:
        r = nan_key(st.ones(1), val)
        show("nan test", (r[0].tolist(), r[1]))


# 49. An attribute stored, then stored again through the instance's `__dict__`, then read
# (`a.v = 1; a.__dict__["v"] = 2; a.v`): the read answered the first store. Both channels
# are followed now (a store through `__dict__` by key, as `functools.cached_property` makes
# it), and where an attribute was stored both ways the read breaks.
class Slot:
    pass


def stored_twice(a, x):
    a.v = 1
    a.__dict__["v"] = 2
    return x * a.v


def stored_through_dict(a, x, k):
    a.__dict__["v"] = k
    a.w = 5
    return x * a.v + a.w + a.__dict__["w"]


@case("an attribute stored through __dict__")
def _():
    for k in [3, 4, 4]:
        a, b = Slot(), Slot()
        show("an attribute stored through __dict__", (stored_twice(a, st.ones(1)).tolist(), a.v,
             stored_through_dict(b, st.ones(1), k).tolist(), vars(b)))


# 50. A module's namespace changed through one channel and read through the other: a
# global stored (`global X; X = 1`) then read from the namespace as a dict (`ns["X"]`, the
# dict handed in), or the dict changed (`ns["X"] = 5`, `ns.update(X=9)`) then the global
# read (`X`). Each channel was followed on its own: the read answered what the other had
# replaced. Such a read now breaks.
NS_X = 0


def namespace_read_after_global(ns, x):
    global NS_X
    NS_X = 1
    return x * ns["NS_X"]


def global_read_after_namespace(ns, x, v):
    ns["NS_X"] = v
    return x * NS_X


def global_read_after_update(ns, x, v):
    ns.update(NS_X=v)
    return x * NS_X


@case("one namespace, two channels")
def _():
    global NS_X
    for v in [5, 6, 6]:
        NS_X = 0
        first = namespace_read_after_global(globals(), st.ones(1)).tolist()
        second = global_read_after_namespace(globals(), st.ones(1), v).tolist()
        third = global_read_after_update(globals(), st.ones(1), v + 1).tolist()
        show("one namespace, two channels", (first, second, third, NS_X))


# 51. A builtin replaced through the builtins module (`builtins.abs = f`, a test's patch)
# and then called by name: the call was made to the builtin the frame had read before.
import builtins as _builtins


def patched_builtin(x, v):
    saved = _builtins.abs
    _builtins.abs = lambda a: v
    try:
        return x * abs(-1)
    finally:
        _builtins.abs = saved


@case("a builtin replaced")
def _():
    for v in [100, 200, 200]:
        show("a builtin replaced", (patched_builtin(st.ones(1), v).tolist(), abs(-1)))


# 52. Views share their base's elements, as torch's do: `m[i][j] = v`, `w[0].fill_(0)`,
# `x[:, 0] += 1`, a view read after its base changed, a view returned and written later.
# Eagerly the view was a copy (the write was lost); traced, a view returned by the graph was
# a tensor of its own, and an update of one side was not seen by the other.
def views_written(x):
    y = x * 1
    a = y[0]
    b = y[:, 1]
    y[1, 1] = 100.0
    a += 1
    for i in range(1, 3):
        y[i] = y[i - 1] * 0.5 + y[i]
    y.narrow(0, 2, 1).fill_(0.0)
    return y, a * 1, b * 1


def view_of_input(x):
    x[0] += 1
    x[:, 2] *= 2
    return x[1], x.T


@case("views share their base's elements")
def _():
    for _ in range(3):
        m = st.zeros(2, 3)
        m[0][1] = 5.0
        for row in m:
            row[2] = -1.0
        m.view(6)[:] = m.view(6) * 1  # the view's base as the value: read as a copy
        m.view(2, 3)[...] = m
        x = st.arange(9.0).reshape(3, 3)
        y, a, b = views_written(x)
        r, t = view_of_input(x)
        x.mul_(10)
        r.add_(1)
        z = st.arange(6.0).reshape(2, 3)
        z.T.contiguous().add_(100)  # a copy: a transpose's elements are out of order
        z[0].contiguous().add_(10)  # the view itself: a row's are in order
        show("views share their base's elements", ([v.tolist() for v in (m, y, a, b, r, t, x, z)]))
    e = st.explain(views_written, st.ones(3, 3))
    show("views share their base's elements, graphs", (e.graph_count, e.graph_break_count))


# 53. An update of a view made by any ops (a transpose's, `view(-1)`'s, a view of a view,
# `detach()`'s) writes through into its base in the graph too, at the positions the view's
# ops give (`put`), worked out per call from the base's sizes. It broke the graph before.
def views_of_views_written(x):
    y = x * 1
    y.t()[0] += 1  # a transpose's row: a column of y
    y.view(-1)[1] = -1.0
    y[1:][:, 1:].mul_(10)  # a view of a view
    d = y.detach()
    d[-1].zero_()
    x.view(-1)[:2] = y.reshape(-1)[4:6]  # the caller's tensor, through view(-1)
    return y, d[0] * 1


@case("views made by any ops write through")
def _():
    for n in (3, 3, 4, 5, 3):
        x = st.arange(n * 3.0).reshape(n, 3)
        y, row = views_of_views_written(x)
        show("views made by any ops write through", ([v.tolist() for v in (x, y, row)]))
    e = st.explain(views_of_views_written, st.ones(4, 3))
    show("views made by any ops write through, graphs", (e.graph_count, e.graph_break_count))


# 54. A view that lies where a number that changes per call says (`k.narrow(2, pos, 1)`, a
# KV cache's slot) was written back, or made again, at the recorded call's place: each later
# call wrote the same slot. Its op, made again in the graph, now takes the per-call
# attributes of the op that made the view, so it lies at each call's place.
def cache_slot_written(k, x, pos):
    k.narrow(1, pos, 1).copy_(x)
    return k.sum()


def cache_read_after_write(k, x, pos):
    seen = k[:, : pos + 1]
    k[:, pos] = x[:, 0]
    return seen.sum()


@case("a view where a changing number says")
def _():
    k, c = st.zeros(2, 6), st.zeros(2, 6)
    sums = [float(cache_slot_written(k, st.ones(2, 1) * (i + 1), i)) for i in range(5)]
    seen = [float(cache_read_after_write(c, st.ones(2, 1) * (i + 1), i)) for i in range(5)]
    show("a view where a changing number says", (sums, k.tolist(), seen, c.tolist()))
    for f in (cache_slot_written, cache_read_after_write):
        e = st.explain(f, st.zeros(2, 6), st.ones(2, 1), 3)
        show("a view where a changing number says, graphs", (e.graph_count, e.graph_break_count))


# 55. An int that changes per call next to a tensor is a graph input, converted through
# int64 as eager arithmetic converts it. One too large raised in the graph's call, before
# the frame's earlier effects were replayed: a print and an append before it were lost.
# Guards now check that it fits, so such a call runs as written and raises where eager does.
def effects_before_an_overflow(x, n, seen):
    y = x * 2
    print("55 before the overflow,", n % 7)
    seen.append(n % 5)
    return y + n * n


@case("effects before an overflow")
def _():
    seen, out = [], []
    for n in (1, 2, 3, 2**40, 4):
        try:
            out.append(effects_before_an_overflow(st.arange(3.0), n, seen).tolist())
        except OverflowError as exc:
            out.append(str(exc))
    show("effects before an overflow", (out, seen))


# 56. A tensor the program keeps as `y.detach()` of an output (`self.last = y.detach()`), of a
# view of it, or of an input is a view of all the elements of its base: an update of either
# is seen by the other. The replacement makes it that view again once the graph has run; the
# frame ran as written before ("made by ops the view cannot follow").
class KeepsDetached:
    def __init__(self):
        self.last, self.kept = None, []

    def doubled(self, x):
        y = x * 2
        self.last = y.detach()
        return y

    def shifted(self, x):
        y = x + 1
        d = y.detach()[1:]
        self.kept.append(d)
        return y, d.T

    def flat(self, x):
        self.last = x.detach()
        return x.detach().reshape(-1)


@case("detached outputs")
def _():
    k = KeepsDetached()
    for i in range(3):
        x = st.arange(6.0).reshape(3, 2) + i
        y = k.doubled(x)
        k.last.add_(1)
        a = (y.tolist(), k.last.tolist())
        y.mul_(0)
        y2, dt = k.shifted(x)
        dt.mul_(10)
        x2 = st.arange(4.0) * i
        r = k.flat(x2)
        r.add_(5)
        show("detached outputs", (a, k.last.tolist(), y2.tolist(), k.kept[-1].tolist(), x2.tolist()))
    for f, x in ((k.doubled, st.ones(3, 2)), (k.shifted, st.ones(3, 2)), (k.flat, st.ones(4))):
        e = st.explain(f, x)
        show("detached outputs, graphs", (e.graph_count, e.graph_break_count))


# 57. A view of a tensor the program holds, updated in place through the view and then handed
# back (`v = x[:, 1:]; v.mul_(2); return v.T`, a cache's `narrow(...).copy_(k)` returned): the
# view stands for the product in the graph, its base for the store of it; the replacement
# makes it a view of the base again by the view's own steps. It ran as written before ("made
# by ops the view cannot follow").
def scaled_tail(x, n):
    v = x[:, 1:n]
    v.mul_(2)
    return v.T


def nested_views(x):
    v = x[:, x.shape[1] // 2 :]
    v.add_(1)
    u = v[0]
    u.neg_()
    return v, u


def cache_window(cache, k, pos):
    c = cache.narrow(1, pos, k.shape[1])
    c.copy_(k)
    return c, cache[:, : pos + k.shape[1]]


@case("updated views handed back")
def _():
    for T in (4, 5, 6, 7):
        x = st.arange(2.0 * T).reshape(2, T)
        b = scaled_tail(x, T - 1)
        b[0, 0] = 100.0
        y = st.arange(2.0 * T).reshape(2, T)
        v, u = nested_views(y)
        u[0] = -7.0
        v[1, 0] = 55.0
        cache = st.zeros(1, 12)
        c, seen = cache_window(cache, st.ones(1, T % 3 + 1), T)
        c.fill_(9.0)
        show("updated views handed back", (x.tolist(), b.tolist(), y.tolist(), v.tolist(), u.tolist(), cache.tolist(), seen.tolist()))
    for f, args in (
        (scaled_tail, (st.ones(2, 4), 3)),
        (nested_views, (st.ones(2, 4),)),
        (cache_window, (st.zeros(1, 8), st.ones(1, 2), 3)),
    ):
        e = st.explain(f, *args)
        show("updated views handed back, graphs", (e.graph_count, e.graph_break_count))


# 58. One tensor read through two names (a module's parameter as `self.weight` in forward and
# from `parameters()` after it; an argument and an attribute that hold one tensor on some
# calls), updated through one: one fake, guarded to stay one object, so that the update is
# seen through the other name. The frame broke before ("an in-place update of ..., which the
# call also read as ..."); on a call where the names hold two tensors, the guard fails and
# the translation there keeps them apart.
class TwoNames:
    pass


def decay_after_forward(m, x):
    y = m(x)
    for p in m.parameters():
        p.mul_(0.5)
    return y + m.weight.sum()


def update_through_one_name(a, h):
    w = h.t
    y = a * 2.0 + w
    a.add_(1.0)
    return y + w + h.t, w is a


@case("one tensor under two names")
def _():
    lin = st.nn.Linear(2, 2)
    with st.no_grad():
        lin.weight.copy_(st.tensor([[1.0, 2.0], [3.0, 4.0]]))
        lin.bias.copy_(st.tensor([0.5, -0.5]))
    out = []
    for i in range(3):
        out.append((decay_after_forward(lin, st.ones(1, 2)).tolist(), lin.weight.tolist()))
    for i in range(4):
        t = st.ones(2) * i
        h = TwoNames()
        h.t = t if i % 2 == 0 else st.ones(2)
        r, same = update_through_one_name(t, h)
        out.append((r.tolist(), same, t.tolist(), h.t.tolist()))
    show("one tensor under two names", out)
    e = st.explain(decay_after_forward, st.nn.Linear(2, 2), st.ones(1, 2))
    show("one tensor under two names, graphs", (e.graph_count, e.graph_break_count))
