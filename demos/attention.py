"""A single-head self-attention block (projections, scaled dot-product scores, softmax, a
weighted sum, an output projection, a residual) on symtrace tensors; one graph under
`--plugin symtrace`."""
import symtrace as st


def init(d_model, seed=0):
    st.manual_seed(seed)
    scale = 1.0 / d_model ** 0.5
    return {name: st.randn(d_model, d_model) * scale for name in ("q", "k", "v", "o")}


def attention(params, x):
    # x: (batch, tokens, d_model)
    q = x @ params["q"]
    k = x @ params["k"]
    v = x @ params["v"]
    scores = (q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5
    weights = st.softmax(scores, dim=-1)
    return x + (weights @ v) @ params["o"], weights


if __name__ == "__main__":
    params = init(8)
    st.manual_seed(2)
    x = st.randn(2, 5, 8)
    out, weights = attention(params, x)
    print("output shape:", out.shape)
    print("attention weights of batch 0, token 0:", weights[0, 0])
    print("weights sum to one:", (abs(weights.sum(dim=-1) - 1.0) < 1e-9).tolist()[0])
    eager_out, eager_weights = st.disable(attention)(params, x)
    print("traced equals eager:", out.tolist() == eager_out.tolist() and weights.tolist() == eager_weights.tolist())
    e = st.explain(attention, params, x)
    print("captured:", e.graph_count, "graph,", e.op_count, "ops,", e.graph_break_count, "graph breaks")
