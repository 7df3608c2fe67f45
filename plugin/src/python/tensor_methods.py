"""Tensor methods and symtrace functions that torch has and that are compositions of the
registry's ops: written in Python, so that a traced frame simulates them like the user's
own code (each op lands in the graph). Set on `Tensor` and on `symtrace` when it is
imported; `_st` is the `symtrace` module, given by the loader (`tensor_methods.rs`)."""

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


def _norm(self, p="fro", dim=None, keepdim=False):
    a = self.abs()
    if p == "fro" or p == 2:
        s = (a * a).sum() if dim is None else (a * a).sum(dim, keepdim=keepdim)
        return s.sqrt()
    if p == _INF:
        return a.max() if dim is None else a.max(dim, keepdim=keepdim)
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
    specs = [_einsum_letters(s, t.ndim, fill) for s, t in zip(specs, operands)]
    if arrow:
        out = _einsum_letters(out, max([len(s) for s in specs] + [0]), fill) if "..." in out else out
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


def _randint(low, high=None, size=None, *, dtype=None):
    """torch's randint(high, size) or randint(low, high, size): ints uniform in [low, high),
    from symtrace's seeded generator."""
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


def _cuda(self, *args, **kwargs):
    raise RuntimeError("symtrace computes on the CPU only: there is no CUDA device")


METHODS = {
    "t": _t,
    "mm": _mm,
    "bmm": _bmm,
    "detach": lambda self: self.view_as(self),
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
    "topk": _topk,
    "round": _round,
    "frac": lambda self: self - self.trunc(),
    "fix": lambda self: self.trunc(),
    "sgn": lambda self: self.sign(),
    "__deepcopy__": _deepcopy,
}

# Functions only (torch has no method of these names).
MODULE_ONLY = {
    "einsum": _einsum,
    "randint": _randint,
    "_to_target": _to_target,
    "argsort": lambda t, dim=-1, descending=False, stable=False: t.argsort(dim, descending),
    "is_tensor": lambda obj: isinstance(obj, _st.Tensor),
    "numel": lambda t: t.numel(),
    "full_like": lambda t, fill_value, dtype=None: _st.full(t.shape, fill_value, dtype=dtype or t.dtype),
}

FUNCTIONS = [
    "mm", "bmm", "square", "rsqrt", "reciprocal", "outer", "clamp_min", "clamp_max", "any",
    "all", "isnan", "isinf", "isfinite", "amax", "amin", "std", "logsumexp", "lerp", "norm",
    "flip", "max", "min", "movedim", "swapaxes", "swapdims", "unflatten", "repeat_interleave",
    "roll", "allclose", "sort", "topk", "round", "frac", "fix", "sgn",
]
