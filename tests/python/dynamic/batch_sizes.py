"""A model (symtrace.nn) called with every batch size from 1 to 64: two translations (size 1
stays specialized; the first change makes the batch dimension dynamic), then one graph for
every size, equal to eager."""
import symtrace as st
import symtrace.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = st.relu(self.fc1(x))
        return st.softmax(self.fc2(h), -1)


st.manual_seed(0)
model = MLP()
compiled = st.compile(model)
eager = st.disable(model.__call__)
for b in list(range(1, 65)) + [3, 1, 64]:
    x = st.randn(b, 8)
    a, e = compiled(x), eager(x)
    assert a.shape == e.shape and a.tolist() == e.tolist(), b
s = st.stats()
print("stats:", s)
assert s["translations"] <= 2, s
assert s["cache_hits"] >= 64, s
print("BATCH SIZES OK")
