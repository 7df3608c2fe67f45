"""Eager forward passes of demos/mlp.py and demos/attention.py, timed.

    python3 benches/tensor_eager.py numpy          (CPython + NumPy, through a small shim)
    rustpython benches/tensor_eager.py symtrace    (the fork, eager, no plugin)

Prints one line per configuration: `NAME seconds_per_pass=S passes=N`."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "demos"))

if sys.argv[1] == "numpy":
    import types

    import numpy as np

    class Array(np.ndarray):
        def transpose(self, d0, d1):
            return np.swapaxes(self, d0, d1)

    rng = [np.random.default_rng(0)]

    def randn(*shape):
        return rng[0].standard_normal(shape).view(Array)

    def softmax(x, dim):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        return e / e.sum(axis=dim, keepdims=True)

    shim = types.ModuleType("symtrace")
    shim.manual_seed = lambda s: rng.__setitem__(0, np.random.default_rng(s))
    shim.randn = randn
    shim.zeros = lambda *shape: np.zeros(shape).view(Array)
    shim.relu = lambda x: np.maximum(x, 0)
    shim.softmax = softmax
    sys.modules["symtrace"] = shim

import symtrace as st  # noqa: E402
import attention  # noqa: E402
import mlp  # noqa: E402


def bench(name, fn, budget=1.0):
    fn()  # warm-up
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - t0
        if elapsed > budget and n >= 3:
            break
    print(f"{name} seconds_per_pass={elapsed / n:.9f} passes={n}")


for label, sizes, batch in [("mlp_small", [16, 32, 32, 4], 8), ("mlp_large", [512, 1024, 1024, 64], 256)]:
    layers = mlp.init(sizes)
    st.manual_seed(1)
    x = st.randn(batch, sizes[0])
    bench(label, lambda: mlp.forward(layers, x))

for label, d, batch, tokens in [("attention_small", 8, 2, 5), ("attention_large", 256, 8, 128)]:
    params = attention.init(d)
    st.manual_seed(2)
    x = st.randn(batch, tokens, d)
    bench(label, lambda: attention.attention(params, x))
