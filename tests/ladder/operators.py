from runner import case, finish
import symtrace as st

x = st.randn(2, 3) + 3.0
y = st.randn(2, 3) + 3.0
w = st.randn(3, 2)
n = st.arange(6).reshape(2, 3)

def arithmetic(a, b):
    return a + b, a - b, a * b, a / b, a ** 2, a // b, a % b

def matmul(a, m):
    return a @ m

def comparisons(a, b):
    return a < b, a <= b, a == b, a != b, a > b, a >= b

def bitwise(i):
    return i & 3, i | 4, i ^ 5

def inplace(a, b):
    c = a * 1.0
    c += b
    c *= 2.0
    c -= a
    return c

def reflected(a):
    return 2.0 - a, 3.0 * a, 1.0 / a

def membership(k):
    return k in (1, 2, 3), k not in [4, 5], "a" in {"a": 1}

case(arithmetic, x, y)
case(matmul, x, w)
case(comparisons, x, y)
case(bitwise, n)
case(inplace, x, y)
case(reflected, x)
case(membership, 2, graphs=0)
finish()
