"""Template strings (PEP 750): BUILD_INTERPOLATION and BUILD_TEMPLATE, a template's parts
read back (`strings`, `interpolations`, `values`, iteration, an interpolation's fields),
templates joined, and templates holding tensors returned from the graph."""
from runner import case, finish
import symtrace as st

x = st.randn(2, 3)


def literal():
    name = "world"
    return t"hello, {name}!"


def expressions(left, right):
    return t"{left} + {right} = {left + right}"


def conversions_and_specs(value, digits):
    return t"{value!r:.2f} {value!s} {value!a:>8} {value:.{digits}f}"


def no_interpolation():
    return t"plain", t""


def in_containers(prefix):
    first = t"{prefix}-{1}"
    return [first, {"second": t"{prefix}-{2!a}"}, (first,)]


def holding_tensors(a):
    y = a * 2
    return t"{y} and {a.shape[0]}", y + 1


def parts_read_back(a, n):
    t = t"n={n:>4}, sum {a.sum()}"
    return t.strings, t.values, [i.expression for i in t.interpolations], t.interpolations[0].conversion


def render(t):
    out = []
    for part in t:
        if isinstance(part, str):
            out.append(part)
        else:
            out.append(format(part.value, part.format_spec))
    return "".join(out)


def rendered(a, n, scale):
    return a * scale, render(t"{n:03d} at {scale:.1f}")


def joined(a):
    head = t"a{a}"
    tail = t"b{a * 2}c"
    return head + tail


def held_twice(a):
    t = t"{a}"
    return [t, t], a - 1


case(literal, graphs=0)
case(expressions, 2, 5, graphs=0)
case(conversions_and_specs, 3.14159, 3, graphs=0)
case(no_interpolation, graphs=0)
case(in_containers, "id", graphs=0)
case(holding_tensors, x)
case(parts_read_back, x, 7)
case(rendered, x, 7, 0.5)
case(joined, x)
case(held_twice, x)
# Held twice, it is one object, as it was.
made = st.compile(held_twice)(x)[0]
assert made[0] is made[1], "a template held twice was made twice"
finish()
