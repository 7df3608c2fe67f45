"""`symtrace.distributions.Distribution`, the base of every distribution, and the helpers the
families share (torch's `torch.distributions.utils`). Run after `constraints.py`, in the same
namespace. Validation is on by default, as torch's (`__debug__`): a parameter or a value
outside its constraint raises ValueError. A traced frame checks it in the graph (the `if not
valid.all(): raise` is an asserted truth), so validation costs no graph break."""

import math
import warnings


# Python's numbers, as `numbers.Number` and `numbers.Real` would answer for them: a check
# of the ABCs goes through `ABCMeta.__instancecheck__`, which a traced call cannot follow.
_NUMBER = (int, float, complex)
_REAL = (int, float)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _size(shape):
    """A sample shape as a tuple: `()`, an int, a tuple, a list or a `Size`."""
    if isinstance(shape, int):
        return (shape,)
    return tuple(shape)


def broadcast_all(*values):
    """The values as tensors of one shape; numbers take the type of the first tensor (the
    default float type when there is none)."""
    if not all(isinstance(v, (_st.Tensor,) + _NUMBER) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    dtype = next((v.dtype for v in values if isinstance(v, _st.Tensor)), None)
    if dtype is None:
        dtype = _st.get_default_dtype()
    tensors = [v if isinstance(v, _st.Tensor) else _st.tensor(v, dtype=dtype) for v in values]
    return _st.broadcast_tensors(*tensors)


def _sum_rightmost(value, dim):
    """`value` summed over its rightmost `dim` dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def clamp_probs(probs):
    eps = _st.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return _st.sigmoid(logits)
    return _st.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    clamped = clamp_probs(probs)
    if is_binary:
        return _st.log(clamped) - _st.log1p(-clamped)
    return _st.log(clamped)


class lazy_property:
    """An attribute computed on first read and then kept in the instance (where a family was
    given `logits`, its `probs` are made from them when asked for, and the other way round)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _standard_normal(shape, dtype):
    return _st.randn(shape, dtype=dtype)


def _expanded_from(dist, new, batch_shape, event_shape=()):
    """`new`, made by `dist.expand`, given its shapes without validating again (what `dist`
    was given was validated), validating later values as `dist` does."""
    Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new


def _invalid_parameter(dist, param, value, constraint):
    return ValueError(
        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
        f"of distribution {dist!r} to satisfy the constraint {constraint!r}, "
        f"but found invalid values:\n{value}")


def _invalid_value(dist, value, support):
    return ValueError(
        f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
        f"within the support ({support!r}) of the distribution {dist!r}, "
        f"but found invalid values:\n{value}")


class Distribution:
    """A family of probability distributions, batched over `batch_shape`, each point of
    shape `event_shape`."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._validate_parameters()

    def _validate_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          "`arg_constraints = {}` or initialize the distribution with "
                          "`validate_args=False` to turn off validation.")
        for param, constraint in arg_constraints.items():
            if is_dependent(constraint):
                continue
            # A parameter made on demand from another one is as valid as that one.
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue
            value = getattr(self, param)
            valid = constraint.check(value)
            if not valid.all():
                raise _invalid_parameter(self, param, value, constraint)

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    @property
    def batch_shape(self):
        return _st.Size(self._batch_shape)

    @property
    def event_shape(self):
        return _st.Size(self._event_shape)

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        with _st.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning)
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return _st.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        return _st.Size(_size(sample_shape) + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        if not isinstance(value, _st.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = tuple(value.shape)
        event_start = len(shape) - len(self._event_shape)
        if shape[event_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{_st.Size(shape)} vs {_st.Size(self._event_shape)}.")
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{_st.Size(shape)} vs {_st.Size(expected)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.")
            return
        valid = support.check(value)
        if not valid.all():
            raise _invalid_value(self, value, support)

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return self.__class__.__name__ + "(" + shown + ")"


class ExponentialFamily(Distribution):
    """A family whose density is exp(<t(x), θ> - F(θ) + k(x)): its entropy follows from the
    log normalizer F (by its gradient, which symtrace, without autograd, leaves to each family
    to write out)."""
