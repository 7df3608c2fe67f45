"""A function whose first call, traced, is the first to read symtrace.nn.functional's
attributes: nothing has touched the module before."""
import symtrace as st
import symtrace.nn.functional as F


def f(x):
    return F.gelu(x) + F.relu(x)


st.manual_seed(0)
x = st.randn(4, 4)
first = f(x)
second = f(x)
s = st.stats()
print("equal:", first.tolist() == st.disable(f)(x).tolist() == second.tolist())
print("translations:", s["translations"], "hits:", s["cache_hits"])
