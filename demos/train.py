"""A training-style loop: a linear model fitted by gradient descent (gradients written out by
hand), printing the loss at every step and stopping early when the loss, a tensor, falls under
a tolerance. Under `--plugin symtrace`, `step` is captured with a graph break at `loss.item()`:
its tensor work runs as one graph, the item() call runs as written, and the rest resumes after
it (the formatted loss printed by the resume function's replacement). `train`'s loop is not split (see README: a break inside a loop): its body
breaks at the call to `step` with no tensor work of its own before it, so it runs as written
and `step` is translated on its own.

    rustpython --plugin symtrace demos/train.py
"""
import sys
import symtrace as st


def step(w, b, x, y, lr):
    pred = x @ w + b
    err = pred - y
    loss = (err * err).mean()
    scale = 2.0 / x.shape[0]
    grad_w = (x.T @ err) * scale
    grad_b = err.sum(dim=0) * scale
    w = w - grad_w * lr
    b = b - grad_b * lr
    print(f"  loss {loss.item():.6f}")
    return w, b, loss


def train(x, y, steps, lr=0.1, tol=1e-3, out=sys.stdout):
    w = st.zeros(x.shape[1], y.shape[1])
    b = st.zeros(y.shape[1])
    stdout, sys.stdout = sys.stdout, out
    try:
        for i in range(steps):
            w, b, loss = step(w, b, x, y, lr)
            if loss.item() < tol:
                break
    finally:
        sys.stdout = stdout
    return w, b, i + 1


def data(n=32, features=8, outputs=2, seed=0):
    st.manual_seed(seed)
    x = st.randn(n, features)
    true_w = st.randn(features, outputs)
    return x, x @ true_w + 0.5


if __name__ == "__main__":
    x, y = data()
    w, b, steps = train(x, y, 200)
    print("stopped after", steps, "steps")
    ew, eb, esteps = st.disable(train)(x, y, 200, out=open("/dev/null", "w"))
    print("traced equals eager:", w.tolist() == ew.tolist() and b.tolist() == eb.tolist() and steps == esteps)
    e = st.explain(step, st.zeros(8, 2), st.zeros(2), x, y, 0.1)
    print("captured:", e.graph_count, "graph,", e.op_count, "ops; breaks:", [(b["id"], b["function"]) for b in e.break_reasons])
