from runner import case, finish
import symtrace as st

x = st.randn(3)

def chained_compare(n):
    return 0 < n < 10, 0 < n > 3

def conditional_expr(a, flag):
    return a * 2 if flag else a * 3

def augmented_subscript(a):
    l = [a, 1]
    l[1] += 5
    l[0] = l[0] * 2
    return l

case(chained_compare, 5, graphs=0)
case(conditional_expr, x, True)
case(conditional_expr, x, False)
case(augmented_subscript, x)
finish()
