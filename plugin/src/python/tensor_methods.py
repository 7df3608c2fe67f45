"""Tensor methods and symtrace functions that torch has and that are compositions of the
registry's ops: written in Python, so that a traced frame simulates them like the user's
own code (each op lands in the graph). Set on `Tensor` and on `symtrace` when it is
imported; `_st` is the `symtrace` module, given by the loader (`tensor_methods.rs`)."""

_INF = float("inf")


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
    m = x.max(dim, keepdim=keepdim)
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
    "amax": lambda self, dim=None, keepdim=False: self.max() if dim is None else self.max(dim, keepdim=keepdim),
    "amin": lambda self, dim=None, keepdim=False: self.min() if dim is None else self.min(dim, keepdim=keepdim),
    "std": _std,
    "logsumexp": _logsumexp,
    "new_zeros": _new_zeros,
    "new_ones": _new_ones,
    "new_full": _new_full,
    "nelement": lambda self: self.numel(),
    # One device, the CPU: moving there changes nothing (torch returns the tensor itself).
    "cpu": lambda self: self,
    "int": lambda self: self.long(),
    "bool": lambda self: self.to(_st.bool),
}

# Functions only (torch has no method of these names).
MODULE_ONLY = {
    "is_tensor": lambda obj: isinstance(obj, _st.Tensor),
    "numel": lambda t: t.numel(),
    "full_like": lambda t, fill_value, dtype=None: _st.full(t.shape, fill_value, dtype=dtype or t.dtype),
}

FUNCTIONS = [
    "mm", "bmm", "square", "rsqrt", "reciprocal", "outer", "clamp_min", "clamp_max", "any",
    "all", "isnan", "isinf", "isfinite", "amax", "amin", "std", "logsumexp",
]
