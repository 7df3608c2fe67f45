"""Compute reference.json with NumPy on CPython:  python3 tests/tensor/make_reference.py
(needs numpy; the file is committed, the tests do not run this)."""
import os
import sys
import types
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from harness import run  # noqa: E402

warnings.simplefilter("ignore")
np.seterr(all="ignore")


def T(data, dtype):
    return np.array(data, dtype=dtype)


def softmax(x, dim):
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def log_softmax(x, dim):
    m = np.max(x, axis=dim, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True))


def dot(a, b):
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError("dot needs two 1-D tensors of the same length")
    return np.dot(a, b)


def reduction(fn):
    def reduce(x, dim=None, keepdim=False):
        return fn(x, axis=dim, keepdims=keepdim)
    return reduce


def sqrt(x):
    return np.sqrt(x) if x.dtype != np.int64 else np.sqrt(x.astype(np.float64))


def rsqrt(x):
    return 1 / sqrt(x)


F = types.SimpleNamespace(
    exp=np.exp, log=np.log, sqrt=sqrt, tanh=np.tanh, sin=np.sin, cos=np.cos,
    sigmoid=lambda x: 1 / (1 + np.exp(-x)),
    relu=lambda x: np.maximum(x, 0).astype(x.dtype),
    clamp=lambda x, lo, hi: np.clip(x, lo, hi),
    maximum=np.maximum, minimum=np.minimum, where=np.where,
    sum=reduction(np.sum), mean=reduction(np.mean), max=reduction(np.max), min=reduction(np.min),
    argmax=lambda x, dim=None: np.argmax(x, axis=dim),
    argmin=lambda x, dim=None: np.argmin(x, axis=dim),
    softmax=softmax, log_softmax=log_softmax, matmul=np.matmul, dot=dot,
    cat=lambda seq, dim: np.concatenate(seq, axis=dim),
    stack=lambda seq, dim: np.stack(seq, axis=dim),
    copy=lambda x: x.copy(),
    rsqrt=rsqrt,
    full_like=lambda x, v: np.full_like(x, v),
    einsum=np.einsum,
)


class Array(np.ndarray):
    """ndarray with the handful of torch-style methods the cases use."""

    def reshape(self, *shape):
        return np.ndarray.reshape(self, *shape)

    def transpose(self, d0, d1):
        return np.swapaxes(self, d0, d1)

    def permute(self, *dims):
        return np.transpose(self, dims)

    def unsqueeze(self, dim):
        return np.expand_dims(self, dim)

    def expand(self, *sizes):
        if len(sizes) < self.ndim:
            raise ValueError("fewer sizes than dimensions")
        lead = len(sizes) - self.ndim
        shape = [s if s != -1 else self.shape[k - lead] for k, s in enumerate(sizes)]
        return np.broadcast_to(self, shape).copy().view(Array)

    def expand_as(self, other):
        return self.expand(*other.shape)

    def repeat(self, *reps):
        return np.tile(np.asarray(self), reps).view(Array)

    def unbind(self, dim=0):
        return tuple(a.view(Array) for a in np.moveaxis(np.asarray(self), dim, 0))

    def view_as(self, other):
        return self.reshape(*other.shape)

    def type_as(self, other):
        return self.astype(other.dtype).view(Array)

    def add(self, o):
        return self + o

    def sub(self, o):
        return self - o

    def mul(self, o):
        return self * o

    def div(self, o):
        return self / o

    def pow(self, o):
        return self ** o

    def neg(self):
        return -self

    def gt(self, o):
        return self > o

    def le(self, o):
        return self <= o

    def ne(self, o):
        return self != o

    def t(self):
        if self.ndim > 2:
            raise RuntimeError("t() expects a tensor with <= 2 dimensions")
        return self.T

    def mm(self, other):
        if self.ndim != 2 or other.ndim != 2:
            raise RuntimeError("mm: expected two 2-D tensors")
        return np.matmul(self, other)

    def bmm(self, other):
        return np.matmul(self, other)

    def square(self):
        return self * self

    def rsqrt(self):
        return rsqrt(self)

    def reciprocal(self):
        return 1 / self

    def outer(self, other):
        return np.outer(self, other).view(Array)

    def clamp_min(self, lo):
        return np.maximum(self, lo).astype(self.dtype)

    def clamp_max(self, hi):
        return np.minimum(self, hi).astype(self.dtype)

    def any(self, dim=None, keepdim=False):
        return np.any(np.asarray(self), axis=dim, keepdims=keepdim)

    def all(self, dim=None, keepdim=False):
        return np.all(np.asarray(self), axis=dim, keepdims=keepdim)

    def isnan(self):
        return np.isnan(self)

    def isinf(self):
        return np.isinf(self)

    def isfinite(self):
        return np.isfinite(self)

    def amax(self, dim=None, keepdim=False):
        return np.max(np.asarray(self), axis=dim, keepdims=keepdim)

    def amin(self, dim=None, keepdim=False):
        return np.min(np.asarray(self), axis=dim, keepdims=keepdim)

    def std(self, dim=None):
        return np.std(np.asarray(self), axis=dim, ddof=1)

    def logsumexp(self, dim, keepdim=False):
        x = np.asarray(self)
        m = np.max(x, axis=dim, keepdims=True)
        m = np.where(np.isinf(m), 0.0, m)
        r = np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True)) + m
        return r if keepdim else np.squeeze(r, dim)

    def int(self):
        return self.astype(np.int64)

    def bool(self):
        return self.astype(np.bool_)

    def new_zeros(self, *size):
        return np.zeros(size, dtype=self.dtype)

    def new_ones(self, size):
        return np.ones(size, dtype=self.dtype)

    def new_full(self, size, value):
        return np.full(size, value, dtype=self.dtype)

    def squeeze(self, dim=None):
        if dim is not None and self.shape[dim] != 1:
            return self
        return np.ndarray.squeeze(self, dim)

    def __sub__(self, other):
        if self.dtype == np.bool_ and np.asarray(other).dtype == np.bool_:
            raise TypeError("boolean subtract")
        return np.ndarray.__sub__(self, other)

    def __pow__(self, other):
        if self.dtype == np.int64 and np.any(np.asarray(other) < 0):
            raise ValueError("Integers to negative integer powers are not allowed.")
        return np.ndarray.__pow__(self, other)


def T_arr(data, dtype):
    return np.array(data, dtype=dtype).view(Array)


def to_result(x):
    x = np.asarray(x)
    return list(x.shape), str(x.dtype), x.ravel().tolist()


run(T_arr, F, to_result, os.path.join(os.path.dirname(__file__), "reference.json"))
print("wrote reference.json")
