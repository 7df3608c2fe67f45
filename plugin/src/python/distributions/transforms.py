"""Transforms of random variables and the distributions they make: `Transform` (with torch's
one-entry cache, so that a sample squashed by tanh is inverted exactly), Exp, Affine, Tanh,
Sigmoid, Softplus, Abs, Power, Softmax and their compositions and inverses;
`TransformedDistribution`, and LogNormal and HalfNormal built on it (a SAC policy's squashed
Gaussian is one). Run after `multivariate.py`, in the same namespace."""

import math


class Transform:
    bijective = False
    domain = real
    codomain = real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inverse = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        if self._inverse is None:
            self._inverse = _InverseTransform(self)
        return self._inverse

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse_call(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse_call(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse_call(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__ + "()"

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        if self._inverse is None:
            self._inverse = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inverse._inverse = self
        return self._inverse

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _st.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total = 0
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            term = part.log_abs_det_jacobian(a, b)
            total = total + _sum_rightmost(term, event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class _Parameterless(Transform):
    """A transform without parameters: any two of one class are equal, as torch's are."""

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = object.__hash__


class ExpTransform(_Parameterless):
    domain = real
    codomain = positive
    bijective = True
    sign = +1

    def _call(self, x):
        return x.exp()

    def _inverse_call(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    domain = positive
    codomain = positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse_call(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return tuple(_st.broadcast_shapes(tuple(shape), tuple(self.exponent.shape)))

    inverse_shape = forward_shape


def _clipped_sigmoid(x):
    finfo = _st.finfo(x.dtype)
    return _st.clamp(_st.sigmoid(x), min=finfo.tiny, max=1.0 - finfo.eps)


class SigmoidTransform(_Parameterless):
    domain = real
    codomain = unit_interval
    bijective = True
    sign = +1

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse_call(self, y):
        finfo = _st.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        softplus = _st.nn.functional.softplus
        return -softplus(-x) - softplus(x)


class SoftplusTransform(_Parameterless):
    domain = real
    codomain = positive
    bijective = True
    sign = +1

    def _call(self, x):
        return _st.nn.functional.softplus(x)

    def _inverse_call(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -_st.nn.functional.softplus(-x)


class TanhTransform(_Parameterless):
    domain = real
    codomain = interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x):
        return x.tanh()

    def _inverse_call(self, y):
        # Not clamped, as torch's: a sample squashed here comes back from the cache instead.
        return _st.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)²) written without the cancellation near |x| large.
        return 2.0 * (math.log(2.0) - x - _st.nn.functional.softplus(-2.0 * x))


class AbsTransform(_Parameterless):
    domain = real
    codomain = positive

    def _call(self, x):
        return x.abs()

    def _inverse_call(self, y):
        return y


class AffineTransform(Transform):
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return real if self._event_dim == 0 else independent(real, self._event_dim)

    @property
    def codomain(self):
        return self.domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        same = True
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, _REAL) and isinstance(b, _REAL):
                same = same and a == b
            else:
                same = same and bool((a == b).all())
        return same

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, _REAL):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse_call(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        scale = self.scale
        if isinstance(scale, _REAL):
            result = _st.full_like(x, math.log(abs(scale)))
        else:
            result = _st.abs(scale).log()
        if self._event_dim:
            result = result.reshape(tuple(result.shape[: result.dim() - self._event_dim]) + (-1,)).sum(-1)
            shape = shape[: len(shape) - self._event_dim]
        return result.expand(shape)

    def _param_shapes(self):
        return [tuple(p.shape) for p in (self.loc, self.scale) if isinstance(p, _st.Tensor)]

    def forward_shape(self, shape):
        return tuple(_st.broadcast_shapes(tuple(shape), *self._param_shapes()))

    inverse_shape = forward_shape


class SoftmaxTransform(_Parameterless):
    domain = real_vector
    codomain = simplex

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse_call(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


class TransformedDistribution(Distribution):
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {_st.Size(base_shape)}.")
        forward_shape = tuple(transform.forward_shape(base_shape))
        expanded_base_shape = tuple(transform.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:
            cut = len(expanded_base_shape) - base_event_dim
            base_distribution = base_distribution.expand(expanded_base_shape[:cut])
        reinterpreted = transform.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = tuple(batch_shape)
        shape = batch_shape + self._event_shape
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        base_batch = shape[: len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        return _expanded_from(self, new, batch_shape, self._event_shape)

    @dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self._event_shape) > support.event_dim:
            support = independent(support, len(self._event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        with _st.no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self._event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            jacobian = transform.log_abs_det_jacobian(x, y)
            log_prob = log_prob - _sum_rightmost(jacobian, event_dim - transform.domain.event_dim)
            y = x
        base = self.base_dist.log_prob(y)
        return log_prob + _sum_rightmost(base, event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value


class LogNormal(TransformedDistribution):
    arg_constraints = {"loc": real, "scale": positive}
    support = positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class HalfNormal(TransformedDistribution):
    arg_constraints = {"scale": positive}
    support = nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base = Normal(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return _st.zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return _st.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
