"""A model called with a size that changes on every call, in a fixed shuffled order: the MLP
with batch sizes 1..64, or the GPT of demos/gpt.py with sequence lengths 8..64. Time per call
eager and traced, with the translations and recompiles it cost. Run by
benches/dynamic_sizes.sh under each `dynamic` setting; prints one line of figures.

    rustpython --plugin symtrace --plugin-opt dynamic=auto benches/dynamic_sizes.py LABEL mlp|gpt
"""
import os
import sys
import time

import symtrace as st
import symtrace.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "demos"))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 10)

    def forward(self, x):
        x = st.relu(self.fc1(x))
        x = st.relu(self.fc2(x))
        return st.log_softmax(self.fc3(x), -1)


def mlp_case():
    model = MLP()
    sizes = [1 + (k * 37) % 64 for k in range(256)]
    return model, [st.randn(b, 32) for b in sizes], lambda out: out


def gpt_case():
    import gpt

    st.set_default_dtype(st.float32)
    config = gpt.Config(block_size=64)
    model = gpt.GPT(config).eval()
    lengths = [8 + (k * 23) % 57 for k in range(114)]
    inputs = [(st.rand(2, t) * config.vocab_size).long() for t in lengths]
    return model, inputs, lambda out: out[0]


st.manual_seed(0)
label = sys.argv[1] if len(sys.argv) > 1 else "traced"
case = sys.argv[2] if len(sys.argv) > 2 else "mlp"
model, inputs, logits = {"mlp": mlp_case, "gpt": gpt_case}[case]()
eager_model = st.disable(model.__call__)


def run(call):
    start = time.perf_counter()
    out = [logits(call(x)) for x in inputs]
    return (time.perf_counter() - start) / len(inputs), out


st.reset()
t_eager, expected = run(eager_model)
t_first, got = run(model)  # the first pass translates
t_traced, got = run(model)
s = st.stats()
same = all(a.tolist() == b.tolist() for a, b in zip(got, expected))
print(f"{label:<28} {t_eager * 1e6:10.1f} µs {t_traced * 1e6:10.1f} µs {t_eager / t_traced:8.2f}x "
      f"{t_first * 1e6:12.1f} µs {s['translations']:6d} {s['recompiles']:6d} {s['fallbacks']:6d}   {same}")
