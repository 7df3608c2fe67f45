"""Operators on instances of classes written in Python: dual numbers for forward-mode
derivatives (`__add__`, `__radd__`, `__rsub__`, `__mul__`, `__truediv__`, `__pow__`,
`__neg__`), a vector whose `+=` changes it in place (`__iadd__`, on an object made in the
call and on one of the caller's), losses summed with `sum()` (`0 + a` is `a.__radd__(0)`),
comparisons (`__lt__`, a dataclass's `__eq__`, `!=` through `object.__ne__`,
`functools.total_ordering`), a subclass's reflected method tried first, a `NotImplemented`
that passes the turn to the other operand, and an operation that ends in a TypeError (it
breaks, and the frame raises it as written). Each is dispatched as the interpreter
dispatches it, its methods inlined into the caller's graph.

For each case: the caller's state is reset, the function runs `CALLS` times as written, the
state is reset again, and it runs `CALLS` times compiled; the results of every call and the
state afterwards are equal. The compiled calls translate at most `most` times, and explain()
of one more call counts the expected graphs and breaks. Prints one line per case; `FAIL`
marks a failed one."""
import dataclasses
import functools

import symtrace as st
import symtrace.nn as nn
from case_report import eager_then_traced, plain

failures = []
CALLS = 6


class Dual:
    """A value and its derivative: arithmetic on pairs (forward-mode differentiation)."""

    def __init__(self, value, grad=0.0):
        self.value, self.grad = value, grad

    def __add__(self, other):
        if isinstance(other, Dual):
            return Dual(self.value + other.value, self.grad + other.grad)
        return Dual(self.value + other, self.grad)

    __radd__ = __add__

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return Dual(other - self.value, -self.grad)

    def __mul__(self, other):
        if isinstance(other, Dual):
            return Dual(self.value * other.value, self.grad * other.value + self.value * other.grad)
        return Dual(self.value * other, self.grad * other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, Dual):
            return Dual(self.value / other.value,
                        (self.grad * other.value - self.value * other.grad) / (other.value * other.value))
        return Dual(self.value / other, self.grad / other)

    def __pow__(self, n):
        return Dual(self.value ** n, n * self.value ** (n - 1) * self.grad)

    def __neg__(self):
        return Dual(-self.value, -self.grad)

    def __pos__(self):
        return self


def derivative(x, w):
    # d/dx of ((x * w + 1)^2 / (2 - x)) - x, at every element of x.
    a = Dual(x, st.ones_like(x))
    y = (a * w + 1.0) ** 2 / (2.0 - a) - a
    return y.value, +y.grad


class Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def __iadd__(self, other):
        self.x = self.x + other.x
        self.y = self.y + other.y
        return self

    def __matmul__(self, other):
        return self.x * other.x + self.y * other.y


class Accumulator(nn.Module):
    # A running sum kept on the module: `self.total += ...` changes the caller's Vec in place.
    def __init__(self):
        super().__init__()
        self.total = Vec(st.zeros(3), st.zeros(3))

    def forward(self, x):
        step = Vec(x, x * 2.0)
        alias = step
        step += Vec(x, x)
        self.total += step
        return step @ self.total, alias is step


class Losses:
    def __init__(self, **parts):
        self.parts = parts

    def __add__(self, other):
        if isinstance(other, Losses):
            keys = sorted(set(self.parts) | set(other.parts))
            return Losses(**{k: self.parts.get(k, 0.0) + other.parts.get(k, 0.0) for k in keys})
        return NotImplemented

    def __radd__(self, other):
        if other == 0:  # sum() starts from 0
            return self
        return NotImplemented

    def total(self):
        return sum(self.parts.values())


def summed_losses(x):
    batches = [Losses(mse=(x * k).pow(2).mean(), l1=(x - k).abs().mean()) for k in range(3)]
    overall = sum(batches)
    return overall.total(), sorted(overall.parts)


@functools.total_ordering
@dataclasses.dataclass
class Version:
    major: int
    minor: int

    def __lt__(self, other):
        return (self.major, self.minor) < (other.major, other.minor)


def versioned(x, a, b):
    va, vb = Version(*a), Version(*b)
    flags = (va < vb, va <= vb, va > vb, va >= vb, va == vb, va != vb, va == Version(*a))
    if va >= vb:
        return x + 1.0, flags
    return x - 1.0, flags


class Meters:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return Meters(self.v + other.v) if isinstance(other, Meters) else NotImplemented


class Feet(Meters):
    # A subclass's reflected method is tried before the base class's method.
    def __radd__(self, other):
        return Feet(other.v / 0.3048 + self.v)


class Scalar:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        # NotImplemented: the turn passes to other.__radd__.
        return NotImplemented


class Shift:
    def __init__(self, by):
        self.by = by

    def __radd__(self, other):
        return other.v + self.by


def reflected(x):
    a = (Meters(x) + Feet(x)).v
    b = (Feet(x) + Meters(x)).v
    c = Scalar(1) + Shift(x)
    return a, b, type(Meters(x) + Feet(x)).__name__, c


calls = []


class Traced:
    # Each method logs itself and gives way: the log is the order the interpreter tries them.
    def __init__(self, v):
        self.v = v

    def __iadd__(self, other):
        calls.append("iadd")
        return NotImplemented

    def __add__(self, other):
        calls.append(f"add {type(other).__name__}")
        return Traced(self.v + other.v) if isinstance(other, Traced) else NotImplemented

    def __radd__(self, other):
        calls.append("radd")
        return NotImplemented

    def __eq__(self, other):
        calls.append("eq")
        return NotImplemented

    def __lt__(self, other):
        calls.append("lt")
        return NotImplemented

    def __gt__(self, other):
        calls.append("gt")
        return True


class TracedChild(Traced):
    def __radd__(self, other):
        calls.append("child radd")
        return NotImplemented


def dispatch_order(x):
    a, b = Traced(x), TracedChild(x * 2.0)
    a += b  # iadd gives way: child radd first (a subclass), then add
    same = a == Traced(x)  # eq, then the reflected eq, then identity
    less = Traced(x) < Traced(x)  # lt gives way to the other's gt
    return a.v * 2.0, same, less


def missing_operator(x):
    try:
        return Meters(x) - 1.0
    except TypeError as e:
        return x * 2.0, str(e)


def caller_state():
    return {"total": [t.tolist() for t in (accumulated.total.x, accumulated.total.y)],
            "calls": list(calls)}


def reset():
    st.manual_seed(1234)
    calls.clear()
    accumulated.total = Vec(st.zeros(3), st.zeros(3))


def check(name, fn, make_args, most, graphs, breaks):
    eager_then_traced(name, fn, make_args, most, graphs, breaks, calls=CALLS, reset=reset,
                      state=caller_state, failures=failures)


accumulated = Accumulator()
st.manual_seed(0)
xs = [st.randn(3) for _ in range(CALLS + 1)]
check("dual numbers: a derivative through the arithmetic operators", derivative,
      lambda i: (xs[i], 0.5), 1, 1, 0)
check("a vector's += in place, on one made here and on the caller's", accumulated,
      lambda i: (xs[i],), 1, 1, 0)
check("sum() of losses: 0 + a is a.__radd__(0)", summed_losses, lambda i: (xs[i],), 1, 1, 0)
check("comparisons: __lt__, total_ordering, a dataclass's __eq__, != through object.__ne__",
      versioned, lambda i: (xs[i], (1, i % 3), (1, 1)), 3, 1, 0)
check("a subclass's reflected method first; NotImplemented passes the turn", reflected,
      lambda i: (xs[i],), 1, 1, 0)
check("the order in which methods are tried, each giving way in turn", dispatch_order,
      lambda i: (xs[i],), 1, 1, 0)
check("an operator that ends in a TypeError breaks, raised as written", missing_operator,
      lambda i: (xs[i],), 1, 0, 1)
print("ALL OK" if not failures else f"FAILED {len(failures)}: {failures}", len(failures))
