"""The object model: instances of classes written in Python (passed in, or made in the frame
with __init__ inlined), attribute reads in Python's order, properties and
functools.cached_property, bound methods as values, super(), calling an instance,
isinstance/issubclass/type(), dataclasses and named tuples, __dict__, class attributes,
classmethod and staticmethod; and, for each fact a translation relies on, a change between
two calls that the next call sees."""
import dataclasses
import functools
from collections import namedtuple

from runner import case, changes, finish
import symtrace as st

x = st.randn(2, 3)


class Scale:
    factor = 2.0  # a class attribute

    def __init__(self, w):
        self.w = w

    def apply(self, t):
        return t * self.w * self.factor

    @property
    def double(self):
        return self.w * 2.0

    @staticmethod
    def shift(t):
        return t + 1.0

    @classmethod
    def make(cls, w):
        return cls(w)

    def __call__(self, t):
        return self.apply(t) - 1.0


class Child(Scale):
    def apply(self, t):
        return super().apply(t) + 0.5


class Lookup:
    """A module-like class: what is not in the instance is found by __getattr__."""

    def __init__(self):
        object.__setattr__(self, "_params", {"weight": st.ones(3)})

    def __getattr__(self, name):
        params = self.__dict__["_params"]
        if name in params:
            return params[name]
        raise AttributeError(name)

    def __setattr__(self, name, value):
        self.__dict__["_params"][name] = value


class Lazy:
    def __init__(self, t):
        self.t = t

    @functools.cached_property
    def squared(self):
        return self.t * self.t


class Positive:
    """A data descriptor written in Python: it takes precedence over the instance dict."""

    def __get__(self, obj, owner):
        return obj.__dict__["raw"] * 3.0

    def __set__(self, obj, value):
        obj.__dict__["raw"] = value


class Holder:
    value = Positive()

    def __init__(self, v):
        self.value = v


class Pair:
    a: object
    b: float = 1.5

    def total(self):
        return self.a * self.b


# Under strict=1 every frame that runs as written raises: the class is made untraced (the
# decorator calls the class's __annotate__, which has nothing to trace).
Pair = st.disable(dataclasses.dataclass)(Pair)


Point = namedtuple("Point", "u v")


class Counter:
    def __init__(self):
        self.items = []

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __contains__(self, v):
        return v in self.items


def passed_in(t, s):
    return s.apply(t) + s.w


def made_here(t):
    s = Scale(3.0)
    return s(t), s.double


def attribute_order(t, h):
    # the data descriptor first, then the instance, then the class
    return h.value + t, Scale.factor


def getattr_fallback(t, m):
    return t * m.weight + (1.0 if hasattr(m, "weight") else 0.0) + (2.0 if hasattr(m, "nope") else 0.0)


def setattr_hook(t):
    m = Lookup()
    m.bias = t * 2.0
    return m.weight + m.bias


def cached(t):
    z = Lazy(t)
    return z.squared + z.squared


def bound_methods(t, s):
    f = s.apply
    g = [f, Scale.shift]
    return g[0](t) + g[1](t), apply_later(f, t)


def apply_later(fn, t):
    return fn(t) * 0.5


def supers(t, c):
    return c.apply(t), Child(1.0).apply(t)


def instance_call(t, s):
    return s(t) + Scale.make(0.5)(t)


def types_and_classes(t, s, c):
    return (isinstance(s, Scale), isinstance(c, Scale), isinstance(s, Child),
            issubclass(Child, Scale), type(c) is Child, type(s).__name__, t + 1.0)


def dataclass_and_namedtuple(t):
    p = Pair(t)
    q = Point(t, 2.0)
    u, v = q
    return p.total() + q.u * q.v + u * v, p.b, len(q)


def dict_reads(t, s):
    d = s.__dict__
    made = Scale(4.0)
    return t * d["w"], sorted(d.keys()), made.__dict__["w"]


def protocols(t, k):
    total = t * 0.0
    for v in k:
        total = total + t * v
    return total, len(k), k[0], 2.0 in k, 9.0 in k


def class_and_static(t):
    return Scale.make(2.0).apply(t) + Scale.shift(t)


s = Scale(0.5)
c = Child(2.0)
k = Counter()
k.items.extend([1.0, 2.0, 3.0])

case(passed_in, x, s)
case(made_here, x)
case(attribute_order, x, Holder(2.0))
case(getattr_fallback, x, Lookup())
case(setattr_hook, x)
case(cached, x)
case(bound_methods, x, s)
case(supers, x, c)
case(instance_call, x, s)
case(types_and_classes, x, s, c)
case(dataclass_and_namedtuple, x)
case(dict_reads, x, s)
case(protocols, x, k)
case(class_and_static, x)


# Each fact the translations above relied on, changed between two calls.
def rebind(t, s):
    return s.apply(t)


def rebind_method():
    Scale.apply = lambda self, t: t - self.w


original_apply = Scale.apply
changes(rebind, x, Scale(0.5), change=rebind_method)
Scale.apply = original_apply

shadowed = Scale(0.5)
changes(rebind, x, shadowed, change=lambda: setattr(shadowed, "apply", lambda t: t * 10.0))


def read_attr(t, s):
    return t * getattr(s, "extra", 1.0)


added = Scale(0.5)
changes(read_attr, x, added, change=lambda: setattr(added, "extra", 3.0))
removed = Scale(0.5)
removed.extra = 4.0
changes(read_attr, x, removed, change=lambda: delattr(removed, "extra"))


def class_attr(t, s):
    return t * s.factor


def change_class_attr():
    Scale.factor = 5.0


changes(class_attr, x, Scale(0.5), change=change_class_attr)
Scale.factor = 2.0


def prop(t, s):
    return t + s.double


def change_getter():
    Scale.double = property(lambda self: self.w * 7.0)


original_double = Scale.double
changes(prop, x, Scale(0.5), change=change_getter)
Scale.double = original_double


def through_getattr(t, m):
    return t * m.weight


g = Lookup()
# An attribute of the instance's own now comes before __getattr__ (its keys are guarded).
changes(through_getattr, x, g, change=lambda: g.__dict__.__setitem__("weight", st.ones(3) * 3.0))


def rebind_getattr():
    Lookup.__getattr__ = lambda self, name: st.ones(3) * 5.0


# __getattr__ itself rebound on the class.
original_getattr = Lookup.__getattr__
changes(through_getattr, x, Lookup(), change=rebind_getattr)
Lookup.__getattr__ = original_getattr

# What __getattr__ found in the caller's dict, and hasattr's answer, change with its keys.
h = Lookup()
changes(getattr_fallback, x, h, change=lambda: h.__dict__["_params"].__setitem__("nope", 1))


def rebind_setattr():
    def store_doubled(self, name, value):
        self.__dict__["_params"][name] = value * 2.0

    Lookup.__setattr__ = store_doubled


original_setattr = Lookup.__setattr__
changes(setattr_hook, x, change=rebind_setattr)
Lookup.__setattr__ = original_setattr


def rebind_descriptor_get():
    Positive.__get__ = lambda self, obj, owner: obj.__dict__["raw"] * -1.0


# A data descriptor's __get__ rebound; then the descriptor replaced on the class by a plain
# value, so that the instance's own attribute is found instead.
original_get = Positive.__get__
changes(attribute_order, x, Holder(2.0), change=rebind_descriptor_get)
Positive.__get__ = original_get


def shadowing(t, h):
    return h.value + t


def drop_descriptor():
    Holder.value = 10.0


changes(shadowing, x, Holder(2.0), change=drop_descriptor)
Holder.value = Positive()


def rebind_cached():
    Lazy.squared = functools.cached_property(lambda self: self.t * 3.0)
    Lazy.squared.__set_name__(Lazy, "squared")


original_squared = Lazy.__dict__["squared"]
changes(cached, x, change=rebind_cached)
Lazy.squared = original_squared


def call_stored(t, fns):
    return fns[0](t) + apply_later(fns[1], t)


# A bound method held in a caller's list, replaced by a method of another class (another
# object of the same class changes only numbers that the graph reads per call).
methods = [Scale(0.5).apply, Scale.shift]
changes(call_stored, x, methods, change=lambda: methods.__setitem__(0, Child(3.0).apply))


def child_apply(t, c):
    return c.apply(t)


# The method super() found, rebound on the base class.
changes(child_apply, x, Child(2.0), change=rebind_method)
Scale.apply = original_apply


def rebind_call():
    Scale.__call__ = lambda self, t: t * 100.0


original_call = Scale.__call__
changes(instance_call, x, Scale(0.5), change=rebind_call)
Scale.__call__ = original_call

# An instance's class changed: isinstance, type() and the methods found follow it.
moved = Scale(0.5)
changes(types_and_classes, x, moved, c, change=lambda: setattr(moved, "__class__", Child))


def rebind_static_and_class():
    Scale.shift = staticmethod(lambda t: t + 9.0)


original_shift = Scale.__dict__["shift"]
changes(class_and_static, x, change=rebind_static_and_class)
Scale.shift = original_shift


def reread_make():
    Scale.make = classmethod(lambda cls, w: cls(w * 10.0))


original_make = Scale.__dict__["make"]
changes(class_and_static, x, change=reread_make)
Scale.make = original_make


def pair_total(t, p):
    return p.total(), p.b


# A dataclass field changed in type (float to int) on a caller's instance.
pair = Pair(x)
changes(pair_total, x, pair, change=lambda: setattr(pair, "b", 3))

Swapped = namedtuple("Swapped", "v u")


def tuple_fields(t, box):
    q = box[0]
    return q.u + q.v * 2.0, len(q), q[0]


# A named tuple in a caller's list, replaced by one of another class (fields in the other order).
points = [Point(x, 2.0)]
changes(tuple_fields, x, points, change=lambda: points.__setitem__(0, Swapped(x, 2.0)))

# The instance's __dict__: a key added is seen by keys().
grown = Scale(0.5)
changes(dict_reads, x, grown, change=lambda: setattr(grown, "other", 1.0))

# The container protocol's state: an item appended to the caller's object.
bag = Counter()
bag.items.extend([1.0, 2.0, 3.0])
changes(protocols, x, bag, change=lambda: bag.items.append(9.0))


# A function's names read (`act.__name__` picks from a table): the name is guarded, and a
# function renamed between two calls is seen.
def halve(t):
    return t * 0.5


def double(t):
    return t * 2.0


BY_NAME = {"halve": halve, "double": double}


def by_name(t, act):
    def local():
        return 1.0
    return BY_NAME[act.__name__](t) + local(), act.__qualname__, local.__name__, act.__module__


case(by_name, x, halve)
changes(by_name, x, halve, change=lambda: setattr(halve, "__name__", "double"))


# Instances of classes with `__slots__` (no `__dict__`): a `@dataclass(slots=True)` config and
# a hand-written one; their slots read by the member descriptors, a changed slot seen.
class SlotConfig:
    dim: int = 2
    scale: float = 0.5
    act: str = "relu"


SlotConfig = st.disable(lambda c: dataclasses.dataclass(c, slots=True))(SlotConfig)


class Pair2:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


def slotted(t, cfg, pair):
    y = t * pair.a + pair.b
    if cfg.act == "relu":
        y = y.relu()
    return y[:, : cfg.dim] * cfg.scale


# Made and changed as written: a store into a slot is not simulated.
slot_cfg, slot_pair = st.disable(lambda: (SlotConfig(), Pair2(2.0, -1.0)))()
case(slotted, x, slot_cfg, slot_pair)
changes(slotted, x, slot_cfg, slot_pair,
        change=st.disable(lambda: setattr(slot_cfg, "act", "none")))
finish()
