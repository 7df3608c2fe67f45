"""A model called with a batch size that changes on every call (1..64, in a fixed shuffled
order): time per call eager and traced, with the translations and recompiles it cost. Run
by benches/dynamic_sizes.sh under each `dynamic` setting; prints one line of figures."""
import sys
import time

import symtrace as st
import symtrace.nn as nn


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


st.manual_seed(0)
model = MLP()
sizes = [1 + (k * 37) % 64 for k in range(256)]
inputs = [st.randn(b, 32) for b in sizes]
eager_model = st.disable(model.__call__)


def run(call):
    start = time.perf_counter()
    out = [call(x) for x in inputs]
    return (time.perf_counter() - start) / len(inputs), out


st.reset()
t_eager, expected = run(eager_model)
t_first, got = run(model)  # the first pass translates
t_traced, got = run(model)
s = st.stats()
same = all(a.tolist() == b.tolist() for a, b in zip(got, expected))
label = sys.argv[1] if len(sys.argv) > 1 else "traced"
print(f"{label:<28} {t_eager * 1e6:10.1f} µs {t_traced * 1e6:10.1f} µs {t_eager / t_traced:8.2f}x "
      f"{t_first * 1e6:12.1f} µs {s['translations']:6d} {s['recompiles']:6d} {s['fallbacks']:6d}   {same}")
