"""symtrace.nn.functional: the functions behind the modules of symtrace.nn, written as
torch.nn.functional's are used (the same names, arguments, defaults and error messages), in
Python over symtrace's tensor ops, so that a traced frame simulates them like the user's own
code and records their ops into its graph."""
import math

import symtrace as st


def linear(input, weight, bias=None):
    """`input @ weight.T + bias`: weight is (out_features, in_features)."""
    return st.linear(input, weight, bias)


def embedding(input, weight, padding_idx=None):
    """The rows of `weight` that the int tensor `input` names."""
    if input.dtype != st.int64:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.dtype} instead"
        )
    return weight[input]


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


def relu(input):
    return st.relu(input)


def gelu(input, approximate="none"):
    """Exact GELU, `x * Phi(x)` with the error function, or its tanh approximation."""
    if approximate == "none":
        return input * 0.5 * (1.0 + st.erf(input * (1.0 / math.sqrt(2.0))))
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1.0 + st.tanh(inner))
    raise RuntimeError(f"approximate argument must be either none or tanh.")


def silu(input):
    """`x * sigmoid(x)` (swish)."""
    return input * st.sigmoid(input)


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


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """`input / max(norm_p(input, dim), eps)`."""
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps)


def mse_loss(input, target, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    d = input - target
    loss = d * d
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def softmax(input, dim):
    return st.softmax(input, dim=dim)


def log_softmax(input, dim):
    return st.log_softmax(input, dim=dim)


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


def cross_entropy(input, target, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """The negative log-likelihood of the classes in `target` (int64, one per row) under the
    logits `input` (rows, classes); rows whose target is `ignore_index` do not count."""
    if input.ndim != 2:
        raise ValueError(f"Expected input of 2 dimensions (rows, classes), got {input.ndim}")
    if target.dtype != st.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    if target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0]})."
        )
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    classes = input.shape[1]
    logp = st.log_softmax(input, dim=-1)
    keep = target != ignore_index
    safe = st.where(keep, target, 0)
    picked = logp.gather(1, safe.unsqueeze(1)).squeeze(1)
    loss = -picked
    if label_smoothing > 0.0:
        smooth = -logp.mean(dim=-1)
        loss = (1.0 - label_smoothing) * loss + label_smoothing * smooth
    loss = st.where(keep, loss, 0.0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / keep.sum()


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
