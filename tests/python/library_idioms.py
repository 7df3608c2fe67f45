"""What model code takes from Python's library and torch's API around its tensor work:
`itertools` (made whole, or stepped lazily), `zip(strict=True)`, `contextlib.contextmanager` context managers,
the grad modes (`no_grad` as a block and as a decorator, `is_grad_enabled`), a module's
forward hooks and pre-hooks, the truth of a dict the caller passes (`if kwargs:`), a
configuration read through a subclass of dict (`cfg.model.hidden`), a dataclass output with
a field made by a default factory, and random
numbers (dropout while training: drawn by the graph when it runs, in the program's order). Each
stays in the graph instead of breaking it.

For each case: the caller's state is reset, the function runs `CALLS` times as written, the
state is reset again, and it runs `CALLS` times compiled; the results of every call and the
state afterwards are equal. The compiled calls translate at most `most` times, and explain()
of one more call counts the expected graphs and breaks. Prints one line per case; `FAIL`
marks a failed one."""
import abc
import collections
import collections.abc
import contextlib
import dataclasses
import copy
import enum
import heapq
import itertools
import logging
import numbers
import types
import weakref
import operator
import os
import random
import sys
import typing
from collections import Counter, defaultdict, namedtuple

import symtrace as st
import symtrace.nn as nn
from case_report import eager_then_traced, plain

failures = []
CALLS = 6
log = []


def combinatorics(x):
    acc = x
    for a, b in itertools.product(range(2), (1.0, 2.0)):
        acc = acc + a * b
    for t in itertools.chain([x], (x * 2.0,)):
        acc = acc * 0.5 + t
    for t in itertools.chain.from_iterable([[x], [x, x]]):
        acc = acc - t * 0.25
    pairs = [a * b for a, b in itertools.combinations([1, 2, 3], 2)]
    return acc, pairs, list(itertools.permutations("ab")), list(itertools.product("xy", repeat=2))


def lazy_iterators(x, ws):
    out = [x * w + i for i, w in zip(itertools.count(1), ws)]
    tail = list(itertools.islice(ws, 1, None)), list(itertools.islice(range(10), 2, 9, 3))
    steps = [b - a for a, b in itertools.pairwise(ws)]
    sums = list(itertools.accumulate(ws)), list(itertools.accumulate(ws, operator.mul, initial=2.0))
    scaled = list(itertools.starmap(lambda a, t: t * a, zip(ws, itertools.repeat(x))))
    return out, tail, steps, sums, scaled, list(itertools.accumulate([x, x * 2.0]))


def strict_zips(x, ws):
    # `zip(..., strict=True)`, as linters ask it to be written (ruff's B905): each pair, and
    # the check that both end together, in the graph.
    acc = x
    for w, (i, v) in zip(ws, enumerate(ws), strict=True):
        acc = acc * w + i * v
    return acc, list(zip("abc", ws, strict=True))


def islice_across_a_break(x, ws):
    it = itertools.islice(itertools.chain(ws, [9.0]), 1, None)
    first = next(it)
    x = x * first
    st.graph_break()
    print("a graph break with the iterator part-way")
    return x, list(it), type(it).__name__


@contextlib.contextmanager
def scoped(tag):
    log.append(("enter", tag))
    try:
        yield 3.0
    finally:
        log.append(("exit", tag))


def context_managers(x):
    with scoped("forward") as k:
        y = x * k
    with contextlib.nullcontext(5.0) as five:
        y = y + five
    return y


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)

    @st.no_grad()
    def forward(self, x):
        return self.lin(x), st.is_grad_enabled()


class BareDecorated(Head):
    @st.no_grad
    def forward(self, x):
        return self.lin(x).sum(-1), st.is_grad_enabled()


def grad_modes(x):
    outside = st.is_grad_enabled()
    with st.no_grad():
        y = x * 2.0 if not st.is_grad_enabled() else x
        with st.enable_grad():
            inner = st.is_grad_enabled()
    with st.set_grad_enabled(False):
        z = y + 1.0
    return z, outside, inner, st.is_grad_enabled()


hooked = nn.Linear(3, 3)
seen = []
hooked.register_forward_pre_hook(lambda m, args: (args[0] * 2.0,))
hooked.register_forward_hook(lambda m, args, out: out + 1.0)
hooked.register_forward_hook(lambda m, args, out: seen.append(tuple(out.shape)))


def forward_hooks(x):
    return hooked(x) * 0.5


def with_options(x, options):
    if options:
        return x + options["shift"]
    return x * 2.0


def with_keywords(x, **kwargs):
    if kwargs:
        return x + kwargs["shift"]
    return x * 2.0


logger = logging.getLogger("library_idioms")
TABLE = {1: 0.5, 2: 2.0, "name": 3.0}


def int_keys_and_logging(x, k):
    logger.debug("scaling by %s", TABLE[k])
    y = x * TABLE[k] + TABLE.get(k + 10, 1.0)
    if (k + 1) in TABLE:
        y = y * TABLE["name"]
    try:
        y = y + TABLE[99]
    except KeyError:
        y = y - 1.0
    return y


class MaskCache(nn.Module):
    # Masks made once per shape, kept in a dict keyed by the shape (a tuple of ints): a later
    # call with a shape seen before reads its mask by that key, and stays one graph.
    def __init__(self):
        super().__init__()
        self.masks = {}

    def forward(self, x):
        key = tuple(x.shape)
        if key not in self.masks:
            self.masks[key] = st.tril(st.ones(*key))
        return x.masked_fill(self.masks[key] == 0, 0.0) + self.masks.get((0, "none"), 1.0)


class TypedTables(nn.Module):
    # Tables made once per (length, dtype), as a rotary embedding keeps them: the dict is
    # read, measured, trimmed and grown by keys of ints, None and dtypes.
    def __init__(self):
        super().__init__()
        self.tables = {}

    def forward(self, x):
        key = (x.shape[-1], x.dtype)
        if key not in self.tables:
            if len(self.tables) >= 2:
                del self.tables[next(iter(self.tables))]
            self.tables[key] = st.arange(x.shape[-1]).to(x.dtype)
        return x * self.tables[key] + len(self.tables) + bool(self.tables.get((None, key[1])))


def environment_and_version(x):
    # `os.environ.get` (an unset name: `_Environ.__getitem__` raises KeyError from None into
    # `Mapping.get`'s handler) and `sys.version_info` compared as the tuple it is.
    if os.environ.get("SYMTRACE_TEST_UNSET_FLAG", "0") == "1":
        x = x * 2.0
    if sys.version_info >= (3, 8) and os.environ.get("PATH") is not None:
        x = x + 1.0
    return x


def first_call_without_work(x, m=None):
    # The first call does nothing with x: what later calls (with `m`) do is captured still.
    return x if m is None else x * m


def rows_of_a_constant(x):
    i, j = st.tril_indices(3, 3)
    return x[..., i, j], [r.sum() for r in st.eye(2, dtype=st.int64)]


LAYER_WEIGHTS = {0: 1.0, 2: 0.5, 5: 0.25}
SCALE_BY_DTYPE = {st.float32: 2.0, st.float64: 3.0}
EDGES = {(0, 1): 1.0, (1, 2): -1.0}


def tables_read_whole(x):
    # Dicts keyed by ints, dtypes and tuples, iterated whole: their keys guarded in order,
    # each value read through its key.
    out = x * 0.0
    for layer, w in LAYER_WEIGHTS.items():
        out = out + x * (w * layer)
    dtypes = [str(d) for d in SCALE_BY_DTYPE], sorted(LAYER_WEIGHTS), max(LAYER_WEIGHTS)
    return out + sum(x[:, a:b] * v for (a, b), v in EDGES.items() if b > a), dtypes, len(EDGES)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.checkpointing = True

    def forward(self, x):
        if st.jit.is_scripting() or st.compiler.is_compiling():
            return x
        st._assert(x.dim() == 2, "a batch of rows")
        if self.checkpointing:
            return st.utils.checkpoint.checkpoint(self.lin, x, use_reentrant=False)
        return self.lin(x)


Pair = namedtuple("Pair", "a b")


def namedtuple_methods(x, given):
    p = Pair(x * 2.0, x + 1.0)
    moved = p._replace(a=x)
    fields = p._asdict()
    return (moved, fields["b"] * 2.0, given._replace(b=x).b + given.a, list(given._asdict()),
            p._fields, given._fields)


class Dropped(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        h = self.drop(self.lin(x).relu())
        return nn.functional.dropout(h, 0.25, training=self.training) + x


def draws(x):
    st.randn(4)  # drawn and never read: later draws follow it
    noise = st.rand_like(x) + st.randn(*x.shape, dtype=st.float32).double()
    return x + noise, st.randint(0, 10, (3,))


def sample_tokens(table, idx, steps=3, top_k=3):
    """A generate loop: the last token's logits, top-k filtered, softmax, one token drawn."""
    for _ in range(steps):
        logits = table[idx[:, -1]]
        v, _ = st.topk(logits, top_k)
        logits[logits < v[:, [-1]]] = -float("inf")
        nxt = st.multinomial(nn.functional.softmax(logits, dim=-1), num_samples=1)
        idx = st.cat((idx, nxt), dim=1)
    return idx, st.multinomial(st.tensor([0.0, 2.0, 1.0]), 2)


def drop_path(x, drop_prob=0.25):
    """timm's stochastic depth, and torch's other draws."""
    keep = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    mask = x.new_empty(shape).bernoulli_(keep)
    mask.div_(keep)
    others = st.randperm(4), st.normal(0.0, 1.0, (2,)), st.normal(x, 0.5), st.bernoulli(x.sigmoid())
    return x * mask, others, st.zeros(3).exponential_()


def draws_around_a_break(x):
    a = x + st.rand(3)
    st.graph_break()
    return a * st.randn(3)


def updated_constants(x, n):
    causal = st.full((3, 3), float("-inf")).triu(1)
    causal += 0.5
    counts = st.ones(2, n, dtype=st.int64)
    counts += n - 1
    scale = st.ones(3)
    scale.mul_(2.0)
    return (x + causal).softmax(-1) * scale, counts * 2


def adds_then_breaks(t):
    t += 2.0
    st.graph_break()
    print("a graph break inside an inlined call that updated a constant")
    return t


def updated_constant_across_a_break(x):
    t = st.ones(3)
    alias = t
    t += 1.0
    r = adds_then_breaks(t)
    return x + t, alias, r


class RotaryCache(nn.Module):
    """A rotary embedding's cos/sin cache, made again when a longer sequence comes (a
    counter on the module, and `type_as` of a tensor made from a changing size)."""

    def __init__(self, dim=4, base=10000):
        super().__init__()
        self.inv_freq = 1.0 / (base ** (st.arange(0, dim, 2).float() / dim))
        self.seq_len_cached = 0

    def forward(self, x):
        seq_len = x.shape[1]
        if seq_len > self.seq_len_cached:
            self.seq_len_cached = seq_len
            t = st.arange(seq_len).type_as(self.inv_freq)
            emb = st.cat((st.outer(t, self.inv_freq),) * 2, dim=-1)
            self.cos_cached = emb.cos()[None]
            self.sin_cached = emb.sin()[None]
        return x * self.cos_cached[:, :seq_len] + x.flip(-1) * self.sin_cached[:, :seq_len]


def causal_mask(shape, dtype, past=0):
    bsz, tgt_len = shape
    mask = st.full((tgt_len, tgt_len), st.finfo(dtype).min)
    cond = st.arange(mask.size(-1))
    mask.masked_fill_(cond < (cond + 1).view(mask.size(-1), 1), 0)
    if past > 0:
        mask = st.cat([st.zeros(tgt_len, past, dtype=dtype), mask], dim=-1)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past)


def expanded_mask(mask, dtype, tgt_len=None):
    bsz, src_len = mask.size()
    tgt_len = tgt_len if tgt_len is not None else src_len
    inverted = 1.0 - mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    return inverted.masked_fill(inverted.to(st.bool), st.finfo(dtype).min)


def attention_masks(attention_mask, input_ids):
    """Hugging Face's 4-d masks: a size passed on, tested against None, used as a size."""
    causal = causal_mask(input_ids.shape, st.float32)
    return causal + expanded_mask(attention_mask, st.float32, tgt_len=input_ids.shape[-1])


def caller_state():
    return {"log": list(log), "seen": list(seen),
            "optimized": [p.tolist() for p in optimized.parameters()] if "optimized" in globals() else None,
            "ema": [p.tolist() for p in averaged.parameters()] if "averaged" in globals() else None,
            "torch_sgd": [p.tolist() for p in torch_sgd_params] if "torch_sgd_params" in globals() else None,
            "adam": [p.tolist() for p in adam_params] if "adam_params" in globals() else None,
            "tallies": dict(tallies), "buckets": dict(buckets),
            "memo": {k.__name__: dict(v) for k, v in DISPATCH_MEMO.items()} if "DISPATCH_MEMO" in globals() else None,
            "options": dict(DEFAULT_OPTIONS) if "DEFAULT_OPTIONS" in globals() else None,
            "frames": [t.tolist() for t in agent.frames] if "agent" in globals() else None,
            "random": hash(random.getstate()), "own_rng": hash(own_generator.rng.getstate()) if "own_generator" in globals() else None}


def reset():
    st.manual_seed(1234)
    random.seed(1234)
    if "own_generator" in globals():
        own_generator.rng.seed(3)
    if "agent" in globals():
        agent.frames.clear()
        agent.frames.extend([st.zeros(1, 3), st.ones(1, 3)])
    if "smoothed" in globals():
        smoothed.frames.clear()
        smoothed.window.clear()
        smoothed.window.append(0.0)
    if "rotary" in globals():
        rotary.seq_len_cached = 0  # its cache grows again in each run
    log.clear()
    seen.clear()
    tallies.clear()
    buckets.clear()
    for name, start in (("torch_sgd", "torch_sgd_start"), ("adam", "adam_start")):
        if name in globals():
            globals()[name].state.clear()
            for p, value in zip(globals()[name + "_params"], globals()[start]):
                p.copy_(value)
    if "optimized" in globals():
        momentum.state.clear()
        with st.no_grad():
            for p, start in zip(optimized.parameters(), optimized_start):
                p.copy_(start)
    if "averaged" in globals():
        with st.no_grad():
            for p, start in zip(averaged.parameters(), averaged_start):
                p.copy_(start)


class AttrDict(dict):
    """A configuration whose keys read as attributes (an EasyDict, a yacs CfgNode)."""

    def __getattr__(self, name):
        if name in self:
            return self[name]
        raise AttributeError(name)


config = AttrDict(model=AttrDict(hidden=3, act="tanh", bias=True), eps=1e-5, extra=AttrDict())


def configured(x):
    m = config.model
    y = x * m.hidden + config.eps
    if m.bias and not config.extra:
        y = y + len(config)
    for key, value in config.model.items():
        if isinstance(value, int) and not isinstance(value, bool) and "hidden" in key:
            y = y * value
    return getattr(st, m.act)(y) + config.get("shift", 0.5) + getattr(config, "missing", 1.0)


def switch_activation(i):
    config.model["act"] = "tanh" if i < 3 else "relu"


class Options(dict):
    pass


options = Options(scale=2.0)
counts = Counter(a=2)
defaults = defaultdict(lambda: 5.0, a=1.0)


def dicts_that_are_not_plain(x):
    # A Counter and a defaultdict answer a missing key themselves (`__missing__`); a dict
    # subclass that gains a method after the translation is no longer read as a dict.
    return x * len(options) + options["scale"] + counts["b"] + defaults["zz"]


tallies = Counter()
buckets = defaultdict(list)
schedule = collections.OrderedDict([("warmup", 2.0), ("decay", 0.5)])


def tallied(x, phase):
    # A Counter counted and read back (a missing key is its 0, not stored), a defaultdict's
    # missing list made, stored and appended to, an OrderedDict read by key.
    tallies[phase] += 1
    buckets[phase].append(phase)
    scale = schedule["warmup"] if tallies[phase] <= 2 else schedule.get("decay", 1.0)
    return x * scale + tallies["never"] + ("never" in tallies)


def give_options_a_length(i):
    if i == 0 and "__len__" in Options.__dict__:
        del Options.__len__
    if i == 3:
        Options.__len__ = lambda self: 10


def sorted_items(x):
    # Pairs compared by their first items alone (unequal): the tensors after them never are.
    parts = {"b": x * 2.0, "a": x + 1.0, "c": x.exp()}
    groups = collections.defaultdict(list)
    for i in range(4):
        groups[i % 3].append(x * i)
    ordered = [v for _, v in sorted(parts.items())]
    backwards = [v for _, v in sorted(parts.items(), reverse=True)]
    return ordered, backwards, [sum(v) for _, v in sorted(groups.items())], sorted([(2, "x"), (1, "z"), (1, "y")])


def tensor_classes(x):
    y = x * 2.0
    if y.__class__ is st.Tensor and type(x).__name__ == x.__class__.__name__:
        return y + 1.0
    return y


@dataclasses.dataclass
class StepOutput:
    """An output written as a dataclass with a field made by a factory: its __init__ tests
    the argument against the dataclass's sentinel (`aux is _HAS_DEFAULT_FACTORY`)."""
    logits: st.Tensor
    loss: object = None
    aux: dict = dataclasses.field(default_factory=dict)


SCALARS = frozenset({int, float, bool})


def dataclass_outputs(x, scale):
    out = StepOutput(x * 2.0)
    out.aux["norm"] = out.logits.sum()
    scored = dataclasses.replace(out, loss=out.logits.mean())
    if type(scale) in SCALARS:  # a class looked up in a frozenset of the caller's
        scored.logits = scored.logits * scale
    return scored.logits, scored.loss, out.loss is None, sorted(out.aux), scored.aux is out.aux


def methods_as_values(x):
    # Methods of a list, dict and set made here taken as values, then called.
    counts = {"heads": 2, "layers": 4, "dims": 3}
    order = sorted(counts, key=counts.get, reverse=True)
    parts = []
    push = parts.append
    for name in order:
        push(x * counts[name])
    seen = set()
    mark = seen.add
    mark(order[0])
    return sum(parts), order, list(map(counts.get, ["dims", "none"])), sorted(seen)


def tokens_as_a_tensor(x, toks):
    ids = st.tensor(toks)
    both = st.cat(tensors=[x[ids], x[ids] * 2.0])
    return st.stack(tensors=(both, both + 1.0), dim=0).sum(0)


def ema_update(decay):
    # An exponential moving average of a model's weights, updated in place: the walk of
    # parameters() (generators over named_modules) comes before any tensor work.
    with st.no_grad():
        for averaged_p, p in zip(averaged.parameters(), online.parameters()):
            averaged_p.mul_(decay).add_(p, alpha=1 - decay)
    return decay


class Momentum:
    """An optimizer as written before torch keyed its state by the tensor: by id(p)."""

    def __init__(self, params, lr=0.1, momentum=0.9):
        self.param_groups = [{"params": list(params), "lr": lr, "momentum": momentum}]
        self.state = {}

    @st.no_grad()
    def step(self, grads):
        for group in self.param_groups:
            for p, g in zip(group["params"], grads):
                buf = self.state.get(id(p))
                if buf is None:
                    self.state[id(p)] = buf = g.clone()
                else:
                    buf.mul_(group["momentum"]).add_(g)
                p.add_(buf, alpha=-group["lr"])
        return len(self.state)


class TorchSGD:
    """An optimizer as torch writes one: its state a defaultdict keyed by the parameter
    tensors themselves, a parameter listed twice (tied weights) sharing its state."""

    def __init__(self, params, lr=0.1, momentum=0.9):
        self.param_groups = [{"params": list(params), "lr": lr, "momentum": momentum}]
        self.state = defaultdict(dict)

    @st.no_grad()
    def step(self, grads):
        for group in self.param_groups:
            for p, g in zip(group["params"], grads):
                state = self.state[p]
                if "momentum_buffer" not in state:
                    buf = state["momentum_buffer"] = g.clone()
                else:
                    buf = state["momentum_buffer"]
                    buf.mul_(group["momentum"]).add_(g)
                p.add_(buf, alpha=-group["lr"])

    def momentum_norm(self):
        # The state read whole: its keys, the parameters themselves, guarded by identity.
        return sum(s["momentum_buffer"].norm() * p.mean() for p, s in self.state.items())


def sgd_step_and_norm(grads):
    torch_sgd.step(grads)
    return torch_sgd.momentum_norm()


class Adam:
    """Adam as torch writes it: `state.setdefault(p, {})`, a step counter in each state, the
    bias corrections `1 - beta ** step` computed per call, not fixed by the step."""

    def __init__(self, params, lr=0.01, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.state = {}

    @st.no_grad()
    def step(self, grads):
        b1, b2 = self.betas
        for p, g in zip(self.params, grads):
            s = self.state.setdefault(p, {})
            if not s:
                s["step"] = 0
                s["m"] = st.zeros_like(p)
                s["v"] = st.zeros_like(p)
            s["step"] += 1
            m, v = s["m"], s["v"]
            m.mul_(b1).add_(g * (1 - b1))
            v.mul_(b2).add_(g * g * (1 - b2))
            m_hat = m / (1 - b1 ** s["step"])
            v_hat = v / (1 - b2 ** s["step"])
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))


def by_size(x, parts):
    # A heap of plain (size, index) pairs: the tensors taken smallest first.
    heap = []
    for i, t in enumerate(parts):
        heapq.heappush(heap, (t.shape[0], i))
    first = heapq.heappop(heap)
    rest = [parts[i] * (k + 2.0) for k, (_, i) in enumerate(sorted(heap))]
    try:
        heapq.heappop([])
    except IndexError:
        empty = "empty"
    return x * first[0], rest, heap, empty


class Span2(collections.namedtuple("Span2", ["low", "high"])):
    """A namedtuple subclass with a `__new__` of its own that calls the namedtuple's through
    `super()` (torch's PackedSequence, HF's outputs): `cls` is the method's first argument."""

    __slots__ = ()

    def __new__(cls, low, high=None):
        if high is None:
            high = low * 2.0
        return super().__new__(cls, low, high)


class Scaler:
    factor = 2.0

    @classmethod
    def build(cls, x):
        return x * cls.factor

    @staticmethod
    def shift(x):
        return x + 1.0


class ScalerChild(Scaler):
    factor = 3.0

    @classmethod
    def build(cls, x):
        # super() in a class method: the base's class method bound to this class, a static
        # method's function.
        return super().shift(super().build(x))


def super_in_class_methods(x):
    s = Span2(x)
    return s.high - s.low, ScalerChild.build(x)


def check(name, fn, make_args, most, graphs, breaks, between=None):
    eager_then_traced(name, fn, make_args, most, graphs, breaks, calls=CALLS, reset=reset,
                      state=caller_state, failures=failures, between=between)


st.manual_seed(0)
xs = [st.randn(2, 3) for _ in range(CALLS + 1)]
ws = [1.0, 2.0, 3.0]
check("itertools made whole: product, chain, combinations", combinatorics, lambda i: (xs[i],), 1, 1, 0)
check("itertools stepped lazily: count, islice, pairwise, accumulate, starmap", lazy_iterators, lambda i: (xs[i], ws), 1, 1, 0)
check("zip(strict=True)", strict_zips, lambda i: (xs[i], ws), 1, 1, 0)
check("an islice part-way at a graph break", islice_across_a_break, lambda i: (xs[i], ws), 2, None, None)
check("contextlib.contextmanager and nullcontext", context_managers, lambda i: (xs[i],), 1, 1, 0)
check("no_grad as a decorator of forward", Head(), lambda i: (xs[i],), 1, 1, 0)
check("no_grad bare as a decorator", BareDecorated(), lambda i: (xs[i],), 1, 1, 0)
check("grad modes and is_grad_enabled", grad_modes, lambda i: (xs[i],), 1, 1, 0)
check("forward hooks and pre-hooks", forward_hooks, lambda i: (xs[i],), 1, 1, 0)
check("the truth of a dict of the caller's, empty or not", with_options, lambda i: (xs[i], {"shift": 1.0} if i % 2 else {}), 2, 1, 0)
check("the truth of **kwargs", lambda x: with_keywords(x) + with_keywords(x, shift=2.0), lambda i: (xs[i],), 1, 1, 0)
check("a dict by int keys, a logger below its level", int_keys_and_logging, lambda i: (xs[i], 1 + i % 2), 2, 1, 0)
check("jit, compiler and checkpoint namespaces, _assert", Block(), lambda i: (xs[i],), 1, 1, 0)
check("os.environ.get and sys.version_info", environment_and_version, lambda i: (xs[i],), 1, 1, 0)
check("a frame that does no tensor work on its first call", first_call_without_work,
      lambda i: (xs[i],) if i == 0 else (xs[i], xs[i - 1]), 1, 1, 0)
check("the rows of tensors made from constants, unpacked and iterated", rows_of_a_constant,
      lambda i: (st.ones(2, 3, 3) * i,), 1, 1, 0)
check("dicts keyed by ints, dtypes and tuples read whole", tables_read_whole, lambda i: (xs[i],), 1, 1, 0)
typed = TypedTables()
check("a cache keyed by a size and a dtype, measured and trimmed", typed,
      lambda i: (st.ones(2, [3, 3, 4, 3, 3, 3, 3][i], dtype=([st.float64] * 3 + [st.float32] + [st.float64] * 3)[i]),),
      6, 1, 0, between=lambda i: typed.tables.clear() if i == 0 else None)
masks = MaskCache()
check("a cache keyed by a shape (a tuple of ints)", masks, lambda i: (xs[i] if i % 3 else xs[i][:1],), 4, 1, 0,
      between=lambda i: masks.masks.clear() if i == 0 else None)
check("a named tuple's _replace, _asdict and _fields", namedtuple_methods, lambda i: (xs[i], Pair(1.5, 2)), 1, 1, 0)
grown = [st.randn(2 + i % 3, 3) for i in range(CALLS + 1)]
check("dropout while training, at changing sizes", Dropped(), lambda i: (grown[i],), 2, 1, 0)
check("random draws, one never read", draws, lambda i: (grown[i],), 2, 1, 0)
check("stochastic depth (drop_path), bernoulli, randperm, normal", drop_path, lambda i: (xs[i],), 1, 1, 0)
rotary = RotaryCache()
check("a rotary cache grown with the sequence (type_as of a changing arange)", rotary, lambda i: (st.ones(1, [3, 5, 4, 6, 2, 7, 8][i], 4),), 4, 1, 0)
check("attention masks at changing lengths (a size tested against None)", attention_masks, lambda i: (st.ones(2, 3 + i % 4), st.zeros(2, 3 + i % 4, dtype=st.int64)), 2, 1, 0)
table = st.randn(6, 6)
check("sampling tokens with multinomial in a generate loop", sample_tokens, lambda i: (table, st.tensor([[1], [4]])), 1, 1, 0)
check("random draws on both sides of a graph break", draws_around_a_break, lambda i: (xs[i],), 2, 2, 1)
check("in-place updates of tensors made from constants", updated_constants, lambda i: (xs[i][:, :1].expand(2, 3).reshape(2, 3)[:1].expand(3, 3), 2 + i % 3), 3, 1, 0)
check("a configuration read through a dict subclass (attributes, keys, items, get)", configured,
      lambda i: (xs[i],), 2, 1, 0, between=switch_activation)
# One translation (the Counter's missing key its 0, the defaultdict's made and stored), then
# two more once Options has a method of its own: its instance is read as an object then, its
# entry by key a break (the frame and its resume function).
check("dict subclasses with methods of their own: Counter, defaultdict, a class changed",
      dicts_that_are_not_plain, lambda i: (xs[i],), 3, None, None, between=give_options_a_length)
# The list made on the first call, the count at most 2 twice, then above it.
check("a caller's Counter counted, defaultdict(list) appended to, OrderedDict read by key",
      tallied, lambda i: (xs[i], "train"), 3, 1, 0)
check("sorted() of a dict's items, tensors after unequal keys", sorted_items, lambda i: (xs[i],), 1, 1, 0)
check("a tensor's __class__", tensor_classes, lambda i: (xs[i],), 1, 1, 0)
# The frame (its update of a constant folded away, so it breaks before any tensor work), the
# inlined call that breaks, and the resume function that captures `x + t`.
check("a constant updated, then a break in an inlined call", updated_constant_across_a_break, lambda i: (xs[i][0],), 3, None, None)
check("a dataclass output with a default factory, dataclasses.replace, a class in a frozenset",
      dataclass_outputs, lambda i: (xs[i], 1.5), 1, 1, 0)
check("methods of a dict, list and set made here as values (key=d.get, push = l.append)",
      methods_as_values, lambda i: (xs[i],), 1, 1, 0)
check("a tensor of the caller's list of ints; cat and stack given tensors by keyword",
      tokens_as_a_tensor, lambda i: (xs[i], [1, 0, 1][: 2 + i % 2]), 2, 1, 0)
online = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2)))
averaged = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2)))
averaged_start = [p.clone() for p in averaged.parameters()]
check("an exponential moving average of a model's parameters, updated in place",
      ema_update, lambda i: (0.9,), 1, 1, 0)
optimized = nn.Linear(3, 2)
optimized_start = [p.clone() for p in optimized.parameters()]
momentum = Momentum(optimized.parameters())
# Twice: the first step stores each buffer, the later ones update them.
check("an optimizer's state keyed by id() of its parameters",
      momentum.step, lambda i: ([st.ones(2, 3), st.ones(2)],), 2, 1, 0)
shared = st.ones(2, 3)
torch_sgd_params = [shared, st.ones(2), shared]
torch_sgd_start = [p.clone() for p in torch_sgd_params]
torch_sgd = TorchSGD(torch_sgd_params)
# The first step makes each state (the state read whole after it is a break: the call
# changed it), the later ones update it.
check("an optimizer's state keyed by its parameter tensors (defaultdict, tied weights)",
      sgd_step_and_norm, lambda i: ([xs[i], st.ones(2), xs[i] * 2.0],), 4, 1, 0)
adam_params = [st.ones(2, 3), st.ones(3)]
adam_start = [p.clone() for p in adam_params]
adam = Adam(adam_params)
check("Adam: setdefault(p, {}), a step counter per state, bias corrections of the step",
      adam.step, lambda i: ([xs[i], xs[i][0]],), 3, 1, 0)
check("heapq over plain (size, index) pairs; heappop of an empty heap caught",
      by_size, lambda i: (xs[i], [st.ones(3), st.ones(1), st.ones(2)]), 1, 1, 0)
stages = collections.OrderedDict()


def reorder_stages(i):
    # Each run starts from a, b, c; on the fourth call the caller moves "a" last.
    if i == 0:
        stages.clear()
        stages.update(a=1.0, b=2.0, c=3.0)
    if i == 3:
        stages.move_to_end("a")


def staged(x):
    # A caller's OrderedDict read whole, in its own order (its links, not its dict's).
    out = x
    for name, scale in stages.items():
        out = out * scale + len(name)
    return out, list(stages), [k for k in stages.keys()], len(stages)


def made_in_order(x):
    # An OrderedDict made here and reordered: made again by the replacement in that order.
    feats = collections.OrderedDict()
    feats["low"] = x * 2.0
    feats["mid"] = x + 1.0
    feats["high"] = x.exp()
    feats.move_to_end("low")
    feats.move_to_end("high", last=False)
    return type(feats).__name__, list(feats.items())


def deques(x):
    # Deques made here: a bounded history (an append past maxlen drops the oldest), a
    # breadth-first queue, an empty one's IndexError caught; returned, made again.
    history = collections.deque(maxlen=3)
    for k in range(5):
        history.append(x + k)
    history.appendleft(x * 2.0)
    queue = collections.deque([(x, 0)])
    leaves = []
    while queue:
        t, depth = queue.popleft()
        if depth < 2:
            queue.extend([(t * 0.5, depth + 1), (t + 1.0, depth + 1)])
        else:
            leaves.append(t)
    ring = collections.deque(range(4))
    ring.rotate(-1)
    ring.extendleft([7, 8])
    try:
        collections.deque().pop()
    except IndexError as e:
        message = str(e)
    mean = sum(history) / len(history)
    return history, history[-1], mean, st.stack(leaves).sum(0), ring, message, history.maxlen


def deque_across_a_break(x):
    # A deque and an iterator over it part-way, at a graph break: made again as themselves
    # (the iterator over the same deque, so that a change of it still raises); the resume
    # function, handed that iterator, runs as written.
    q = collections.deque([x, x * 2.0, x * 3.0], maxlen=4)
    it = iter(q)
    first = next(it)
    st.graph_break()
    rest = list(it)
    q.append(first + 1.0)
    return q, rest, [q, q][0] is q


class FrameStack:
    # An agent's last observations in a deque of its own (a frame stack): read whole,
    # indexed and measured, then the new observation appended (replayed after the graph).
    def __init__(self):
        self.frames = collections.deque(maxlen=3)

    def __call__(self, obs):
        stacked = st.cat(list(self.frames) + [obs], dim=0)
        out = stacked.mean(0) + self.frames[-1] * len(self.frames)
        self.frames.append(obs * 2.0)
        return out


class Smoothed:
    # Deques of the caller's appended to first and read back after (a frame stack, a moving
    # average of the last sums): a read sees the appends (the items on entry, then the changes
    # the replacement replays after the graph, dropped past `maxlen` as the deque drops them).
    def __init__(self):
        self.frames = collections.deque(maxlen=3)
        self.window = collections.deque([0.0], maxlen=4)

    def __call__(self, obs):
        self.frames.append(obs * 2.0)
        self.window.appendleft(obs.sum())
        stacked = st.cat(list(self.frames), dim=0)
        return stacked.mean(0) + self.frames[-1] * len(self.frames), sum(self.window) / len(self.window)


class Jittered(nn.Module):
    # Numbers drawn from Python's random module: drawn first by the replacement, in the
    # program's order, and given to the graph; one returned, one kept on the module.
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        scale = random.uniform(0.9, 1.1)
        h = self.proj(x) * scale + random.gauss(0.0, 0.1)
        for _ in range(2):
            h = h * random.random() + 1.0
        h = h * -random.random()  # negated: `draw * -1.0`, drawn still
        self.last_scale = scale
        return h, scale, f"{scale:.3f}"


class OwnGenerator(nn.Module):
    # Draws from a `random.Random` of the module's own: made first by the replacement too,
    # from the generator read where the program reads it (its state compared afterwards).
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)
        self.rng = random.Random(3)

    def forward(self, x):
        h = self.proj(x) * self.rng.uniform(0.5, 1.5) + self.rng.randint(1, 4)
        return h, self.rng.gauss(0.0, 1.0)


own_generator = OwnGenerator()


def negated_at_random(x):
    # A branch on a draw: its value is known only when the replacement runs, so it breaks
    # there; the rest is a graph of its own.
    y = x.exp()
    if random.random() < 0.5:
        y = -y
    return y * 2.0 + random.random()


def drawn_around_indexing(x, idx):
    # A graph that may raise on its data (an index out of range runs the frame as written,
    # which draws again): the draws break instead of being made first.
    return x.index_select(0, idx) * random.random()


class Activation(abc.ABC):
    # An abstract base of the model's blocks: isinstance against it, as layers are sorted by
    # kind in a forward pass; one not derived from it is a break (a registered virtual
    # subclass would pass the test: the registry is `_abc`'s, native).
    @abc.abstractmethod
    def act(self, x):
        ...

    def __call__(self, x):
        return self.act(x)


class Swish(Activation):
    def act(self, x):
        return x * st.sigmoid(x)


class Shifted(Swish):
    def act(self, x):
        return super().act(x) + 1.0


def abstract_bases(x, layers):
    for layer in layers:
        if isinstance(layer, Activation):
            x = layer(x)
    return x, [issubclass(type(layer), Activation) for layer in layers]


def standard_abstract_bases(x, scale, cfg, items):
    # numbers and collections.abc answer by registration (a float is a Number, a dict a
    # Mapping, a list or tuple a Sequence, a tensor none of them): known at translation.
    if isinstance(scale, numbers.Number):
        x = x * scale
    if isinstance(cfg, collections.abc.Mapping):
        x = x + cfg["shift"]
    if not isinstance(x, collections.abc.Sequence) and isinstance(items, collections.abc.Sequence):
        x = x + len(items)
    return x, isinstance(x, numbers.Number), issubclass(type(items), collections.abc.Iterable)


# A handler table keyed by classes: looked up with the class of a value (`v.__class__`,
# `type(v)`), a constant of the translation that the dict finds by identity.
HANDLERS = {list: lambda v: st.tensor(v), tuple: lambda v: st.tensor(list(v)), float: lambda v: v}


def dispatched_on_class(x, extra):
    h = HANDLERS.get(extra.__class__)
    g = HANDLERS[type(extra)]
    return x + h(extra) * 2.0 - g(extra), [1].__class__.__name__, extra.__class__ is list


def rows_of_computed(x):
    # Iterating a tensor the call computed: its rows, each an indexing op of the graph.
    y = (x * 2.0).relu()
    return [r.sum() for r in y], sum(r for r in y.t())


class Span(typing.NamedTuple):
    # A named tuple with methods and a property of its own: inlined with the tuple as self.
    lo: st.Tensor
    hi: st.Tensor

    @property
    def width(self):
        return self.hi - self.lo

    def center(self):
        return (self.lo + self.hi) / 2.0

    def scaled(self, k):
        return Span(self.lo * k, self.hi * k)


def named_tuple_methods(x, given):
    made = Span(x, x + 1.0).scaled(2.0)
    return made.width, made.center(), given.center(), given.width, len(made)


class Heads(enum.IntEnum):
    # Members on int and float: arithmetic on their values, as the plain numbers compute.
    ONE = 1
    FOUR = 4


class Temperature(float, enum.Enum):
    COLD = 0.5
    HOT = 2.0


def enum_arithmetic(x, heads, temp):
    per_head = x.shape[-1] // heads
    y = x * temp + heads * 2 - Heads.ONE
    steps = int(heads) + int(temp)
    steps += heads
    return y / temp, per_head, steps, float(temp) * 2


# A second translation once the order changed (the keys are guarded in the dict's own order).
check("an OrderedDict of the caller's read whole in its own order, reordered between calls",
      staged, lambda i: (xs[i],), 2, 1, 0, between=reorder_stages)
check("an OrderedDict made here, reordered with move_to_end", made_in_order, lambda i: (xs[i],), 1, 1, 0)
check("deques made here: a bounded history, a breadth-first queue, rotate", deques, lambda i: (xs[i],), 1, 1, 0)
check("numbers drawn from random: a jittered scale, gauss, draws in an unrolled loop, a negated draw", Jittered(), lambda i: (xs[i],), 1, 1, 0)
check("a branch on a number drawn from random breaks there", negated_at_random, lambda i: (xs[i],), 3, 2, 1)
check("draws from a random.Random of the module's own", own_generator, lambda i: (xs[i],), 1, 1, 0)
check("draws from random beside a graph that may raise on its data break", drawn_around_indexing, lambda i: (xs[i], st.tensor([1, 0])), 2, 2, 1)
check("isinstance against an abstract base class (abc.ABC) the layers derive from", abstract_bases,
      lambda i: (xs[i], [Swish(), Shifted()]), 1, 1, 0)
check("isinstance against numbers and collections.abc (classes registered with them)", standard_abstract_bases,
      lambda i: (xs[i], [2.0, 3][i % 2], {"shift": 1.0}, [(1, 2), [3]][i % 2]), 2, 1, 0)


# A mapping by duck typing only, made afresh for each run and registered with
# collections.abc.Mapping before its second call: the answer of isinstance changes, and the
# translation that relied on the first answer is not reused.
readings = []


def fresh_then_registered(i):
    if i == 0:
        readings[:] = [type("Readings", (), {"__getitem__": lambda self, key: 2.0})]
    elif i == 1:
        collections.abc.Mapping.register(readings[0])


def registered_between_calls(x, cfg):
    y = x + 0.5
    if isinstance(cfg, collections.abc.Mapping):
        y = y * cfg["scale"]
    return y


check("isinstance against an ABC a class is registered with between calls", registered_between_calls,
      lambda i: (xs[i], readings[0]()), 2, 1, 0, between=fresh_then_registered)
check("a table keyed by classes, looked up with v.__class__ and type(v)", dispatched_on_class,
      lambda i: (xs[i][0], [[1.0, 2.0, 3.0], (1.0, 2.0, 3.0), 3.0][i % 3]), 3, 1, 0)
check("iteration over a tensor computed in the call (its rows)", rows_of_computed, lambda i: (xs[i],), 1, 1, 0)
check("a typing.NamedTuple's own methods and property, made here and the caller's", named_tuple_methods,
      lambda i: (xs[i], Span(xs[i] * 0.0, xs[i] + 2.0)), 1, 1, 0)
check("members of IntEnum and a float Enum in arithmetic, int() and float() of them", enum_arithmetic,
      lambda i: (xs[i], [Heads.ONE, Heads.FOUR][i % 2], [Temperature.COLD, Temperature.HOT][i % 2]), 2, 1, 0)
def masks_among_indices(x, keep):
    # torch reads a bool mask among other indices as the indices of its true elements: a
    # number of them known from the mask's values, where the frame breaks (and resumes); a
    # list of bools is a constant mask, kept in the graph. (The part after the break runs at
    # two sizes: translated twice.)
    y = x * 2.0
    return y[:, keep].sum(1) + 1.0, y[:, [True, False, True]] - 1.0


check("a bool mask among other indices, a tensor (breaks) and a list of bools", masks_among_indices,
      lambda i: (xs[i], st.tensor([[True, False, True], [False, False, True]][i % 2])), 3, 2, 1)
agent = FrameStack()
check("a deque of the caller's read whole and appended to (a frame stack)", agent, lambda i: (xs[i][:1],), 2, 1, 0)
smoothed = Smoothed()
check("deques of the caller's appended to, then read back", smoothed, lambda i: (xs[i][:1],), 5, 1, 0)
check("a deque and its iterator part-way at a graph break", deque_across_a_break, lambda i: (xs[i],), 2, 1, 2)
check("super() in __new__ and in class methods (cls its first argument)", super_in_class_methods,
      lambda i: (xs[i],), 1, 1, 0)


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"score": nn.Linear(3, 2), "value": nn.Linear(3, 1)})

    def forward(self, x):
        # dict() and ** of an object with keys read it as the interpreter does: keys() once,
        # then [key] for each, each a call of the class's own.
        per_head = dict(self.heads)
        names = {**self.heads, "extra": None}
        return [(k, m(x)) for k, m in per_head.items()], list(names)


class Lookups:
    def __init__(self):
        self.calls = []

    def keys(self):
        self.calls.append("keys")
        return ["scale", "shift"]

    def __getitem__(self, key):
        self.calls.append(key)
        return len(key) * 0.5


def mapping_protocol(x, lookups):
    opts = {"scale": 1.0}
    opts.update(lookups)
    return x * opts["scale"] + opts["shift"], list(lookups.calls)


check("dict() and ** of an nn.ModuleDict (its keys(), then [key] for each)", Heads(),
      lambda i: (xs[i],), 1, 1, 0)
check("update() from a class of the program's with keys and __getitem__ (calls in order)",
      mapping_protocol, lambda i: (xs[i], Lookups()), 1, 1, 0)

class EasyConfig(dict):
    """The EasyDict idiom: its attributes are its entries, through dict's own methods."""
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


class MappingConfig(collections.abc.Mapping):
    """A read-only configuration on collections.abc.Mapping: keys(), values(), items() and
    get() are the ABC's, views made of it (classes with __slots__)."""

    def __init__(self, **entries):
        self._entries = entries

    def __getitem__(self, key):
        return self._entries[key]

    def __iter__(self):
        return iter(self._entries)

    def __len__(self):
        return len(self._entries)


easy = EasyConfig(scale=2.0, shift=0.5)
mapped = MappingConfig(scale=3.0, bias=1.0)


def configs_by_native_hooks_and_mappings(x):
    easy.seen = True
    y = x * easy.scale + getattr(easy, "shift", 0.0)
    z = y * mapped["scale"] + sum(mapped.values())
    return z, sorted(mapped.keys()), dict(mapped), "bias" in mapped, mapped.get("other", 4.0), easy.seen


@dataclasses.dataclass(slots=True)
class TrainState:
    step: int = 0
    ema: object = None


@dataclasses.dataclass(slots=True, frozen=True)
class Scores:
    logits: object
    best: object


train_state = TrainState()


def slotted_state(x):
    # A counter and a running average kept in a slotted dataclass of the caller's (stores
    # replayed after the graph), and a frozen slotted output made here.
    train_state.step += 1
    train_state.ema = x if train_state.ema is None else train_state.ema * 0.9 + x * 0.1
    s = Scores(train_state.ema * 2.0, train_state.step)
    return s.logits, s.best, train_state.step


def restart_training(i):
    if i == 0:
        train_state.step, train_state.ema = 0, None


class RunningNorm:
    """A slotted class of the caller's with methods: its mean made on first use, found
    missing by an AttributeError caught (the slot empty until then)."""
    __slots__ = ("count", "_mean")

    def __init__(self):
        self.count = 0

    def update(self, x):
        try:
            mean = self._mean
        except AttributeError:
            mean = x.mean(0)
        self.count += 1
        self._mean = mean + (x.mean(0) - mean) / self.count
        return x - self._mean


norm = RunningNorm()


def normalized(x):
    return norm.update(x) * 2.0, norm.count


def cleared(x, holder):
    # del of a slot, the second time empty: the VM's AttributeError, its name and obj None.
    out = []
    for _ in range(2):
        try:
            del holder._mean
            out.append("deleted")
        except AttributeError as e:
            out.append((str(e), e.name, e.obj))
    holder._mean = x
    return x * 2.0, out


def restart_norm(i):
    if i == 0:
        norm.count = 0
        if hasattr(norm, "_mean"):
            del norm._mean


_bind_setattr = object.__setattr__.__get__


class FieldsOf(tuple):
    """What attrs keeps a class's fields in: a tuple subclass with slots."""
    __slots__ = ()


class Frozen:
    """As attrs makes a frozen slotted class: its __init__ sets through object.__setattr__
    bound to the instance (a method-wrapper), its own __setattr__ refuses, and `evolve`
    makes a changed copy from its fields."""
    __slots__ = ("scale", "bias")
    __fields__ = FieldsOf(("scale", "bias"))

    def __init__(self, scale, bias):
        _setattr = _bind_setattr(self)
        _setattr("scale", scale)
        _setattr("bias", bias)

    def __setattr__(self, name, value):
        raise AttributeError(f"{name} is frozen")


def evolve(inst, **changes):
    for name in type(inst).__fields__:
        if name not in changes:
            changes[name] = getattr(inst, name)
    return type(inst)(**changes)


frozen = Frozen(2.0, 0.5)


def frozen_and_evolved(x):
    other = evolve(frozen, bias=1.5)
    bound = _bind_setattr(other)
    return x * frozen.scale + other.bias, other.scale, type(other).__name__, type(bound).__name__


class Owner:
    def __init__(self, scale):
        self.scale = scale


class Part:
    """A part that refers to its owner weakly, as a submodule to its parent model."""
    def __init__(self):
        self.owner = None


owners = []
part = Part()


def restart_owner(i):
    # A new owner each call but every third, when the last one is gone.
    if i % 3 != 2:
        owners[:] = [Owner(1.0 + i)]
        part.owner = weakref.ref(owners[0])


def through_a_weak_reference(x):
    owner = part.owner()
    if owner is None:
        return x * 0.0, "gone"
    # The last strong reference dropped: the frame's variable keeps the owner alive.
    owners.clear()
    owner.scale = owner.scale * 2
    return x * owner.scale, owner.scale, part.owner() is owner


class RunConfig(types.SimpleNamespace):
    def width(self):
        return self.hidden * 2


namespaces = {}


def restart_namespaces(i):
    if i == 0:
        namespaces["cfg"] = types.SimpleNamespace(scale=2.0, w=st.ones(3) * 0.5)
        namespaces["run"] = RunConfig(hidden=2)


def through_namespaces(x):
    cfg, run = namespaces["cfg"], namespaces["run"]
    cfg.calls = getattr(cfg, "calls", 0) + 1
    shift = cfg.shift if hasattr(cfg, "shift") else 0.25
    try:
        missing = cfg.missing
    except AttributeError as e:
        missing = (str(e), e.name)
    run.hidden += 1
    return x * cfg.scale * cfg.w + shift, cfg.calls, run.width(), missing, vars(cfg)["scale"]


class Meter:
    """A running total that starts as a number and becomes a tensor on the first update."""
    def __init__(self):
        self.total = 0.0
        self.count = 0


meters = {}


def meter_for(i):
    # A new meter every third call (and for the explained call after the six).
    if i % 3 == 0:
        meters["loss"] = Meter()
    return meters["loss"]


def accumulated(x, m):
    loss = (x * x).mean()
    m.total += loss
    m.count += 1
    return loss, m.total / m.count


class Phase(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"
    TEST = "test"


DROP_BY_PHASE = {Phase.TRAIN: 0.5, Phase.EVAL: 0.0}


def by_phase(x, phase):
    keep = 1.0 - DROP_BY_PHASE.get(phase, 0.25)
    if phase in DROP_BY_PHASE:
        keep = keep * 2.0
    try:
        rate = DROP_BY_PHASE[phase]
    except KeyError:
        rate = -1.0
    return x * keep + rate, [p.name for p in DROP_BY_PHASE], sum(DROP_BY_PHASE.values())


class Heads(enum.IntEnum):
    ONE = 1
    TWO = 2


class NormKind(enum.StrEnum):
    LAYER = "layer"
    BATCH = "batch"


SCALE_BY_HEADS = {Heads.ONE: 0.5, Heads.TWO: 2.0}
SHIFT_BY_NORM = {NormKind.LAYER: 1.0, "batch": -1.0}


def by_mixed_in_members(x, heads, norm):
    scale = SCALE_BY_HEADS[heads] + SCALE_BY_HEADS.get(heads, 0.0)
    scale = scale + (3.0 if heads in SCALE_BY_HEADS else 0.0) + SCALE_BY_HEADS[1]
    shift = SHIFT_BY_NORM[norm] + sum(SHIFT_BY_NORM.values())
    keys = [k for k in SCALE_BY_HEADS] + [k for k in SHIFT_BY_NORM]
    members = [(p.name, p.value) for p in Phase] + [h for h in Heads]
    return x * scale + shift, keys, members, list(NormKind)


class Handled:
    pass


class HandledMore(Handled):
    pass


HANDLERS = {Handled: 1.5}
DISPATCH_MEMO = {}


def restart_dispatch(i):
    if i == 0:
        DISPATCH_MEMO.clear()


def dispatched(x, obj):
    # A handler found by walking the class's __mro__, memoized by class (kl_divergence's
    # dispatch, a registry of converters), and a dict made here keyed by classes.
    t = type(obj)
    known = DISPATCH_MEMO.get(t)
    if known is None:
        scale = 0.0
        for base in t.__mro__:
            if base in HANDLERS:
                scale = HANDLERS[base]
                break
        DISPATCH_MEMO.setdefault(t, {})["scale"] = scale
    else:
        scale = known["scale"]
    bias = {t: 2.0, int: 3.0}[t]
    return x * scale + bias, len(DISPATCH_MEMO)


SEQUENCE_TYPES = {list, tuple}
DEFAULT_OPTIONS = {"scale": 2.0, "shift": 0.5}


def copied_options(x, value, **overrides):
    # A caller's dict copied (d.copy(), copy.copy) and changed, the caller's left alone;
    # a class tested against a set of classes made here and one of the caller's.
    options = DEFAULT_OPTIONS.copy()
    options.update(overrides)
    options["seen"] = 1.0
    again = copy.copy(DEFAULT_OPTIONS)
    again["shift"] = -1.0
    as_list = type(value) in {list, tuple}
    known = type(value) in SEQUENCE_TYPES
    return x * options["scale"] + options["shift"] + again["shift"], as_list, known, len(DEFAULT_OPTIONS)


token_counts = collections.Counter()


def restart_counts(i):
    if i == 0:
        token_counts.clear()


def counted_tokens(x, tokens):
    token_counts.update(tokens)
    token_counts.update({"total": len(tokens)})
    return x * token_counts["a"], sorted(token_counts.items())


check("an EasyDict (__getattr__ = dict.__getitem__) and a collections.abc.Mapping configuration",
      configs_by_native_hooks_and_mappings, lambda i: (xs[i],), 1, 1, 0)
check("a slotted dataclass of the caller's updated, a frozen slotted one made",
      slotted_state, lambda i: (xs[i],), 2, 1, 0, restart_training)
check("del of a slot of the caller's, caught when empty", cleared,
      lambda i: (xs[i], norm), 2, 1, 0, restart_norm)
check("an attrs-style frozen slotted class: object.__setattr__ bound, fields in a tuple subclass",
      frozen_and_evolved, lambda i: (xs[i],), 1, 1, 0)
check("a slotted class of the caller's with methods, a slot made on first use",
      normalized, lambda i: (xs[i],), 3, 1, 0, restart_norm)
check("a weak reference to an owner that changes and dies, called",
      through_a_weak_reference, lambda i: (xs[i],), 2, 1, 0, restart_owner)
check("types.SimpleNamespace configurations of the caller's read, counted, a subclass's method",
      through_namespaces, lambda i: (xs[i],), 2, 1, 0, restart_namespaces)
check("a running total of the caller's that starts as a float: total += loss",
      accumulated, lambda i: (xs[i], meter_for(i)), 3, 1, 0)
check("a dict keyed by enum members read by a member (get, in, [], KeyError) and whole",
      by_phase, lambda i: (xs[i], [Phase.TRAIN, Phase.EVAL, Phase.TEST][i % 3]), 3, 1, 0)
check("dicts keyed by IntEnum and StrEnum members (beside a str) read by member, by value and whole; enum classes iterated",
      by_mixed_in_members, lambda i: (xs[i], [Heads.ONE, Heads.TWO][i % 2], [NormKind.LAYER, NormKind.BATCH][i // 4]), 4, 1, 0)
check("a handler found along a class's __mro__, memoized in a dict keyed by classes",
      dispatched, lambda i: (xs[i], [Handled(), HandledMore()][i % 2]), 4, 1, 0, restart_dispatch)
check("a caller's dict copied (copy(), copy.copy) and changed; type(v) in a set of classes",
      copied_options, lambda i: (xs[i], [[1], (1,), 3, "s"][i % 4]), 4, 1, 0)
check("a caller's Counter updated from a list of tokens and from a dict",
      counted_tokens, lambda i: (xs[i], ["a", "b", "a"]), 3, 1, 0, restart_counts)
print("ALL OK" if not failures else f"FAILED {len(failures)}: {failures}", len(failures))
