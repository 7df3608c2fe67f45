"""Model code as users write it: a residual block (its layers reached through attributes,
its norm layer reaching `layer_norm` through several calls before any op) is one graph; and a
function whose calls of one kind translate and of another fail does not translate the
failing kind again on every call; and a forward that keeps state on its module (a counter,
its last output) is one graph."""
import os
import sys
import types
import symtrace as st
from symtrace import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "demos"))
from residual import Block

st.manual_seed(0)
model = nn.Sequential(Block(16), Block(16))
x = st.randn(2, 16)
traced = [model(x).tolist() for _ in range(3)]
eager = st.disable(model)(x).tolist()
e = st.explain(model, x)
print("block graphs:", e.graph_count, "breaks:", e.graph_break_count, "ops:", e.op_count)
print("block equal:", all(t == eager for t in traced))


def apply(f, x):
    return f(x)


def captured(x):
    return x * 2 + 1


def too_long(x):
    s = 0
    for i in range(20000):
        s += i
    return x * s


st.reset()
y = st.randn(4)
for _ in range(3):
    apply(captured, y)
first = st.stats()
for _ in range(5):
    result = apply(too_long, y)
after = st.stats()
print("failing kind: recompiles", after["recompiles"] - first["recompiles"],
      "translations", after["translations"] - first["translations"])
print("failing kind equal:", result.tolist() == (y * sum(range(20000))).tolist(),
      "captured kind equal:", apply(captured, y).tolist() == (y * 2 + 1).tolist())


class Counted(nn.Module):
    """State a forward keeps on its module: a call counter, the last output (stored through
    `Module.__setattr__`, which asks `isinstance(value, Parameter)`: a metaclass's
    `__instancecheck__`), read back through `__dict__` in the same call."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.calls = 0
        self.last = None

    def forward(self, x):
        self.calls += 1
        y = self.lin(x)
        self.last = y
        return y * self.__dict__["calls"]


st.reset()
st.manual_seed(0)
counted = Counted()
st.manual_seed(0)
reference = Counted()
x8 = st.randn(2, 8)
warm = [counted(x8).tolist() for _ in range(3)]
before = st.stats()
hot = [counted(x8).tolist() for _ in range(10)]
after = st.stats()
eager = [st.disable(reference)(x8).tolist() for _ in range(13)]
e = st.explain(Counted(), x8)
print("state graphs:", e.graph_count, "breaks:", e.graph_break_count)
print("state hot calls: fallbacks", after["fallbacks"] - before["fallbacks"],
      "translations", after["translations"] - before["translations"])
print("state equal:", warm + hot == eager, counted.calls == reference.calls == 13,
      counted.last.tolist() == reference.last.tolist())


class Compared(nn.Module):
    """Layers compared with `==` (a module has `object`'s, identity): which layer is the
    first told by the relation of the two attributes, guarded, not by pinning each module
    (the frame ran as written: a Linear cannot be specialized on)."""

    def __init__(self):
        super().__init__()
        self.layer0 = nn.Linear(4, 4)
        self.layer1 = nn.Linear(4, 4)
        self.first = self.layer0

    @property
    def encoder_layers(self):
        return [self.layer0, self.layer1]

    def forward(self, x):
        outs = []
        for layer in self.encoder_layers:
            y = layer(x)
            outs.append(nn.functional.relu6(y) if layer == self.first else y * 2.0)
            outs.append(layer != self.first)
        return outs


def plain(outs):
    return [o if isinstance(o, bool) else o.tolist() for o in outs]


st.reset()
st.manual_seed(0)
compared = Compared()
cx = st.randn(2, 4)
results = []
for i in range(4):
    if i == 2:
        # Another layer is the first from now on: the relation's guard sees it.
        compared.first = compared.layer1
    results.append(plain(compared(cx)) == plain(st.disable(compared)(cx)))
e = st.explain(Compared(), cx)
print("compared graphs:", e.graph_count, "breaks:", e.graph_break_count)
print("compared equal:", results)


def make_parameters(x):
    """Parameters made in a call (a module built inside a traced function, a weight made
    from a tensor the call computes): `Parameter(data)` is a class whose `__new__` returns a
    marked copy of a tensor, and `requires_grad_()` marks one the graph makes."""
    p = nn.Parameter(x * 2.0)
    q = nn.Parameter(x + 1.0, requires_grad=False)
    r = (x * 3.0).requires_grad_()
    lin = nn.Linear(2, 3)
    return p, q, r, lin, isinstance(p, nn.Parameter), isinstance(q, nn.Parameter)


def described(made):
    p, q, r, lin, p_is, q_is = made
    names = [(n, v.requires_grad, tuple(v.shape)) for n, v in lin.named_parameters()]
    return [p.requires_grad, q.requires_grad, r.requires_grad, p_is, q_is, p.tolist(),
            q.tolist(), r.tolist(), names, isinstance(lin.weight, nn.Parameter),
            lin.weight.tolist()]


st.reset()
px = st.ones(2)
st.manual_seed(1)
made_eager = [described(st.disable(make_parameters)(px)) for _ in range(2)]
st.manual_seed(1)
made_traced = [described(make_parameters(px)) for _ in range(2)]
e = st.explain(make_parameters, px)
print("parameters graphs:", e.graph_count, "breaks:", e.graph_break_count)
print("parameters equal:", made_traced == made_eager, made_traced[0][:5])


# Twelve module classes called directly, at two ranks each: `Module.__call__` is one code
# object for them all, and each class keeps its own entries (a bucket per class of `self`,
# as TorchDynamo counts per ID_MATCH bucket); the classes past the eighth ran as written.
st.reset()
st.manual_seed(3)
classes = [nn.Linear(4, 4), nn.LayerNorm(4), nn.ReLU(), nn.GELU(), nn.Tanh(), nn.Sigmoid(),
           nn.Softmax(dim=-1), nn.SiLU(), nn.ELU(), nn.Softplus(), nn.LeakyReLU(0.1),
           nn.Sequential(nn.Linear(4, 4), nn.ReLU())]
inputs = [st.randn(2, 4), st.randn(2, 3, 4)]
eager = [[st.disable(m)(x).tolist() for m in classes] for x in inputs]
before = st.stats()
for _ in range(3):
    traced = [[m(x).tolist() for m in classes] for x in inputs]
after = st.stats()
print("classes translations:", after["translations"] - before["translations"],
      "fallbacks:", after["fallbacks"] - before["fallbacks"])
print("classes equal:", traced == eager)


# Recurrent layers over sequences of changing length: each layer and direction's steps are one
# op, so a layer is one graph for every length after one recompile (the steps were a Python
# loop, unrolled: a translation per length, eight lengths and the layer ran as written).
st.reset()
st.manual_seed(4)
rnns = [nn.LSTM(3, 5, num_layers=2, bidirectional=True, batch_first=True), nn.GRU(3, 5),
        nn.RNN(3, 5, nonlinearity="relu", bias=False)]
lengths = [4, 7, 5, 9, 2, 11, 6, 8, 3, 10]
sequences = [st.randn(2, n, 3) for n in lengths]
eager = [st.disable(m)(x)[0].tolist() for m in rnns for x in sequences]
before = st.stats()
traced = [m(x)[0].tolist() for m in rnns for x in sequences]
after = st.stats()
print("recurrent translations:", after["translations"] - before["translations"],
      "fallbacks:", after["fallbacks"] - before["fallbacks"])
print("recurrent equal:", traced == eager)



# Outputs that view one tensor only the graph computes (`q, k, v = qkv(x).unbind(...)` stored
# into a cache, `return y.chunk(2, -1)`, overlapping slices of one product), at changing
# sizes: the graph hands back that tensor too and the outputs are made its views, so an update
# through one is seen through the others as eagerly. Each such frame ran as written once its
# sizes were dynamic ("a view of the elements another output views", "sized by what the graph
# computes").
class CachedAttention(nn.Module):
    def __init__(self, d=4, heads=2):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.heads = heads

    def forward(self, x, cache):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        if cache.keys:
            k = st.cat([cache.keys[-1], k], dim=2)
            v = st.cat([cache.values[-1], v], dim=2)
        cache.keys.append(k)
        cache.values.append(v)
        return (q @ k.transpose(-1, -2)).softmax(-1) @ v


def halves(x, w):
    return (x @ w).chunk(2, -1)


def overlapping(x, w):
    y = x @ w
    return y[:, :3], y[:, 1:]


# Run as written, the calls it makes entered through the hook (traced, or all eager below).
@st.disable(recursive=False)
def shared_views(attention, embed, w):
    out = []
    for n in (2, 3, 5, 4, 6):
        x = st.arange(n * 4.0).reshape(n, 4) / 10
        cache = types.SimpleNamespace(keys=[], values=[])
        y = attention(embed(x).view(1, n, 4), cache)
        cache.keys[0].mul_(0.0)
        a, b = halves(x, w)
        a.add_(1.0)
        c, d = overlapping(x, w)
        c.mul_(2.0)
        out.append([y.tolist(), [t.tolist() for t in cache.values], a.tolist(), b.tolist(), c.tolist(), d.tolist()])
    return out


st.reset()
st.manual_seed(5)
attention = CachedAttention()
embed = nn.Linear(4, 4)
w = st.randn(4, 4)
eager = st.disable(shared_views)(attention, embed, w)
before = st.stats()
traced = shared_views(attention, embed, w)
after = st.stats()
print("shared views fallbacks:", after["fallbacks"] - before["fallbacks"])
print("shared views equal:", traced == eager)


# A config whose class maps attribute names in a `__getattribute__` written in Python (as
# Hugging Face's PretrainedConfig does), read throughout forward: the function is inlined,
# what it reads of the config guarded by value, so a config changed between calls is seen.
# Each read ran the frame as written, or broke the graph ("attribute n_head of a Config").
class MappedConfig:
    attribute_map = {"hidden_size": "d_model", "num_heads": "n_head"}

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)

    def __setattr__(self, key, value):
        if key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        super().__setattr__(key, value)

    def head_dim(self):
        return self.d_model // self.n_head


READS = []


class CountedConfig(MappedConfig):
    def __getattribute__(self, key):
        READS.append(key)
        return super().__getattribute__(key)


class ConfiguredAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, x):
        B, T, _ = x.shape
        h = self.proj(x).view(B, T, self.config.num_heads, self.config.head_dim())
        if self.config.use_gelu:
            h = h * 0.5
        return h.softmax(-1).flatten(2) * self.config.scale


@st.disable(recursive=False)
def configured(model, config):
    out = []
    for step, n in enumerate((2, 3, 4, 3, 2)):
        if step == 3:
            config.use_gelu = not config.use_gelu
            config.scale = 2.0
        out.append(model(st.arange(n * 8.0).reshape(1, n, 8) / 10).tolist())
    return out


st.reset()
st.manual_seed(6)
results = []
for make in (MappedConfig, CountedConfig):
    config = make(hidden_size=8, num_heads=2, use_gelu=True, scale=1.0)
    model = ConfiguredAttention(config)
    del READS[:]
    eager = st.disable(configured)(model, config)
    reads_eager = list(READS)
    del READS[:]
    config.use_gelu, config.scale = True, 1.0
    before = st.stats()
    traced = configured(model, config)
    after = st.stats()
    results.append((after["fallbacks"] - before["fallbacks"], traced == eager, READS == reads_eager))
    del READS[:]
print("mapped config fallbacks, equal, reads:", results)
