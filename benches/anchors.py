"""The demos' forward passes (demos/mlp.py, demos/attention.py), unchanged, on one runtime:

    rustpython benches/anchors.py symtrace DTYPE               (the fork, eager)
    rustpython --plugin symtrace benches/anchors.py symtrace DTYPE   (traced)
    python3 benches/anchors.py numpy DTYPE                     (CPython + NumPy)
    python3 benches/anchors.py torch DTYPE                     (CPython + PyTorch, eager)
    python3 benches/anchors.py torch.compile DTYPE             (torch.compile, inductor)

DTYPE is float32 or float64. The demos import `symtrace`; for NumPy and PyTorch a small module
of that name maps its few functions onto theirs. Threads are set by the caller's environment
(benches/anchors.sh). Prints `case seconds=S` lines: the best of several timed runs per call,
as timeit reports."""
import os
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "demos"))
RUNTIME, DTYPE = sys.argv[1], sys.argv[2]


def numpy_module():
    import numpy as np

    class Array(np.ndarray):
        def transpose(self, d0, d1):
            return np.swapaxes(self, d0, d1)

    rng = [np.random.default_rng(0)]
    dtype = np.dtype(DTYPE)

    def softmax(x, dim):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        return e / e.sum(axis=dim, keepdims=True)

    m = types.ModuleType("symtrace")
    m.manual_seed = lambda s: rng.__setitem__(0, np.random.default_rng(s))
    m.randn = lambda *shape: rng[0].standard_normal(shape).astype(dtype).view(Array)
    m.zeros = lambda *shape: np.zeros(shape, dtype).view(Array)
    m.relu = lambda x: np.maximum(x, 0)
    m.softmax = softmax
    return m


def torch_module():
    import torch

    torch.set_default_dtype(getattr(torch, DTYPE))
    if "OMP_NUM_THREADS" in os.environ:
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    m = types.ModuleType("symtrace")
    m.manual_seed = torch.manual_seed
    m.randn = lambda *shape: torch.randn(*shape)
    m.zeros = lambda *shape: torch.zeros(*shape)
    m.relu = torch.relu
    m.softmax = lambda x, dim: torch.softmax(x, dim=dim)
    return m


if RUNTIME == "numpy":
    sys.modules["symtrace"] = numpy_module()
elif RUNTIME.startswith("torch"):
    sys.modules["symtrace"] = torch_module()
import symtrace as st  # noqa: E402

if RUNTIME == "symtrace":
    st.set_default_dtype(getattr(st, DTYPE))

import attention  # noqa: E402
import mlp  # noqa: E402


def compiled(fn):
    if RUNTIME != "torch.compile":
        return fn
    import torch

    return torch.compile(fn)


def per_call(fn, args, seconds, repeats):
    """Seconds per call, the best of `repeats` runs of at least `seconds` each."""
    for _ in range(3):  # warm-up: translation or compilation, caches
        fn(*args)
    best = None
    for _ in range(repeats):
        n, t0 = 0, time.perf_counter()
        while True:
            fn(*args)
            n += 1
            t = time.perf_counter() - t0
            if t > seconds and n >= 3:
                break
        best = t / n if best is None else min(best, t / n)
    return best


def ten_guards(x, a, b, c, d, e, f, g, h, i):
    return x * (a + b + c + d + e + f + g + h + i)


CASES = [
    ("mlp_tiny", lambda: (mlp.forward, (mlp.init([16, 16, 16, 16]), st.randn(1, 16))), 0.1, 5),
    ("attention_tiny", lambda: (attention.attention, (attention.init(16), st.randn(1, 4, 16))), 0.1, 5),
    ("mlp_large", lambda: (mlp.forward, (mlp.init([512, 1024, 1024, 10]), st.randn(256, 512))), 0.3, 7),
    ("attention_large", lambda: (attention.attention, (attention.init(128), st.randn(8, 128, 128))), 0.3, 7),
    ("ten_guards", lambda: (ten_guards, (st.randn(1), 1, 2, 3, 4, 5, 6, 7, 8, 9)), 0.1, 5),
]

only = sys.argv[3:]
for name, make, seconds, repeats in CASES:
    if only and name not in only:
        continue
    st.manual_seed(0)
    fn, args = make()
    print(f"{name} seconds={per_call(compiled(fn), args, seconds, repeats):.9f}", flush=True)
