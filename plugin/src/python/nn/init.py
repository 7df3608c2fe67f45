"""symtrace.nn.init: torch.nn.init's initializers, in place on a tensor (a module's
parameter), with symtrace's seeded generator: `uniform_`, `normal_`, `trunc_normal_`,
`constant_`, `ones_`, `zeros_`, `eye_`, `xavier_uniform_`, `xavier_normal_`,
`kaiming_uniform_`, `kaiming_normal_`, `orthogonal_`, and `calculate_gain`. The distributions are torch's;
the numbers are symtrace's own generator's."""
import math

import symtrace as st


def calculate_gain(nonlinearity, param=None):
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for n in tensor.shape[2:]:
        receptive *= n
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor, mode):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    return tensor.uniform_(a, b)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    return tensor.normal_(mean, std)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal values redrawn until inside [a, b] (rejection, as the distribution is)."""
    values = st.randn(*tensor.shape, dtype=tensor.dtype) * std + mean
    outside = (values < a) | (values > b)
    while bool(outside.any()):
        fresh = st.randn(*tensor.shape, dtype=tensor.dtype) * std + mean
        values = st.where(outside, fresh, values)
        outside = (values < a) | (values > b)
    tensor[...] = values
    return tensor


def constant_(tensor, val):
    return tensor.fill_(val)


def ones_(tensor):
    return tensor.fill_(1.0)


def zeros_(tensor):
    return tensor.zero_()


def eye_(tensor):
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    tensor[...] = st.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype)
    return tensor


def dirac_(tensor, groups=1):
    """A convolution's weight (3-, 4- or 5-D) that passes its input through: in each group,
    output channel `d` reads input channel `d` at the kernel's centre."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    tensor[...] = 0
    centre = tuple(k // 2 for k in sizes[2:])
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            tensor[(g * out_per_group + d, d) + centre] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return tensor.uniform_(-bound, bound)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return tensor.normal_(0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return tensor.uniform_(-bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    return tensor.normal_(0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)))


def orthogonal_(tensor, gain=1.0, generator=None):
    """Orthonormal rows or columns (whichever are fewer), from the QR factorization of a normal
    sample with R's diagonal made positive, so that the result is uniformly distributed."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    sample = st.randn(rows, cols, dtype=tensor.dtype)
    if rows < cols:
        sample = sample.T
    q, r = st.linalg.qr(sample)
    q = q * r.diagonal().sign()
    if rows < cols:
        q = q.T
    tensor[...] = (q * gain).reshape(tensor.shape)
    return tensor
