"""A loop whose body breaks the graph every iteration, eager against traced (the loop is split:
its body is a function translated per iteration, the break between two graphs), and the same
loop printing every iteration instead (a print does not break: the loop is captured whole and
the prints replayed after the graph). Prints the time per iteration side by side (best of 5
runs of 50 iterations).

    target/release/rustpython --plugin symtrace benches/split_loop.py
"""
import io
import time
import symtrace as st


def run(x, w, n, out, breaks=True):
    y = x * 1.0
    for i in range(n):
        h = st.tanh(y @ w)
        h = h * 0.5 + 0.1
        y = st.relu(h - 0.2) + y * 0.9
        y = y / 2.0
        if breaks:
            st.graph_break()
        print("step", i, file=out)
        y = y + 0.01
    return y


def run_printing(x, w, n, out):
    return run(x, w, n, out, breaks=False)


def per_iteration(fn, x, w, n=50, runs=5):
    out = io.StringIO()
    fn(x, w, n, out)
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn(x, w, n, out)
        best = min(best, time.perf_counter() - t)
    return best / n


st.manual_seed(0)
x, w = st.randn(4, 8), st.randn(8, 8)
for name, fn in (("split loop (4x8, 10 ops + a break)", run), ("loop printing (4x8, 10 ops + print)", run_printing)):
    eager_fn = st.disable(fn)
    e, t = per_iteration(eager_fn, x, w), per_iteration(fn, x, w)
    print(f"{name:36} eager {e * 1e6:8.1f} µs  traced {t * 1e6:8.1f} µs  {e / t:5.2f}x")
    outs = io.StringIO(), io.StringIO()
    same = fn(x, w, 50, outs[0]).tolist() == eager_fn(x, w, 50, outs[1]).tolist()
    print("traced equals eager:", same and outs[0].getvalue() == outs[1].getvalue())
print("graphs captured:", st.explain(run, x, w, 3, io.StringIO()).graph_count, "(before the loop; the body before and after its break);",
      st.explain(run_printing, x, w, 3, io.StringIO()).graph_count, "printing (the whole loop)")
