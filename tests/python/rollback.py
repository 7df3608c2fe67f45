"""An inlined call that cannot be simulated rolls the translation back to the call: the graph
keeps only the caller's ops, the guards only the caller's. The caller's graph then breaks at
the call, which runs as written (the callee is translated on its own and breaks at its print),
and the caller resumes after it, with the right result. Under strict mode the frame falls
back whole instead, with the same rollback."""
import symtrace as st


def helper(y):
    z = y + 1.0
    w = st.exp(z)
    st.graph_break()
    print("helper ran", w.shape)
    return w


def f(x):
    y = x * 2.0
    return helper(y)


x = st.randn(3)
eager = st.disable(f)(x)
e = st.explain(f, x)
print("graphs:", e.graph_count, "breaks:", e.graph_break_count)
print("ops per graph:", e.ops_per_graph)
b = e.break_reasons[0]
print("id:", b["id"], "resumed:", b["resumed"])
print("function:", b["function"])
print("reason:", b["reason"])
print("location:", b["location"].rsplit("/", 1)[-1])
print("ops left:", b["ops_left"])
print("guards left:", b["guards_left"])
traced = st.compile(f)(x)
print("same result:", traced.tolist() == eager.tolist())
print(st.stats())
