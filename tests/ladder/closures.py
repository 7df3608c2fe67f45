from runner import case, finish
import symtrace as st

x = st.randn(3)

def make_and_call(a):
    k = 3.0
    def inner(b):
        return b * k
    return inner(a)

def with_defaults(a):
    def scale(b, factor=2.0, *, shift=1.0):
        return b * factor + shift
    return scale(a), scale(a, 3.0, shift=0.0)

def counter_cell(a):
    total = a
    def add(v):
        nonlocal total
        total = total + v
    add(a)
    add(1.0)
    return total

def lambdas(a):
    f = lambda t, p=2: t ** p
    return f(a), f(a, 3)

def outer(scale):
    def apply(a):
        return a * scale
    return apply

applier = st.disable(outer)(5.0)

case(make_and_call, x)
case(with_defaults, x)
case(counter_cell, x)
case(lambdas, x)
case(applier, x)
finish()
