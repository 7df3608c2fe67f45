"""torch functions and methods that are compositions of others, written the way torch defines
them: the in-place spellings of the unary ops (`x.sqrt_()`, `x.exp_()`: the result stored
into the tensor, refused where torch refuses to cast it), splitting and stacking by axis
name (`hsplit`, `vsplit`, `dsplit`, `column_stack`, `dstack`, `atleast_1d/2d/3d`), products
(`tensordot`, `kron`, `vdot`, `cartesian_prod`, `combinations`), and small spellings
(`bitwise_and`..., `take`, `float_power`, `randint_like`, `x.type()`, `x.get_device()`,
`index_put`, `where` of a condition alone), and the running extremes (`cummax`, `cummin`:
values and indices, as torch's named tuple) and `logcumsumexp`, two ops of the registry. Being Python, a traced frame simulates them op by op like the user's own
code. Run after `tensor_methods.py`; `_st` is `symtrace`."""
import itertools as _itertools
from collections import namedtuple as _namedtuple

# Unary ops whose in-place spelling stores the result into the tensor.
_IN_PLACE_UNARY = [
    "sqrt", "rsqrt", "abs", "neg", "sigmoid", "tanh", "sin", "cos", "exp", "log", "floor",
    "ceil", "round", "trunc", "reciprocal", "sign", "pow", "clamp_min", "clamp_max", "relu",
    "square", "log1p", "expm1", "frac", "erf", "fmod", "remainder", "atan2",
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


def _running(name):
    """`x.cummax(dim)` / `x.cummin(dim)`: the running extreme along `dim` and the index each
    value came from."""
    result = _namedtuple(name, ["values", "indices"])

    def running(self, dim):
        return result(_st.call_op(name + "_values", self, dim=dim), _st.call_op(name + "_indices", self, dim=dim))

    return running


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
    "cummax": _running("cummax"),
    "cummin": _running("cummin"),
    "logcumsumexp": lambda self, dim: _st.call_op("logcumsumexp", self, dim=dim),
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
}

FUNCTIONS = [
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "hsplit", "vsplit", "dsplit",
    "kron", "vdot", "take", "float_power", "index_put", "cummax", "cummin", "logcumsumexp",
]
