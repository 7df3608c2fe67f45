"""torch.save and torch.load (a checkpoint of a model's state_dict, tensors of every type,
`weights_only`), pickling of tensors and parameters, the generator's state: `python3
serialization_cases.py torch` printed serialization_cases.expected with PyTorch 2.5.1
(tests/tensor_api.rs compares the fork's output, plain and under the plugin, with it)."""
import sys, io, pickle, copy, tempfile, os
if sys.argv[1:] == ["torch"]:
    import torch as st
    import torch.nn as nn
else:
    import symtrace as st
    import symtrace.nn as nn
st.manual_seed(3)
m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
st.save({"model": m.state_dict(), "step": 7, "ints": st.tensor([1, 2]), "flag": st.tensor(True), "empty": st.zeros(0, 3)}, path)
ck = st.load(path)
m2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
print(m2.load_state_dict(ck["model"]))
x = st.ones(1, 3)
print(bool((m(x) == m2(x)).all()), ck["step"], ck["ints"].tolist(), str(ck["ints"].dtype).split(".")[-1], ck["flag"].item(), tuple(ck["empty"].shape))
buf = io.BytesIO(); st.save(m.state_dict(), buf); buf.seek(0)
sd = st.load(buf, weights_only=True)
print(list(sd.keys()), type(sd).__name__, isinstance(sd["0.weight"], nn.Parameter), sd["0.weight"].requires_grad)
p = pickle.loads(pickle.dumps(nn.Parameter(st.ones(2))))
print(isinstance(p, nn.Parameter), p.tolist())
class Evil:
    def __reduce__(self):
        return (print, ("ran",))
buf = io.BytesIO(); st.save(Evil(), buf); buf.seek(0)
try:
    st.load(buf, weights_only=True)
except Exception as e:
    print(type(e).__name__, str(e)[:24])
s = st.get_rng_state(); a = st.rand(3); st.set_rng_state(s); b = st.rand(3)
print(bool((a == b).all()), st.initial_seed())
st.manual_seed(5); s = st.get_rng_state(); st.rand(2); st.set_rng_state(s); print(st.initial_seed(), st.get_rng_state().dtype == s.dtype)
st.set_printoptions(precision=3)
print(copy.deepcopy(st.tensor([1.5])).tolist(), copy.copy(st.tensor([2.5])).tolist())
