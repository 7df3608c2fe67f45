"""Sizes worked out per call: each function computes with a size of a tensor whose first
dimension is dynamic (marked from the first call) and gives the result to a slice, a view,
narrow or arange, compares it or uses it as a plain number. Every call's result (and what it
raises) must equal eager's, at every size, in any order. Prints `<function> <translations>`:
those that keep the size symbolic translate once."""
import math

import symtrace as st
import symtrace.nn.functional as F
from symtrace.nn.utils.rnn import pad_sequence


def slices(x):
    n = len(x)
    return x[: n - 1] * 2.0, x[n // 2 :], x[-(n // 3) :], x[n - 1 :: -2], x[1 : n : 3]


def views(x):
    b, c = x.shape
    y = x.view(b * c).view(c, b)
    return y.reshape(-1, x.shape[-1] * 2 // 2).sum(0), x.view(x.numel())


def split_heads(x, heads=3):
    # The sizes inside a tuple, with a number of the frame's worked out beside them.
    y = x.view(*x.shape[:-1], heads, x.shape[-1] // heads)
    per_head = x.shape[-1] // heads
    return y.sum(-1), x.reshape((x.shape[0], heads, per_head)), y.view(*(len(x), per_head * heads))


def narrowed(x):
    n = x.size(0)
    return st.narrow(x, 0, 1, n - 2) + 1.0, x.narrow(0, n // 2, n - n // 2)


def ranges(x):
    n = len(x)
    return st.arange(n) * 1.0 + x[:, 0], st.arange(1, n, 2), st.arange(n, 0, -1, dtype=st.float64)


def factories(x):
    # A causal mask and padding made per call: `full`, `ones`, `zeros` (`_like` too) of sizes
    # that change.
    n = len(x)
    mask = st.triu(st.full((n, n), float("-inf")), 1)
    keep = st.ones(n, n).tril()
    # A fill that is itself a size (lengths for a mask), and a size stored into a tensor
    # (`fill_`, an item store): made per call too.
    stored = x.clone()
    stored[:, 0] = n - 1
    lengths = st.full((2,), n, dtype=st.int64), st.full((n, 1), n - 1), \
        st.full([n], n, dtype=st.float32), x.new_zeros(n, 2, dtype=st.int64).fill_(n), stored
    return (mask.exp() * keep) @ x, st.zeros(n, 2, dtype=st.int64) + 1, st.full([n], True), \
        st.where(x > 0, x, st.zeros_like(x)), st.ones_like(x, dtype=st.int64), lengths


def constant_masks(x):
    # A causal mask made of constants in the call, sliced by the size as a forward slices
    # it (`tril(ones(32, 32))[:n, :n]`): a constant node the graph slices per call.
    n = len(x)
    mask = st.tril(st.ones(32, 32))
    att = (x @ x.transpose(0, 1)).masked_fill(mask[:n, :n] == 0, float("-inf"))
    return att.softmax(-1), mask[n - 1, :n], st.eye(32)[1 : n + 1]


def diagonal_masks(x):
    # Masks shifted by sizes, and identities of them (`eye(t, n)`): the last t queries of n keys (`tril(n - t)`, of a tensor made
    # from the sizes and of one made from constants), the diagonal worked out per call.
    n = len(x)
    t = n // 2 + 1
    m = st.ones(t, n).tril(n - t)
    u = st.ones(32, 32).triu(diagonal=1 - t)[:t, :n]
    eye = st.eye(t, n, dtype=st.float32) + st.eye(n)[:t]
    return (x[:t] @ x.transpose(0, 1)).masked_fill(m == 0, float("-inf")).softmax(-1), u, eye


def rolled(x):
    # The truth of a size (`if k:` in `roll`, `if n % 4:`): its outcome checked per call,
    # one translation for each outcome, not one per size.
    n = len(x)
    y = x.roll(n // 2, 0)
    if n % 4:
        y = y[: n - n % 4 + 1]
    return y


def running(x):
    # Running extremes and log-sum-exp along the size that changes: ops of the graph whose
    # shape is their input's.
    v, i = x.cummax(0)
    return v + i, x.cummin(1).indices, x.logcumsumexp(0)


def padded_sequences(x):
    # Sequences of changing lengths padded into one batch (`pad_sequence`, the longest found
    # by `max` of a generator), their lengths as a tensor and a mask made from them.
    seqs = [x, x[: len(x) // 2 + 1], x[1:]]
    lengths = st.tensor([len(s) for s in seqs])
    batch = pad_sequence(seqs, batch_first=True)
    mask = st.arange(batch.shape[1])[None, :] < lengths[:, None]
    return batch * mask[..., None], lengths, max(s.shape[0] for s in seqs)


def branches(x):
    n = x.shape[0]
    if n > 6:
        x = x * 2.0
    if n % 2 == 0:
        x = x - 1.0
    return x[: min(n, 5)]


def number(x):
    # A size as an operand of a tensor's arithmetic: a 0-d tensor the graph makes per call.
    return x * len(x), x.sum(0) / x.shape[0], (x > 0).sum() * len(x), len(x) - x


def shapes_compared(x):
    # Shapes compared as tuples, item by item as Python compares them: each comparison of a
    # size checked per call (`y.shape == x.shape` holds whatever the size), not the size fixed.
    y = x * 2.0
    out = y + x if y.shape == x.shape else y
    if x.shape != (4, 3):
        out = out - 1.0
    if x.shape < (9, 3):
        out = out * 0.5
    return out, x.shape[1:] == (3,), y.shape >= x.shape


def padded(x):
    # Padded up to a multiple of 4 rows, and to 32 rows: the widths worked out per call.
    n = len(x)
    return F.pad(x, (0, 0, 0, (4 - n % 4) % 4)), F.pad(x, (1, 1, 0, 32 - n), value=-1.0)


def repeated(x):
    # repeat of a tensor whose sizes change, and by a size that changes; a shape tuple made
    # by a generator of sizes.
    n = len(x)
    return x.repeat(2, 1), st.ones(1, 3).repeat(n, 1) + x, x.view(tuple(d for d in x.shape) + (1,))


def spaced(x):
    # linspace of as many steps as rows.
    n = len(x)
    return x * st.linspace(0.0, 1.0, n).unsqueeze(1), st.linspace(-1, 1, steps=n + 1, dtype=st.float32)


def forced(x):
    # A float of a size used as a plain number (rounded): fixed, one translation per size.
    return x * round(len(x) / 3, 1)


def floats(x):
    # Floats computed from a size as operands of tensor arithmetic (a scale, a mean, a
    # ratio): computed by the graph per call, as Python computes them; one returned.
    n = len(x)
    scale = 1.0 / math.sqrt(n) + n * 0.25 - (n - 1) / n
    # Negated, a zero keeps its sign (-0.0 at 2 rows: 1 / it is -inf).
    return (x * n ** -0.5, x / math.sqrt(n), x.sum(0) * (n / 2), x * float(n - 1), x * scale,
            scale * x.float(), n / 4, 1.0 / ((x.abs() + 1.0) * -((n - 2) / 2)))


def float_divisors(x):
    # A size divided by a float of sizes (Swin's `int(w.shape[0] / (H * W / ws / ws))`), and
    # a tensor scaled by such a quotient: the divisor is not zero wherever its sizes are not,
    # which a check of sizes says per call.
    n, c = x.shape
    w = x.view(-1, 1, c)
    b = int(w.shape[0] / (n * c / c / 1.5))
    return w.view(b, -1), x * (n / (n * 2.5 / math.sqrt(c))), (x * 2.0) / (n / 4.0 * n)


def mixed_indexes(x):
    # Int tensors among slices of the dimension that changes (`x[1:, idx]`, a 0-d index
    # beside a slice by a size): the slices stay symbolic, the tensors taken after them; in a
    # store, the value stored into the view the slices make, written through.
    idx, i = st.tensor([0, 2]), st.tensor(1)
    y = x.clone()
    y[1:, idx] = -1.0
    y[: len(x) - 1, idx] += x[1:, idx]
    return x[1:, idx] * 2.0, x[: len(x) - 1, i, None], x[None, ::2, idx], y


def resized(x):
    # unbind along a dimension that keeps its size; resized by a factor and to a size.
    a, b, c = x.unbind(1)
    seq = x.t().unsqueeze(0)
    up = F.interpolate(seq, scale_factor=2, mode="nearest")
    return a * b - c, up, F.interpolate(up, size=len(x), mode="nearest"), \
        F.interpolate(seq, scale_factor=2, mode="linear")


def float_raises(x):
    # Zero to a negative power raises (at 4 rows); a negative size to a fractional power is
    # complex (fewer): as eager, whichever order the sizes come in.
    return x * (len(x) - 4) ** -0.5


def returned(x):
    return x.sum(0), len(x), x.shape


def later_node(x):
    y = (x * 2.0).relu()
    n = y.shape[0]
    return x[: n - 1] + y[1:]


def chunks(x):
    a, b, c = x.chunk(3, dim=1)
    return a + b * c


def chunked_rows(x):
    # chunk and split along the dimension that changes: the piece size worked out per call,
    # the number of pieces checked (two halves from 2 rows up; ceil(n / 4) pieces of 4).
    a, b = x.chunk(2)
    parts = x.split(4)
    return a * 2.0, b.sum(0), len(parts), parts[-1] + 1.0, [len(p) for p in parts]


def rounded(x):
    # math.ceil, math.floor and int of a size divided by an int: the int division each is,
    # worked out per call (exact below 2**31, which is checked).
    T = x.shape[0]
    return x[: math.ceil(T / 4)] * 2.0, x[: int(T / 2)].sum(0), math.floor(T / 3)


def rounded_floats(x, keep=0.25):
    # Ints of floats computed from a size: int of a product, round of a quotient (halves to
    # the even int), floor of a power, int of a root, trunc and ceil of products, a share
    # read from an argument (a masking ratio); int and round of the size itself. The float
    # operations Python made, worked out per call and rounded as Python rounds.
    T = x.shape[0]
    parts = (x[: int(T * 0.5)], x[: round(T / 2)], x[: round(T / 3)], x[: math.floor(T ** 0.5)],
             x[: int(math.sqrt(T))], x[: math.trunc(T * 0.75)], x[: math.ceil(T * 0.3)],
             x[: int(T * (1 - keep))], x[: int(T) - 1], x[: round(T) - 1])
    return tuple(p.sum(0) for p in parts)


def rounded_returned(x):
    # Ints of floats of a size returned: computed again by the replacement from the sizes
    # read again (`int(t.shape[0] * 0.5)`), not constants of this call.
    T = x.shape[0]
    k = int(T * 0.5)
    return x[:k].sum(0), k, round(T / 3), math.ceil(math.sqrt(T))


def sections(x):
    # Sections that are sizes: each piece a narrow worked out per call, their sum checked.
    head, rest = x.split([1, x.shape[0] - 1])
    body, tail = st.split(x, [len(x) - 1, 1], 0)
    return head * 2.0 + tail, rest.sum(0) - body.mean(0)


def extremes(x):
    # `math.prod`, `max` and `min` of a shape, of a list and of several sizes: sizes worked
    # out per call, and returned as the replacement computes them again.
    flat = x.reshape(math.prod(x.shape))
    return flat * 2.0, max(x.shape), min(x.shape), max(len(x), 3, x.shape[1] + 2), \
        min([len(x), 4]), math.prod(x.shape[:1]) * 2


def index_int(x):
    return x[len(x) - 1] + x[-1] + x[1]


def halves(x):
    # Raises eagerly for an odd size (a view that does not fit): so must the traced call.
    return x.view(x.shape[0] // 2, -1) * 1.0


def past_the_end(x):
    return x[: len(x) - 10] + 0.5, st.arange(len(x) - 5) * 2


def narrow_past(x):
    return x.narrow(0, len(x) // 2, 3)


def helper(t, k):
    if t.shape[0] > k:
        return t[k:]
    return t


def inlined(x):
    return helper(x, 3) * 2.0, helper(x * 1.0, len(x) // 2)


def printed(x):
    n = len(x)
    print("n is", n)
    return x[: n - 1]


class Holder:
    def __init__(self):
        self.n = 0


def stored(x, h):
    h.n = len(x)
    return x[: h.n // 2]


h_traced, h_eager = Holder(), Holder()
order = [2, 3, 5, 4, 9, 16, 7, 2, 11, 3, 30, 6, 8, 4]
def compared_to_sizes(x):
    # A tensor compared with a size (`arange(n) < n - 1`, a float tensor against `n // 2`,
    # the size first): the size is a 0-d tensor the graph makes per call.
    n = len(x)
    keep = st.arange(n)[:, None] < n - 1
    return x.masked_fill(~keep, 0.0), x[:, 0] >= n // 2, (n - 2) <= st.arange(n), x == n


def asserted(x):
    # An assert on a tensor's truth: a check kept in the graph, which holds no size.
    assert (x.abs() < 1e6).all(), "out of range"
    assert x.sum(0).isfinite().all()
    return x * 2.0


def basic_indexed(x):
    # Basic indexes that address only dimensions of fixed size, or take an int from the
    # dynamic one: the channels of every row, a column, the rows of a transpose unpacked (an
    # edge list's, `src, dst = edge_index`), the first and last row.
    src, dst = x.T[:2]
    a, b, c = x.T
    y = x[..., 1:] * 2.0
    y[:, 0] = x[:, 2]
    return y, src + dst, a * b - c, x[0] - x[-1], x.T[1:, 0]


def listed_indexes(x):
    # Lists of ints among which sizes, as indexes (the first and last rows, a column pair
    # of the middle row): int64 tensors made per call, not the sizes fixed.
    n = len(x)
    y = x[[0, n - 1]] + x[[n // 2, -1]][:, [0, 2]].sum(1, keepdim=True)
    return y, x[:, [1, 2]][[n - 1]]


def listed_past_the_end(x):
    # Raises where eager raises.
    return x[[0, len(x)]]


def unpacked_rows(x):
    # Rows unpacked along the dimension that changes: their number is fixed per size (and
    # unpacking into two names raises where eager raises).
    first, *rest = x
    a, b = x[:2]
    return first * len(rest), a - b


cases = [slices, views, split_heads, narrowed, ranges, factories, constant_masks, diagonal_masks, rolled, running, padded_sequences, branches, number, shapes_compared, padded, repeated, spaced, forced, floats, float_divisors, mixed_indexes, resized,
         float_raises, returned, later_node, chunks, chunked_rows, rounded, rounded_floats, rounded_returned, sections, extremes, index_int, halves, past_the_end, narrow_past, inlined, printed,
         compared_to_sizes, asserted, basic_indexed, unpacked_rows, listed_indexes,
         listed_past_the_end]


def same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, st.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist()
    return a == b


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:
        return ("raises", type(e).__name__)


for f in cases + [stored]:
    st.reset()
    cf = st.compile(f)
    for n in order:
        x = st.randn(n, 3)
        st.mark_dynamic(x, 0)
        extra = (h_traced,) if f is stored else ()
        got = outcome(cf, x, *extra)
        want = outcome(st.disable(f), x, *((h_eager,) if f is stored else ()))
        assert got[0] == want[0] and same(got[1], want[1]), (f.__name__, n, got, want)
        if f is stored:
            assert h_traced.n == h_eager.n, (n, h_traced.n, h_eager.n)
    print(f.__name__, st.stats()["translations"])

# Numbers of the caller's added to a size: a count of the rows seen, a running total, a
# log of them; an offset that never changes used in a slice, in a tensor's arithmetic and
# in a float with the size. The sums are computed again by the replacement from each call's
# size: one translation for every size, not one per call.
class Seen:
    def __init__(self):
        self.seen = 0
        self.total = 0
        self.off = 1
        self.log = []

    def __call__(self, x):
        n = len(x)
        self.seen += x.shape[0]
        self.total = self.total + n * 2 - 1
        self.log.append(self.seen + n)
        y = x[: self.off + n - 2] * (self.off + n) / ((self.off + n) / 2)
        return y, self.seen, [n + self.off]


st.reset()
seen_traced, seen_eager = Seen(), Seen()
counted = st.compile(seen_traced)
for n in order:
    x = st.randn(n, 3)
    st.mark_dynamic(x, 0)
    got, want = counted(x), seen_eager(x)
    assert same(got, want), (n, got, want)
    assert vars(seen_traced) == vars(seen_eager), (vars(seen_traced), vars(seen_eager))
print("counted", st.stats()["translations"])


# Ints of the caller's that sizes are computed from: after the first recompile on an int's
# value, the int is a graph input and the sizes are worked out from it per call; where the
# graph's rank depends on it (`squeeze` drops the dimensions that are 1), which dimensions
# are 1 is checked per call.
def int_slice(x, n):
    return x[:n] * 2.0, x[n - 1 :] + 1.0


def int_view(x, k):
    return x.view(k, -1).sum(0), st.arange(k + 1)


def int_narrow(x, n):
    return x.narrow(0, 12 - n, n)


def int_arange_len(x, n):
    # The size of a tensor made from a dynamic int is itself a size worked out per call.
    y = st.arange(n) * 1.0
    return x[: len(y)] + y[: len(y)].sum()


def int_static(x, n):
    return x[:n].squeeze() * 2.0


x12 = st.randn(12, 4)
for f in [int_slice, int_view, int_narrow, int_arange_len, int_static]:
    st.reset()
    cf = st.compile(f)
    for n in [1, 2, 3, 4, 6, 2, 12, 3, 1]:
        got, want = outcome(cf, x12, n), outcome(st.disable(f), x12, n)
        assert got[0] == want[0] and same(got[1], want[1]), (f.__name__, n, got, want)
    print(f.__name__, st.stats()["translations"])
print("SIZE EXPRS OK")
