"""The families of counts of trials: Binomial, Multinomial and NegativeBinomial (a Poisson
whose rate is Gamma-distributed). Run after `more_families.py`, in the same namespace."""

import math


def _clamp_by_zero(x):
    # max(x, 0), with the gradient torch gives it at 0 (a half).
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _set_count_param(dist, total_count, probs, logits):
    """`dist.total_count` beside `dist.probs` or `dist.logits` (whichever was given), one
    shape and type; the batch shape."""
    _either(probs, logits)
    name, given = ("probs", probs) if probs is not None else ("logits", logits)
    count, param = broadcast_all(total_count, given)
    dist.total_count = count.type_as(param)
    setattr(dist, name, param)
    dist._param = param
    return tuple(param.shape)


def _expanded_count(dist, cls, batch_shape, _instance):
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = tuple(batch_shape)
    new.total_count = dist.total_count.expand(batch_shape)
    _expanded_param(dist, new, batch_shape)
    return _expanded_from(dist, new, batch_shape)


class Binomial(_BinaryParametrized, Distribution):
    arg_constraints = {"total_count": nonnegative_integer, "probs": unit_interval,
                       "logits": real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        batch = _set_count_param(self, total_count, probs, logits)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded_count(self, Binomial, batch_shape, _instance)

    @dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _st.no_grad():
            return _st.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = _st.lgamma(n + 1)
        log_factorial_k = _st.lgamma(value + 1)
        log_factorial_nmk = _st.lgamma(n - value + 1)
        # n log(1 + e^logits), written without overflow for large logits.
        normalizer = n * _clamp_by_zero(logits) + n * _st.log1p(_st.exp(-_st.abs(logits))) - log_factorial_n
        return value * logits - log_factorial_k - log_factorial_nmk - normalizer

    def _homogeneous_count(self, what):
        total = int(self.total_count.max())
        if not self.total_count.min() == total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(_st.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = self._homogeneous_count("enumerate_support")
        values = _st.arange(1 + total, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values


class Multinomial(Distribution):
    arg_constraints = {"probs": simplex, "logits": real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical._batch_shape, tuple(self._categorical.param_shape)[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        return _expanded_from(self, new, tuple(batch_shape), self._event_shape)

    @dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        sample_shape = _size(sample_shape)
        draws = self._categorical.sample((self.total_count,) + sample_shape)
        # The draws' own dimension last, then counted per category.
        order = list(range(draws.dim()))
        order.append(order.pop(0))
        draws = draws.permute(*order)
        counts = _st.zeros(self._extended_shape(sample_shape), dtype=draws.dtype)
        return counts.scatter_add(-1, draws, _st.ones_like(draws)).to(self.probs.dtype)

    def entropy(self):
        n = _st.tensor(self.total_count, dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - _st.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = _st.exp(self._binomial.log_prob(support))
        term2 = (binomial_probs * _st.lgamma(support + 1)).sum((0, -1))
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = _st.lgamma(value.sum(-1) + 1)
        log_factorial_xs = _st.lgamma(value + 1).sum(-1)
        # A category of probability 0 drawn 0 times adds nothing (not 0 * -inf).
        logits = _st.where((value == 0) & (logits == -math.inf), _st.zeros_like(logits), logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)


class NegativeBinomial(_BinaryParametrized, Distribution):
    arg_constraints = {"total_count": greater_than_eq(0), "probs": half_open_interval(0.0, 1.0),
                       "logits": real}
    support = nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        batch = _set_count_param(self, total_count, probs, logits)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded_count(self, NegativeBinomial, batch_shape, _instance)

    @property
    def mean(self):
        return self.total_count * _st.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / _st.sigmoid(-self.logits)

    def sample(self, sample_shape=()):
        with _st.no_grad():
            rate = Gamma(self.total_count, _st.exp(-self.logits), validate_args=False).sample(sample_shape)
            return _st.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = _st.nn.functional.logsigmoid
        unnormalized = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        normalization = (-_st.lgamma(self.total_count + value) + _st.lgamma(1.0 + value)
                         + _st.lgamma(self.total_count))
        normalization = normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return unnormalized - normalization
