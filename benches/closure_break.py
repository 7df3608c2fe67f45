"""A forward pass with a closure over `self` and a graph break in the middle, eager against
traced: the frame breaks and resumes (its resume function a closure over the frame's cells),
so both halves run as graphs. Before closures were kept at a break, such a frame ran as
written, and only its submodules' own frames were traced. Prints the time per call side by
side (best of 5 runs of 200 calls) and the graphs captured.

    target/release/rustpython --plugin symtrace benches/closure_break.py
"""
import time
import symtrace as st
from symtrace import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)
        self.ln = nn.LayerNorm(d)
        self.scale = 0.5

    def forward(self, x):
        residual = lambda f, t: t + f(self.ln(t)) * self.scale  # `self` is a cell
        h = residual(lambda t: self.down(st.relu(self.up(t))), x)
        st.graph_break()  # a logging hook, a data-dependent check...
        return residual(lambda t: self.down(st.tanh(self.up(t))), h)


def per_call(fn, x, calls=200, runs=5):
    fn(x)
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        for _ in range(calls):
            fn(x)
        best = min(best, time.perf_counter() - t)
    return best / calls


st.manual_seed(0)
block = Block(16)
x = st.randn(4, 16)
eager, traced = st.disable(block), st.compile(block)
e_call, t = per_call(eager, x), per_call(traced, x)
print(f"block with a closure and a break (4x16)    eager {e_call * 1e6:8.1f} µs  traced {t * 1e6:8.1f} µs  {e_call / t:5.2f}x")
print("traced equals eager:", traced(x).tolist() == eager(x).tolist())
e = st.explain(block.forward, x)
print("graphs captured:", e.graph_count, "breaks:", [(b["function"], b["id"]) for b in e.break_reasons])
# What the frame did before: it ran as written, its submodules' frames traced one by one.
st.disable(Block.forward, recursive=False)
st.reset()
w = per_call(st.compile(block), x)
print(f"the same, its frame run as written          eager {e_call * 1e6:8.1f} µs  traced {w * 1e6:8.1f} µs  {e_call / w:5.2f}x")
