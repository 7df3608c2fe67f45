"""`F.alpha_dropout`, `F.feature_alpha_dropout`, `nn.AlphaDropout`, `nn.FeatureAlphaDropout`
(the identity in evaluation; while training, what holds for torch's too: the dropped value,
the mean and variance kept), `nn.LazyLinear` (its input size from the first call, a Linear
after it) and `torch.special.ndtr`, `entr`, `xlog1py`:
`python3 more_layers.py torch` printed more_layers.expected with PyTorch 2.5.1
(tests/nn.rs compares the fork's output, plain and under the plugin, with it)."""
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
        return (tuple(v.shape), [round(x, 10) + 0.0 if isinstance(x, float) else x
                                 for x in v.detach().flatten().tolist()])
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


x = (st.arange(12, dtype=st.float64).reshape(3, 4) * 0.7).sin()
show("alpha_dropout eval", lambda: F.alpha_dropout(x, 0.3))
show("alpha_dropout eval is input", lambda: F.alpha_dropout(x, 0.3, training=False) is x)
show("alpha_dropout p=0", lambda: F.alpha_dropout(x, 0.0, training=True))
show("alpha_dropout p=1", lambda: F.alpha_dropout(x, 1.0, training=True))
show("alpha_dropout bad p", lambda: F.alpha_dropout(x, 1.5, training=True))
zeros = st.zeros(200000)
out = F.alpha_dropout(zeros, 0.2, training=True)
dropped = -1.7580993408473766 * (1.0 / ((1.7580993408473766 ** 2 * 0.2 + 1.0) * 0.8) ** 0.5) + 1.7580993408473766 * (1.0 / ((1.7580993408473766 ** 2 * 0.2 + 1.0) * 0.8) ** 0.5) * 0.2
print("alpha_dropout two values", sorted({round(v, 8) for v in out.tolist()}))
sel = F.selu(st.randn(400000))
d = F.alpha_dropout(sel, 0.2, training=True)
print("alpha_dropout keeps mean and std", abs(float(d.mean()) - float(sel.mean())) < 0.01, abs(float(d.std()) - float(sel.std())) < 0.01)
f = F.feature_alpha_dropout(st.ones(50, 40, 3), 0.5, training=True)
print("feature_alpha_dropout whole channels", bool((f == f[:, :, :1]).all()), len({round(v, 8) for v in f.flatten().tolist()}))
show("feature_alpha_dropout 1d", lambda: F.feature_alpha_dropout(st.ones(3), 0.5, training=True))
m = nn.AlphaDropout(0.4)
m.eval()
show("AlphaDropout eval", lambda: m(x))
show("AlphaDropout repr", lambda: repr(nn.AlphaDropout(0.4)))
show("FeatureAlphaDropout repr", lambda: repr(nn.FeatureAlphaDropout(0.1)))
lazy = nn.LazyLinear(5)
show("LazyLinear before", lambda: (type(lazy).__name__, lazy.in_features, lazy.out_features))
y = lazy(x)
show("LazyLinear output shape", lambda: tuple(y.shape))
show("LazyLinear after", lambda: (type(lazy).__name__, lazy.in_features, tuple(lazy.weight.shape), tuple(lazy.bias.shape), repr(lazy)))
show("LazyLinear same weights", lambda: st.allclose(lazy(x), x @ lazy.weight.T + lazy.bias))
nb = nn.LazyLinear(2, bias=False)
nb(x)
show("LazyLinear no bias", lambda: (nb.bias, tuple(nb.weight.shape), [n for n, _ in nb.named_parameters()]))
z = st.tensor([-40.0, -5.0, -1.5, -1.0, -0.5, 0.0, 0.3, 1.0, 2.5, 6.0, float("inf"), float("nan")])
show("ndtr", lambda: st.special.ndtr(z))
show("entr", lambda: st.special.entr(st.tensor([-1.0, 0.0, 1e-300, 0.5, 1.0, 3.0, float("inf"), float("nan")])))
show("xlog1py", lambda: st.special.xlog1py(st.tensor([0.0, 0.0, 2.0, -1.5, 1.0]), st.tensor([float("nan"), 3.0, 0.5, 1e-9, -1.0])))
show("xlog1py scalar", lambda: st.special.xlog1py(st.tensor([0.0, 2.0]), 1.5))
