from runner import case, finish
import symtrace as st

x = st.randn(2, 3)

def fmt(n, name):
    return f"{name}: {n} {n:>5} {n!r} {name!s:.2} {3.14159:.2f}"

def shape_message(a):
    return f"shape {a.shape} dtype {a.dtype.name}", a.sum()

case(fmt, 42, "hello", graphs=0)
case(shape_message, x)
finish()
