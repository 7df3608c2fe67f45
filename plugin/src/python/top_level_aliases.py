"""torch's top-level spellings of what symtrace has elsewhere: the functional ops as
`torch.conv2d`, `torch.dropout`, `torch.layer_norm`, `torch.embedding`... (each with torch's
own argument order where it differs from `nn.functional`'s), the in-place functions
(`torch.relu_(x)` is `x.relu_()`), and small functions (`detach`, `fill`, `rsub`, `ger`,
`addmv`, `addr`, `chain_matmul`, `row_stack`, `scalar_tensor`, `asarray`, `is_signed`...).
Built into the binary; `_st` is the symtrace module, `nn.functional` read when called."""


def _F():
    return _st.nn.functional


def _same(name):
    """`torch.name` as `nn.functional.name` (one signature)."""
    def op(*args, **kwargs):
        return getattr(_F(), name)(*args, **kwargs)
    op.__name__ = op.__qualname__ = name
    return op


_SAME = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "avg_pool1d", "max_pool1d", "max_pool2d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "cosine_similarity", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle",
    "channel_shuffle", "selu", "celu", "prelu", "hardshrink", "threshold", "bilinear",
    "affine_grid_generator",
]


def dropout(input, p, train):
    return _F().dropout(input, p, train)


def alpha_dropout(input, p, train):
    return _F().alpha_dropout(input, p, train)


def feature_alpha_dropout(input, p, train):
    return _F().feature_alpha_dropout(input, p, train)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return _F().group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _F().rms_norm(input, normalized_shape, weight, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled=True):
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled=True):
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                              momentum, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    # torch's native order: the table first; -1 is "no padding index" there.
    return _F().embedding(indices, weight, None if padding_idx == -1 else padding_idx)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _F().rrelu(input, lower, upper, training)


def detach(input):
    return input.detach()


def fill(input, value):
    return _st.full_like(input, value.item() if isinstance(value, _st.Tensor) else value)


def fill_(input, value):
    return input.fill_(value)


def zero_(input):
    return input.zero_()


def positive(input):
    if input.dtype == _st.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def rsub(input, other, alpha=1):
    """`other - alpha * input`."""
    return other - alpha * input


def ger(input, vec2):
    return _st.outer(input, vec2)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    return beta * input + alpha * (mat @ vec)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    return beta * input + alpha * _st.outer(vec1, vec2)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return beta * input + alpha * (batch1 @ batch2).sum(0)


def chain_matmul(*matrices):
    if len(matrices) == 1:
        return matrices[0].clone()
    return _st.linalg.multi_dot(list(matrices))


def row_stack(tensors):
    return _st.vstack(tensors)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _st.tensor(s, dtype=dtype or _st.get_default_dtype())


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    if isinstance(obj, _st.Tensor):
        t = obj if dtype is None or obj.dtype == dtype else obj.to(dtype)
        return t.clone() if copy and t is obj else t
    return _st.tensor(obj, dtype=dtype)


def is_signed(input):
    return input.dtype != _st.bool


def is_complex(input):
    return False


def is_inference(input):
    return False


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


def typename(obj):
    if isinstance(obj, _st.Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "")
    return (module + "." if module and module != "builtins" else "") + type(obj).__qualname__


class _LegacyTensorType(type):
    """torch's legacy tensor types (`torch.FloatTensor`...): a constructor of tensors of one
    dtype (from data, or of the sizes given, zeros where torch leaves memory as it finds
    it), and what `isinstance` asks of a tensor's dtype."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _st.Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args, device=None):
        if len(args) == 1 and isinstance(args[0], _st.Tensor):
            if args[0].dtype != cls.dtype:
                raise TypeError(f"expected {cls.dtype} (got {args[0].dtype})")
            return args[0]
        if len(args) == 1 and not isinstance(args[0], int):
            return _st.tensor(args[0], dtype=cls.dtype)
        return _st.zeros(*(args or (0,)), dtype=cls.dtype)


class FloatTensor(metaclass=_LegacyTensorType):
    dtype = _st.float32


class DoubleTensor(metaclass=_LegacyTensorType):
    dtype = _st.float64


class LongTensor(metaclass=_LegacyTensorType):
    dtype = _st.int64


class BoolTensor(metaclass=_LegacyTensorType):
    dtype = _st.bool


def _in_place_function(name):
    def op(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    op.__name__ = op.__qualname__ = name
    return op


_IN_PLACE = [
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "erf_", "erfc_", "exp2_", "exp_",
    "expm1_", "fix_", "floor_", "frac_", "ldexp_", "log10_", "log1p_", "log2_", "log_",
    "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_",
    "round_", "rsqrt_", "selu_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_",
    "tan_", "tanh_", "trunc_", "xlogy_", "celu_", "threshold_", "dropout_",
]

MODULE_ONLY = {name: _same(name) for name in _SAME}
MODULE_ONLY.update({
    name: value for name, value in dict(globals()).items()
    if callable(value) and not name.startswith("_") and name not in ("MODULE_ONLY",)
    and getattr(value, "__module__", None) == __name__
})
MODULE_ONLY.update({
    name: _in_place_function(name) for name in _IN_PLACE if not hasattr(_st, name)
})
# What symtrace already has keeps its own definition.
MODULE_ONLY = {name: value for name, value in MODULE_ONLY.items() if not hasattr(_st, name)}
METHODS = {}
FUNCTIONS = []
