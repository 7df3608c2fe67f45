"""A small GPT, written from scratch the way PyTorch users write one (modules with parameters
registered through __setattr__, super().__init__(), self.attn(x) through __call__), on
symtrace.nn. It runs one batch eagerly and traced and prints what the tracer did: the loss
both ways, the time per forward pass both ways, and what st.explain captured.

    target/release/rustpython --plugin symtrace demos/gpt.py
    target/release/rustpython demos/gpt.py            (st.compile alone, without the plugin)
"""
import math
import time

import symtrace as st
import symtrace.nn as nn
from symtrace.nn import functional as F


class Config:
    def __init__(self, vocab_size=64, block_size=32, n_layer=2, n_head=2, n_embd=32,
                 dropout=0.1, bias=True):
        self.vocab_size = vocab_size
        self.block_size = block_size
        self.n_layer = n_layer
        self.n_head = n_head
        self.n_embd = n_embd
        self.dropout = dropout
        self.bias = bias


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        # the causal mask, a buffer: position i sees positions 0..i
        mask = st.tril(st.ones(config.block_size, config.block_size))
        self.register_buffer("bias", mask.view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        return self.dropout(x)


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.config.block_size, f"sequence of {t} is longer than {self.config.block_size}"
        pos = st.arange(0, t, dtype=st.int64)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def per_call(fn, args, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - start) / calls


def best_times(eager, traced, args, rounds=15, calls=10):
    """The best time per call of each, measured in alternation (so that both see the same
    machine), after a warm-up."""
    per_call(eager, args, 2)
    per_call(traced, args, 2)
    best_eager = best_traced = float("inf")
    for _ in range(rounds):
        best_eager = min(best_eager, per_call(eager, args, calls))
        best_traced = min(best_traced, per_call(traced, args, calls))
    return best_eager, best_traced


def main():
    st.manual_seed(1337)
    st.set_default_dtype(st.float32)
    config = Config()
    model = GPT(config).eval()
    batch, length = 2, 16
    idx = (st.rand(batch, length) * config.vocab_size).long()
    targets = (st.rand(batch, length) * config.vocab_size).long()
    params = sum(p.numel() for p in model.parameters())
    print(f"GPT: {config.n_layer} layers, {config.n_head} heads, {config.n_embd} embedding, "
          f"vocabulary {config.vocab_size}, block {config.block_size}: {params} parameters; "
          f"batch {batch} x {length} tokens")

    eager = st.disable(model)
    traced = st.compile(model, fullgraph=True)
    logits_e, loss_e = eager(idx, targets)
    logits_t, loss_t = traced(idx, targets)
    same = logits_e.tolist() == logits_t.tolist() and loss_e.item() == loss_t.item()
    print(f"loss eager  {loss_e.item():.6f}")
    print(f"loss traced {loss_t.item():.6f}   (logits and loss equal bit for bit: {same})")

    t_eager, t_traced = best_times(eager, traced, (idx, targets))
    print(f"forward pass: eager {t_eager * 1e6:.0f} us, traced {t_traced * 1e6:.0f} us, "
          f"{t_eager / t_traced:.1f}x faster")

    explained = st.explain(model, idx, targets)
    print(f"captured: {explained.graph_count} graph(s), {explained.op_count} ops, "
          f"{explained.graph_break_count} graph break(s)")
    for b in explained.break_reasons:
        print("  break:", b)


if __name__ == "__main__":
    main()
