"""`nn.utils.weight_norm`, `spectral_norm` and their removal, `Module.get_submodule`,
`get_parameter`, `get_buffer`, `F.upsample_nearest`/`upsample_bilinear` and `F.threshold_`:
`python3 weight_norms.py torch` printed weight_norms.expected with PyTorch 2.5.1
(tests/nn.rs compares the fork's output, plain and under the plugin, with it). The power
iteration's starting vectors are drawn at random: the script sets them."""
import sys
if sys.argv[1:] == ["torch"]:
    import torch as st
else:
    import symtrace as st
nn = st.nn
F = st.nn.functional
st.set_default_dtype(st.float64)


def plain(v):
    if isinstance(v, st.Tensor):
        return (tuple(v.shape), [round(x, 10) + 0.0 for x in v.detach().flatten().tolist()])
    if isinstance(v, (tuple, list)):
        return tuple(plain(i) for i in v)
    return v


def show(name, make):
    try:
        v = make()
    except Exception as e:
        print(name, type(e).__name__)
        return
    print(name, plain(v))


def filled(m):
    with st.no_grad():
        for i, (_, p) in enumerate(sorted(m.named_parameters())):
            p.copy_((st.arange(p.numel(), dtype=st.float64).reshape(p.shape) * 0.37 + i).sin())
    return m


x = (st.arange(12, dtype=st.float64).reshape(3, 4) * 0.3).cos()
lin = nn.utils.weight_norm(filled(nn.Linear(4, 3)))
show("weight_norm names", lambda: [n for n, _ in lin.named_parameters()])
show("weight_norm g", lambda: lin.weight_g)
show("weight_norm forward", lambda: lin(x))
with st.no_grad():
    lin.weight_g.mul_(2.0)
show("weight_norm after g changed", lambda: lin(x))
show("weight_norm state_dict", lambda: sorted(lin.state_dict().keys()))
show("weight_norm twice", lambda: nn.utils.weight_norm(lin))
nn.utils.remove_weight_norm(lin)
show("removed names", lambda: [n for n, _ in lin.named_parameters()])
show("removed forward", lambda: lin(x))
show("remove again", lambda: nn.utils.remove_weight_norm(lin))
conv = nn.utils.weight_norm(filled(nn.Conv1d(2, 3, 3)), dim=None)
show("weight_norm dim None g", lambda: conv.weight_g)
show("weight_norm dim None forward", lambda: conv(x.reshape(1, 2, 6)))
conv2 = nn.utils.weight_norm(filled(nn.Conv2d(2, 2, 2)), name="weight", dim=1)
show("weight_norm dim 1 g", lambda: conv2.weight_g)

sn = nn.utils.spectral_norm(filled(nn.Linear(4, 3)))
with st.no_grad():
    sn.weight_u.copy_(st.tensor([0.6, 0.0, 0.8]))
    sn.weight_v.copy_(st.tensor([0.5, 0.5, 0.5, 0.5]))
show("spectral_norm names", lambda: ([n for n, _ in sn.named_parameters()], [n for n, _ in sn.named_buffers()]))
show("spectral_norm train", lambda: sn(x))
show("spectral_norm u after", lambda: sn.weight_u)
show("spectral_norm train again", lambda: sn(x))
sn.eval()
show("spectral_norm eval", lambda: sn(x))
show("spectral_norm eval u unchanged", lambda: sn.weight_u)
snc = nn.utils.spectral_norm(filled(nn.ConvTranspose2d(2, 3, 2)), n_power_iterations=3)
show("spectral_norm transposed sizes", lambda: (tuple(snc.weight_u.shape), tuple(snc.weight_v.shape)))
with st.no_grad():
    snc.weight_u.copy_(st.tensor([1.0, 0.0, 0.0]))
    snc.weight_v.copy_(st.ones(8) / 8 ** 0.5)
show("spectral_norm transposed", lambda: snc(x[:2, :2].reshape(1, 2, 2, 1)))
show("spectral_norm zero iterations", lambda: nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0))
nn.utils.remove_spectral_norm(sn)
show("spectral removed", lambda: ([n for n, _ in sn.named_parameters()], [n for n, _ in sn.named_buffers()]))
show("spectral removed forward", lambda: sn(x))

net = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.BatchNorm1d(4), nn.Linear(4, 2)))
show("get_submodule", lambda: type(net.get_submodule("1.0")).__name__)
show("get_submodule empty", lambda: net.get_submodule("") is net)
show("get_submodule missing", lambda: net.get_submodule("1.5"))
show("get_submodule not module", lambda: net.get_submodule("0.weight"))
show("get_parameter", lambda: tuple(net.get_parameter("1.1.weight").shape))
show("get_parameter buffer", lambda: net.get_parameter("1.0.running_mean"))
show("get_parameter missing", lambda: net.get_parameter("0.nope"))
show("get_buffer", lambda: net.get_buffer("1.0.running_var"))
show("get_buffer param", lambda: net.get_buffer("0.bias"))
img = (st.arange(8, dtype=st.float64).reshape(1, 2, 2, 2) * 0.5).sin()
show("upsample_nearest", lambda: F.upsample_nearest(img, scale_factor=2))
show("upsample_bilinear", lambda: F.upsample_bilinear(img, size=(3, 3)))
t = x.clone()
show("threshold_", lambda: (F.threshold_(t, 0.1, -5.0) is t, t))
