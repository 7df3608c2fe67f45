from runner import case, finish
import symtrace as st

x = st.randn(2, 2)

def target(a, b=2, *args, scale=1.0, **kwargs):
    out = a * b * scale
    for v in args:
        out = out + v
    for k in kwargs:
        out = out - kwargs[k]
    return out

def positional(a):
    return target(a, 3)

def keywords(a):
    return target(a, scale=0.5, b=4)

def star_args(a):
    extra = (a, a)
    return target(a, 1, *extra)

def star_kwargs(a):
    kw = {"scale": 2.0, "z": a}
    return target(a, **kw)

def posonly(a, b, /, c):
    return a + b + c

def calls_posonly(a):
    return posonly(a, a, c=a)

case(positional, x)
case(keywords, x)
case(star_args, x)
case(star_kwargs, x)
case(calls_posonly, x)
finish()
