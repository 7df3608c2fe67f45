"""symtrace.nn.functional: the functions behind the modules of symtrace.nn, written as
torch.nn.functional's are used (the same names, arguments, defaults and error messages), in
Python over symtrace's tensor ops, so that a traced frame simulates them like the user's own
code and records their ops into its graph."""
import math

import symtrace as st


def _drop_unit(x, dim):
    """`x.squeeze(dim)` for a dimension known to be 1, merged into a neighbour instead: a
    squeeze depends on that size (a dynamic graph checks it per call), a flatten does not."""
    return x.flatten(dim, dim + 1) if dim + 1 < x.ndim else x.flatten(dim - 1, dim)


def linear(input, weight, bias=None):
    """`input @ weight.T + bias`: weight is (out_features, in_features)."""
    return st.linear(input, weight, bias)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """The rows of `weight` that the int tensor `input` names; with `max_norm`, each row
    named whose `norm_type` norm exceeds it is first scaled down to it, in the table itself
    (torch's `embedding_renorm_`)."""
    if input.dtype != st.int64:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.dtype} instead"
        )
    if max_norm is not None:
        named = input.flatten().unique()
        rows = weight[named]
        norms = rows.norm(norm_type, dim=1, keepdim=True)
        weight[named] = st.where(norms > max_norm, rows * (max_norm / (norms + 1e-7)), rows)
    return weight[input]


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """The sum, mean or max of each bag of rows of `weight`: the rows of 2-D `input`, or the
    runs of 1-D `input` that `offsets` start; `padding_idx` counts in no bag, an empty bag is
    zeros."""
    if max_norm is not None:
        raise NotImplementedError("embedding_bag: max_norm renormalizes the weight in place, which symtrace does not")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only supported "
            f"for mode='sum' (got mode='{mode}'). Please open a feature request on GitHub.")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. However, found offsets of type {type(offsets)}")
        bags, length = input.shape
        bag = st.arange(bags).unsqueeze(1).expand(bags, length).reshape(-1)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets[:-1] if include_last_offset else offsets
        bags = starts.shape[0]
        bag = (st.arange(input.shape[0]).unsqueeze(1) >= starts.unsqueeze(0)).sum(1) - 1
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    rows = embedding(input, weight)
    keep = (input != padding_idx) if padding_idx is not None else st.ones_like(input, dtype=st.bool)
    if mode == "max":
        out = st.zeros(bags, weight.shape[1], dtype=weight.dtype)
        for b in range(bags):
            chosen = rows[(bag == b) & keep]
            if chosen.shape[0]:
                out[b] = chosen.amax(0)
        return out
    rows = rows * keep.unsqueeze(1).to(weight.dtype)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    total = st.zeros(bags, weight.shape[1], dtype=weight.dtype).index_add_(0, bag, rows)
    if mode == "sum":
        return total
    counts = st.zeros(bags, dtype=weight.dtype).index_add_(0, bag, keep.to(weight.dtype))
    return total / counts.clamp(min=1).unsqueeze(1)


def _normalized_dims(input, normalized_shape):
    """The last `len(normalized_shape)` dimensions, which must have those sizes."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    n = len(normalized_shape)
    if tuple(input.shape[input.ndim - n:]) != tuple(normalized_shape):
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(d) for d in normalized_shape)}], but got input of size"
            f"{list(input.shape)}"
        )
    return tuple(range(-n, 0))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the last `len(normalized_shape)` dimensions (biased variance)."""
    dims = _normalized_dims(input, normalized_shape)
    mean = input.mean(dim=dims, keepdim=True)
    var = input.var(dim=dims, unbiased=False, keepdim=True)
    out = (input - mean) / st.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def _in_place(input, out, inplace):
    """`out`, or with `inplace=True` (as torch's activations take it) `input` holding it."""
    if not inplace:
        return out
    input.copy_(out)
    return input


def relu(input, inplace=False):
    return _in_place(input, st.relu(input), inplace)


def gelu(input, approximate="none"):
    """Exact GELU, `x * Phi(x)` with the error function, or its tanh approximation."""
    if approximate == "none":
        return input * 0.5 * (1.0 + st.erf(input * (1.0 / math.sqrt(2.0))))
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1.0 + st.tanh(inner))
    raise RuntimeError(f"approximate argument must be either none or tanh.")


def silu(input, inplace=False):
    """`x * sigmoid(x)` (swish)."""
    return _in_place(input, input * st.sigmoid(input), inplace)


def sigmoid(input):
    return st.sigmoid(input)


def tanh(input):
    return st.tanh(input)


def _eps_of(dtype):
    # torch.finfo(dtype).eps
    return 1.1920928955078125e-07 if dtype == st.float32 else 2.220446049250313e-16


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """`x / sqrt(mean(x^2) + eps) * weight` over the last `len(normalized_shape)`
    dimensions; `eps` defaults to the machine epsilon of the input's type, as torch's."""
    dims = _normalized_dims(input, normalized_shape)
    if eps is None:
        eps = _eps_of(input.dtype)
    out = input * st.rsqrt((input * input).mean(dim=dims, keepdim=True) + eps)
    return out if weight is None else out * weight


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between `x1` and `x2` along `dim`, each norm clamped below
    at `eps` (torch's formula)."""
    n1 = (x1 * x1).sum(dim).sqrt().clamp(min=eps)
    n2 = (x2 * x2).sum(dim).sqrt().clamp(min=eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return (x1 - x2 + eps).norm(p, dim=-1, keepdim=keepdim)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) to (*, C, H r, W r)."""
    r = upscale_factor
    *lead, c, h, w = input.shape
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def channel_shuffle(input, groups):
    """(N, g k, *) to (N, k g, *): the channels of each group interleaved (ShuffleNet)."""
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) to (*, C r^2, H, W)."""
    r = downscale_factor
    *lead, c, h, w = input.shape
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch's im2col: every (kh, kw) patch of a batch of images as a column, `(N, C kh kw,
    L)` (`(C kh kw, L)` unbatched), gathered by one index_select along each image dimension."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    kh, kw = _pair(kernel_size, "kernel_size")
    dh, dw = _pair(dilation, "dilation")
    ph, pw = _pair(padding, "padding")
    sh, sw = _pair(stride, "stride")
    x, unbatched = _batched(input, 2, "unfold")
    if ph or pw:
        x = pad(x, (pw, pw, ph, ph))
    n, c, h, w = x.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (w - dw * (kw - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"Given input with spatial size ({h - 2 * ph}, {w - 2 * pw}), kernel_size=({kh}, {kw}), "
            f"dilation=({dh}, {dw}), padding=({ph}, {pw}), calculated shape of the array of sliding "
            f"blocks as ({oh}, {ow}), but its components must be at least one.")
    rows = (st.arange(oh) * sh).unsqueeze(1) + (st.arange(kh) * dh).unsqueeze(0)
    cols = (st.arange(ow) * sw).unsqueeze(1) + (st.arange(kw) * dw).unsqueeze(0)
    x = x.index_select(2, rows.reshape(-1)).reshape(n, c, oh, kh, w)
    x = x.index_select(4, cols.reshape(-1)).reshape(n, c, oh, kh, ow, kw)
    x = x.permute(0, 1, 3, 5, 2, 4).reshape(n, c * kh * kw, oh * ow)
    return x[0] if unbatched else x


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch's col2im, the inverse arrangement of `unfold`: columns `(N, C kh kw, L)` (`(C kh
    kw, L)` unbatched) summed into images `(N, C, H, W)` where their patches overlap, in the
    order torch adds them (by kernel position, then block)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got {input.ndim}D)")
    oh, ow = _pair(output_size, "output_size")
    kh, kw = _pair(kernel_size, "kernel_size")
    dh, dw = _pair(dilation, "dilation")
    ph, pw = _pair(padding, "padding")
    sh, sw = _pair(stride, "stride")
    x, unbatched = (input.unsqueeze(0), True) if input.ndim == 2 else (input, False)
    n, ckk, blocks = x.shape
    if ckk % (kh * kw):
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
            f"but got input.size(1)={ckk} and kernel_size=({kh}, {kw}).")
    c = ckk // (kh * kw)
    h, w = oh + 2 * ph, ow + 2 * pw
    bh = (h - dh * (kh - 1) - 1) // sh + 1
    bw = (w - dw * (kw - 1) - 1) // sw + 1
    if bh * bw != blocks:
        raise RuntimeError(
            f"Given output_size=({oh}, {ow}), kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), "
            f"padding=({ph}, {pw}), stride=({sh}, {sw}), expected size of input's dimension 2 to "
            f"match the calculated number of sliding blocks {bh} * {bw} = {bh * bw}, but got "
            f"input.size(2)={blocks}.")
    rows = (st.arange(bh) * sh).unsqueeze(0) + (st.arange(kh) * dh).unsqueeze(1)
    cols = (st.arange(bw) * sw).unsqueeze(0) + (st.arange(kw) * dw).unsqueeze(1)
    # The image position of kernel element (i, j) of block (r, s), in that order.
    target = rows[:, None, :, None] * w + cols[None, :, None, :]
    out = st.zeros(n, c, h * w, dtype=x.dtype).index_add_(
        2, target.reshape(-1), x.reshape(n, c, kh * kw * bh * bw))
    out = out.reshape(n, c, h, w)[:, :, ph:ph + oh, pw:pw + ow]
    return out[0] if unbatched else out


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """`input / max(norm_p(input, dim), eps)`."""
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps)


def _reduction(size_average, reduce, reduction):
    """torch's reduction from the legacy `size_average` and `reduce` flags, where given."""
    if size_average is None and reduce is None:
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"{reduction} is not a valid value for reduction")
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _reduced(loss, reduction):
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _weighted(loss, weight, input, reduction):
    """A pointwise loss weighed element by element (`weight` the shape of `input`): its
    mean is the weighted mean, as torch's."""
    if weight is None:
        return _reduced(loss, reduction)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum()
    return _reduced(loss, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    d = input - target
    return _weighted(d * d, weight, input, reduction)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return st.softmax(-input, dim=_implicit_dim(input, dim))


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """With `dtype`, the input is cast to it first, as torch does (a float16 model's
    attention softmax in float32)."""
    if dtype is not None:
        input = input.to(dtype)
    return st.softmax(input, dim=_implicit_dim(input, dim))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return st.log_softmax(input, dim=_implicit_dim(input, dim))


def _implicit_dim(input, dim):
    # torch's legacy choice for `dim=None`: 0 for 0, 1 and 3 dimensions, else 1.
    if dim is not None:
        return dim
    return 0 if input.dim() in (0, 1, 3) else 1


def dropout(input, p=0.5, training=True):
    """Zero each element with probability `p` and scale the rest by `1 / (1 - p)` while
    training (random numbers from symtrace's seeded generator); the identity otherwise."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep = st.rand(*input.shape, dtype=input.dtype) >= p
    return st.where(keep, input * (1.0 / (1.0 - p)), 0.0)


def _alpha_dropout(input, p, training, feature):
    """torch's alpha dropout (for SELU networks): dropped elements (whole channels with
    `feature`) set to SELU's negative saturation, then all of them scaled and shifted so
    that the mean and the variance stay."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return input * 0.0
    alpha = 1.7580993408473766
    a = 1.0 / math.sqrt((alpha * alpha * p + 1.0) * (1.0 - p))
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    else:
        shape = tuple(input.shape)
    keep = (st.rand(*shape, dtype=input.dtype) >= p).to(input.dtype)
    shift = (keep - 1.0) * (alpha * a) + alpha * a * p
    return input * (keep * a) + shift


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _in_place(input, _alpha_dropout(input, p, training, False), inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _in_place(input, _alpha_dropout(input, p, training, True), inplace)


def _channel_dropout(input, p, training, spatial, name):
    """Zero whole channels (all of a sample's `spatial` last dimensions at once) with
    probability `p`, scaling the rest by `1 / (1 - p)` while training."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}: Expected {spatial + 1}D or {spatial + 2}D input, but "
                           f"received a {input.ndim}D input")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    channels = tuple(input.shape[:input.ndim - spatial]) + (1,) * spatial
    keep = st.rand(*channels, dtype=input.dtype) >= p
    return st.where(keep, input * (1.0 / (1.0 - p)), 0.0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, 1, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, 2, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, 3, "dropout3d")


def _channel_affine(out, weight=None, bias=None):
    """`out * weight + bias`, one of each per channel (dimension 1)."""
    shape = (1, -1) + (1,) * (out.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Each channel normalized by the batch's statistics while `training` (the running ones,
    given, then move toward them by `momentum`), by the running ones otherwise."""
    dims = (0,) + tuple(range(2, input.ndim))
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size "
                f"{list(input.shape)}")
        # The batch's statistics kept in the input's rank (`keepdim`), never reshaped:
        # reading the sizes of a value made from the input would pin them in the graph.
        mean = input.mean(dim=dims, keepdim=True)
        centered = input - mean
        var = (centered * centered).mean(dim=dims, keepdim=True)
        # Per channel again, and the unbiased variance from the op (not a float `n / (n - 1)`
        # made from the sizes), for the same reason.
        if running_mean is not None:
            running_mean.mul_(1.0 - momentum).add_(input.mean(dim=dims) * momentum)
        if running_var is not None:
            running_var.mul_(1.0 - momentum).add_(input.var(dim=dims, unbiased=True) * momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mean = running_mean.reshape(shape)
        var = running_var.reshape(shape)
        centered = input - mean
    return _channel_affine(centered / st.sqrt(var + eps), weight, bias)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """`max(0, -y * (x1 - x2) + margin)`."""
    reduction = _reduction(size_average, reduce, reduction)
    return _reduced((-target * (input1 - input2) + margin).clamp(min=0.0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """`1 - cos(x1, x2)` for a target of 1, `max(0, cos(x1, x2) - margin)` for -1."""
    reduction = _reduction(size_average, reduce, reduction)
    eps = 1e-12
    dot = (input1 * input2).sum(-1)
    norms = ((input1 * input1).sum(-1) + eps) * ((input2 * input2).sum(-1) + eps)
    cos = dot / norms.sqrt()
    zeros = st.zeros_like(cos)
    loss = st.where(target == 1, 1.0 - cos, zeros) + \
        st.where(target == -1, (cos - margin).clamp(min=0.0), zeros)
    return _reduced(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """`max(d(a, p) - d(a, n) + margin, 0)`, `d` the p-norm distance (`pairwise_distance`);
    with `swap`, the nearer of `d(a, n)` and `d(p, n)`."""
    reduction = _reduction(size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = st.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduced((d_pos - d_neg + margin).clamp(min=0.0), reduction)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def hardshrink(input, lambd=0.5):
    return st.where(input.abs() > lambd, input, 0.0)


def softshrink(input, lambd=0.5):
    return st.where(input > lambd, input - lambd, st.where(input < -lambd, input + lambd, 0.0))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Each channel of each sample normalized over its own positions; `weight` and `bias`
    per channel."""
    if running_mean is not None or running_var is not None or not use_input_stats:
        raise NotImplementedError("symtrace's instance_norm keeps no running statistics")
    dims = tuple(range(2, input.ndim))
    if not dims:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{list(input.shape)}")
    mean = input.mean(dim=dims, keepdim=True)
    centered = input - mean
    var = (centered * centered).mean(dim=dims, keepdim=True)
    out = centered / (var + eps).sqrt()
    return _channel_affine(out, weight, bias)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """`-(y * log(x) + (1 - y) * log(1 - x))` of probabilities `input`, each log at least
    -100 as torch clamps it. (torch also refuses an input outside [0, 1]; symtrace gives NaN
    there, as a check would be a branch on the data.)"""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({tuple(target.shape)}) that is different to the input size "
            f"({tuple(input.shape)}) is deprecated. Please ensure they have the same size.")
    loss = -(target * input.log().clamp(min=-100.0)
             + (1.0 - target) * (1.0 - input).log().clamp(min=-100.0))
    if weight is not None:
        loss = loss * weight
    return _reduced(loss, reduction)


def adaptive_avg_pool1d(input, output_size):
    """The mean of each of `output_size` windows spread over the last dimension."""
    if isinstance(output_size, (tuple, list)):
        output_size = output_size[0]
    return _drop_unit(adaptive_avg_pool2d(input.unsqueeze(-2), (1, output_size)), input.ndim - 1)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """The negative log-likelihood of `target` under the logits `input`: (rows, classes), or
    (classes,), or (batch, classes, d1, ...). A target of class indices (int64, one per row;
    rows whose target is `ignore_index` do not count, `weight` weighs each class) or of class
    probabilities (floats, the shape of `input`)."""
    reduction = _reduction(size_average, reduce, reduction)
    if label_smoothing < 0.0 or label_smoothing > 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    probabilities = target.is_floating_point()
    if input.ndim == 1:
        row = target.unsqueeze(0)
        loss = cross_entropy(input.unsqueeze(0), row, weight, None, ignore_index, None,
                             reduction, label_smoothing)
        return loss[0] if reduction == "none" else loss
    if input.ndim > 2:
        classes = input.shape[1]
        rows = input.movedim(1, -1).reshape(-1, classes)
        flat = target.movedim(1, -1).reshape(-1, classes) if probabilities else target.reshape(-1)
        if not probabilities and target.shape[0] != input.shape[0]:
            raise ValueError(
                f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                f"({target.shape[0]}).")
        loss = cross_entropy(rows, flat, weight, None, ignore_index, None, reduction,
                             label_smoothing)
        if reduction != "none":
            return loss
        return loss.reshape(input.shape[0], *input.shape[2:])
    if input.ndim != 2:
        raise ValueError(f"Expected input of 1 or more dimensions, got {input.ndim}")
    classes = input.shape[1]
    logp = st.log_softmax(input, dim=-1)
    if target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0]}).")
    if probabilities:
        if target.shape != input.shape:
            raise RuntimeError(
                f"Expected target size {tuple(input.shape)}, got {tuple(target.shape)}")
        if label_smoothing > 0.0:
            target = target * (1.0 - label_smoothing) + label_smoothing / classes
        terms = logp * target
        if weight is not None:
            terms = terms * weight
        return _reduced(-terms.sum(dim=-1), reduction)
    if target.dtype != st.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    keep = target != ignore_index
    safe = st.where(keep, target, 0)
    picked = _drop_unit(logp.gather(1, safe.unsqueeze(1)), 1)
    if weight is None:
        loss = -picked
        smooth = -logp.mean(dim=-1)
        total = keep.sum()
    else:
        weights = st.where(keep, weight.gather(0, safe), 0.0)
        loss = -picked * weights
        smooth = -(logp * weight).sum(dim=-1) / classes
        total = weights.sum()
    if label_smoothing > 0.0:
        loss = (1.0 - label_smoothing) * loss + label_smoothing * smooth
    loss = st.where(keep, loss, 0.0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / total


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    """`softmax(q @ k^T * scale + mask) @ v`, with a causal mask when asked."""
    L, S = query.shape[-2], key.shape[-2]
    scale_factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale_factor
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
        causal = st.tril(st.ones(L, S, dtype=st.bool))
        scores = scores.masked_fill(~causal, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == st.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = st.softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value


def _pair(value, name):
    """An int or a pair of ints for the two dimensions of an image."""
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) == 1:
        return (value[0], value[0])
    if len(value) != 2 or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{name} must be an int or a pair of ints, got {value!r}")
    return value


def _batched(input, image_dims, name):
    """`input` with a batch dimension, and whether one was added (torch takes an unbatched
    image, `(C, H, W)`, as a batch of one)."""
    if input.ndim == image_dims + 2:
        return input, False
    if input.ndim == image_dims + 1:
        return input.unsqueeze(0), True
    raise RuntimeError(
        f"{name}: expected a {image_dims + 1}-D (unbatched) or {image_dims + 2}-D (batched) "
        f"input, but got input of size: {list(input.shape)}")


def _same_padding(weight, dilation, stride, spatial):
    """`padding='same'`: the total padding `dilation * (kernel - 1)` split evenly, any odd
    element on the right and bottom (through `pad`), as torch does."""
    if any(s != 1 for s in stride):
        raise ValueError("padding='same' is not supported for strided convolutions")
    kernel = weight.shape[-spatial:]
    totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
    even = tuple(t // 2 for t in totals)
    extra = []
    for t in reversed(totals):
        extra += [0, t % 2]
    return even, extra if any(extra) else None


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """A 2-D cross-correlation of a batch of images `(N, C, H, W)` with filters
    `(O, C / groups, kH, kW)`, as torch's."""
    x, added = _batched(input, 2, "conv2d")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            padding, extra = _same_padding(weight, dilation, stride, 2)
            if extra is not None:
                x = pad(x, extra)
        else:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of ('valid', 'same')")
    padding = _pair(padding, "padding")
    inputs = (x, weight) if bias is None else (x, weight, bias)
    out = st.call_op("conv2d", *inputs, stride=stride, padding=padding, dilation=dilation,
                     groups=groups)
    return _drop_unit(out, 0) if added else out


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transpose of conv2d (the gradient of a convolution with respect to its input) of
    `(N, C, H, W)` with filters `(C, O / groups, kH, kW)`: the input spread out by `stride`
    (zeros between its elements), bordered by `dilation * (k - 1) - padding` (and
    `output_padding` more after), then convolved with the filters mirrored and with their
    channels swapped."""
    x, added = _batched(input, 2, "conv_transpose2d")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    padding, output_padding = _pair(padding, "padding"), _pair(output_padding, "output_padding")
    if weight.ndim != 4:
        raise RuntimeError(f"conv_transpose2d: expected a 4-D weight, got weight of size "
                           f"{list(weight.shape)}")
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {weight.shape[0]} channels, but got {x.shape[1]} "
            f"channels instead")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError("output padding must be smaller than either stride or dilation, "
                               f"but got output_padding={list(output_padding)}, "
                               f"stride={list(stride)}, dilation={list(dilation)}")
    n, c, h, w = x.shape
    sh, sw = stride
    if sh > 1 or sw > 1:
        # Each element followed by `s - 1` zeros in each dimension, the last ones cut off.
        spread = pad(x[:, :, :, None, :, None], (0, sw - 1, 0, 0, 0, sh - 1))
        x = spread.reshape(n, c, h * sh, w * sw)[:, :, :(h - 1) * sh + 1, :(w - 1) * sw + 1]
    kh, kw = weight.shape[2], weight.shape[3]
    bh = dilation[0] * (kh - 1) - padding[0]
    bw = dilation[1] * (kw - 1) - padding[1]
    x = pad(x, (bw, bw + output_padding[1], bh, bh + output_padding[0]))
    c_in, c_out = weight.shape[0], weight.shape[1]
    filters = (weight.reshape(groups, c_in // groups, c_out, kh, kw).transpose(1, 2)
               .reshape(groups * c_out, c_in // groups, kh, kw).flip((2, 3)))
    out = conv2d(x, filters, bias, 1, 0, dilation, groups)
    return _drop_unit(out, 0) if added else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """conv_transpose2d of an image one row high."""
    x, added = _batched(input, 1, "conv_transpose1d")
    if weight.ndim != 3:
        raise RuntimeError(f"conv_transpose1d: expected a 3-D weight, got weight of size "
                           f"{list(weight.shape)}")
    out = conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), bias, _as_row(stride, "stride", 1),
                           _as_row(padding, "padding", 0),
                           _as_row(output_padding, "output_padding", 0), groups,
                           _as_row(dilation, "dilation", 1))
    out = _drop_unit(out, 2)
    return _drop_unit(out, 0) if added else out


def _as_row(value, name, fill):
    """A 1-D argument as the 2-D one of an image one row high."""
    if isinstance(value, str):
        return value
    (v,) = _pair(value, name)[:1]
    return (fill, v)


def _triple(value, name):
    if isinstance(value, int):
        return (value, value, value)
    value = tuple(value)
    if len(value) != 3:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of 3 values to "
                           f"match the convolution dimensions, but got {name}={list(value)}")
    return value


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """A 3-D cross-correlation of `(N, C, D, H, W)` with filters `(O, C / groups, kD, kH, kW)`:
    for each depth of the filters, the 2-D one of the input's slices it meets (as one batch),
    summed over the filters' depths."""
    x, added = _batched(input, 3, "conv3d")
    if weight.ndim != 5:
        raise RuntimeError(f"conv3d: expected a 5-D weight, got weight of size {list(weight.shape)}")
    stride, dilation = _triple(stride, "stride"), _triple(dilation, "dilation")
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"Invalid padding string {padding!r}, should be one of ('valid', 'same')")
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            totals = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
            x = pad(x, tuple(v for t in reversed(totals) for v in (t // 2, t - t // 2)))
        padding = (0, 0, 0)
    padding = _triple(padding, "padding")
    if padding[0]:
        x = pad(x, (0, 0, 0, 0, padding[0], padding[0]))
    n, c, depth = x.shape[0], x.shape[1], x.shape[2]
    kd, sd, dd = weight.shape[2], stride[0], dilation[0]
    out_depth = (depth - dd * (kd - 1) - 1) // sd + 1
    if out_depth < 1:
        raise RuntimeError(f"conv3d: the input's depth ({depth - 2 * padding[0]}, padded by {padding[0]}) "
                           f"is smaller than the kernel's ({kd}, dilation {dd})")
    out = None
    for k in range(kd):
        slices = x.index_select(2, st.arange(out_depth) * sd + k * dd)
        slices = slices.transpose(1, 2).reshape(n * out_depth, c, x.shape[3], x.shape[4])
        part = conv2d(slices, weight[:, :, k], None, stride[1:], padding[1:], dilation[1:], groups)
        out = part if out is None else out + part
    o = weight.shape[0]
    out = out.reshape(n, out_depth, o, out.shape[2], out.shape[3]).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, o, 1, 1, 1)
    return _drop_unit(out, 0) if added else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """A 1-D cross-correlation of `(N, C, L)` with filters `(O, C / groups, k)`: a 2-D one
    over an image one row high."""
    x, added = _batched(input, 1, "conv1d")
    if weight.ndim != 3:
        raise RuntimeError(f"conv1d: expected a 3-D weight, got weight of size {list(weight.shape)}")
    out = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, _as_row(stride, "stride", 1),
                 _as_row(padding, "padding", 0), _as_row(dilation, "dilation", 1), groups)
    out = _drop_unit(out, 2)
    return _drop_unit(out, 0) if added else out


def pad(input, pad, mode="constant", value=None):
    """A border around the last `len(pad) // 2` dimensions: `pad` holds (before, after)
    pairs from the last dimension backwards. `constant` fills it with `value`; `reflect`
    mirrors the input without its edge, `replicate` repeats the edge, `circular` wraps
    around."""
    pad = tuple(pad)
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length too large")
    if mode == "constant":
        if any(p < 0 for p in pad):
            input, pad = _cropped(input, pad)
        return st.call_op("pad", input, pads=pad, value=0.0 if value is None else float(value))
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"symtrace pads in mode constant, reflect, replicate or "
                                  f"circular, not {mode!r}")
    if value is not None and value != 0:
        raise ValueError(f"Padding mode \"{mode}\" doesn't take in value argument")
    # torch's combinations: the last 1, 2 or 3 dimensions of a (batched) tensor of them.
    if input.ndim not in (len(pad) // 2 + 1, len(pad) // 2 + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D "
                                  f"input tensor.")
    out = input
    for k in range(len(pad) // 2):
        dim = input.ndim - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        if before or after:
            out = out.index_select(dim, st.tensor(_border_indices(out.shape[dim], before, after,
                                                                  mode)))
    return out


def _cropped(input, pad):
    """A negative width of a constant pad crops: the input cropped, and the widths left."""
    for k in range(len(pad) // 2):
        dim = input.ndim - 1 - k
        start, end = max(-pad[2 * k], 0), max(-pad[2 * k + 1], 0)
        if start or end:
            n = input.shape[dim]
            if n - start - end < 0:
                raise RuntimeError(
                    f"The input size {n}, plus negative padding {-start} and {-end} resulted in "
                    f"a negative output size, which is invalid. Check dimension {dim} of your "
                    f"input.")
            input = input.narrow(dim, start, n - start - end)
    return input, tuple(max(p, 0) for p in pad)


def _border_indices(n, before, after, mode):
    """Which of `n` positions each position of the padded dimension copies (`n + before +
    after` of them; a negative amount crops)."""
    if mode == "reflect" and (before >= n or after >= n):
        raise RuntimeError(
            f"Argument #4: Padding size should be less than the corresponding input dimension, "
            f"but got: padding ({before}, {after}) at dimension of input {n}")
    if mode == "circular" and (before > n or after > n):
        raise RuntimeError("Padding value causes wrapping around more than once.")

    def source(i):
        if 0 <= i < n:
            return i
        if mode == "replicate":
            return 0 if i < 0 else n - 1
        if mode == "circular":
            return i % n
        return -i if i < 0 else 2 * (n - 1) - i

    return [source(i) for i in range(-before, n + after)]


def _pool_args(kernel_size, stride, padding):
    kernel = _pair(kernel_size, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _pair(stride, "stride")
    return kernel, stride, _pair(padding, "padding")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The largest value of each window of each channel (NaN wins; padding never does)."""
    if return_indices:
        raise NotImplementedError("symtrace's max_pool2d does not return indices")
    x, added = _batched(input, 2, "max_pool2d")
    kernel, stride, padding = _pool_args(kernel_size, stride, padding)
    out = st.call_op("max_pool2d", x, kernel_size=kernel, stride=stride, padding=padding,
                     dilation=_pair(dilation, "dilation"), ceil_mode=bool(ceil_mode))
    return _drop_unit(out, 0) if added else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each window of each channel; the padding counts in the divisor unless
    `count_include_pad=False`."""
    x, added = _batched(input, 2, "avg_pool2d")
    kernel, stride, padding = _pool_args(kernel_size, stride, padding)
    out = st.call_op("avg_pool2d", x, kernel_size=kernel, stride=stride, padding=padding,
                     ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad))
    if divisor_override is not None:
        out = out * (kernel[0] * kernel[1] / divisor_override)
    return _drop_unit(out, 0) if added else out


def adaptive_avg_pool2d(input, output_size):
    """The mean over `output_size` windows of each channel, torch's window bounds."""
    x, added = _batched(input, 2, "adaptive_avg_pool2d")
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size, output_size)
    size = tuple(x.shape[2 + d] if s is None else s for d, s in enumerate(output_size))
    out = st.call_op("adaptive_avg_pool2d", x, output_size=size)
    return _drop_unit(out, 0) if added else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The largest value of each of `output_size` windows of each channel (torch's window
    bounds: from `floor(i * H / out)` to `ceil((i + 1) * H / out)`)."""
    if return_indices:
        raise NotImplementedError("symtrace's adaptive_max_pool2d does not return indices")
    x, added = _batched(input, 2, "adaptive_max_pool2d")
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size, output_size)
    h, w = x.shape[2], x.shape[3]
    oh = h if output_size[0] is None else output_size[0]
    ow = w if output_size[1] is None else output_size[1]
    if h % oh == 0 and w % ow == 0:
        # Windows that tile the image: one reduction over a view.
        out = x.reshape(x.shape[0], x.shape[1], oh, h // oh, ow, w // ow).amax((3, 5))
    else:
        rows = []
        for i in range(oh):
            top, bottom = i * h // oh, -(-(i + 1) * h // oh)
            rows.append(st.stack([x[:, :, top:bottom, j * w // ow:-(-(j + 1) * w // ow)]
                                  .amax((2, 3)) for j in range(ow)], -1))
        out = st.stack(rows, -2)
    return _drop_unit(out, 0) if added else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if isinstance(output_size, (tuple, list)):
        output_size = output_size[0]
    return _drop_unit(adaptive_max_pool2d(input.unsqueeze(-2), (1, output_size), return_indices),
                      input.ndim - 1)


def _pool3d(pool2d, input, name, depth, plane):
    """A 3-D pooling as two 2-D ones, which it is: the pooling of each depth slice over
    `(H, W)` (`plane` arguments), then of each of its positions along the depth (`depth`
    arguments, as the second dimension of a `(1, D)` window). A window's maximum, sum and
    element count are a maximum, sum and product of its parts along the dimensions."""
    x, added = _batched(input, 3, name)
    n, c, d = x.shape[0], x.shape[1], x.shape[2]
    flat = pool2d(x.flatten(1, 2), **plane)
    h, w = flat.shape[2], flat.shape[3]
    lines = flat.reshape(n, c, d, h * w).transpose(2, 3)
    out = pool2d(lines, **depth)
    out = out.transpose(2, 3).reshape(n, c, out.shape[3], h, w)
    return _drop_unit(out, 0) if added else out


def _split3(kernel_size, stride, padding, dilation=1):
    kernel = _triple(kernel_size, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _triple(stride, "stride")
    padding, dilation = _triple(padding, "padding"), _triple(dilation, "dilation")
    plane = dict(kernel_size=kernel[1:], stride=stride[1:], padding=padding[1:])
    depth = dict(kernel_size=(1, kernel[0]), stride=(1, stride[0]), padding=(0, padding[0]))
    return kernel, plane, depth, dilation


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The largest value of each window of each channel of a volume."""
    if return_indices:
        raise NotImplementedError("symtrace's max_pool3d does not return indices")
    _, plane, depth, dilation = _split3(kernel_size, stride, padding, dilation)
    plane.update(dilation=dilation[1:], ceil_mode=ceil_mode)
    depth.update(dilation=(1, dilation[0]), ceil_mode=ceil_mode)
    return _pool3d(max_pool2d, input, "max_pool3d", depth, plane)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each window of each channel of a volume; the padding counts in the
    divisor unless `count_include_pad=False`."""
    kernel, plane, depth, _ = _split3(kernel_size, stride, padding)
    for part in (plane, depth):
        part.update(ceil_mode=ceil_mode, count_include_pad=count_include_pad)
    out = _pool3d(avg_pool2d, input, "avg_pool3d", depth, plane)
    if divisor_override is not None:
        out = out * (kernel[0] * kernel[1] * kernel[2] / divisor_override)
    return out


def _adaptive3d(pool2d, input, output_size, name):
    """An adaptive 3-D pooling as two 2-D ones (see `_pool3d`): torch's window bounds along
    each dimension are those of that dimension alone."""
    x, added = _batched(input, 3, name)
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * 3
    sizes = tuple(x.shape[2 + i] if s is None else s for i, s in enumerate(output_size))
    n, c, d = x.shape[0], x.shape[1], x.shape[2]
    flat = pool2d(x.flatten(1, 2), sizes[1:])
    h, w = flat.shape[2], flat.shape[3]
    lines = flat.reshape(n, c, d, h * w).transpose(2, 3)
    out = pool2d(lines, (h * w, sizes[0]))
    out = out.transpose(2, 3).reshape(n, c, sizes[0], h, w)
    return _drop_unit(out, 0) if added else out


def adaptive_avg_pool3d(input, output_size):
    """The mean over `output_size` windows of each channel of a volume (torch's bounds)."""
    return _adaptive3d(adaptive_avg_pool2d, input, output_size, "adaptive_avg_pool3d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """The largest value of each of `output_size` windows of each channel of a volume."""
    if return_indices:
        raise NotImplementedError("symtrace's adaptive_max_pool3d does not return indices")
    return _adaptive3d(adaptive_max_pool2d, input, output_size, "adaptive_max_pool3d")


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """A softmax of the logits plus Gumbel noise, at temperature `tau`; with `hard`, the
    one-hot of its largest entry (computed as torch computes it, `hard - soft + soft`)."""
    gumbels = -st.empty_like(logits).exponential_().log()
    soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    return st.zeros_like(logits).scatter(dim, index, 1.0) - soft + soft


def _pool1d(pool, name, input, kernel_size, stride, padding, **kw):
    """A 1-D pooling as the 2-D one of a row."""
    x, added = _batched(input, 1, name)
    k = _pair(kernel_size, "kernel_size")[0]
    s = k if stride is None else _pair(stride, "stride")[0]
    out = _drop_unit(pool(x.unsqueeze(2), (1, k), (1, s), (0, _pair(padding, "padding")[0]), **kw), 2)
    return _drop_unit(out, 0) if added else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _pool1d(max_pool2d, "max_pool1d", input, kernel_size, stride, padding,
                   dilation=(1, _pair(dilation, "dilation")[0]), ceil_mode=ceil_mode,
                   return_indices=return_indices)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return _pool1d(avg_pool2d, "avg_pool1d", input, kernel_size, stride, padding, ceil_mode=ceil_mode,
                   count_include_pad=count_include_pad)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _in_place(input, st.where(input > 0, input, input * negative_slope), inplace)


def elu(input, alpha=1.0, inplace=False):
    return _in_place(input, st.where(input > 0, input, (input.exp() - 1.0) * alpha), inplace)


def relu6(input, inplace=False):
    return _in_place(input, input.clamp(0.0, 6.0), inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _in_place(input, input.clamp(min_val, max_val), inplace)


def hardsigmoid(input, inplace=False):
    return _in_place(input, (input + 3.0).clamp(0.0, 6.0) / 6.0, inplace)


def hardswish(input, inplace=False):
    return _in_place(input, input * (input + 3.0).clamp(0.0, 6.0) / 6.0, inplace)


def mish(input, inplace=False):
    return _in_place(input, input * softplus(input).tanh(), inplace)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _in_place(input, elu(input, _SELU_ALPHA) * _SELU_SCALE, inplace)


def celu(input, alpha=1.0, inplace=False):
    return _in_place(input, st.where(input > 0, input, ((input / alpha).exp() - 1.0) * alpha), inplace)


def logsigmoid(input):
    """`log(sigmoid(x))`, as `min(x, 0) - log(1 + exp(-|x|))` (no overflow)."""
    return input.clamp(max=0.0) - ((-input.abs()).exp() + 1.0).log()


def softsign(input):
    return input / (input.abs() + 1.0)


def tanhshrink(input):
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    return _in_place(input, st.where(input > threshold, input, st.full_like(input, value)), inplace)


def threshold_(input, threshold, value):
    return _in_place(input, st.where(input > threshold, input, st.full_like(input, value)), True)


def glu(input, dim=-1):
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def prelu(input, weight):
    """`x` where it is positive, else `weight * x`: one weight, or one per channel (dim 1)."""
    if weight.numel() > 1:
        weight = weight.reshape((-1,) + (1,) * (input.ndim - 2))
    return st.where(input > 0, input, input * weight)


def softplus(input, beta=1.0, threshold=20.0):
    """`log(1 + exp(beta * x)) / beta`, linear where `beta * x > threshold`, as torch's."""
    scaled = input * beta
    return st.where(scaled > threshold, input, (scaled.exp() + 1.0).log() / beta)


def one_hot(tensor, num_classes=-1):
    """int64 rows of zeros with a one at each class of `tensor`."""
    if tensor.dtype != st.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1
    return (tensor.unsqueeze(-1) == st.arange(num_classes)).long()


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """The negative of the log-probabilities `input` (rows, classes) picks at `target`,
    weighed by `weight` per class; rows whose target is `ignore_index` do not count."""
    reduction = _reduction(size_average, reduce, reduction)
    keep = target != ignore_index
    safe = st.where(keep, target, 0)
    picked = _drop_unit(input.gather(1, safe.unsqueeze(1)), 1)
    if weight is None:
        loss = st.where(keep, -picked, 0.0)
        total = keep.sum()
    else:
        weights = st.where(keep, weight.gather(0, safe), 0.0)
        loss = st.where(keep, -picked * weights, 0.0)
        total = weights.sum()
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.sum() / total


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """`-(w_p * y * log(sigmoid(x)) + (1 - y) * log(1 - sigmoid(x)))`, computed stably as
    torch does: `(1 - y) * x + w * (log(1 + exp(-|x|)) + max(-x, 0))`, `w = 1 + (w_p - 1) * y`."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({tuple(target.shape)}) must be the same as input size "
            f"({tuple(input.shape)})")
    softplus_neg = (1.0 + (-input.abs()).exp()).log() + (-input).clamp(min=0.0)
    if pos_weight is None:
        loss = (1.0 - target) * input + softplus_neg
    else:
        log_weight = (pos_weight - 1.0) * target + 1.0
        loss = (1.0 - target) * input + log_weight * softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduced(loss, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    return _weighted((input - target).abs(), weight, input, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """`0.5 * d**2 / beta` where `|d| < beta`, `|d| - 0.5 * beta` elsewhere (`d` the error)."""
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0.0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0.0:
        return _reduced(d, reduction)
    loss = st.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduced(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """`0.5 * d**2` where `|d| < delta`, `delta * (|d| - 0.5 * delta)` elsewhere."""
    reduction = _reduction(None, None, reduction)
    if delta <= 0.0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = (input - target).abs()
    loss = st.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _weighted(loss, weight, input, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """The negative log-likelihood of `target` under normals of mean `input` and variance
    `var` (one per element, per row with a last dimension left out or of 1), the variance
    clamped to `eps` from below; with `full`, the constant `log(2π) / 2` too."""
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clamp(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduced(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """`input` where `target` is 1, `max(0, margin - input)` where it is -1 (both where it
    is neither, as torch adds them)."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = st.zeros_like(input)
    margin_part = st.where(target != 1, (margin - input).clamp(min=0), zeros)
    self_part = st.where(target != -1, input, zeros)
    return _reduced(margin_part + self_part, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Per sample, `max(0, margin - x[y] + x[j]) ** p` summed over the classes `j` other
    than its target `y` (each times `weight[y]`), over the number of classes."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    rows = input.reshape(1, -1) if input.ndim <= 1 else input
    picks = target.reshape(-1, 1)
    z = (margin - rows.gather(1, picks) + rows).clamp(min=0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[picks]
    z = z.masked_fill(st.arange(rows.shape[1]) == picks, 0.0)
    loss = z.sum(1) / rows.shape[1]
    if input.ndim <= 1:
        loss = loss.reshape(target.shape)
    return _reduced(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """The binary cross-entropy of each label's logit, averaged over the labels."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.ndim - 1) / input.shape[input.ndim - 1]
    return _reduced(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """`max(0, margin + d(a, p) - d(a, n))` for a distance of the caller's (the pairwise
    Euclidean one by default); with `swap`, `d(a, n)` is the smaller of it and `d(p, n)`."""
    distance = distance_function if distance_function is not None else pairwise_distance
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = st.minimum(d_neg, distance(positive, negative))
    return _reduced((margin + d_pos - d_neg).clamp(min=0), reduction)


def pdist(input, p=2):
    """The `p`-norm distance between every two rows of `input`, pairs `i < j` in order."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    i, j = st.triu_indices(input.shape[0], input.shape[0], 1)
    return (input[i] - input[j]).norm(p, dim=1)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """`target * (log(target) - input)` pointwise (0 where `target` is 0), `input` being
    log-probabilities; with `log_target`, `target` is too. `batchmean` divides the sum by
    the batch size (the mathematically right KL divergence)."""
    if reduction == "batchmean":
        if size_average is not None or reduce is not None:
            reduction = _reduction(size_average, reduce, "mean")
    else:
        reduction = _reduction(size_average, reduce, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # torch's xlogy(target, target): 0 where the target is 0.
        loss = st.where(target == 0.0, 0.0, target * target.log()) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim > 0 else loss.sum()
    return _reduced(loss, reduction)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize each group of `C / num_groups` channels of each sample over the group's
    channels and positions (biased variance); then scale and shift per channel."""
    n, c = input.shape[0], input.shape[1]
    if c % num_groups != 0:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {list(input.shape)} and num_groups={num_groups}")
    grouped = input.reshape(n, num_groups, -1)
    mean = grouped.mean(dim=-1, keepdim=True)
    var = grouped.var(dim=-1, unbiased=False, keepdim=True)
    out = ((grouped - mean) / st.sqrt(var + eps)).reshape(input.shape)
    return _channel_affine(out, weight, bias)


def _nearest_index(in_size, out_size, scale_factor):
    """The source row of each output row, as torch's nearest mode finds it: `floor(i *
    scale)` in float32, `scale` being `in / out` (or `1 / scale_factor` when given), at most
    the last row."""
    if out_size == in_size:
        return st.arange(out_size)
    scale = (1.0 / scale_factor) if scale_factor is not None else in_size / out_size
    # The float operand is converted to float32 first, as the tensor it multiplies.
    scaled = st.arange(out_size, dtype=st.float32) * scale
    # Non-negative: truncation is floor. The bound is an op's int attribute, so that a size
    # that changes from call to call stays one.
    return st.call_op("clamp", scaled.long(), max=in_size - 1)


def _linear_weights(in_size, out_size, scale_factor, align_corners, dtype):
    """For each output row, as torch's linear modes find them: the two source rows and the
    weight of the second, from the source coordinate (`i * (in - 1) / (out - 1)` with
    `align_corners`, else `(i + 0.5) * scale - 0.5`, at least 0; `scale` being `in / out`, or
    `1 / scale_factor` when given)."""
    if align_corners:
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        src = st.arange(out_size, dtype=dtype) * scale
    else:
        scale = (1.0 / scale_factor) if scale_factor is not None else in_size / out_size
        src = ((st.arange(out_size, dtype=dtype) + 0.5) * scale - 0.5).clamp(min=0.0)
    low = st.call_op("clamp", src.long(), max=in_size - 1)  # non-negative: truncation is floor
    high = st.call_op("clamp", low + 1, max=in_size - 1)
    return low, high, src - low.to(dtype)


def _grid_steps(theta, steps, align_corners):
    """torch's normalized coordinates of `steps` pixel centres (corners with align_corners)."""
    if steps <= 1:
        return st.zeros(1, dtype=theta.dtype)
    line = st.linspace(-1.0, 1.0, steps, dtype=theta.dtype)
    return line if align_corners else line * ((steps - 1) / steps)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) of the 2-D affine maps `theta` (N, 2, 3) for an output
    of `size` (N, C, H, W): each output pixel's normalized (x, y), mapped."""
    align_corners = bool(align_corners)
    if len(size) != 4:
        raise NotImplementedError("affine_grid only supports 4D sizes, for 2D affine transformations")
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {tuple(size)}. Got {tuple(theta.shape)}.")
    n, _, h, w = size
    xs = _grid_steps(theta, w, align_corners)
    ys = _grid_steps(theta, h, align_corners)
    base = st.stack([xs.expand(h, w), ys.unsqueeze(-1).expand(h, w), st.ones(h, w, dtype=theta.dtype)], -1)
    return (base.reshape(1, h * w, 3).expand(n, h * w, 3) @ theta.transpose(1, 2)).reshape(n, h, w, 2)


def _unnormalized(coord, size, align_corners, padding_mode):
    if align_corners:
        pixel = (coord + 1) / 2 * (size - 1)
    else:
        pixel = ((coord + 1) * size - 1) / 2
    if padding_mode == "border":
        pixel = pixel.clamp(0, size - 1)
    return pixel


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """`input` (N, C, H, W) sampled at the normalized (x, y) of `grid` (N, Ho, Wo, 2), by
    bilinear or nearest interpolation; points outside read 0 (`zeros`) or the nearest edge
    (`border`)."""
    align_corners = bool(align_corners)
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"grid_sample: mode {mode!r} is not supported (bilinear and nearest are)")
    if padding_mode not in ("zeros", "border"):
        raise NotImplementedError(f"grid_sample: padding_mode {padding_mode!r} is not supported (zeros and border are)")
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with last dimension 2, but got input of shape {tuple(input.shape)} and grid of shape {tuple(grid.shape)}")
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    ix = _unnormalized(grid[..., 0], w, align_corners, padding_mode).reshape(n, 1, ho * wo)
    iy = _unnormalized(grid[..., 1], h, align_corners, padding_mode).reshape(n, 1, ho * wo)
    flat = input.reshape(n, c, h * w)

    def corner(x, y):
        inside = (x >= 0) & (x <= w - 1) & (y >= 0) & (y <= h - 1)
        index = (y.clamp(0, h - 1) * w + x.clamp(0, w - 1)).long().expand(n, c, ho * wo)
        return flat.gather(2, index) * inside.to(input.dtype)

    if mode == "nearest":
        out = corner(ix.round(), iy.round())
    else:
        x0, y0 = ix.floor(), iy.floor()
        x1, y1 = x0 + 1, y0 + 1
        out = (corner(x0, y0) * ((x1 - ix) * (y1 - iy)) + corner(x1, y0) * ((ix - x0) * (y1 - iy))
               + corner(x0, y1) * ((x1 - ix) * (iy - y0)) + corner(x1, y1) * ((ix - x0) * (iy - y0)))
    return out.reshape(n, c, ho, wo)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the last one or two dimensions (`(N, C, L)` or `(N, C, H, W)`): by the nearest
    source element (`mode='nearest'`), or by linear interpolation between the two nearest
    (`'linear'` for `(N, C, L)`, `'bilinear'` for `(N, C, H, W)`, one dimension after the
    other), as torch does."""
    linear = {"linear": 1, "bilinear": 2}
    if mode != "nearest" and mode not in linear:
        raise NotImplementedError(f"symtrace interpolates in modes 'nearest', 'linear' and "
                                  f"'bilinear', not {mode!r}")
    if mode == "nearest" and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("symtrace's interpolate has no antialias")
    spatial = input.ndim - 2
    if mode in linear and spatial != linear[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{linear[mode] + 2}D input")
    if spatial not in (1, 2):
        raise NotImplementedError(f"symtrace interpolates 3-D and 4-D inputs, not {input.ndim}-D")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    in_sizes = tuple(input.shape[2:])
    if size is not None:
        out_sizes = (size,) * spatial if isinstance(size, int) else tuple(size)
        scales = (None,) * spatial
    else:
        scales = (scale_factor,) * spatial if not isinstance(scale_factor, (tuple, list)) \
            else tuple(scale_factor)
        # An integral factor scales exactly (`floor(n * 2.0)` is `n * 2`): as an int, a size
        # that changes from call to call stays one.
        out_sizes = tuple(n * int(f) if float(f).is_integer() else int(math.floor(n * f))
                          for n, f in zip(in_sizes, scales))
        if recompute_scale_factor:
            scales = (None,) * spatial
    out = input
    for d in range(spatial):
        dim = 2 + d
        if mode == "nearest":
            out = out.index_select(dim, _nearest_index(in_sizes[d], out_sizes[d], scales[d]))
            continue
        low, high, frac = _linear_weights(in_sizes[d], out_sizes[d], scales[d],
                                          bool(align_corners), out.dtype)
        frac = frac.reshape((out_sizes[d],) + (1,) * (out.ndim - 1 - dim))
        out = out.index_select(dim, low) * (1.0 - frac) + out.index_select(dim, high) * frac
    return out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Each element over `(k + alpha * mean of the squares of `size` neighbouring channels)
    ** beta`, the window zero-padded (`size // 2` channels before, `(size - 1) // 2` after),
    as torch computes it."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    padded = pad(input * input, (0, 0) * (dim - 2) + (size // 2, (size - 1) // 2))
    div = padded.narrow(1, 0, channels)
    for i in range(1, size):
        div = div + padded.narrow(1, i, channels)
    return input / ((div / size) * alpha + k) ** beta


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """`log(1 + exp(-y * x))`."""
    reduction = _reduction(size_average, reduce, reduction)
    return _reduced((-input * target).exp().log1p(), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """The negative log-likelihood of `target` under a Poisson of rate `input` (its log,
    with `log_input`); `full` adds Stirling's term where the target is above 1."""
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduced(loss, reduction)


def bilinear(input1, input2, weight, bias=None):
    """`y[..., o] = sum_ij x1[..., i] * W[o, i, j] * x2[..., j] + b[o]`."""
    out, n1, n2 = weight.shape
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, n1)
    x2 = input2.reshape(-1, n2)
    y = ((x1 @ weight.permute(1, 0, 2).reshape(n1, out * n2)).reshape(-1, out, n2) * x2[:, None, :]).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(tuple(lead) + (out,))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU whose slope is drawn from U(lower, upper) per element while training, their
    mean otherwise."""
    if training:
        slope = st.rand(*input.shape, dtype=input.dtype) * (upper - lower) + lower
        return _in_place(input, st.where(input >= 0, input, input * slope), inplace)
    return _in_place(input, st.where(input >= 0, input, input * ((lower + upper) / 2)), inplace)
