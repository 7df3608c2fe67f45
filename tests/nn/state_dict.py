"""state_dict and load_state_dict: a round trip between two models made from different seeds
gives equal outputs; missing and unexpected keys and a wrong shape are errors (strict), as
PyTorch reports them; strict=False reports them instead."""
import symtrace as st
import symtrace.nn as nn


def model():
    return nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))


st.manual_seed(1)
a = model()
st.manual_seed(2)
b = model()
x = st.randn(5, 4)
print("differ before:", a(x).tolist() != b(x).tolist())
state = a.state_dict()
print("keys:", list(state))
print(b.load_state_dict(state))
print("equal after:", a(x).tolist() == b(x).tolist())
print("a copy, not a view:", state["0.weight"] is not a[0].weight)
for broken in ({k: v for k, v in state.items() if k != "3.bias"},
               dict(state, extra=st.zeros(1)),
               dict(state, **{"0.weight": st.zeros(2, 2)})):
    try:
        b.load_state_dict(broken)
    except RuntimeError as e:
        print("RuntimeError:", e)
print(b.load_state_dict({k: v for k, v in state.items() if k != "3.bias"}, strict=False))
# the module keeps its own tensors (an optimizer holding them still updates the model) and
# the dict stays its own: running statistics updated in place afterwards leave it unchanged
bn = nn.BatchNorm1d(3)
held = bn.running_mean
saved = {k: v.clone() for k, v in bn.state_dict().items()}
bn.load_state_dict(saved)
bn(st.randn(4, 3) + 1.0)
bn.load_state_dict(saved)
bn(st.randn(4, 3) + 1.0)
print("kept its tensors:", bn.running_mean is held)
print("the dict unchanged:", saved["num_batches_tracked"].item(), saved["running_mean"].tolist())
bn.load_state_dict(saved)
print("loaded again:", bn.num_batches_tracked.item(), bn.running_mean.tolist())
bn.load_state_dict(saved, assign=True)
print("assign takes the dict's:", bn.running_mean is saved["running_mean"])
m = nn.Linear(2, 2)
print(m, nn.Sequential(nn.Linear(2, 3), nn.Dropout(0.1)), sep="\n")
m.eval()
print("training:", m.training, [c.training for c in model().eval().children()])
