"""The univariate continuous families: Normal, Uniform, Exponential, Laplace, Cauchy, Gamma
and Beta, with torch's parameters, constraints, moments, densities and reparameterized
samples (drawn from symtrace's generator, so not torch's numbers). Run after
`distribution.py`, in the same namespace."""

import math


def _scalar_batch(values, tensor):
    """A family's batch shape: none when every parameter was a Python number."""
    return () if all(isinstance(v, _NUMBER) for v in values) else tuple(tensor.shape)


def _expanded(dist, cls, batch_shape, _instance, names):
    """A copy of `dist` whose parameters `names` are expanded to `batch_shape`."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = tuple(batch_shape)
    for name in names:
        setattr(new, name, getattr(dist, name).expand(batch_shape))
    return _expanded_from(dist, new, batch_shape, dist._event_shape)


class Normal(ExponentialFamily):
    arg_constraints = {"loc": real, "scale": positive}
    support = real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_scalar_batch((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _st.no_grad():
            return _st.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = math.log(self.scale) if isinstance(self.scale, _REAL) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + _st.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * _st.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + _st.log(self.scale)


class Uniform(Distribution):
    arg_constraints = {"low": dependent(is_discrete=False, event_dim=0),
                       "high": dependent(is_discrete=False, event_dim=0)}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(_scalar_batch((low, high), self.low), validate_args=validate_args)
        if self._validate_args:
            if not _st.lt(self.low, self.high).all():
                raise ValueError("Uniform is not defined when low>= high")

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Uniform, batch_shape, _instance, ("low", "high"))

    @dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = _st.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return _st.log(lb.mul(ub)) - _st.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return _st.log(self.high - self.low)


class Exponential(ExponentialFamily):
    arg_constraints = {"rate": positive}
    support = nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(_scalar_batch((rate,), self.rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return _st.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _st.empty(shape, dtype=self.rate.dtype).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - _st.exp(-self.rate * value)

    def icdf(self, value):
        return -_st.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - _st.log(self.rate)


class Laplace(Distribution):
    arg_constraints = {"loc": real, "scale": positive}
    support = real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_scalar_batch((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _st.finfo(self.loc.dtype).eps
        # Uniform on (-1, 1) without its ends, so that the logarithm stays finite.
        u = _st.empty(shape, dtype=self.loc.dtype).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * _st.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -_st.log(2 * self.scale) - _st.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * _st.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * _st.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + _st.log(2 * self.scale)


class Cauchy(Distribution):
    arg_constraints = {"loc": real, "scale": positive}
    support = real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_scalar_batch((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return _st.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return _st.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = _st.rand(shape, dtype=self.loc.dtype)
        return self.loc + _st.tan(math.pi * (u - 0.5)) * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _st.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return _st.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": positive, "rate": positive}
    support = nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch = _scalar_batch((concentration, rate), self.concentration)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = _st._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=_st.finfo(value.dtype).tiny)

    def log_prob(self, value):
        value = _st.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (_st.xlogy(self.concentration, self.rate) + _st.xlogy(self.concentration - 1, value)
                - self.rate * value - _st.lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _st.igamma(self.concentration, self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - _st.log(self.rate) + _st.lgamma(c) + (1.0 - c) * _st.digamma(c)


class Beta(ExponentialFamily):
    arg_constraints = {"concentration1": positive, "concentration0": positive}
    support = unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, _REAL) and isinstance(concentration0, _REAL):
            both = _st.tensor([float(concentration1), float(concentration0)])
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            both = _st.stack([c1, c0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        return _expanded_from(self, new, batch_shape)

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = _st.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()
