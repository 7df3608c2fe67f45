"""The GPT of demos/gpt.py called with every sequence length T from 8 to 64: the first call
translates at its sizes, the first change of T makes the sequence dimension dynamic, and one
graph serves every later length. The sizes the model computes from T (`view(B, T, nh, hs)`,
`self.bias[:, :, :T, :T]`, `arange(0, t)`) are worked out per call inside the graph; its
`assert t <= block_size` is a check of the outcome, not of T. Logits equal eager's bit for
bit at every length. Prints the counts the test asserts."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "demos"))
import gpt
import symtrace as st

st.manual_seed(0)
st.set_default_dtype(st.float32)
config = gpt.Config(block_size=64)
model = gpt.GPT(config).eval()
compiled = st.compile(model, fullgraph=True)
eager = st.disable(model)

lengths = list(range(8, 65)) + [8, 33, 64, 9]
for t in lengths:
    idx = (st.rand(2, t) * config.vocab_size).long()
    got, _ = compiled(idx)
    want, _ = eager(idx)
    assert got.shape == want.shape and got.tolist() == want.tolist(), t
s = st.stats()
print("lengths:", len(lengths), "stats:", s)
print("translations", s["translations"])
print("cache hits", s["cache_hits"])

# The graph's ops are the same whatever the length: explained with T marked dynamic from the
# first call, at two lengths.
ops = []
for t in [9, 40]:
    idx = (st.rand(2, t) * config.vocab_size).long()
    st.mark_dynamic(idx, 1)
    e = st.explain(model, idx)
    ops.append(e.ops_per_graph)
    # The graph shows the sizes it works out per call, and its checks.
    text = e.graphs[0]
    assert "arange(start=0, end=in0.size(1)" in text and "check in0.size(1) <= 64" in text, text
    print("explained at", t, ":", e.graph_count, "graph,", e.op_count, "ops,", e.graph_break_count, "breaks")
assert ops[0] == ops[1] and len(ops[0]) == 1, ops

# A length past the block fails the model's assert, as eagerly (without fullgraph, which
# refuses a frame that raises).
long = (st.rand(1, 65) * config.vocab_size).long()
for call in (st.compile(model), eager):
    try:
        call(long)
    except AssertionError as e:
        print("too long:", e)
    else:
        raise SystemExit("no AssertionError for a sequence past the block")
print("LENGTHS OK")
