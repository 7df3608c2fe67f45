"""The families whose points are vectors: Independent (a batch read as one event, as a
diagonal Gaussian policy is written), MultivariateNormal (by Cholesky factor) and Dirichlet.
Run after `discrete.py`, in the same namespace."""

import math


class Independent(Distribution):
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        base_batch = tuple(base_distribution.batch_shape)
        if reinterpreted_batch_ndims > len(base_batch):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {reinterpreted_batch_ndims} vs {len(base_batch)}")
        shape = base_batch + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        cut = len(shape) - event_dim
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = tuple(batch_shape)
        reinterpreted = self._event_shape[: self.reinterpreted_batch_ndims]
        new.base_dist = self.base_dist.expand(batch_shape + reinterpreted)
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        return _expanded_from(self, new, batch_shape, self._event_shape)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"


def _batch_mahalanobis(L, x):
    """The squared Mahalanobis distance of the vectors `x` under the covariance L Lᵀ, for
    factors and vectors whose batch shapes broadcast."""
    n = x.shape[-1]
    batch = _st.broadcast_shapes(tuple(L.shape[:-2]), tuple(x.shape[:-1]))
    L = L.expand(tuple(batch) + (n, n))
    x = x.expand(tuple(batch) + (n,)).unsqueeze(-1)
    return _st.linalg.solve_triangular(L, x, upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    # The Cholesky factor of P's flip, flipped back, is an upper factor U with P = U Uᵀ; the
    # covariance's lower factor is then U⁻ᵀ.
    Lf = _st.linalg.cholesky(_st.flip(P, (-2, -1)))
    L_inv = _st.transpose(_st.flip(Lf, (-2, -1)), -2, -1)
    eye = _st.eye(P.shape[-1], dtype=P.dtype)
    return _st.linalg.solve_triangular(L_inv, eye, upper=False)


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": real_vector, "covariance_matrix": positive_definite,
                       "precision_matrix": positive_definite, "scale_tril": lower_cholesky}
    support = real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril),
                                                ("covariance_matrix", covariance_matrix),
                                                ("precision_matrix", precision_matrix))
                            if m is not None)
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional "
                             "leading batch dimensions" if name == "scale_tril" else
                             f"{name} must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = tuple(_st.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, tuple(self.loc.shape[-1:]), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = scale_tril
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = _st.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        n = self._event_shape
        new.loc = self.loc.expand(batch_shape + n)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape + n + n))
        return _expanded_from(self, new, batch_shape, n)

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return _st.matmul(L, L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = _st.eye(L.shape[-1], dtype=L.dtype)
        L_inv = _st.linalg.solve_triangular(L, eye.expand(L.shape), upper=False)
        return _st.matmul(L_inv.transpose(-2, -1), L_inv).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        L = self._unbroadcasted_scale_tril
        return L.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, self.loc.dtype)
        return self.loc + _st.matmul(self._unbroadcasted_scale_tril, eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        n = self._event_shape[0]
        H = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": independent(positive, 1)}
    support = simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self._event_shape)
        return _expanded_from(self, new, batch_shape, self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        draws = _st._standard_gamma(self.concentration.expand(shape))
        tiny = _st.finfo(draws.dtype).tiny
        return (draws / draws.sum(-1, keepdim=True)).clamp(min=tiny, max=1 - _st.finfo(draws.dtype).eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return _st.xlogy(c - 1.0, value).sum(-1) + _st.lgamma(c.sum(-1)) - _st.lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        c = self.concentration
        above = (c - 1).clamp(min=0.0)
        mode = above / above.sum(-1, True)
        # Where every concentration is under 1 the density peaks at the corners; torch picks
        # the first (the argmax of its row of NaNs).
        first = _st.zeros(tuple(c.shape[:-1]), dtype=_st.long)
        corner = _st.nn.functional.one_hot(first, c.shape[-1]).to(mode.dtype)
        return _st.where((c < 1).all(-1, keepdim=True), corner, mode)

    @property
    def variance(self):
        c = self.concentration
        total = c.sum(-1, True)
        return c * (total - c) / (total.pow(2) * (total + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (_st.lgamma(c).sum(-1) - _st.lgamma(a0) - (k - a0) * _st.digamma(a0)
                - ((c - 1.0) * _st.digamma(c)).sum(-1))
