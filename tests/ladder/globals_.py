from runner import case, finish
import symtrace as st

SCALE = 3.0
WEIGHTS = {"w": st.randn(3, 3), "b": st.zeros(3)}
x = st.randn(2, 3)

def uses_global_scalar(a):
    return a * SCALE

def uses_global_dict(a):
    return a @ WEIGHTS["w"] + WEIGHTS["b"]

def helper(a):
    return st.tanh(a)

def uses_global_function(a):
    return helper(a) * 2

case(uses_global_scalar, x)
case(uses_global_dict, x)
case(uses_global_function, x)
finish()
