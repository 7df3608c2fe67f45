"""torch functions and methods that are compositions of others, written the way torch defines
them: the in-place spellings of the unary ops (`x.sqrt_()`, `x.exp_()`: the result stored
into the tensor, refused where torch refuses to cast it), splitting and stacking by axis
name (`hsplit`, `vsplit`, `dsplit`, `column_stack`, `dstack`, `atleast_1d/2d/3d`), products
(`tensordot`, `kron`, `vdot`, `cartesian_prod`, `combinations`), and small spellings
(`bitwise_and`..., `take`, `float_power`, `randint_like`, `x.type()`, `x.get_device()`,
`index_put`, `where` of a condition alone), and the running extremes (`cummax`, `cummin`:
values and indices, as torch's named tuple) and `logcumsumexp`, two ops of the registry;
statistics (`cov`, `corrcoef`, `trapezoid`), `vander`, `diagflat`, `fill_diagonal_` and
the cosine windows (`hann_window`, `hamming_window`). Being Python, a traced frame simulates them op by op like the user's own
code. Run after `tensor_methods.py`; `_st` is `symtrace`."""
import itertools as _itertools
import math as _math
from collections import namedtuple as _namedtuple

# Unary ops whose in-place spelling stores the result into the tensor.
_IN_PLACE_UNARY = [
    "sqrt", "rsqrt", "abs", "neg", "sigmoid", "tanh", "sin", "cos", "exp", "log", "floor",
    "ceil", "round", "trunc", "reciprocal", "sign", "pow", "clamp_min", "clamp_max", "relu",
    "square", "log1p", "expm1", "frac", "erf", "erfc", "erfinv", "lgamma", "digamma", "fmod",
    "remainder", "atan2", "igamma", "igammac", "gcd", "lcm",
]

_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "int64": "LongTensor", "bool": "BoolTensor"}


def _stored(self, result, name):
    """`result` written into `self`, as torch's `name_` does; torch refuses a float result
    into an int or bool tensor, and a non-bool into a bool one."""
    if result.dtype != self.dtype and (
        (result.dtype.is_floating_point and not self.dtype.is_floating_point)
        or self.dtype == _st.bool
    ):
        raise RuntimeError(
            f"result type {_TYPE_NAMES.get(result.dtype.name, result.dtype.name)[:-6]} can't be cast "
            f"to the desired output type {_TYPE_NAMES.get(self.dtype.name, self.dtype.name)[:-6]} ({name}_)"
        )
    self[...] = result
    return self


def _in_place(name):
    def method(self, *args, **kwargs):
        return _stored(self, getattr(self, name)(*args, **kwargs), name)

    return method


def _along(self, sections, dim, name):
    """`tensor_split` along `dim`, with torch's rule for an int: equal parts or an error."""
    if isinstance(sections, int) and self.shape[dim] % sections != 0:
        raise RuntimeError(
            f"torch.{name} attempted to split along dimension {dim}, but the size of the "
            f"dimension {self.shape[dim]} is not divisible by the split_size {sections}!"
        )
    return self.tensor_split(sections, dim)


def _hsplit(self, sections):
    if self.ndim < 1:
        raise RuntimeError("torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 dimensions!")
    return _along(self, sections, 0 if self.ndim == 1 else 1, "hsplit")


def _vsplit(self, sections):
    if self.ndim < 2:
        raise RuntimeError(f"torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with {self.ndim} dimensions!")
    return _along(self, sections, 0, "vsplit")


def _dsplit(self, sections):
    if self.ndim < 3:
        raise RuntimeError(f"torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with {self.ndim} dimensions!")
    return _along(self, sections, 2, "dsplit")


def _atleast(shape_of):
    def atleast(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            return tuple(t.reshape(*shape_of(t)) for t in tensors[0])
        if len(tensors) == 1:
            return tensors[0].reshape(*shape_of(tensors[0]))
        return tuple(t.reshape(*shape_of(t)) for t in tensors)

    return atleast


def _shape_1d(t):
    return tuple(t.shape) if t.ndim >= 1 else (1,)


def _shape_2d(t):
    return tuple(t.shape) if t.ndim >= 2 else (1,) + _shape_1d(t)


def _shape_3d(t):
    if t.ndim >= 3:
        return tuple(t.shape)
    if t.ndim == 2:
        return tuple(t.shape) + (1,)
    return (1,) + _shape_1d(t) + (1,)


def _column_stack(tensors):
    return _st.cat([t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors], 1)


def _dstack(tensors):
    return _st.cat([t.reshape(*_shape_3d(t)) for t in tensors], 2)


def _tensordot(a, b, dims=2):
    """Contract `dims` (a count: the last of `a` with the first of `b`; or two lists) as one
    product of the two reshaped into matrices."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = list(dims[0]), list(dims[1])
        if isinstance(dims[0], int):
            da, db = [dims[0]], [dims[1]]
    da = [d % a.ndim for d in da]
    db = [d % b.ndim for d in db]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} "
                f"and second has size {b.shape[y]} in dim {y}"
            )
    keep_a = [d for d in range(a.ndim) if d not in da]
    keep_b = [d for d in range(b.ndim) if d not in db]
    n = 1
    for d in da:
        n *= a.shape[d]
    left = a.permute(*keep_a, *da).reshape(-1, n)
    right = b.permute(*db, *keep_b).reshape(n, -1)
    return (left @ right).reshape(*[a.shape[d] for d in keep_a], *[b.shape[d] for d in keep_b])


def _kron(a, b):
    n = max(a.ndim, b.ndim)
    sa = (1,) * (n - a.ndim) + tuple(a.shape)
    sb = (1,) * (n - b.ndim) + tuple(b.shape)
    left = a.reshape(*[s for x in sa for s in (x, 1)])
    right = b.reshape(*[s for y in sb for s in (1, y)])
    return (left * right).reshape(*[x * y for x, y in zip(sa, sb)])


def _vdot(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    return _st.dot(a, b)


def _cartesian_prod(*tensors):
    if len(tensors) == 1:
        return tensors[0]
    grids = _st.meshgrid(*tensors, indexing="ij")
    return _st.stack([g.reshape(-1) for g in grids], 1)


def _combinations(x, r=2, with_replacement=False):
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    pick = _itertools.combinations_with_replacement if with_replacement else _itertools.combinations
    rows = list(pick(range(x.shape[0]), r))
    if not rows:
        return _st.zeros(0, r, dtype=x.dtype) if r else _st.zeros(0, dtype=x.dtype)
    return x[_st.tensor(rows, dtype=_st.int64)]


def _take(self, index):
    return self.reshape(-1)[index]


def _float_power(self, exponent):
    base = self.to(_st.float64)
    if isinstance(exponent, _st.Tensor):
        return base ** exponent.to(_st.float64)
    return base ** float(exponent)


def _randint_like(t, low=0, high=None, *, dtype=None, device=None):
    if high is None:
        low, high = 0, low
    return _st.randint(low, high, tuple(t.shape)).to(dtype or t.dtype)


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """`x.type()`: torch's name of the tensor's type; `x.type(dtype)`: `x.to(dtype)`."""
    if dtype is None:
        return "torch." + _TYPE_NAMES.get(self.dtype.name, self.dtype.name)
    if isinstance(dtype, str):
        names = {"torch." + v: k for k, v in _TYPE_NAMES.items()}
        if dtype not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = getattr(_st, names[dtype])
    elif isinstance(dtype, type):
        # A legacy tensor type (`x.type(torch.FloatTensor)`): its dtype.
        dtype = dtype.dtype
    return self.to(dtype)


def _index_put_(self, indices, values, accumulate=False):
    if accumulate:
        raise NotImplementedError("index_put_ with accumulate=True is not supported by symtrace")
    self[tuple(indices)] = values
    return self


def _index_put(self, indices, values, accumulate=False):
    return _index_put_(self.clone(), indices, values, accumulate)


_select = _st.where


def _where(condition, input=None, other=None):
    """torch's `where`: `input` where `condition`, else `other`; given the condition alone,
    the indices of its nonzero elements, one vector per dimension."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return _select(condition, input, other)


def _running(name, result):
    """`x.cummax(dim)` / `x.cummin(dim)`: the running extreme along `dim` and the index each
    value came from, as the named tuple `result` (made by the module's own code, which is
    not traced: this factory then has nothing to report under the plugin)."""

    def running(self, dim):
        return result(_st.call_op(name + "_values", self, dim=dim), _st.call_op(name + "_indices", self, dim=dim))

    return running


def _float_of(x):
    return x if x.is_floating_point() else x.to(_st.get_default_dtype())


def _cov(input, *, correction=1, fweights=None, aweights=None):
    """torch's `cov`: rows are variables, columns observations (a vector: one variable)."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not supported by symtrace")
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {input.ndim} dimensions")
    x = _float_of(input)
    x = x.reshape(1, -1) if x.ndim < 2 else x
    n = x.shape[1]
    centered = x - x.mean(1, keepdim=True)
    c = (centered @ centered.T) / max(n - correction, 0)
    return c.reshape(()) if input.ndim < 2 else c


def _corrcoef(input):
    c = _cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std[:, None]
    c = c / std[None, :]
    return c.clamp(-1, 1)


def _fill_diagonal_(self, fill_value, wrap=False):
    """torch's `fill_diagonal_`: the main diagonal (of a matrix; of a cube of equal sides),
    for a tall matrix with `wrap` again every `cols + 1` rows."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and any(d != self.shape[0] for d in self.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.ndim == 2:
        rows, cols = self.shape
        stop = rows * cols if wrap else min(rows, cols) * cols
        flat = _st.arange(0, stop, cols + 1)
        self[flat // cols, flat % cols] = fill_value
        return self
    k = _st.arange(self.shape[0])
    self[(k,) * self.ndim] = fill_value
    return self


def _vander(x, N=None, increasing=False):
    """torch's `vander`: the powers of a vector's elements, highest first unless `increasing`."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x.dtype if x.dtype != _st.bool else _st.int64
    result = _st.ones(x.shape[0], max(n, 1), dtype=dtype)
    if n > 1:
        result[:, 1:] = x[:, None].to(dtype)
        result = result.cumprod(1)
    result = result[:, :n]
    return result if increasing else result.flip(1)


def _trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along `dim`: spacing `dx` (1 when neither is given) or the
    sample points `x`."""
    n = y.shape[dim]
    if x is None:
        step = 1 if dx is None else dx
        if n == 0:
            return y.sum(dim) * 0
        return (y.sum(dim) - (y.narrow(dim, 0, 1) + y.narrow(dim, n - 1, 1)).squeeze(dim) * 0.5) * step
    if dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx")
    gaps = x.diff(dim=-1 if x.ndim == 1 else dim)
    if x.ndim == 1 and y.ndim > 1:
        shape = [1] * y.ndim
        shape[dim] = n - 1
        gaps = gaps.reshape(shape)
    return ((y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) * gaps).sum(dim) / 2


def _window(alpha, beta):
    """torch's `hamming_window` family, `alpha - beta * cos(2 pi n / (N - 1))`; periodic:
    of N + 1 points, the last dropped."""
    def window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
        dtype = dtype or _st.get_default_dtype()
        if window_length == 0:
            return _st.zeros(0, dtype=dtype)
        if window_length == 1:
            return _st.ones(1, dtype=dtype)
        n = window_length + 1 if periodic else window_length
        w = _st.arange(n, dtype=_st.float64) * (_math.pi * 2.0 / (n - 1))
        w = (w.cos() * -beta + alpha).to(dtype)
        return w[:window_length]
    return window


# Those not already the tensor's own.
METHODS = {name + "_": _in_place(name) for name in _IN_PLACE_UNARY if not hasattr(_st.Tensor, name + "_")}
METHODS.update({
    "bitwise_and": lambda self, other: self & other,
    "bitwise_or": lambda self, other: self | other,
    "bitwise_xor": lambda self, other: self ^ other,
    "bitwise_not": lambda self: ~self,
    "hsplit": _hsplit,
    "vsplit": _vsplit,
    "dsplit": _dsplit,
    "kron": _kron,
    "vdot": _vdot,
    "take": _take,
    "float_power": _float_power,
    "type": _type,
    "get_device": lambda self: -1,
    "index_put_": _index_put_,
    "index_put": _index_put,
    "cummax": _running("cummax", _namedtuple("cummax", ["values", "indices"])),
    "cummin": _running("cummin", _namedtuple("cummin", ["values", "indices"])),
    "logcumsumexp": lambda self, dim: _st.call_op("logcumsumexp", self, dim=dim),
    "cov": _cov,
    "corrcoef": _corrcoef,
    "fill_diagonal_": _fill_diagonal_,
    "diagflat": lambda self, offset=0: _st.diag(self.flatten(), offset),
})

# Functions only (torch has no method of these names).
MODULE_ONLY = {
    "atleast_1d": _atleast(_shape_1d),
    "atleast_2d": _atleast(_shape_2d),
    "atleast_3d": _atleast(_shape_3d),
    "column_stack": _column_stack,
    "dstack": _dstack,
    "cartesian_prod": _cartesian_prod,
    "combinations": _combinations,
    "randint_like": _randint_like,
    "tensordot": _tensordot,
    "where": _where,
    "vander": _vander,
    "trapezoid": _trapezoid,
    "trapz": _trapezoid,
    "hann_window": _window(0.5, 0.5),
    "hamming_window": _window(0.54, 0.46),
}

FUNCTIONS = [
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "hsplit", "vsplit", "dsplit",
    "kron", "vdot", "take", "float_power", "index_put", "cummax", "cummin", "logcumsumexp",
    "cov", "corrcoef", "diagflat",
]
