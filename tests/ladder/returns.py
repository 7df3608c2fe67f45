from runner import case, finish
import symtrace as st

x = st.randn(2)

def nested_structure(a):
    return {"out": [a * 2, (a + 1, None)], "n": 3, "name": "x"}

def returns_input(a, b):
    return a, b * 2

def returns_constant_tensor(a):
    return st.zeros(2), a + 0

def returns_none(a):
    b = a * 2
    return None

case(nested_structure, x)
case(returns_input, x, x)
case(returns_constant_tensor, x)
case(returns_none, x, graphs=0)
finish()
