"""Builtins and the standard library in the simulation: sets (displays, comprehensions,
operators, methods), functools.reduce and partial, dict.fromkeys, dict(pairs), setdefault,
hasattr, slice(), iter/next, sorted (also with key=), reversed, any/all, operator.*, math.*, OrderedDict and
defaultdict made in the frame, live dict views, builtins read by a function of another
module, and a Python function set on Tensor (inlined; rebinding it is seen)."""
import collections
import functools
import math
import operator

from runner import case, changes, finish
import symtrace as st
from symtrace.nn import functional as F  # a module of its own: its functions read builtins

x = st.randn(2, 3)


def sets(t, n):
    s = {1, 2, n}
    s.add(7)
    u = s | {9}
    both = s & {2, 7, 11}
    comp = {i % 3 for i in range(n + 4)}
    return t * len(u), sorted(both), 7 in s, sorted(comp), s - {1}, frozenset([1, 2]) <= s


def reduce_and_partial(t):
    total = functools.reduce(operator.add, [t, t * 2.0, t * 3.0])
    scale = functools.partial(operator.mul, 0.5)
    return total, scale(t), functools.reduce(lambda a, b: a * b, [1, 2, 3, 4], 1)


def dicts(t):
    d = dict.fromkeys(["a", "b"], 0)
    e = dict([("x", t), ("y", 2)])
    d.setdefault("c", 5)
    d.setdefault("a", 9)
    view = e.keys()
    e["z"] = 3  # the view sees it
    return d, e["x"] * 2.0, len(view), "z" in view, list(e.values())[1:]


def slicing_and_iteration(t, xs):
    sl = slice(1, None)
    it = iter(xs[sl])
    first = next(it)
    rest = list(it)
    return first, rest, next(iter([]), "done"), sorted(xs, reverse=True), list(reversed(xs)), t * first


def any_all_min_max(t, xs):
    return any(v > 2 for v in xs), all(v > 0 for v in xs), min(xs), max(xs), t * sum(xs)


def math_and_operator(t, n):
    return (t / math.sqrt(n), math.log(n), math.floor(2.7), operator.sub(t, 1.0),
            operator.getitem([5, 6], 1), math.pi * t)


def ordered_and_default(t):
    od = collections.OrderedDict()
    od["b"] = 1
    od["a"] = t
    dd = collections.defaultdict(list)
    dd["k"].append(1)
    dd["k"].append(2)
    counts = collections.defaultdict(int)
    for w in ["x", "y", "x"]:
        counts[w] += 1
    return list(od), od["a"] * 2.0, dd["k"], dict(counts), type(od).__name__


def other_module(t):
    # F's functions read isinstance, len, tuple... through their own module's builtins
    return F.layer_norm(t, (3,)), F.gelu(t)


def double_it(self):
    return self * 2.0


st.Tensor.twice = double_it


def tensor_method(t):
    return t.twice() + 1.0


case(sets, x, 3)
case(reduce_and_partial, x)
case(dicts, x)
case(slicing_and_iteration, x, [3, 1, 2])
case(any_all_min_max, x, [3, 1, 2])
case(math_and_operator, x, 4)
case(ordered_and_default, x)
case(other_module, x)
case(tensor_method, x)


def triple_it(self):
    return self * 3.0


def rebind_tensor_method():
    st.Tensor.twice = triple_it


changes(tensor_method, x, change=rebind_tensor_method)
del st.Tensor.twice


# Each fact the cases above relied on, changed between two calls.
def sets_of(t, ns):
    return sets(t, ns[0])


counts = [3]
changes(sets_of, x, counts, change=lambda: counts.__setitem__(0, 5))


def views_of(t, d):
    keys, values = d.keys(), d.values()
    return t * len(keys), "b" in keys, sorted(values), list(d.items())


# A key added to the caller's dict: its live views see it.
table = {"a": 1}
changes(views_of, x, table, change=lambda: table.__setitem__("b", 2))


def from_keys(t, names, d):
    made = dict.fromkeys(names, 0)
    d.setdefault("k", 1)
    return t * len(made), sorted(made), d["k"]


names = ["a"]
target = {}
changes(from_keys, x, names, target, change=lambda: (names.append("b"), target.__setitem__("k", 7)))

numbers = [3, 1, 2]
changes(slicing_and_iteration, x, numbers, change=lambda: numbers.insert(0, 9))
numbers_too = [3, 1, 2]
changes(any_all_min_max, x, numbers_too, change=lambda: numbers_too.append(-4))


def shadow_builtin():
    globals()["len"] = lambda obj: 100


def length(t, xs):
    return t * len(xs)


# A builtin shadowed by a global of the function's module.
changes(length, x, [1, 2], change=shadow_builtin)
del globals()["len"]

original_sqrt = math.sqrt
changes(math_and_operator, x, 4, change=lambda: setattr(math, "sqrt", lambda v: 1.0))
math.sqrt = original_sqrt


def partial_of(t, box):
    return box[0](t)


parts = [functools.partial(operator.mul, 0.5)]
changes(partial_of, x, parts, change=lambda: parts.__setitem__(0, functools.partial(operator.add, 4.0)))


def rebind_ordered():
    collections.OrderedDict = dict




class Layer:
    def __init__(self, name, width):
        self.name = name
        self.width = width


def keyed(t, layers, pairs):
    """sorted/min/max with key= (a lambda over objects, a builtin), list.sort(key=)."""
    order = [l.name for l in sorted(layers, key=lambda l: l.width, reverse=True)]
    widest = max(layers, key=lambda l: (l.width, l.name))
    pairs = list(pairs)
    pairs.sort(key=lambda p: p[1])
    return t * widest.width, order, pairs, min(order, key=len), min([], key=len, default=0)


layers = [Layer("c", 3.0), Layer("a", 1.0), Layer("bb", 1.0)]
case(keyed, x, layers, [(1, "y"), (2, "x"), (3, "y")])
changes(keyed, x, layers, [(1, "y")], change=lambda: setattr(layers[1], "width", 7.0))

second = operator.itemgetter(1)


def getters(t, layers, pairs):
    """operator.itemgetter and attrgetter: made here (one item, several, a dotted name) and
    a module's own, as sort keys and mapped."""
    by_second = sorted(pairs, key=second)
    firsts = list(map(operator.itemgetter(0), pairs))
    ends = operator.itemgetter(0, -1)([t, 1, t * 2])
    widths = [operator.attrgetter("width")(l) for l in layers]
    named = operator.attrgetter("name", "width.real")(layers[0])
    return by_second, firsts, ends, widths, named, max(layers, key=operator.attrgetter("width")).name


case(getters, x, layers, [(1, "y"), (2, "x"), (3, "w")])
original_ordered = collections.OrderedDict
changes(ordered_and_default, x, change=rebind_ordered)
collections.OrderedDict = original_ordered
finish()
