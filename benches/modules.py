"""Model code as users write it, eager vs traced on the fork: small `nn` models (batch 1, 16
features: the call's fixed costs dominate) called as `model(x)`, which goes through
`Module.__call__` and each submodule's `forward`. Run by benches/modules.sh twice, as a user
runs a program: `rustpython modules.py eager` and `rustpython --plugin symtrace modules.py
traced`. Prints `name mode=seconds same=...` lines."""
import os
import sys
import time
import symtrace as st
from symtrace import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "demos"))
from residual import Block

MODE = sys.argv[1]


def per_call(model, x, seconds=0.1, repeats=5):
    """Seconds per call of model(x), the best of `repeats` runs."""
    model(x)
    best = None
    for _ in range(repeats):
        n, t0 = 0, time.perf_counter()
        while True:
            for _ in range(50):
                model(x)
            n += 50
            t = time.perf_counter() - t0
            if t > seconds:
                break
        best = t / n if best is None else min(best, t / n)
    return best


st.manual_seed(0)
models = {
    "sequential_mlp": nn.Sequential(
        nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16)
    ),
    "residual_block": Block(16),
    "two_blocks": nn.Sequential(Block(16), Block(16)),
}
x = st.randn(1, 16)
for name, model in models.items():
    seconds = per_call(model, x)
    same = model(x).tolist() == st.disable(model)(x).tolist()
    print(f"{name} {MODE}={seconds:.9f} same={same}")
