"""torch's scatter_reduce (sum, prod, mean, amax, amin; with and without the target's own
values; float, int and bool tensors; NaN), scatter(reduce='multiply') and the in-place
spelling, as a graph neural network's message passing uses them: `python3
scatter_reduce_cases.py torch` printed scatter_reduce_cases.expected with PyTorch 2.5.1
(tests/tensor_api.rs compares the fork's output, plain and under the plugin, with it)."""
import sys
if sys.argv[1:] == ["torch"]:
    import torch as st
else:
    import symtrace as st


def show(name, make):
    try:
        v = make()
    except Exception as e:
        print(name, type(e).__name__)
        return
    vals = [x if x != x or abs(x) == float("inf") else round(x, 10) + 0 for x in v.flatten().tolist()]
    print(name, tuple(v.shape), str(v.dtype).split(".")[-1], vals)


target = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], dtype=st.float64)
index = st.tensor([[0, 1, 0], [2, 0, 0], [0, 1, 1], [2, 2, 0]])
src = st.tensor([[0.5, -1.0, 2.0], [3.0, 4.0, -2.5], [1.5, 0.25, 8.0], [-3.0, 6.0, 1.0]], dtype=st.float64)
for reduce in ("sum", "prod", "mean", "amax", "amin"):
    for include_self in (True, False):
        show(f"{reduce} include_self={include_self}", lambda: target.scatter_reduce(0, index, src, reduce, include_self=include_self))
        show(f"{reduce} int include_self={include_self}", lambda: target.long().scatter_reduce(0, index, (src * 2).long(), reduce, include_self=include_self))
    show(f"{reduce} dim 1", lambda: st.scatter_reduce(target, 1, index[:3], src[:3], reduce))
show("nan amax", lambda: target.scatter_reduce(0, index[:1], st.tensor([[float("nan"), 1.0, 2.0]], dtype=st.float64), "amax"))
show("bool amax", lambda: st.zeros(2, 2, dtype=st.bool).scatter_reduce(0, st.tensor([[1, 0]]), st.tensor([[True, True]]), "amax", include_self=False))
show("multiply", lambda: target.scatter(0, index[:3], src[:3], reduce="multiply"))
show("in place", lambda: target.clone().scatter_reduce_(1, index[:3], src[:3], "mean", include_self=False))
show("bad reduce", lambda: target.scatter_reduce(0, index, src, "median"))
show("bad dtype", lambda: target.scatter_reduce(0, index, src.long(), "sum"))
nodes = st.arange(12, dtype=st.float32).reshape(6, 2)
edges = st.tensor([0, 0, 1, 3, 3, 3])
show("message passing mean", lambda: st.zeros(4, 2, dtype=st.float32).scatter_reduce(0, edges.unsqueeze(1).expand(6, 2), nodes, "mean", include_self=False))
show("message passing max", lambda: st.zeros(4, 2, dtype=st.float32).scatter_reduce(0, edges.unsqueeze(1).expand(6, 2), nodes, "amax", include_self=False))
