"""Families built on the others: Chi2 (a Gamma), StudentT (a normal over the root of a Chi2),
Gumbel (uniform noise through two logarithms, as torch composes it), Geometric, Weibull and
Pareto (exponential noise transformed). Run after
`mixture.py`, in the same namespace."""

import math

_EULER = 0.57721566490153286060


class Chi2(Gamma):
    arg_constraints = {"df": positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(Distribution):
    arg_constraints = {"df": positive, "loc": real, "scale": positive}
    support = real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(tuple(self.df.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = tuple(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        return _expanded_from(self, new, batch_shape)

    @property
    def mean(self):
        return _st.where(self.df <= 1, _st.full_like(self.loc, math.nan), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        return _st.where(df > 2, finite, _st.where(df > 1, _st.full_like(df, math.inf),
                                                    _st.full_like(df, math.nan)))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * _st.rsqrt(z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + _st.lgamma(0.5 * self.df) - _st.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * _st.log1p(y**2.0 / self.df) - z

    def entropy(self):
        half = 0.5 * self.df
        lbeta = _st.lgamma(half) + math.lgamma(0.5) - _st.lgamma(half + 0.5)
        return (self.scale.log() + (half + 0.5) * (_st.digamma(half + 0.5) - _st.digamma(half))
                + 0.5 * self.df.log() + lbeta)


class Gumbel(TransformedDistribution):
    arg_constraints = {"loc": real, "scale": positive}
    support = real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = _st.finfo(self.loc.dtype)
        if isinstance(loc, _NUMBER) and isinstance(scale, _NUMBER):
            base = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base = Uniform(_st.full_like(self.loc, finfo.tiny), _st.full_like(self.loc, 1 - finfo.eps),
                           validate_args=validate_args)
        # -log(-log(U)) scaled: the Gumbel's quantile function applied to uniform noise.
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-_st.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return y - y.exp() - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * _EULER

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return math.pi / math.sqrt(6) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + _EULER)


class Geometric(_BinaryParametrized, Distribution):
    arg_constraints = {"probs": unit_interval, "logits": real}
    support = nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch = _set_binary_param(self, probs, logits)
        super().__init__(batch, validate_args=validate_args)
        if self._validate_args and probs is not None:
            valid = self.probs > 0
            if not valid.all():
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{self.probs[~valid]}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = tuple(batch_shape)
        _expanded_param(self, new, batch_shape)
        return _expanded_from(self, new, batch_shape)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return _st.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        # The number of failures before the first success: floor(log U / log(1 - p)).
        shape = self._extended_shape(sample_shape)
        tiny = _st.finfo(self.probs.dtype).tiny
        with _st.no_grad():
            u = _st.empty(shape, dtype=self.probs.dtype).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 at k = 0 is probability 1: 0 * log(0) taken as 0.
        probs = _st.where((probs == 1) & (value == 0), _st.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        bce = _st.nn.functional.binary_cross_entropy_with_logits
        return bce(self.logits, self.probs, reduction="none") / self.probs


class Weibull(TransformedDistribution):
    """Unit exponential noise raised to 1/concentration and scaled."""

    arg_constraints = {"scale": positive, "concentration": positive}
    support = positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(_st.ones_like(self.scale), validate_args=validate_args)
        super().__init__(base, self._transforms(), validate_args=validate_args)

    def _transforms(self):
        return [PowerTransform(exponent=self.concentration_reciprocal),
                AffineTransform(loc=0, scale=self.scale)]

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = tuple(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape), new._transforms(),
                                         validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * _st.exp(_st.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        c = self.concentration
        return self.scale * ((c - 1) / c) ** c.reciprocal()

    @property
    def variance(self):
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (_st.exp(_st.lgamma(1 + 2 * r)) - _st.exp(2 * _st.lgamma(1 + r)))

    def entropy(self):
        r = self.concentration_reciprocal
        return _EULER * (1 - r) + _st.log(self.scale * r) + 1


class Pareto(TransformedDistribution):
    """Exponential noise exponentiated and scaled."""

    arg_constraints = {"alpha": positive, "scale": positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.alpha = self.alpha.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
