from runner import case, finish
import symtrace as st

x = st.randn(3, 4)

def add_mul(a, b):
    return (a + b) * 2.0

def int_math(n, m):
    k = n * m + 3
    k -= 1
    return k // 2, k % 5, -k, ~n, n ** 2, n / m

def bool_ops(p, q):
    return not p, p and q, p or q

def tensor_scalar(t, s):
    return t * s + 1, 1 - t, t / 2, -t, +t

case(add_mul, x, x)
case(int_math, 7, 3, graphs=0)
case(bool_ops, True, False, graphs=0)
case(tensor_scalar, x, 3.0)
finish()
