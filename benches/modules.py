"""Model code as users write it, eager vs traced on the fork: small `nn` models (batch 1, 16
features: the call's fixed costs dominate) called as `model(x)`, which goes through
`Module.__call__` and each submodule's `forward`. Run by benches/modules.sh twice, as a user
runs a program: `rustpython modules.py eager` and `rustpython --plugin symtrace modules.py
traced`. Prints `name mode=seconds same=...` lines."""
import os
import sys
import symtrace as st
from symtrace import nn
from timing import per_call

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "demos"))
from residual import Block

MODE = sys.argv[1]


class Stateful(nn.Module):
    """A block that keeps state on itself in forward, as model code does: a call counter
    and its last output (stored through `Module.__setattr__`)."""

    def __init__(self, features):
        super().__init__()
        self.block = Block(features)
        self.calls = 0
        self.last = None

    def forward(self, x):
        self.calls += 1
        y = self.block(x)
        self.last = y
        return y


st.manual_seed(0)
models = {
    "sequential_mlp": nn.Sequential(
        nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16)
    ),
    "residual_block": Block(16),
    "two_blocks": nn.Sequential(Block(16), Block(16)),
    "stateful_block": Stateful(16),
}
x = st.randn(1, 16)
for name, model in models.items():
    seconds = per_call(model, (x,))
    same = model(x).tolist() == st.disable(model)(x).tolist()
    print(f"{name} {MODE}={seconds:.9f} same={same}")
