"""Large kernels (products, batched and broadcast; softmax; maps through exp, erf, tanh;
transposes; chains of elementwise ops; the demos' large passes), each result printed as a digest of its exact values:
tests/tensor_api.rs runs this on one thread and on several, eager and traced, and asks for
the same lines."""
import hashlib
import os
import sys

import symtrace as st

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "demos"))
import attention  # noqa: E402
import mlp  # noqa: E402


def digest(t):
    text = ",".join(float(v).hex() for v in t.reshape(-1).tolist())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def kernels(x, w, b3, big):
    half = big * 0.75                            # fused with its reader, and an output too:
    return [                                     # a group with two outputs
        half,
        half * half - 0.5,
        x @ w,                                   # one large product
        x @ w.transpose(0, 1),                   # its right operand column-major
        st.linear(x, w, w[0]),                   # x @ w.T + b
        b3 @ b3.transpose(-2, -1),               # a batch of products, side by side
        b3 @ w[:96, :80],                        # a batch times one matrix
        st.softmax(big, dim=-1),
        st.log_softmax(big, dim=0),
        big.exp(),
        st.erf(big),
        big.tanh(),
        b3.transpose(-2, -1) + 0,
        st.sigmoid(st.erf(big * 0.5) + 1.0) * big.tanh(),   # chains fused in a traced graph,
        st.relu((big - 0.25) / 3.0 * 2.0 + 1.0),             # costly ops and cheap ones
        big + big[0],                            # broadcast along rows (a bias)
        big - big.sum(dim=1, keepdim=True),      # and along runs (a kept-dims sum)
    ]


for dtype in ("float32", "float64"):
    st.set_default_dtype(getattr(st, dtype))
    st.manual_seed(3)
    x, w = st.randn(200, 96), st.randn(96, 96)
    b3, big = st.randn(16, 70, 96), st.randn(300, 400)
    traced = kernels(x, w, b3, big)
    eager = st.disable(kernels)(x, w, b3, big)
    assert [digest(t) for t in traced] == [digest(t) for t in eager], "traced differs from eager"
    for i, t in enumerate(traced):
        print(dtype, i, digest(t))
    layers = mlp.init([512, 1024, 1024, 10])
    print(dtype, "mlp", digest(mlp.forward(layers, st.randn(256, 512))))
    out, weights = attention.attention(attention.init(128), st.randn(8, 128, 128))
    print(dtype, "attention", digest(out), digest(weights))

# The main thread is one of the pool's threads (it does its share of an op's work); other
# threads hand theirs to the pool. Kernels called from several Python threads at once, the
# main one among them, give the same values as alone, and every thread finishes.
import threading  # noqa: E402

expected = [t.tolist() for t in st.disable(kernels)(x, w, b3, big)]
seen = []


def run_twice():
    for _ in range(2):
        seen.append([t.tolist() for t in kernels(x, w, b3, big)])


others = [threading.Thread(target=run_twice) for _ in range(2)]
for t in others:
    t.start()
run_twice()
for t in others:
    t.join()
assert len(seen) == 6 and all(s == expected for s in seen), "a thread's kernels differ"
print("threads:", len(seen), "runs alike")
