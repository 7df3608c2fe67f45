from runner import case, finish
import symtrace as st

x = st.randn(4)

def branch_on_int(a, n):
    if n > 2:
        return a * n
    elif n == 2:
        return a + n
    return a

def branch_on_none(a, b=None):
    if b is None:
        return a * 2
    return a + b

def branch_on_shape(a):
    if a.shape[0] == 4 and a.ndim == 1:
        return a.relu()
    return a

def while_loop(a, n):
    i = 0
    while i < n:
        a = a + 1
        i += 1
    return a

case(branch_on_int, x, 3)
case(branch_on_int, x, 2)
case(branch_on_none, x)
case(branch_on_none, x, x)
case(branch_on_shape, x)
case(while_loop, x, 3)
finish()
