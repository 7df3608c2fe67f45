"""Tensor methods and symtrace functions that torch has and that are compositions of the
registry's ops: written in Python, so that a traced frame simulates them like the user's
own code (each op lands in the graph). Set on `Tensor` and on `symtrace` when it is
imported; `_st` is the `symtrace` module, given by the loader (`tensor_methods.rs`)."""

import math as _math
from collections import namedtuple

_INF = float("inf")
# The native reductions: the values only, along `dim` or of all elements.
_max_values = _st.Tensor.max
_min_values = _st.Tensor.min
# What torch's max(dim) and min(dim) give (torch.return_types.max): a named pair.
_MaxResult = namedtuple("max", ["values", "indices"])
_MinResult = namedtuple("min", ["values", "indices"])
_SortResult = namedtuple("sort", ["values", "indices"])
_TopkResult = namedtuple("topk", ["values", "indices"])


def _max(self, dim=None, keepdim=False):
    """torch's max: of all elements; `(values, indices)` along `dim` (the first maximum's
    index); with a tensor in place of `dim`, the elementwise maximum."""
    if dim is None:
        return _max_values(self)
    if isinstance(dim, _st.Tensor):
        return _st.maximum(self, dim)
    return _MaxResult(_max_values(self, dim, keepdim=keepdim), self.argmax(dim, keepdim=keepdim))


def _min(self, dim=None, keepdim=False):
    if dim is None:
        return _min_values(self)
    if isinstance(dim, _st.Tensor):
        return _st.minimum(self, dim)
    return _MinResult(_min_values(self, dim, keepdim=keepdim), self.argmin(dim, keepdim=keepdim))


def _sort(self, dim=-1, descending=False, stable=False):
    """torch's sort: `(values, indices)`; equal values keep their order."""
    indices = self.argsort(dim, descending)
    return _SortResult(self.gather(dim, indices) if self.ndim else self, indices)


def _topk(self, k, dim=-1, largest=True, sorted=True):
    """torch's topk: the `k` largest (or smallest) along `dim`, in order, with their indices."""
    n = self.shape[dim] if self.ndim else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    if not self.ndim:
        return _TopkResult(self, self.argsort())
    indices = self.argsort(dim, largest).narrow(dim, 0, k)
    return _TopkResult(self.gather(dim, indices), indices)


def _mm(self, other):
    if self.ndim != 2 or other.ndim != 2:
        raise RuntimeError(f"mm: expected two 2-D tensors, got {self.ndim}-D and {other.ndim}-D")
    return self @ other


def _bmm(self, other):
    if self.ndim != 3 or other.ndim != 3:
        raise RuntimeError(f"bmm: expected two 3-D tensors, got {self.ndim}-D and {other.ndim}-D")
    return self @ other


def _t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.transpose(0, 1) if self.ndim == 2 else self


def _reduced(x, dim, keepdim):
    return x.sum() if dim is None else x.sum(dim, keepdim=keepdim)


def _any(self, dim=None, keepdim=False):
    return _reduced(self != 0, dim, keepdim) > 0


def _all(self, dim=None, keepdim=False):
    return _reduced(self == 0, dim, keepdim) == 0


def _finite_max(x, dim, keepdim):
    m = _max_values(x, dim, keepdim=keepdim)
    return m.masked_fill(m.abs() == _INF, 0.0)


def _logsumexp(self, dim, keepdim=False):
    # As torch: the maximum taken out first; an infinite maximum counts as 0 there. The
    # maximum is reduced twice rather than squeezed: a squeeze would fix the graph's sizes.
    shifted = (self - _finite_max(self, dim, True)).exp()
    return shifted.sum(dim, keepdim=keepdim).log() + _finite_max(self, dim, keepdim)


def _std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
    if correction is None:
        return self.var(dim, unbiased, keepdim).sqrt()
    return self.var(dim, keepdim=keepdim, correction=correction).sqrt()


def _new_full(self, size, fill_value, dtype=None):
    return _st.full(size, fill_value, dtype=dtype or self.dtype)


def _size_of(size):
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size


def _new_zeros(self, *size, dtype=None):
    return _st.zeros(*_size_of(size), dtype=dtype or self.dtype)


def _new_ones(self, *size, dtype=None):
    return _st.ones(*_size_of(size), dtype=dtype or self.dtype)


# In-place updates, as torch's: each changes the tensor and returns it. Written as `+=` and
# `t[...] = v`, which update a tensor in place (traced: simulated on the tensor's stand-in,
# and copied back into the caller's tensor after the graph).
def _add_(self, other, *, alpha=1):
    self += other if alpha == 1 else other * alpha
    return self


def _sub_(self, other, *, alpha=1):
    self -= other if alpha == 1 else other * alpha
    return self


def _mul_(self, other):
    self *= other
    return self


def _div_(self, other):
    self /= other
    return self


def _fill_(self, value):
    self[...] = value
    return self


def _clamp_(self, min=None, max=None):
    self[...] = self.clamp(min, max)
    return self


def _masked_fill_(self, mask, value):
    self[...] = self.masked_fill(mask, value)
    return self


_native_add = _st.Tensor.add
_native_sub = _st.Tensor.sub
_native_div = _st.Tensor.div


def _add(self, other, *, alpha=1):
    """torch's add: `self + alpha * other`."""
    return _native_add(self, other) if alpha == 1 else _native_add(self, other * alpha)


def _sub(self, other, *, alpha=1):
    return _native_sub(self, other) if alpha == 1 else _native_sub(self, other * alpha)


def _floats(a, b):
    """Whether `a / b` of a tensor and a tensor or number divides floats (else integers)."""
    def floating(v):
        return isinstance(v, float) or (isinstance(v, _st.Tensor) and v.dtype.is_floating_point)
    return floating(a) or floating(b)


def _div(self, other, *, rounding_mode=None):
    """torch's div: true division, or rounded toward negative infinity (`floor`, Python's
    `//`) or toward zero (`trunc`)."""
    if rounding_mode is None:
        return _native_div(self, other)
    if rounding_mode == "floor":
        return self // other
    if rounding_mode != "trunc":
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    if _floats(self, other):
        return _native_div(self, other).trunc()
    # Integers: the floor quotient, one up where the division was inexact and the signs
    # differ (no float rounds a large int64).
    quotient = self // other
    inexact = (self - quotient * other) != 0
    return _st.where(inexact & ((self < 0) != (other < 0)), quotient + 1, quotient)


def _select(self, dim, index):
    """`self` indexed by `index` along `dim`, the dimension dropped (torch's select)."""
    n = self.shape[dim]
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(self.shape)} at dimension {dim}")
    return self.narrow(dim, index % n, 1).squeeze(dim)


def _nansum(self, dim=None, keepdim=False):
    zeroed = _st.where(self != self, 0.0, self)
    return zeroed.sum() if dim is None else zeroed.sum(dim, keepdim=keepdim)


def _nanmean(self, dim=None, keepdim=False):
    counted = (self == self).to(self.dtype)
    if dim is None:
        return _nansum(self) / counted.sum()
    return _nansum(self, dim, keepdim) / counted.sum(dim, keepdim=keepdim)


def _isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element is one of `test_elements` (a tensor, a sequence or a number)."""
    if not isinstance(test_elements, _st.Tensor):
        test_elements = _st.tensor(test_elements)
    if not isinstance(elements, _st.Tensor):
        elements = _st.tensor(elements)
    found = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1)
    return ~found if invert else found


def _xlogy(self, other):
    """`self * log(other)`, 0 where `self` is 0 unless `other` is NaN (torch's xlogy)."""
    if not isinstance(other, _st.Tensor):
        other = _st.tensor(float(other))
    return _st.where((self == 0) & (other == other), 0.0, self * other.log())


def _logit(self, eps=None):
    z = self if eps is None else self.clamp(eps, 1.0 - eps)
    return (z / (1.0 - z)).log()


def _triangle_indices(row, col, offset, upper):
    rows = _st.arange(row).unsqueeze(1).expand(row, col)
    cols = _st.arange(col).unsqueeze(0).expand(row, col)
    keep = (cols - rows >= offset) if upper else (cols - rows <= offset)
    return _st.stack([rows[keep], cols[keep]])


_AminmaxResult = namedtuple("aminmax", ["min", "max"])


def _aminmax(self, *, dim=None, keepdim=False):
    """torch's aminmax: the smallest and the largest element, over `dim` or every element."""
    dims = tuple(range(self.ndim)) if dim is None else dim
    if not self.ndim:
        return _AminmaxResult(self.amin(), self.amax())
    return _AminmaxResult(self.amin(dims, keepdim=keepdim), self.amax(dims, keepdim=keepdim))


_KthResult = namedtuple("kthvalue", ["values", "indices"])
_MedianResult = namedtuple("median", ["values", "indices"])


def _take_along_dim(self, indices, dim=None):
    """`self` gathered at `indices` along `dim`, the other dimensions broadcast (all
    elements, flattened, without a `dim`)."""
    if dim is None:
        return self.reshape(-1).gather(0, indices.reshape(-1))
    dim = dim % self.ndim
    if self.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {self.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    unit = lambda t: tuple(1 if d == dim else n for d, n in enumerate(t.shape))
    shape = _broadcast_shapes(unit(self), unit(indices))
    wanted = lambda t: tuple(t.shape[d] if d == dim else shape[d] for d in range(len(shape)))
    return self.expand(*wanted(self)).gather(dim, indices.expand(*wanted(indices)))


def _tensor_split(self, indices_or_sections, dim=0):
    """Pieces of `self` along `dim`: `n` as even as can be (the first ones one longer), or
    cut at the given indices."""
    size = self.shape[dim]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        bounds = [0]
        for k in range(n):
            bounds.append(bounds[-1] + size // n + (1 if k < size % n else 0))
    else:
        bounds = [0] + [min(max(int(i), 0), size) for i in indices_or_sections] + [size]
    return tuple(self.narrow(dim, a, max(b, a) - a) for a, b in zip(bounds, bounds[1:]))


def _kthvalue(self, k, dim=-1, keepdim=False):
    """The `k`-th smallest along `dim`, with its index."""
    n = self.shape[dim] if self.ndim else 1
    if k < 1 or k > n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    values, indices = _sort(self, dim)
    if not self.ndim:
        return _KthResult(self, indices)
    pick = lambda t: t.narrow(dim, k - 1, 1) if keepdim else t.select(dim, k - 1)
    return _KthResult(pick(values), pick(indices))


def _median(self, dim=None, keepdim=False):
    """The lower median (the `(n - 1) // 2`-th smallest; NaN if any is NaN), with its index
    along `dim`."""
    if dim is None:
        flat = self.reshape(-1)
        return _sort(flat, 0).values[(flat.shape[0] - 1) // 2]
    n = self.shape[dim] if self.ndim else 1
    r = _kthvalue(self, (n - 1) // 2 + 1, dim, keepdim)
    return _MedianResult(r.values, r.indices)


def _quantile_args(self, q, dim, interpolation):
    """What `quantile` and `nanquantile` check and read of their arguments: whether `q` is
    one number, its values, the tensor to sort (all elements without a `dim`), the dim."""
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise ValueError(f"quantile() interpolation must be one of linear, lower, higher, "
                         f"midpoint or nearest. Got {interpolation}")
    scalar = not isinstance(q, _st.Tensor)
    qs = [float(q)] if scalar else q.reshape(-1).tolist()
    if any(v < 0.0 or v > 1.0 for v in qs):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    x = self.reshape(-1) if dim is None else self
    return scalar, qs, x, 0 if dim is None else dim % self.ndim


def _quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The `q`-th quantiles (a number or a 1-D tensor of them in [0, 1]) along `dim` (of all
    elements without one), interpolating between the two nearest sorted values as torch."""
    scalar, qs, x, d = _quantile_args(self, q, dim, interpolation)
    ordered = _sort(x, d).values
    n = x.shape[d]
    outs = []
    for v in qs:
        rank = v * (n - 1)
        below = int(rank // 1)
        above = below if rank == below else below + 1
        if interpolation == "lower":
            above = below
        elif interpolation == "higher":
            below = above
        elif interpolation == "nearest":
            below = above = int(round(rank))
        lo, hi = ordered.select(d, below), ordered.select(d, above)
        if interpolation == "midpoint" and below != above:
            out = lo + (hi - lo) * 0.5
        elif interpolation == "linear" and below != above:
            out = _lerp(lo, hi, rank - below)
        else:
            out = lo
        if keepdim:
            out = out.unsqueeze(d) if dim is not None else out.reshape((1,) * self.ndim)
        outs.append(out)
    return outs[0] if scalar else _st.stack(outs)


def _nan_last(self, d):
    """Sorted along `d` with NaNs last, the sort's indices, and how many are not NaN."""
    nan = self.isnan()
    values, order = _sort(self.masked_fill(nan, float("inf")), d)
    return values, order, (~nan).sum(d, keepdim=True)


def _nanmedian(self, dim=None, keepdim=False):
    """The lower median of the values that are not NaN (NaN where all are), with its index
    along `dim`."""
    if not self.dtype.is_floating_point:
        return _median(self, dim, keepdim)
    if dim is None:
        flat = self.reshape(-1)
        valid = flat[~flat.isnan()]
        return _median(valid) if valid.shape[0] else _median(flat)
    d = dim % self.ndim if self.ndim else 0
    x = self if self.ndim else self.reshape(1)
    values, order, count = _nan_last(x, d)
    k = (count - 1).clamp(min=0) // 2
    v = _st.where(count == 0, float("nan"), values.gather(d, k))
    i = order.gather(d, k)
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    if not self.ndim:
        v, i = v.reshape(()), i.reshape(())
    return _MedianResult(v, i)


def _nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    """`quantile` of the values that are not NaN (NaN where all are)."""
    scalar, qs, x, d = _quantile_args(self, q, dim, interpolation)
    values, _, count = _nan_last(x, d)
    last = (count - 1).clamp(min=0).to(values.dtype)
    outs = []
    for v in qs:
        rank = last * v
        if interpolation == "nearest":
            rank = rank.round()
        below, above = rank.floor(), rank.ceil()
        if interpolation == "lower":
            above = below
        elif interpolation == "higher":
            below = above
        lo = values.gather(d, below.long())
        hi = values.gather(d, above.long())
        if interpolation == "midpoint":
            out = _st.where(below == above, lo, lo + (hi - lo) * 0.5)
        elif interpolation == "linear":
            out = _lerp(lo, hi, rank - below)
        else:
            out = lo
        out = _st.where(count == 0, float("nan"), out)
        if dim is None:
            out = out.reshape((1,) * self.ndim) if keepdim else out.reshape(())
        elif not keepdim:
            out = out.squeeze(d)
        outs.append(out)
    return outs[0] if scalar else _st.stack(outs)


def _renorm(self, p, dim, maxnorm):
    """Each slice along `dim` whose `p`-norm exceeds `maxnorm` scaled down to it (by
    `maxnorm / (norm + 1e-7)`, as torch scales)."""
    d = dim % self.ndim
    rows = self.movedim(d, 0).reshape(self.shape[d], -1)
    norms = _norm(rows, p, dim=1)
    factor = _st.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0).to(self.dtype)
    shape = [1] * self.ndim
    shape[d] = self.shape[d]
    return self * factor.reshape(shape)


def _renorm_(self, p, dim, maxnorm):
    self[...] = _renorm(self, p, dim, maxnorm)
    return self


def _rot90(self, k=1, dims=(0, 1)):
    a, b = dims
    k %= 4
    if k == 1:
        return self.flip(b).transpose(a, b)
    if k == 2:
        return self.flip((a, b))
    if k == 3:
        return self.flip(a).transpose(a, b)
    return self.clone()


def _cross(self, other, dim=None):
    """The cross product of 3-vectors along `dim` (the first dimension of size 3 without
    one)."""
    if dim is None:
        sizes = list(self.shape)
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    if self.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{self.shape[dim]} and {other.shape[dim]}")
    a = [self.narrow(dim, i, 1) for i in range(3)]
    b = [other.narrow(dim, i, 1) for i in range(3)]
    return _st.cat([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                    a[0] * b[1] - a[1] * b[0]], dim)


def _diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """Each last-dimension vector on the diagonal (`offset` above it) of a square matrix in
    the last two dimensions."""
    if (dim1 % (self.ndim + 1), dim2 % (self.ndim + 1)) != (self.ndim - 1, self.ndim):
        raise NotImplementedError("symtrace's diag_embed places the matrices last")
    m = self.shape[-1]
    n = m + abs(offset)
    rows = _st.arange(n).unsqueeze(1).expand(n, n)
    cols = _st.arange(n).unsqueeze(0).expand(n, n)
    index = (rows if offset >= 0 else cols).clamp(max=m - 1)
    values = self.index_select(-1, index.reshape(-1)).reshape(*self.shape[:-1], n, n)
    return _st.where((cols - rows) == offset, values, _st.zeros((), dtype=self.dtype))


def _block_diag(*tensors):
    """The matrices (vectors as rows, numbers as 1x1) on the diagonal of one matrix, in the
    type they promote to."""
    mats = []
    for t in tensors:
        t = t if isinstance(t, _st.Tensor) else _st.tensor(t)
        mats.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not mats:
        return _st.zeros(1, 0)
    dtype = mats[0].dtype
    for m in mats[1:]:
        dtype = (_st.zeros((), dtype=dtype) + _st.zeros((), dtype=m.dtype)).dtype
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        right = width - left - m.shape[1]
        rows.append(_st.cat([_st.zeros(m.shape[0], left, dtype=dtype), m.to(dtype),
                             _st.zeros(m.shape[0], right, dtype=dtype)], 1))
        left += m.shape[1]
    return _st.cat(rows, 0)


def _unravel_index(indices, shape):
    """The coordinates in a tensor of `shape` of each flat index (a tuple, one per
    dimension)."""
    if isinstance(shape, int):
        shape = (shape,)
    if not isinstance(indices, _st.Tensor):
        indices = _st.tensor(indices)
    out, stride = [], 1
    for n in reversed(tuple(shape)):
        out.append((indices // stride) % n)
        stride *= n
    return tuple(reversed(out))


def _inner(self, other):
    """Sums of products over the last dimension of both, for every pair of their other
    positions (a number times a tensor for a 0-d one)."""
    if self.ndim == 0 or other.ndim == 0:
        return self * other
    k = self.shape[-1]
    if other.shape[-1] != k:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(self.shape)} and {list(other.shape)}")
    flat = self.reshape(-1, k) @ other.reshape(-1, k).transpose(0, 1)
    return flat.reshape(*self.shape[:-1], *other.shape[:-1])


def _logspace(start, end, steps, base=10.0, dtype=None, device=None):
    return float(base) ** _st.linspace(start, end, steps, dtype=dtype)


_ELEMENT_SIZES = {"float64": 8, "float32": 4, "int64": 8, "bool": 1}


def _lerp(self, end, weight):
    # torch's two-sided form: exact at both ends.
    if isinstance(weight, _st.Tensor):
        return _st.where(weight.abs() < 0.5, self + weight * (end - self),
                         end - (end - self) * (1 - weight))
    if abs(weight) < 0.5:
        return self + weight * (end - self)
    return end - (end - self) * (1 - weight)


def _lerp_(self, end, weight):
    self[...] = _lerp(self, end, weight)
    return self


def _addcmul_(self, tensor1, tensor2, *, value=1):
    self[...] = self + value * tensor1 * tensor2
    return self


def _addcdiv_(self, tensor1, tensor2, *, value=1):
    self[...] = self + value * tensor1 / tensor2
    return self


def _stride(self, dim=None):
    """A row-major tensor's strides, in elements (symtrace's tensors are all contiguous)."""
    strides = []
    step = 1
    for size in reversed(tuple(self.shape)):
        strides.append(step)
        step *= max(size, 1)
    strides = tuple(reversed(strides))
    if dim is None:
        return strides
    if not -self.ndim <= dim < max(self.ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-self.ndim}, {self.ndim - 1}], but got {dim})")
    return strides[dim]


def _norm(self, p="fro", dim=None, keepdim=False):
    a = self.abs()
    if p == "fro" or p == 2:
        s = (a * a).sum() if dim is None else (a * a).sum(dim, keepdim=keepdim)
        return s.sqrt()
    if p == _INF:
        # The values only: `max(dim)` gives (values, indices).
        return a.max() if dim is None else _max_values(a, dim, keepdim=keepdim)
    if p == 1:
        return a.sum() if dim is None else a.sum(dim, keepdim=keepdim)
    s = (a ** p).sum() if dim is None else (a ** p).sum(dim, keepdim=keepdim)
    return s ** (1.0 / p)


def _flip(self, dims):
    if isinstance(dims, int):
        dims = (dims,)
    out = self
    for d in dims:
        n = self.shape[d]
        out = out.index_select(d, _st.arange(n - 1, -1, -1))
    return out


def _einsum_letters(spec, ndim, fill):
    """`spec` with `...` spelled out as the letters of `fill` its dimensions take."""
    if "..." not in spec:
        return spec
    n = ndim - (len(spec) - 3)
    if n < 0:
        raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(spec) - 3}) is more than the number of dimensions ({ndim}) for operand")
    return spec.replace("...", fill[len(fill) - n:])


def _einsum_pair(a, sa, b, sb, keep):
    """`a` and `b` contracted to the letters of `keep` (in the order they come out): the
    letters of both kept are batch dimensions, of both and not kept contracted, as one
    product of (batch, rows, k) by (batch, k, columns)."""
    only_a = [c for c in sa if c not in sb and c not in keep]
    if only_a:
        a = a.sum(dim=tuple(sa.index(c) for c in only_a))
        sa = "".join(c for c in sa if c not in only_a)
    only_b = [c for c in sb if c not in sa and c not in keep]
    if only_b:
        b = b.sum(dim=tuple(sb.index(c) for c in only_b))
        sb = "".join(c for c in sb if c not in only_b)
    batch = [c for c in sa if c in sb and c in keep]
    summed = [c for c in sa if c in sb and c not in keep]
    rows = [c for c in sa if c not in sb]
    cols = [c for c in sb if c not in sa]
    size = {}
    for spec, t in ((sa, a), (sb, b)):
        for i, c in enumerate(spec):
            n = t.shape[i]
            if size.get(c, 1) == 1:
                size[c] = n
            elif n != 1 and n != size[c]:
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes (original): subscript {c} has sizes {size[c]} and {n}")

    def lined_up(t, spec, order):
        t = t.permute(*[spec.index(c) for c in order])
        return t.expand(*[size[c] for c in order])

    bs = [size[c] for c in batch]
    n_rows, n_cols, n_sum = 1, 1, 1
    for c in rows:
        n_rows *= size[c]
    for c in cols:
        n_cols *= size[c]
    for c in summed:
        n_sum *= size[c]
    x = lined_up(a, sa, batch + rows + summed).reshape(*bs, n_rows, n_sum)
    y = lined_up(b, sb, batch + summed + cols).reshape(*bs, n_sum, n_cols)
    r = (x @ y).reshape(*bs, *[size[c] for c in rows], *[size[c] for c in cols])
    return r, "".join(batch + rows + cols)


def _einsum(equation, *operands):
    """torch.einsum over one or more operands, contracted two at a time from the left (a
    repeated subscript within one operand, a diagonal, is not supported)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    specs = lhs.split(",")
    if len(specs) != len(operands):
        raise RuntimeError(f"einsum(): {len(specs)} operands in the equation, {len(operands)} given")
    fill = "".join(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in eq)
    # The output's `...` spans as many dimensions as the widest operand's (right-aligned,
    # broadcast), whatever the other subscripts of that operand.
    spans = [t.ndim - (len(s) - 3) for s, t in zip(specs, operands) if "..." in s]
    specs = [_einsum_letters(s, t.ndim, fill) for s, t in zip(specs, operands)]
    if arrow:
        out = _einsum_letters(out, len(out) - 3 + max(spans + [0]), fill) if "..." in out else out
    else:
        every = "".join(specs)
        out = "".join(sorted(c for c in set(every) if every.count(c) == 1 and c in fill)) + \
            "".join(sorted(c for c in set(every) if every.count(c) == 1 and c not in fill))
    for s, t in zip(specs, operands):
        if len(s) != t.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(s)}) does not match the number of dimensions ({t.ndim}) for operand")
        if len(set(s)) != len(s):
            raise NotImplementedError("einsum(): a subscript repeated within one operand (a diagonal) is not supported")
    x, sx = operands[0], specs[0]
    for k in range(1, len(operands)):
        later = out + "".join(specs[k + 1:])
        x, sx = _einsum_pair(x, sx, operands[k], specs[k], later)
    dropped = [c for c in sx if c not in out]
    if dropped:
        x = x.sum(dim=tuple(sx.index(c) for c in dropped))
        sx = "".join(c for c in sx if c not in dropped)
    if sx != out:
        x = x.permute(*[sx.index(c) for c in out])
    return x


_to_dtype = _st.Tensor.to


def _to_target(args, dtype=None, device=None):
    """The dtype `to(...)` asks for (None if none) among a dtype, a device, both, or another
    tensor's dtype, as tensors and modules take them; a device other than the CPU refused."""
    for a in args:
        if isinstance(a, _st.dtype):
            dtype = a
        elif isinstance(a, _st.Tensor):
            dtype = a.dtype
        else:
            _device_of(a)
    if device is not None:
        _device_of(device)
    return dtype


def _to(self, *args, dtype=None, device=None, non_blocking=False, copy=False):
    """torch's `to`: the tensor itself when nothing changes (unless `copy`)."""
    dtype = _to_target(args, dtype, device)
    if dtype is None or dtype == self.dtype:
        return self.clone() if copy else self
    return _to_dtype(self, dtype)


def _device_of(d):
    if not (isinstance(d, _st.device) or d == "cpu" or d == "cpu:0"):
        raise RuntimeError(f"symtrace computes on the CPU only, not on {d!r}")


def _movedim(self, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    n = self.ndim
    src = [d % n for d in src]
    dst = [d % n for d in dst]
    rest = [d for d in range(n) if d not in src]
    order = [None] * n
    for s_, d_ in zip(src, dst):
        order[d_] = s_
    for d in range(n):
        if order[d] is None:
            order[d] = rest.pop(0)
    return self.permute(*order)


def _unflatten(self, dim, sizes):
    d = dim % self.ndim
    return self.reshape(*self.shape[:d], *sizes, *self.shape[d + 1:])


_native_repeat = _st.Tensor.repeat


def _repeat(self, *sizes):
    """torch's repeat: the tensor tiled `sizes` times along each dimension (new leading ones
    first), as a view and a copy: `(r0, n0, r1, n1, ...)` expanded, then merged pairwise.
    Sizes that change per call stay symbolic (`cls.repeat(B, 1, 1)`)."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    if len(sizes) < self.ndim or any(not isinstance(r, int) or r < 0 for r in sizes):
        return _native_repeat(self, *sizes)  # its error
    shape = (1,) * (len(sizes) - self.ndim) + tuple(self.shape)
    pairs, tiled, merged = [], [], []
    for r, n in zip(sizes, shape):
        pairs += [1, n]
        tiled += [r, n]
        merged.append(r * n)
    return self.reshape(pairs).expand(tiled).reshape(merged)


def _repeat_interleave(self, repeats, dim=None):
    if not isinstance(repeats, int):
        raise NotImplementedError("repeat_interleave: repeats given per element are not supported")
    x = self.reshape(-1) if dim is None else self
    d = 0 if dim is None else dim % x.ndim
    shape = x.shape
    return (x.unsqueeze(d + 1).expand(*shape[:d + 1], repeats, *shape[d + 1:])
            .reshape(*shape[:d], shape[d] * repeats, *shape[d + 1:]))


def _roll(self, shifts, dims=None):
    if dims is None:
        return _roll(self.reshape(-1), shifts, 0).reshape(*self.shape)
    if isinstance(dims, int):
        shifts, dims = (shifts,), (dims,)
    out = self
    for s_, d in zip(shifts, dims):
        n = out.shape[d]
        k = s_ % n
        if k:
            out = _st.cat([out.narrow(d, n - k, k), out.narrow(d, 0, n - k)], dim=d)
    return out


def _allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = (self - other).abs() <= atol + rtol * other.abs()
    if equal_nan:
        close = close | ((self != self) & (other != other))
    return bool(close.all())


def _randint(low, high=None, size=None, *, generator=None, dtype=None, device=None):
    """torch's randint(high, size) or randint(low, high, size): ints uniform in [low, high),
    from symtrace's seeded generator (or from `generator`'s stream)."""
    if generator is not None:
        with _st._drawing_from(generator):
            return _randint(low, high, size, dtype=dtype, device=device)
    if size is None:
        low, high, size = 0, low, high
    if high is None or size is None:
        raise TypeError("randint() takes (high, size) or (low, high, size)")
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    ints = (_st.rand(*size, dtype=_st.float64) * (high - low)).long() + low
    return ints if dtype is None else ints.to(dtype)


def _set_data(self, value):
    """`p.data = t`: symtrace has no autograd, so `.data` is the tensor itself; setting it
    copies `t` in, which must keep the shape and dtype (torch would rebind the storage)."""
    if tuple(value.shape) != tuple(self.shape) or value.dtype != self.dtype:
        raise RuntimeError(
            f"symtrace sets .data in place: a {value.dtype} tensor of shape {tuple(value.shape)} "
            f"does not fit a {self.dtype} tensor of shape {tuple(self.shape)}")
    self[...] = value
    return None


def _normal_(self, mean=0.0, std=1.0):
    self[...] = _st.randn(*self.shape, dtype=self.dtype) * std + mean
    return self


def _uniform_(self, a=0.0, b=1.0):
    self[...] = _st.rand(*self.shape, dtype=self.dtype) * (b - a) + a
    return self


def _bernoulli(self, p=None, *, generator=None):
    """torch's bernoulli: each element 1 with probability `p` (the element itself when `p`
    is not given), 0 otherwise, in the tensor's type."""
    if generator is not None:
        with _st._drawing_from(generator):
            return _bernoulli(self, p)
    chance = self if p is None else p
    return (_st.rand(*self.shape, dtype=_st.float64) < chance).to(self.dtype)


def _bernoulli_(self, p=0.5, *, generator=None):
    """In place, as timm's drop_path uses it: `x.new_empty(shape).bernoulli_(keep)`."""
    self[...] = _bernoulli(self, p, generator=generator)
    return self


def _exponential_(self, lambd=1.0, *, generator=None):
    if generator is not None:
        with _st._drawing_from(generator):
            return _exponential_(self, lambd)
    self[...] = -(1.0 - _st.rand(*self.shape, dtype=_st.float64)).log().to(self.dtype) / lambd
    return self


def _randperm(n, *, dtype=None, device=None, generator=None):
    """A random permutation of range(n): the order that sorts n uniform draws."""
    if generator is not None:
        with _st._drawing_from(generator):
            return _randperm(n, dtype=dtype, device=device)
    perm = _st.rand(n, dtype=_st.float64).argsort()
    return perm if dtype is None else perm.to(dtype)


def _normal(mean, std=1.0, size=None, *, dtype=None, generator=None):
    """torch's normal: of tensor means and/or standard deviations (broadcast), or of two
    numbers and a size."""
    if generator is not None:
        with _st._drawing_from(generator):
            return _normal(mean, std, size, dtype=dtype)
    tensors = [t for t in (mean, std) if isinstance(t, _st.Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal() of two numbers needs a size")
        return _st.randn(*size, dtype=dtype) * std + mean
    shape = _broadcast_shapes(*[t.shape for t in tensors])
    return _st.randn(*shape, dtype=tensors[0].dtype) * std + mean


def _round(self, decimals=0):
    """torch's round: half to even; with `decimals`, of the value scaled by a power of ten
    (a negative `decimals` rounds to tens, hundreds...), as torch computes it."""
    if decimals == 0:
        return _st.call_op("round", self)
    if decimals > 0:
        scale = 10.0 ** decimals
        return _st.call_op("round", self * scale) / scale
    scale = 10.0 ** -decimals
    return _st.call_op("round", self / scale) * scale


def _deepcopy(self, memo):
    """`copy.deepcopy` of a tensor (of a module holding it): a copy of its elements, a
    parameter still one."""
    t = self.clone()
    t.requires_grad = self.requires_grad
    return t


def _format(self, spec):
    """torch's `format(t, spec)`: a tensor of no dimensions formats as its number
    (`f"{loss:.4f}"`); any other only without a spec, as its `str`."""
    if self.dim() == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


class _FInfo:
    """What torch.finfo tells of a float dtype."""

    def __init__(self, dtype, bits, eps, largest, tiny, resolution):
        self.dtype = dtype
        self.bits = bits
        self.eps = eps
        self.max = largest
        self.min = -largest
        self.tiny = tiny
        self.smallest_normal = tiny
        self.resolution = resolution

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
                f"eps={self.eps}, smallest_normal={self.tiny}, tiny={self.tiny}, dtype={self.dtype})")


class _IInfo:
    """What torch.iinfo tells of an int dtype."""

    def __init__(self, dtype, bits):
        self.dtype = dtype
        self.bits = bits
        self.max = 2 ** (bits - 1) - 1
        self.min = -(2 ** (bits - 1))

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def _finfo(dtype=None):
    dtype = dtype or _st.get_default_dtype()
    if dtype == _st.float64:
        return _FInfo("float64", 64, 2.220446049250313e-16, 1.7976931348623157e308,
                      2.2250738585072014e-308, 1e-15)
    if dtype == _st.float32:
        return _FInfo("float32", 32, 1.1920928955078125e-07, 3.4028234663852886e38,
                      1.1754943508222875e-38, 1e-06)
    raise TypeError(f"torch.finfo() requires a floating point input type, not {dtype}")


def _iinfo(dtype):
    if dtype == _st.int64:
        return _IInfo("int64", 64)
    raise TypeError(f"torch.iinfo() requires an integer input type, not {dtype}")


def _isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch's isclose: equal, or finitely apart by at most `atol + rtol * |other|`."""
    close = self == other
    if equal_nan:
        close = close | (self.isnan() & other.isnan())
    error = (self - other).abs()
    return close | (error.isfinite() & (error <= atol + (other * rtol).abs()))


def _nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    if not self.dtype.is_floating_point:
        return self.clone()
    info = _finfo(self.dtype)
    out = self.masked_fill(self.isnan(), nan)
    out = out.masked_fill(out == _INF, info.max if posinf is None else posinf)
    return out.masked_fill(out == -_INF, info.min if neginf is None else neginf)


def _diagonal(self, offset=0, dim1=0, dim2=1):
    """The elements `[i, i + offset]` of the two dimensions, as a last dimension."""
    nd = self.ndim
    dim1, dim2 = dim1 % nd, dim2 % nd
    rest = [d for d in range(nd) if d not in (dim1, dim2)]
    y = self.permute(*rest, dim1, dim2)
    row0, col0 = max(-offset, 0), max(offset, 0)
    k = max(min(y.shape[-2] - row0, y.shape[-1] - col0), 0)
    rows = _st.arange(k) + row0
    cols = _st.arange(k) + col0
    return y[..., rows, cols]


def _diag(self, diagonal=0):
    """A 1-D tensor's square matrix with it on a diagonal; a matrix's diagonal."""
    if self.ndim == 2:
        return _diagonal(self, diagonal)
    if self.ndim != 1:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + str(self.ndim) + "D")
    n = self.shape[0] + abs(diagonal)
    out = _st.zeros(n, n, dtype=self.dtype)
    k = _st.arange(self.shape[0])
    out[k + max(-diagonal, 0), k + max(diagonal, 0)] = self
    return out


def _addmm(self, mat1, mat2, *, beta=1, alpha=1):
    out = mat1 @ mat2
    if alpha != 1:
        out = out * alpha
    if beta == 0:
        return out
    return out + (self if beta == 1 else self * beta)


def _logaddexp(self, other):
    # Equal operands (infinities among them) give themselves plus log 2.
    gap = (self - other).abs()
    r = _st.maximum(self, other) + (1.0 + (-gap).exp()).log()
    return _st.where(self == other, self + 0.6931471805599453, r)


def _fmax(self, other):
    return _st.where(self.isnan(), other, _st.where(other.isnan(), self, _st.maximum(self, other)))


def _fmin(self, other):
    return _st.where(self.isnan(), other, _st.where(other.isnan(), self, _st.minimum(self, other)))


def _bincount(self, weights=None, minlength=0):
    """How often each value of a 1-D tensor of non-negative ints occurs (the sum of its
    `weights`), for every value up to the largest or `minlength`."""
    if self.dtype != _st.int64:
        name = {"float64": "Double", "float32": "Float", "bool": "Bool"}[str(self.dtype).split(".")[-1]]
        raise RuntimeError(f'"bincount_cpu" not implemented for \'{name}\'')
    if self.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    # Both ends read at once: under a tracer, one break for the data-dependent length.
    lo, hi = _st.stack((self.min(), self.max())).tolist() if self.numel() else (0, -1)
    if lo < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    length = max(hi + 1, minlength)
    if weights is None:
        return _st.zeros(length, dtype=_st.int64).index_add_(0, self, _st.ones_like(self))
    return _st.zeros(length, dtype=weights.dtype).index_add_(0, self, weights)


def _copysign(self, other):
    """`|self|` with the sign bit of `other` (a number's too), as a float."""
    magnitude = (self if self.is_floating_point() else self.to(_st.get_default_dtype())).abs()
    if isinstance(other, _st.Tensor):
        return _st.where(other.signbit(), -magnitude, magnitude)
    return -magnitude if _math.copysign(1.0, other) < 0 else magnitude


def _logaddexp2(self, other):
    """`log2(2**self + 2**other)` without overflow; equal infinities give themselves."""
    high = _st.maximum(self, other)
    out = high + (2.0 ** -(self - other).abs()).log1p() / _math.log(2.0)
    return _st.where((self == other) & self.isinf(), self, out)


def _is_nonzero(self):
    n = self.numel()
    if n != 1:
        what = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
    return bool(self)


def _ldexp(self, other):
    """`self * 2**other`, as a float."""
    return self * 2.0 ** other


def _histc(self, bins=100, min=0, max=0):
    """Counts of the elements in `bins` equal bins between `min` and `max` (the elements'
    own least and greatest when both are 0), those outside left out, `max` in the last."""
    low, high = float(min), float(max)
    if low == high and self.numel():
        low, high = float(self.min()), float(self.max())
    if low == high:
        low, high = low - 1.0, high + 1.0
    if low > high:
        raise RuntimeError(f"histc: max must be larger than min")
    x = self if self.is_floating_point() else self.to(_st.get_default_dtype())
    position = ((x - low) / (high - low) * bins).floor().clamp(0, bins - 1).long()
    inside = (x >= low) & (x <= high)
    # Elements outside count in a bin past the last, left out.
    position = _st.where(inside, position, bins).reshape(-1)
    counts = _st.zeros(bins + 1, dtype=x.dtype).index_add_(0, position, _st.ones_like(x).reshape(-1))
    return counts[:bins]


def _result_type(x1, x2):
    """The type of `x1 + x2` by symtrace's promotion (NumPy's: Python numbers weak), which
    every binary op of the two follows."""
    def stand_in(x):
        if isinstance(x, _st.Tensor):
            return _st.zeros(0 if x.ndim else (), dtype=x.dtype)
        return x
    a, b = stand_in(x1), stand_in(x2)
    if not isinstance(a, _st.Tensor) and not isinstance(b, _st.Tensor):
        a = _st.tensor(a)
    return (a + b).dtype


def _can_cast(from_, to):
    """torch's casting rule: every cast but float to an integral type and a non-bool to bool."""
    if from_.is_floating_point and not to.is_floating_point:
        return False
    return not (to == _st.bool and from_ != _st.bool)


def _cdist(x1, x2, p=2.0):
    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == _INF:
        return diff.amax(-1)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return (diff * diff).sum(-1).sqrt()
    return (diff ** p).sum(-1) ** (1.0 / p)


def _diff(self, n=1, dim=-1):
    out = self
    for _ in range(n):
        length = out.shape[dim]
        out = out.narrow(dim, 1, length - 1) - out.narrow(dim, 0, length - 1)
    return out


def _var_mean(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
    if correction is None:
        var = self.var(dim, unbiased, keepdim)
    else:
        var = self.var(dim, keepdim=keepdim, correction=correction)
    mean = self.mean() if dim is None else self.mean(dim, keepdim=keepdim)
    return var, mean


def _std_mean(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
    var, mean = _var_mean(self, dim, unbiased, keepdim, correction=correction)
    return var.sqrt(), mean


def _tile(self, dims):
    dims = tuple(dims)
    if len(dims) < self.ndim:
        dims = (1,) * (self.ndim - len(dims)) + dims
    return self.repeat(*dims)


def _broadcast_shapes(*shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s):
            j = ndim - len(s) + i
            if out[j] == 1:
                out[j] = n
            elif n != 1 and n != out[j]:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape")
    return tuple(out)


def _meshgrid(*tensors, indexing="ij"):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    sizes = [t.numel() for t in tensors]
    if indexing == "xy" and len(tensors) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(tensors):
        at = i
        if indexing == "xy" and len(tensors) >= 2 and i < 2:
            at = 1 - i
        shape = [1] * len(tensors)
        shape[at] = -1
        out.append(t.reshape(*shape).expand(*sizes))
    return tuple(out)


def _hstack(tensors):
    tensors = list(tensors)
    return _st.cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def _vstack(tensors):
    return _st.cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)


def _as_tensor(data, dtype=None, device=None):
    if isinstance(data, _st.Tensor) and (dtype is None or dtype == data.dtype):
        return data
    if isinstance(data, _st.Tensor):
        return data.to(dtype)
    return _st.tensor(data, dtype=dtype)


def _cuda(self, *args, **kwargs):
    raise RuntimeError("symtrace computes on the CPU only: there is no CUDA device")


def _as_dtype(self, dtype):
    return self if dtype is None else self.to(dtype)


def _prod(self, dim=None, keepdim=False, dtype=None):
    """torch's prod: of all elements, or along `dim`; ints and bools multiply as int64."""
    return _st.call_op("prod", _as_dtype(self, dtype), dim=dim, keepdim=keepdim)


def _multinomial(self, num_samples, replacement=False, *, generator=None):
    """torch's multinomial: indices drawn from each row of weights (a registry op that a
    graph draws when it runs)."""
    if generator is not None:
        with _st._drawing_from(generator):
            return _multinomial(self, num_samples, replacement)
    return _st.call_op("multinomial", self, num_samples=num_samples, replacement=bool(replacement))


METHODS = {
    "t": _t,
    "mm": _mm,
    "bmm": _bmm,
    "square": lambda self: self * self,
    "rsqrt": lambda self: 1.0 / self.sqrt(),
    "reciprocal": lambda self: 1.0 / self,
    "outer": lambda self, other: self.reshape(-1, 1) * other.reshape(1, -1),
    "clamp_min": lambda self, min: self.clamp(min=min),
    "clamp_max": lambda self, max: self.clamp(max=max),
    "any": _any,
    "all": _all,
    "isnan": lambda self: self != self,
    "isinf": lambda self: self.abs() == _INF,
    "isfinite": lambda self: (self - self) == 0,
    "amax": lambda self, dim=None, keepdim=False: _max_values(self) if dim is None else _max_values(self, dim, keepdim=keepdim),
    "amin": lambda self, dim=None, keepdim=False: _min_values(self) if dim is None else _min_values(self, dim, keepdim=keepdim),
    "max": _max,
    "min": _min,
    "std": _std,
    "logsumexp": _logsumexp,
    "new_zeros": _new_zeros,
    "new_ones": _new_ones,
    "new_full": _new_full,
    "new_tensor": lambda self, data, dtype=None: _st.tensor(data, dtype=dtype or self.dtype),
    "nelement": lambda self: self.numel(),
    # One device, the CPU: moving there changes nothing (torch returns the tensor itself).
    "cpu": lambda self: self,
    "cuda": _cuda,
    "movedim": _movedim,
    "swapaxes": lambda self, a, b: self.transpose(a, b),
    "swapdims": lambda self, a, b: self.transpose(a, b),
    "unflatten": _unflatten,
    "repeat_interleave": _repeat_interleave,
    "repeat": _repeat,
    "roll": _roll,
    "allclose": _allclose,
    "to": _to,
    "int": lambda self: self.long(),
    "bool": lambda self: self.to(_st.bool),
    "add_": _add_,
    "sub_": _sub_,
    "mul_": _mul_,
    "div_": _div_,
    "zero_": lambda self: _fill_(self, 0),
    "fill_": _fill_,
    "copy_": _fill_,
    "clamp_": _clamp_,
    "masked_fill_": _masked_fill_,
    "relu_": lambda self: _fill_(self, self.relu()),
    "lerp": _lerp,
    "lerp_": _lerp_,
    "norm": _norm,
    "flip": _flip,
    "sort": _sort,
    "data": property(lambda self: self, _set_data),
    "normal_": _normal_,
    "uniform_": _uniform_,
    "bernoulli": _bernoulli,
    "bernoulli_": _bernoulli_,
    "exponential_": _exponential_,
    "topk": _topk,
    "round": _round,
    "frac": lambda self: self - self.trunc(),
    "fix": lambda self: self.trunc(),
    "sgn": lambda self: self.sign(),
    "__deepcopy__": _deepcopy,
    "__format__": _format,
    "is_floating_point": lambda self: self.dtype.is_floating_point,
    "isclose": _isclose,
    "nan_to_num": _nan_to_num,
    "diagonal": _diagonal,
    "diag": _diag,
    "trace": lambda self: _diagonal(self).sum(),
    "inverse": lambda self: _st.linalg.inv(self),
    "cholesky_solve": lambda self, input2, upper=False: _st.cholesky_solve(self, input2, upper),
    "cholesky_inverse": lambda self, upper=False: _st.cholesky_inverse(self, upper),
    "det": lambda self: _st.linalg.det(self),
    "logdet": lambda self: _st.logdet(self),
    "slogdet": lambda self: _st.linalg.slogdet(self),
    "cholesky": lambda self, upper=False: _st.linalg.cholesky(self, upper),
    "qr": lambda self, some=True: _st.linalg.qr(self, "reduced" if some else "complete"),
    "matrix_power": lambda self, n: _st.linalg.matrix_power(self, n),
    "pinverse": lambda self, rcond=1e-15: _st.linalg.pinv(self, rtol=rcond),
    "addmm": _addmm,
    "baddbmm": _addmm,
    "addcmul": lambda self, t1, t2, *, value=1: self + value * t1 * t2,
    "addcdiv": lambda self, t1, t2, *, value=1: self + value * t1 / t2,
    "addcmul_": _addcmul_,
    "addcdiv_": _addcdiv_,
    "stride": _stride,
    "storage_offset": lambda self: 0,
    "logaddexp": _logaddexp,
    "fmax": _fmax,
    "fmin": _fmin,
    "hypot": lambda self, other: (self * self + other * other).sqrt(),
    # The registry's unary ops that have no native method, and NumPy's spellings torch
    # also takes (`arcsin`).
    "tan": lambda self: _st.call_op("tan", self),
    "asin": lambda self: _st.call_op("asin", self),
    "acos": lambda self: _st.call_op("acos", self),
    "atan": lambda self: _st.call_op("atan", self),
    "sinh": lambda self: _st.call_op("sinh", self),
    "cosh": lambda self: _st.call_op("cosh", self),
    "asinh": lambda self: _st.call_op("asinh", self),
    "acosh": lambda self: _st.call_op("acosh", self),
    "atanh": lambda self: _st.call_op("atanh", self),
    "log1p": lambda self: _st.call_op("log1p", self),
    "erfc": lambda self: _st.call_op("erfc", self),
    "erfinv": lambda self: _st.call_op("erfinv", self),
    "lgamma": lambda self: _st.call_op("lgamma", self),
    "digamma": lambda self: _st.call_op("digamma", self),
    "bincount": _bincount,
    "copysign": _copysign,
    "logaddexp2": _logaddexp2,
    "is_nonzero": _is_nonzero,
    "ldexp": _ldexp,
    "histc": _histc,
    "expm1": lambda self: _st.call_op("expm1", self),
    "log2": lambda self: _st.call_op("log2", self),
    "log10": lambda self: _st.call_op("log10", self),
    "exp2": lambda self: _st.call_op("exp2", self),
    "arcsin": lambda self: _st.call_op("asin", self),
    "arccos": lambda self: _st.call_op("acos", self),
    "arctan": lambda self: _st.call_op("atan", self),
    "arcsinh": lambda self: _st.call_op("asinh", self),
    "arccosh": lambda self: _st.call_op("acosh", self),
    "arctanh": lambda self: _st.call_op("atanh", self),
    "atan2": lambda self, other: _st.call_op("atan2", self, other),
    "arctan2": lambda self, other: _st.call_op("atan2", self, other),
    "igamma": lambda self, other: _st.call_op("igamma", self, other),
    "igammac": lambda self, other: _st.call_op("igammac", self, other),
    "gcd": lambda self, other: _st.call_op("gcd", self, other),
    "lcm": lambda self, other: _st.call_op("lcm", self, other),
    "prod": _prod,
    "cumprod": lambda self, dim, dtype=None: _st.call_op("cumprod", _as_dtype(self, dtype), dim=dim),
    "logical_not": lambda self: self == 0,
    "logical_and": lambda self, other: (self != 0) & (other != 0),
    "logical_or": lambda self, other: (self != 0) | (other != 0),
    "logical_xor": lambda self, other: (self != 0) != (other != 0),
    "count_nonzero": lambda self, dim=None: (self != 0).sum() if dim is None else (self != 0).sum(dim),
    "diff": _diff,
    "clip": lambda self, min=None, max=None: self.clamp(min=min, max=max),
    "broadcast_to": lambda self, size: self.expand(*size),
    "tile": _tile,
    "new_empty": _new_zeros,
    "dist": lambda self, other, p=2: (self - other).norm(p),
    # Of `other`, only its dtype or shape: read here, so that a traced frame reads them as
    # such (a size that changes stays symbolic; a constant tensor stays constant).
    "type_as": lambda self, other: self.to(other.dtype),
    "view_as": lambda self, other: self.view(tuple(other.shape)),
    "reshape_as": lambda self, other: self.reshape(tuple(other.shape)),
    "expand_as": lambda self, other: self.expand(tuple(other.shape)),
    "multinomial": _multinomial,
    "add": _add,
    "sub": _sub,
    "div": _div,
    "divide": _div,
    "true_divide": lambda self, other: _native_div(self, other),
    "floor_divide": lambda self, other: self // other,
    "remainder": lambda self, other: self % other,
    "multiply": lambda self, other: self * other,
    "subtract": _sub,
    "negative": lambda self: -self,
    "absolute": lambda self: self.abs(),
    "select": _select,
    "nansum": _nansum,
    "nanmean": _nanmean,
    "xlogy": _xlogy,
    "logit": _logit,
    "deg2rad": lambda self: self * (3.141592653589793 / 180.0),
    "rad2deg": lambda self: self * (180.0 / 3.141592653589793),
    "fliplr": lambda self: self.flip(1),
    "flipud": lambda self: self.flip(0),
    "ravel": lambda self: self.reshape(-1),
    "moveaxis": _movedim,
    "tril_": lambda self, diagonal=0: _fill_(self, self.tril(diagonal)),
    "triu_": lambda self, diagonal=0: _fill_(self, self.triu(diagonal)),
    "ndimension": lambda self: self.ndim,
    "element_size": lambda self: _ELEMENT_SIZES[self.dtype.name],
    "nbytes": property(lambda self: _ELEMENT_SIZES[self.dtype.name] * self.numel()),
    "itemsize": property(lambda self: _ELEMENT_SIZES[self.dtype.name]),
    # symtrace's tensors are laid out row-major whenever Python sees them.
    "is_contiguous": lambda self, memory_format=None: True,
    "mT": property(lambda self: self.transpose(-2, -1)),
    "isin": _isin,
    "take_along_dim": _take_along_dim,
    "tensor_split": _tensor_split,
    "kthvalue": _kthvalue,
    "median": _median,
    "nanmedian": _nanmedian,
    "nanquantile": _nanquantile,
    "renorm": _renorm,
    "renorm_": _renorm_,
    "quantile": _quantile,
    "rot90": _rot90,
    "cross": _cross,
    "diag_embed": _diag_embed,
    "equal": lambda self, other: tuple(self.shape) == tuple(other.shape) and bool((self == other).all()),
    "mv": lambda self, vec: self @ vec,
    "inner": _inner,
    "signbit": lambda self: (self < 0) | ((self == 0) & ((1.0 / self) < 0)) if self.dtype.is_floating_point else self < 0,
    "isposinf": lambda self: self == _INF,
    "isneginf": lambda self: self == -_INF,
    "sinc": lambda self: _st.where(self == 0, 1.0, (self * 3.141592653589793).sin() / (self * 3.141592653589793)),
    "heaviside": lambda self, values: _st.where(self == 0, values, (self > 0).to(self.dtype)),
    "msort": lambda self: _sort(self, 0).values,
    "aminmax": _aminmax,
    "split_with_sizes": lambda self, split_sizes, dim=0: self.split(list(split_sizes), dim),
}

# Functions only (torch has no method of these names).
MODULE_ONLY = {
    "einsum": _einsum,
    "randint": _randint,
    "randperm": _randperm,
    "normal": _normal,
    "_to_target": _to_target,
    "argsort": lambda t, dim=-1, descending=False, stable=False: t.argsort(dim, descending),
    "is_tensor": lambda obj: isinstance(obj, _st.Tensor),
    "numel": lambda t: t.numel(),
    "full_like": lambda t, fill_value, dtype=None: _st.full(t.shape, fill_value, dtype=dtype or t.dtype),
    # A tensor's shape is a tuple: `torch.Size(...)`, `isinstance(x.shape, torch.Size)`.
    "Size": tuple,
    "finfo": _finfo,
    "var_mean": _var_mean,
    "std_mean": _std_mean,
    "iinfo": _iinfo,
    "pow": lambda a, b: a ** b,
    "concat": lambda tensors, dim=0: _st.cat(tensors, dim),
    "concatenate": lambda tensors, dim=0: _st.cat(tensors, dim),
    "hstack": _hstack,
    "vstack": _vstack,
    "empty": lambda *size, dtype=None, device=None: _st.zeros(*_size_of(size), dtype=dtype),
    "empty_like": lambda t, dtype=None: _st.zeros(*t.shape, dtype=dtype or t.dtype),
    "rand_like": lambda t, dtype=None: _st.rand(*t.shape, dtype=dtype or t.dtype),
    "randn_like": lambda t, dtype=None: _st.randn(*t.shape, dtype=dtype or t.dtype),
    "as_tensor": _as_tensor,
    "cdist": _cdist,
    "result_type": lambda tensor1, tensor2: _result_type(tensor1, tensor2),
    "promote_types": lambda type1, type2: (_st.zeros(0, dtype=type1) + _st.zeros(0, dtype=type2)).dtype,
    "can_cast": lambda from_, to: _can_cast(from_, to),
    "meshgrid": _meshgrid,
    "broadcast_shapes": _broadcast_shapes,
    "mul": lambda input, other: input * other,
    "eq": lambda input, other: input == other,
    "ne": lambda input, other: input != other,
    "lt": lambda input, other: input < other,
    "le": lambda input, other: input <= other,
    "gt": lambda input, other: input > other,
    "ge": lambda input, other: input >= other,
    "greater": lambda input, other: input > other,
    "greater_equal": lambda input, other: input >= other,
    "less": lambda input, other: input < other,
    "less_equal": lambda input, other: input <= other,
    "not_equal": lambda input, other: input != other,
    "neg": lambda input: -input,
    "clone": lambda input, memory_format=None: input.clone(),
    "t": lambda input: input.t(),
    "unbind": lambda input, dim=0: input.unbind(dim),
    "isin": _isin,
    "block_diag": _block_diag,
    "unravel_index": _unravel_index,
    "logspace": _logspace,
    "tril_indices": lambda row, col, offset=0, dtype=None, device=None: _triangle_indices(row, col, offset, False),
    "triu_indices": lambda row, col, offset=0, dtype=None, device=None: _triangle_indices(row, col, offset, True),
    "broadcast_tensors": lambda *ts: tuple(t.expand(*_broadcast_shapes(*[t.shape for t in ts])) for t in ts),
}

FUNCTIONS = [
    "mm", "bmm", "square", "rsqrt", "reciprocal", "outer", "clamp_min", "clamp_max", "any",
    "all", "isnan", "isinf", "isfinite", "amax", "amin", "std", "logsumexp", "lerp", "norm",
    "flip", "max", "min", "movedim", "swapaxes", "swapdims", "unflatten", "repeat_interleave",
    "roll", "allclose", "sort", "topk", "round", "frac", "fix", "sgn", "isclose", "nan_to_num",
    "diagonal", "diag", "trace", "addmm", "baddbmm", "addcmul", "addcdiv", "logaddexp", "fmax",
    "fmin", "hypot", "logical_not", "logical_and", "logical_or",
    "logical_xor", "count_nonzero", "diff", "clip", "broadcast_to", "tile", "dist",
    "is_floating_point", "atan2", "arctan2", "igamma", "igammac", "gcd", "lcm", "prod", "cumprod",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log1p", "expm1",
    "erfc", "erfinv", "lgamma", "digamma", "bincount", "copysign", "logaddexp2",
    "is_nonzero", "ldexp", "histc",
    "log2", "log10", "exp2", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
    "multinomial", "bernoulli", "add", "sub", "div", "divide", "true_divide", "floor_divide",
    "remainder", "multiply", "subtract", "negative", "absolute", "select", "nansum", "nanmean",
    "xlogy", "logit", "deg2rad", "rad2deg", "fliplr", "flipud", "ravel", "moveaxis",
    "take_along_dim", "tensor_split", "kthvalue", "median", "quantile", "nanmedian",
    "nanquantile", "renorm", "rot90", "cross",
    "diag_embed", "equal", "mv", "inner", "signbit", "isposinf", "isneginf", "sinc",
    "heaviside", "msort", "aminmax", "split_with_sizes",
]
