from runner import case, finish
import symtrace as st

x = st.randn(2, 2)

def seq(pair):
    a, b = pair
    return b - a

def starred(a):
    first, *rest = [a, a + 1, a + 2, a + 3]
    *init, last = (1, 2, 3)
    return first, rest, init, last

def nested(t):
    (a, b), c = t
    return a + b + c

def swap(a, b):
    a, b = b, a
    return a - b

case(seq, (x, x * 2))
case(starred, x)
case(nested, ((x, x), x))
case(swap, x, x + 1)
finish()
