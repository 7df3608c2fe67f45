"""A 3-layer MLP forward pass (linear, relu, linear, relu, linear, softmax) on symtrace
tensors: runs under plain `rustpython`, and captured into one graph under `--plugin symtrace` (and under CPython + NumPy through
benches/tensor_eager.py)."""
import symtrace as st


def init(sizes, seed=0):
    st.manual_seed(seed)
    layers = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        w = st.randn(n_in, n_out) * (2.0 / n_in) ** 0.5
        b = st.zeros(n_out)
        layers.append((w, b))
    return layers


def forward(layers, x):
    for k, (w, b) in enumerate(layers):
        x = x @ w + b
        if k < len(layers) - 1:
            x = st.relu(x)
    return st.softmax(x, dim=-1)


if __name__ == "__main__":
    layers = init([16, 32, 32, 4])
    st.manual_seed(1)
    x = st.randn(8, 16)
    probs = forward(layers, x)
    print("probabilities of the first sample:", probs[0])
    print("row sums:", probs.sum(dim=1))
    print("predicted classes:", probs.argmax(dim=1).tolist())
    # Under `--plugin symtrace` the call above ran the captured graph; compare with eager.
    eager = st.disable(forward)(layers, x)
    print("traced equals eager:", probs.tolist() == eager.tolist())
    e = st.explain(forward, layers, x)
    print("captured:", e.graph_count, "graph,", e.op_count, "ops,", e.graph_break_count, "graph breaks")
