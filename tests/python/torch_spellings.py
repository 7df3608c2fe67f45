"""What model code written for torch spells besides methods: `torch.flatten(x, 1)` and the
other shape functions, `nn.Flatten`, `with torch.no_grad():` and `@torch.inference_mode()`;
and methods: `expand`, `expand_as`, `repeat`, `unbind`, `view_as`, `type_as`, the operators
as methods (`x.add(y)`, `m.eq(0)`), torch's compositions written in Python (`rsqrt`, `t`,
`mm`, `logsumexp`...), and methods called with `*args` (`x.view(*shape, 2, -1)`).
Each prints what it computes; tests/nn.rs runs this script plain and under the plugin and
requires the same lines, and that a model using them all is one graph."""
import symtrace as st
from symtrace import nn
import symtrace.nn.functional as F

x = st.arange(24.0).reshape(2, 3, 4)
print("flatten", x.flatten().shape, x.flatten(1).shape, x.flatten(0, 1).shape,
      x.flatten(-2).shape, st.tensor(3.0).flatten().tolist())
print("flatten values", st.flatten(x, 1).tolist() == x.reshape(2, 12).tolist())
try:
    x.flatten(2, 1)
except RuntimeError as e:
    print("flatten raised", e)
print("functions", st.reshape(x, (4, 6)).shape, st.transpose(x, 0, 2).shape,
      st.permute(x, (2, 0, 1)).shape, st.squeeze(st.ones(1, 3)).shape,
      st.unsqueeze(st.ones(3), 1).shape)
print("nn.Flatten", nn.Flatten()(x).shape, nn.Flatten(0, 1)(x).shape, nn.Flatten())


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(12, 5))

    def forward(self, x):
        with st.no_grad():
            h = st.flatten(st.transpose(x, 1, 2), 1)
        return self.head(x) + h.sum(-1, keepdim=True)


@st.inference_mode()
def predict(model, x):
    return model(x).softmax(-1)


st.manual_seed(0)
model = Classifier()
for b in (2, 3, 4, 5, 6):
    print("predict", b, predict(model, st.arange(b * 12.0).reshape(b, 3, 4) / 10).tolist())
st.reset()
inputs = [st.randn(b, 3, 4) for b in (2, 3, 4, 5, 6)]
for inp in inputs:
    model(inp)
print("model translations:", st.stats()["translations"])
e = st.explain(model, inputs[0])
print("model graphs:", e.graph_count, "breaks:", e.graph_break_count)


y = st.arange(6.0).reshape(2, 3)
print("expand", y[:1].expand(3, -1).tolist(), y[:, :1].expand_as(y).tolist(),
      y[0].expand(2, 2, 3).shape)
print("repeat", y.repeat(2, 1).tolist(), y[0].repeat(2, 2).shape)
print("unbind", [t.tolist() for t in y.unbind(1)], len(y.unbind()))
print("as", y.view_as(st.ones(3, 2)).tolist(), y.long().type_as(y).dtype)
print("methods", y.add(1).sub(y).mul(3).div(2).pow(2).neg().tolist(),
      y.eq(2).tolist(), y.ne(2).tolist(), y.lt(2).tolist(), y.le(2).tolist(),
      y.gt(2).tolist(), y.ge(2).tolist())


class Tokens(nn.Module):
    """A class token expanded to the batch, as a vision transformer's."""

    def __init__(self):
        super().__init__()
        self.cls = st.randn(1, 1, 4)
        self.pos = st.randn(1, 4, 4)
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        b = x.shape[0]
        x = st.cat([self.cls.expand(b, -1, -1), x], dim=1)
        x = x.add(self.pos[:, : x.size(1)])
        return self.proj(x).pow(2).mul(0.5).neg().sum(-1)


tokens = Tokens()
st.reset()
for b in (2, 3, 4, 5, 6):
    print("tokens", b, tokens(st.arange(b * 12.0).reshape(b, 3, 4) / 10).tolist())
print("model tokens translations:", st.stats()["translations"])
e = st.explain(tokens, st.ones(2, 3, 4))
print("model tokens graphs:", e.graph_count, "breaks:", e.graph_break_count)


class Heads(nn.Module):
    """An RMSNorm (`torch.rsqrt`) and heads split with `view(*shape, ...)`, as llama-style
    code writes them; `t()`, `mm`, `logsumexp`, `amax`, `isfinite(...).all()`, `new_zeros`."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(st.ones(4))
        self.w = st.randn(4, 4)

    def forward(self, x):
        x = x * st.rsqrt(x.square().mean(-1, keepdim=True) + 1e-6) * self.weight
        heads = x.view(*x.shape[:-1], 2, -1)
        flat = x.reshape(-1, 4).mm(self.w.t())
        score = flat.logsumexp(-1) - flat.amax(-1)
        ok = st.isfinite(score).all()
        return heads.sum(-1), score, ok, x.new_zeros(2).tolist()


heads = Heads()
st.reset()
for t in (2, 3, 4):
    h, score, ok, zeros = heads(st.arange(2 * t * 4.0).reshape(2, t, 4) / 7)
    print("heads", t, h.tolist(), score.tolist(), bool(ok), zeros)
print("model heads translations:", st.stats()["translations"])
e = st.explain(heads, st.ones(2, 3, 4))
print("model heads graphs:", e.graph_count, "breaks:", e.graph_break_count)


class Decorated(nn.Module):
    """`@torch.compile` on the forward method, `@torch.no_grad`-free helpers disabled with
    `@symtrace.disable` as methods, and `x.new_tensor`: the wrappers bind to the instance as
    the functions they wrap would."""

    def __init__(self):
        super().__init__()
        self.scale = 2.0

    @st.compile
    def forward(self, x):
        return x * self.scale + x.new_tensor([1.0, 0.0, -1.0]) + self.offset(x)

    @st.disable
    def offset(self, x):
        return x.sum() * 0.0 + self.scale


decorated = Decorated()
for k in (1.0, 2.0):
    print("decorated", decorated(st.ones(3) * k).tolist(), Decorated.forward(decorated, st.ones(3)).tolist())


class Positions(nn.Module):
    """Positions and a causal mask made on the input's device, as torch code writes them
    (`device=x.device`, `.to(device)`, `x.device.type`), and a table of positions read as
    the Annotated Transformer reads it (`self.pe[:, :T].requires_grad_(False)`, the mark it
    already has); another device is refused."""

    def __init__(self):
        super().__init__()
        self.register_buffer("pe", st.arange(8.0).reshape(1, 8) * 0.5)

    def forward(self, x):
        T = x.shape[1]
        pos = st.arange(T, device=x.device)
        mask = st.ones(T, T, dtype=x.dtype, device=x.device).tril()
        y = (x + pos + self.pe[:, :T].requires_grad_(False)).to(x.device) @ mask
        return y.to(dtype=st.float32, device="cpu"), x.to(x) is x, x.device.type == "cpu"


positions = Positions()
st.reset()
for t in (2, 3, 4):
    y, same_tensor, on_cpu = positions(st.ones(2, t))
    print("positions", t, y.tolist(), y.dtype, same_tensor, on_cpu)
print("model positions translations:", st.stats()["translations"])
e = st.explain(positions, st.ones(2, 3))
print("model positions graphs:", e.graph_count, "breaks:", e.graph_break_count)
try:
    st.zeros(2, device="cuda")
except RuntimeError as err:
    print("device refused:", err)


class Router(nn.Module):
    """A mixture of experts' top-k routing (`topk`, `argsort`, `sort`), a top-k sampler's
    cut (`v[:, [-1]]`) and a loss read at `logp[st.arange(B), targets]`, over batches of
    changing size."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(4, 3)

    def forward(self, x, targets):
        logits = self.gate(x)
        weights, experts = logits.softmax(-1).topk(2, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        v, _ = st.topk(logits, 2)
        cut = logits.masked_fill(logits < v[:, [-1]], float("-inf"))
        order = logits.argsort(-1, descending=True)
        logp = logits.log_softmax(-1)
        loss = -logp[st.arange(x.shape[0]), targets].mean()
        return weights, experts, cut.softmax(-1), order, logits.sort(0).values, loss


router = Router()
st.reset()
for b in (2, 3, 4, 5):
    out = router(st.arange(b * 4.0).reshape(b, 4).sin(), st.arange(b) % 3)
    print("router", b, [t.tolist() for t in out])
print("model router translations:", st.stats()["translations"])
e = st.explain(router, st.ones(2, 4), st.zeros(2, dtype=st.int64))
print("model router graphs:", e.graph_count, "breaks:", e.graph_break_count)


class ConvNet(nn.Module):
    """A small residual CNN as vision code writes it: `Conv2d` (padding, stride, groups),
    `BatchNorm2d` in training (running statistics updated in place), pooling, `F.pad`, a
    `Conv1d` over the pooled rows, over batches of changing size."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding="same", groups=2, bias=False),
                                   nn.BatchNorm2d(8), nn.LeakyReLU(0.1))
        self.down = nn.Conv2d(8, 16, 3, stride=2)
        self.pool = nn.MaxPool2d(2, ceil_mode=True)
        self.rows = nn.Conv1d(16, 4, 2)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.block(x)
        x = self.pool(self.down(F.pad(x, (1, 0, 1, 0))))
        r = self.rows(F.adaptive_avg_pool2d(x, (1, 3)).flatten(2))
        return self.head(F.avg_pool1d(r, 2).flatten(1)), self.stem[1].running_mean


convnet = ConvNet()
st.reset()
for b in (2, 3, 4, 5):
    out, running = convnet(st.arange(b * 3 * 8 * 8.0).reshape(b, 3, 8, 8).sin())
    print("convnet", b, out.tolist(), running.tolist())
print("model convnet translations:", st.stats()["translations"])
e = st.explain(convnet, st.ones(2, 3, 8, 8))
print("model convnet graphs:", e.graph_count, "breaks:", e.graph_break_count)


class Encoder(nn.Module):
    """A pre-norm encoder layer on torch's built-in `nn.MultiheadAttention` (batch first, a
    key padding mask), over sequences of changing length."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.norm = nn.LayerNorm(8)
        self.ff = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))

    def forward(self, x, padding):
        h = self.norm(x)
        a, _ = self.attn(h, h, h, key_padding_mask=padding, need_weights=False)
        x = x + a
        return x + self.ff(self.norm(x))


encoder = Encoder()
st.reset()
for t in (3, 4, 5, 6):
    pad = st.arange(t) >= t - 1
    out = encoder(st.arange(2 * t * 8.0).reshape(2, t, 8).cos(), pad.unsqueeze(0).expand(2, t))
    print("encoder", t, out.tolist())
print("model encoder translations:", st.stats()["translations"])
e = st.explain(encoder, st.ones(2, 3, 8), st.zeros(2, 3, dtype=st.bool))
print("model encoder graphs:", e.graph_count, "breaks:", e.graph_break_count)

class Seq2Seq(nn.Module):
    """torch's built-in transformer stacks (`nn.TransformerEncoder` of deep-copied
    `nn.TransformerEncoderLayer`s, `nn.TransformerDecoder` with a causal mask from
    `nn.Transformer.generate_square_subsequent_mask`), over changing lengths."""

    def __init__(self):
        super().__init__()
        enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(enc, 2, norm=nn.LayerNorm(8))
        dec = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, activation="gelu")
        self.decoder = nn.TransformerDecoder(dec, 1)

    def forward(self, src, tgt, src_padding):
        memory = self.encoder(src, src_key_padding_mask=src_padding)
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        return self.decoder(tgt, memory, tgt_mask=mask, memory_key_padding_mask=src_padding)


st.manual_seed(2)
seq2seq = Seq2Seq()
st.reset()
for t in (3, 4, 5, 6):
    src = st.arange(2 * t * 8.0).reshape(2, t, 8).sin()
    pad = (st.arange(t) >= t - 1).unsqueeze(0).expand(2, t)
    out = seq2seq(src, src[:, :t - 1].cos(), pad)
    print("seq2seq", t, out.tolist())
print("model seq2seq translations:", st.stats()["translations"])
e = st.explain(seq2seq, st.ones(2, 3, 8), st.ones(2, 2, 8), st.zeros(2, 3, dtype=st.bool))
print("model seq2seq graphs:", e.graph_count, "breaks:", e.graph_break_count)


class Tagger(nn.Module):
    """A sequence tagger: embeddings, a two-layer bidirectional `nn.LSTM` (batch first), a
    `nn.GRUCell` over its last step, a linear head; over changing batch sizes."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 6)
        self.lstm = nn.LSTM(6, 5, num_layers=2, batch_first=True, bidirectional=True)
        self.cell = nn.GRUCell(10, 4)
        self.head = nn.Linear(10, 3)

    def forward(self, tokens):
        out, (h, c) = self.lstm(self.embed(tokens))
        summary = self.cell(out[:, -1])
        return self.head(out).log_softmax(-1), summary, h


st.manual_seed(3)
tagger = Tagger()
st.reset()
for n in (2, 3, 4, 5):
    tags, summary, h = tagger((st.arange(n * 4) % 10).reshape(n, 4))
    print("tagger", n, tags.tolist(), summary.tolist(), h.shape)
print("model tagger translations:", st.stats()["translations"])
e = st.explain(tagger, (st.arange(12) % 10).reshape(3, 4))
print("model tagger graphs:", e.graph_count, "breaks:", e.graph_break_count)


class Quantized(nn.Module):
    """Fake quantization as quantization-aware training writes it: per-layer scales in an
    `nn.ParameterList`, biases in an `nn.ParameterDict`, `round()`/`clamp()`, and a count of
    forward calls kept on the class (`Quantized.calls += 1`)."""

    calls = 0

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(6, 6, bias=False) for _ in range(2)])
        self.scales = nn.ParameterList([st.full((1,), 0.05), st.full((1,), 0.1)])
        self.biases = nn.ParameterDict({"0": st.zeros(6), "1": st.full((6,), 0.01)})

    def forward(self, x):
        Quantized.calls += 1
        for i, layer in enumerate(self.layers):
            w = layer.weight
            s = self.scales[i]
            wq = (w / s).round().clamp(-8, 7) * s
            x = (x @ wq.t() + self.biases[str(i)]).relu()
        return x.sign() * x.abs().floor() + x.frac(), Quantized.calls


st.manual_seed(1)
quantized = Quantized()
st.reset()
for n in (2, 3, 4, 5):
    out, calls = quantized(st.arange(n * 6.0).reshape(n, 6).sin() * 3.0)
    print("quantized", n, calls, out.tolist())
print("model quantized translations:", st.stats()["translations"])
e = st.explain(quantized, st.ones(3, 6))
print("model quantized graphs:", e.graph_count, "breaks:", e.graph_break_count)

class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(st.ones(d))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(st.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * st.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return st.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    batch, heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, heads * n_rep, slen, head_dim)


class Rotary(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (st.arange(0, dim, 2, dtype=st.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @st.no_grad()
    def forward(self, x, position_ids):
        inv_freq = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        freqs = (inv_freq @ position_ids[:, None, :].float()).transpose(1, 2)
        emb = st.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


class DecoderLayer(nn.Module):
    """A Llama-style decoder layer as Hugging Face writes it: RMSNorm in float32, rotary
    position embeddings (`torch.cat((-x2, x1), dim=-1)` of a tuple), grouped-query attention
    (`repeat_kv`), an additive causal mask from `torch.full(..., fill_value=finfo.min)`,
    `F.softmax(..., dtype=torch.float32)`, a key/value cache returned, a SwiGLU MLP."""

    def __init__(self, d=8, heads=2, kv_heads=1):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d // heads
        self.input_layernorm = RMSNorm(d)
        self.post_attention_layernorm = RMSNorm(d)
        self.q_proj = nn.Linear(d, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, d, bias=False)
        self.rotary = Rotary(self.head_dim)
        self.gate_proj = nn.Linear(d, 2 * d, bias=False)
        self.up_proj = nn.Linear(d, 2 * d, bias=False)
        self.down_proj = nn.Linear(2 * d, d, bias=False)
        self.act_fn = nn.SiLU()

    def attention(self, hidden_states, attention_mask):
        bsz, q_len, _ = hidden_states.size()
        q = self.q_proj(hidden_states).view(bsz, q_len, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(bsz, q_len, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(bsz, q_len, self.kv_heads, self.head_dim).transpose(1, 2)
        position_ids = st.arange(0, q_len, dtype=st.long).unsqueeze(0)
        cos, sin = self.rotary(v, position_ids)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        present = (k, v)
        k = repeat_kv(k, self.heads // self.kv_heads)
        v = repeat_kv(v, self.heads // self.kv_heads)
        weights = st.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        weights = weights + attention_mask[:, :, :, : k.shape[-2]]
        weights = F.softmax(weights, dim=-1, dtype=st.float32).to(q.dtype)
        out = st.matmul(weights, v).transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.o_proj(out), present

    def forward(self, hidden_states, attention_mask):
        residual = hidden_states
        hidden_states, present = self.attention(self.input_layernorm(hidden_states), attention_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.down_proj(self.act_fn(self.gate_proj(hidden_states)) * self.up_proj(hidden_states))
        return residual + hidden_states, present


import math

st.manual_seed(3)
llama = DecoderLayer().to(st.float32).eval()
st.reset()
for n in (3, 4, 5, 6):
    mask = st.triu(st.full((n, n), fill_value=st.finfo(st.float32).min, dtype=st.float32), diagonal=1)
    out, (k, v) = llama(st.arange(2 * n * 8.0).reshape(2, n, 8).sin().float(), mask[None, None, :, :].expand(2, 1, -1, -1))
    print("llama", n, [round(t, 5) for t in out.reshape(-1).tolist()], k.shape, v.shape)
print("model llama translations:", st.stats()["translations"])
e = st.explain(llama, st.ones(2, 3, 8).float(), st.zeros(2, 1, 3, 3).float())
print("model llama graphs:", e.graph_count, "breaks:", e.graph_break_count)

# Arguments given by the keywords torch names them by: `gather(dim=, index=)`,
# `index_select`, `narrow`, `masked_fill(mask=, value=)`, `split(split_size=)`,
# `view(size=)`, `reshape(shape=)`, `permute(dims=)`, `squeeze(dim=)`, `expand(size=)`; at
# changing lengths the sizes stay expressions as the positional spellings' do.
class Keywords(nn.Module):
    def forward(self, x, idx):
        B, T, C = x.shape
        picked = st.gather(x, dim=2, index=idx) + x.index_select(dim=2, index=idx[0, 0])
        head = st.narrow(x, dim=1, start=0, length=T - 1).sum(dim=1)
        tail = x.narrow(dim=1, start=1, length=T - 1).masked_fill(mask=x[:, 1:] > 0.5, value=0.0)
        parts = x.split(split_size=2, dim=2)
        flat = x.view(size=(B, T * C)).reshape(shape=(B, T, C)).permute(dims=(0, 2, 1))
        one = x[:, :1].squeeze(dim=1).expand(size=(B, C)) + st.squeeze(x[:, :1], dim=1)
        return picked, head, tail, parts[0], flat.sum(-1), one


keywords = Keywords()
st.reset()
for n in (3, 4, 5, 6):
    x = st.arange(2 * n * 4.0).reshape(2, n, 4).sin()
    idx = (st.arange(2 * n * 2).reshape(2, n, 2) % 4)
    print("keywords", n, [[round(v, 6) for v in t.reshape(-1).tolist()] for t in keywords(x, idx)])
print("model keywords translations:", st.stats()["translations"])
e = st.explain(keywords, st.ones(2, 3, 4), st.zeros(2, 3, 2, dtype=st.int64))
print("model keywords graphs:", e.graph_count, "breaks:", e.graph_break_count)

# torch.linalg's norms: gradient clipping by the global norm, an RMS normalisation, a
# matrix norm; compositions that a traced call simulates, at changing lengths.
class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        h = self.proj(x)
        h = h / st.linalg.norm(h, dim=-1, keepdim=True).clamp(min=1e-6)
        parts = [h, x]
        total = st.linalg.vector_norm(st.stack([st.linalg.vector_norm(p) for p in parts]))
        coef = (1.0 / (total + 1e-6)).clamp(max=1.0)
        return [p * coef for p in parts], st.linalg.matrix_norm(x, float("inf")), st.linalg.vector_norm(x, 1, dim=(0, 2))


st.manual_seed(0)
norms = Norms()
st.reset()
for n in (3, 4, 5, 6):
    x = st.arange(2 * n * 4.0).reshape(2, n, 4).cos()
    out, rows, ones = norms(x)
    print("norms", n, [round(v, 6) for v in (out[0].sum().item(), out[1].sum().item(), *rows.tolist(), *ones.tolist())])
print("model norms translations:", st.stats()["translations"])
e = st.explain(norms, st.ones(2, 3, 4))
print("model norms graphs:", e.graph_count, "breaks:", e.graph_break_count)

# Model construction as torch code writes it: `nn.init` on parameters (in place, seeded),
# `_init_weights` through `apply`, `.data`, `model.to(dtype)`, `zero_grad()`.
import symtrace.nn.init as init

st.manual_seed(0)
wide = nn.Linear(256, 128)
init.xavier_uniform_(wide.weight)
bound = (6 / (256 + 128)) ** 0.5
xavier_ok = wide.weight.abs().max().item() <= bound and wide.weight.abs().max().item() > 0.9 * bound
init.kaiming_normal_(wide.weight, nonlinearity="relu")
kaiming_ok = abs(wide.weight.std().item() - (2 / 256) ** 0.5) < 0.005
init.trunc_normal_(wide.weight, std=1.0, a=-0.5, b=0.5)
trunc_ok = wide.weight.abs().max().item() <= 0.5
wide.weight.data.normal_(0.0, 0.02)
normal_ok = abs(wide.weight.std().item() - 0.02) < 0.002 and isinstance(wide.weight, nn.Parameter)
print("init:", xavier_ok, kaiming_ok, trunc_ok, normal_ok)


def init_weights(module):
    if isinstance(module, nn.Linear):
        init.normal_(module.weight, mean=0.0, std=0.02)
        if module.bias is not None:
            init.zeros_(module.bias)


built = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2)).apply(init_weights).float()
built.zero_grad()
print("built:", built[0].weight.dtype, built[2].bias.tolist(), built.to("cpu") is built)
