"""Writes at indices along a dimension (`scatter`, `scatter_add`, `index_add`, `index_copy`,
`index_fill`, each with torch's in-place spelling), reads at computed indices (`unfold`'s
sliding windows; `searchsorted` and `bucketize`, positions in sorted sequences, as counts of
the elements before them) and selections whose size is the data's
(`masked_select`, `nonzero`, `argwhere`, `unique`). The writes are registry ops; an in-place spelling
stores the op's result into its target (`t[...] = ...`), which a traced frame records as an
update of the target. The selections go through a bool mask index, whose count a graph
cannot know ahead: a traced frame stops its graph there, as TorchDynamo's does without
`capture_dynamic_output_shape_ops`. Run after `tensor_methods.py`; `_st` is `symtrace`."""


def _source(self, index, src):
    """`src`, or a number made a tensor of the index's shape in `self`'s type."""
    if isinstance(src, _st.Tensor):
        return src
    return _st.full(tuple(index.shape), src, dtype=self.dtype)


def _scatter(self, dim, index, src=None, value=None, reduce=None):
    """torch's scatter: `out[index[i][j]][j] = src[i][j]` (dim 0); `reduce='add'` adds."""
    src = _source(self, index, value if src is None else src)
    if reduce is None:
        return _st.call_op("scatter", self, index, src, dim=dim)
    if reduce == "add":
        return _st.call_op("scatter_add", self, index, src, dim=dim)
    if reduce == "multiply":
        return _st.call_op("scatter_mul", self, index, src, dim=dim)
    raise RuntimeError(f"reduce argument must be either add or multiply, not {reduce!r}")


def _scatter_add(self, dim, index, src):
    return _st.call_op("scatter_add", self, index, src, dim=dim)


# What a reduction starts from where `include_self=False` drops the target's own value.
_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}


def _scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    """torch's scatter_reduce: the values of `src` sent to each place (`out[index[i][j]][j]`
    for dim 0) reduced with the target's own (`include_self`) by `sum`, `prod`, `mean`,
    `amax` or `amin`; a place no index names keeps its value."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    base = self
    if not include_self:
        if reduce in _IDENTITY:
            fill = _IDENTITY[reduce]
        elif self.dtype == _st.bool:
            fill = reduce == "amin"
        elif self.is_floating_point():
            fill = float("-inf") if reduce == "amax" else float("inf")
        else:
            info = _st.iinfo(self.dtype)
            fill = info.min if reduce == "amax" else info.max
        base = _st.call_op("scatter", self, index, _source(self, index, fill), dim=dim)
    if reduce == "sum":
        return _st.call_op("scatter_add", base, index, src, dim=dim)
    if reduce == "prod":
        return _st.call_op("scatter_mul", base, index, src, dim=dim)
    if reduce == "amax":
        return _st.call_op("scatter_amax", base, index, src, dim=dim)
    if reduce == "amin":
        return _st.call_op("scatter_amin", base, index, src, dim=dim)
    total = _st.call_op("scatter_add", base, index, src, dim=dim)
    start = _st.full_like(self, 1 if include_self else 0)
    counts = _st.call_op("scatter_add", start, index, _st.ones_like(src), dim=dim)
    counts = _st.where(counts == 0, _st.ones_like(counts), counts)
    if self.is_floating_point():
        return total / counts
    return _st.div(total, counts, rounding_mode="floor")


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    self[...] = _scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
    return self


def _index_add(self, dim, index, source, *, alpha=1):
    if alpha != 1:
        source = source * alpha
    return _st.call_op("index_add", self, index, source, dim=dim)


def _index_copy(self, dim, index, source):
    return _st.call_op("index_copy", self, index, source, dim=dim)


def _index_fill(self, dim, index, value):
    """`self` with the slices `index` along `dim` set to `value`."""
    shape = list(self.shape)
    if shape:
        shape[dim] = index.numel()
    fill = value if isinstance(value, _st.Tensor) else _st.full(tuple(shape), value, dtype=self.dtype)
    return _st.call_op("index_copy", self, index.reshape(-1), fill.expand(*shape).contiguous(), dim=dim)


# The in-place spellings: the op's result stored into the tensor, which is returned. Written
# out (no function made at import: under `--plugin symtrace -o strict=1` every call is traced).
def _scatter_(self, dim, index, src=None, value=None, reduce=None):
    self[...] = _scatter(self, dim, index, src, value, reduce)
    return self


def _scatter_add_(self, dim, index, src):
    self[...] = _scatter_add(self, dim, index, src)
    return self


def _index_add_(self, dim, index, source, *, alpha=1):
    self[...] = _index_add(self, dim, index, source, alpha=alpha)
    return self


def _index_copy_(self, dim, index, source):
    self[...] = _index_copy(self, dim, index, source)
    return self


def _index_fill_(self, dim, index, value):
    self[...] = _index_fill(self, dim, index, value)
    return self


def _masked_select(self, mask):
    """The elements where `mask` (broadcast with `self`) holds, in row-major order, as one
    vector."""
    shape = _st.broadcast_shapes(self.shape, mask.shape)
    return self.expand(*shape)[mask.expand(*shape)]


def _nonzero(self, *, as_tuple=False):
    """The indices of the nonzero elements in row-major order: a `(count, ndim)` int64
    tensor, or with `as_tuple` one vector per dimension."""
    flat = self.reshape(-1) != 0
    positions = _st.arange(flat.shape[0])[flat]
    coords = []
    stride = 1
    for size in reversed(self.shape):
        coords.append((positions // stride) % size)
        stride *= size
    coords.reverse()
    if as_tuple:
        return tuple(coords) if coords else (positions * 0,)
    if not coords:
        return positions.reshape(-1, 0)
    return _st.stack(coords, dim=1)


def _unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch's unique over all elements: the distinct values in ascending order (torch sorts
    also when `sorted=False` on the CPU), with each element's place among them and each
    value's count. The distinct values go through a bool mask index: a graph stops there."""
    if dim is not None:
        raise NotImplementedError("unique(dim=...) is not supported by symtrace")
    flat = self.reshape(-1)
    n = flat.shape[0]
    values, order = flat.sort(stable=True)
    if n == 0:
        first = values != values
    else:
        first = _st.cat([_st.ones(1, dtype=_st.bool), values[1:] != values[:-1]])
    out = values[first]
    if not (return_inverse or return_counts):
        return out
    result = (out,)
    if return_inverse:
        group = first.long().cumsum(0) - 1
        inverse = _st.zeros(n, dtype=_st.int64).scatter(0, order, group)
        result += (inverse.reshape(self.shape),)
    if return_counts:
        starts = _st.arange(n)[first]
        ends = _st.cat([starts[1:], _st.tensor([n])])
        result += (ends - starts,)
    return result


def _unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """torch's unique_consecutive over all elements: each run of equal neighbours once, in
    order, with each element's run and each run's length (a bool mask index: a graph stops
    there)."""
    if dim is not None:
        raise NotImplementedError("unique_consecutive(dim=...) is not supported by symtrace")
    flat = self.reshape(-1)
    n = flat.shape[0]
    if n == 0:
        first = flat != flat
    else:
        first = _st.cat([_st.ones(1, dtype=_st.bool), flat[1:] != flat[:-1]])
    out = flat[first]
    if not (return_inverse or return_counts):
        return out
    result = (out,)
    if return_inverse:
        result += ((first.long().cumsum(0) - 1).reshape(self.shape),)
    if return_counts:
        starts = _st.arange(n)[first]
        ends = _st.cat([starts[1:], _st.tensor([n])])
        result += (ends - starts,)
    return result


def _masked_scatter(self, mask, source):
    """torch's masked_scatter: the elements where `mask` (broadcast to this shape) is true
    take `source`'s elements in order, the others stay."""
    if mask.dtype != _st.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    where = mask.expand(*self.shape).reshape(-1)
    taken = int(where.sum())
    if taken > source.numel():
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as the ones selected by the mask")
    out = self.reshape(-1).clone()
    out[where] = source.reshape(-1)[:taken].to(self.dtype)
    return out.reshape(self.shape)


def _masked_scatter_(self, mask, source):
    self[...] = _masked_scatter(self, mask, source)
    return self


def _put_(self, index, source, accumulate=False):
    """torch's put_: `source`'s elements written at the flat positions `index` names
    (added to what is there with `accumulate`)."""
    flat = self.reshape(-1)
    positions = index.reshape(-1)
    values = source.reshape(-1).to(self.dtype)
    if accumulate:
        flat = flat.index_add(0, positions, values)
    else:
        flat = flat.clone()
        flat[positions] = values
    self[...] = flat.reshape(self.shape)
    return self


def _unfold(self, dimension, size, step):
    """torch's Tensor.unfold: every window of `size` elements, `step` apart, along
    `dimension`, as a new last dimension (read through one index_select)."""
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if self.ndim == 0:
        if size > 1:
            raise RuntimeError(f"maximum size for tensor at dimension 0 is 1 but size is {size}")
        return self.reshape(1)
    d = dimension + self.ndim if dimension < 0 else dimension
    if not 0 <= d < self.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-self.ndim}, {self.ndim - 1}], but got {dimension})")
    n = self.shape[d]
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    count = (n - size) // step + 1
    index = (_st.arange(count) * step).unsqueeze(1) + _st.arange(size).unsqueeze(0)
    windows = self.index_select(d, index.reshape(-1))
    shape = tuple(self.shape)
    return windows.reshape(shape[:d] + (count, size) + shape[d + 1:]).movedim(d + 1, -1)


def _searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    """torch's searchsorted: for each value, the index where it would go in the last
    dimension of `sorted_sequence` (after the equal ones with `right`): the count of the
    elements before it, counted as torch's binary search decides (`!(s >= v)`, `!(s > v)`),
    so that a NaN goes last."""
    if sorter is not None:
        raise NotImplementedError("searchsorted(sorter=...) is not supported by symtrace")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence
    if not isinstance(values, _st.Tensor):
        values = _st.tensor(values, dtype=seq.dtype)
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension")
    if seq.ndim == 1:
        s, v = seq, values.unsqueeze(-1)
    else:
        if tuple(seq.shape[:-1]) != tuple(values.shape[:-1]):
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                f"of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                f"{list(seq.shape)} and input value tensor {list(values.shape)}")
        s, v = seq.unsqueeze(-2), values.unsqueeze(-1)
    before = (s > v).logical_not() if right else (s >= v).logical_not()
    counts = before.sum(-1)
    return counts.int() if out_int32 else counts


def _bucketize(input, boundaries, *, out_int32=False, right=False):
    """torch's bucketize: the bucket of each element among 1-d `boundaries`."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _searchsorted(boundaries, input, out_int32=out_int32, right=right)


METHODS = {
    "scatter": _scatter,
    "scatter_": _scatter_,
    "scatter_add": _scatter_add,
    "scatter_add_": _scatter_add_,
    "scatter_reduce": _scatter_reduce,
    "scatter_reduce_": _scatter_reduce_,
    "index_add": _index_add,
    "index_add_": _index_add_,
    "index_copy": _index_copy,
    "index_copy_": _index_copy_,
    "index_fill": _index_fill,
    "index_fill_": _index_fill_,
    "masked_select": _masked_select,
    "nonzero": _nonzero,
    "argwhere": lambda self: _nonzero(self),
    "unfold": _unfold,
    "unique": _unique,
    "unique_consecutive": _unique_consecutive,
    "masked_scatter": _masked_scatter,
    "masked_scatter_": _masked_scatter_,
    "put_": _put_,
}

MODULE_ONLY = {
    "searchsorted": _searchsorted,
    "bucketize": _bucketize,
}

FUNCTIONS = ["scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill", "masked_select", "nonzero", "argwhere", "unique", "unique_consecutive", "masked_scatter"]
