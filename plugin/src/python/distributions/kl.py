"""`kl_divergence(p, q)` and `register_kl`: the closed forms for pairs of families, chosen
by the most specific pair of classes registered (as torch's dispatch, with its warning when
two pairs are equally specific). Run after `counts.py`, in the same namespace."""

import math
import warnings

# By class of p, then class of q (a dict keyed by one class is what a traced call reads
# natively; one keyed by a pair of classes it cannot).
_KL_REGISTRY = {}
_KL_MEMO = {}


def register_kl(type_p, type_q):
    """Decorate a function `kl(p, q)` for `type_p` and `type_q` (and their subclasses)."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY.setdefault(type_p, {})[type_q] = fun
        _KL_MEMO.clear()
        return fun

    return decorator


def _dispatch_kl(type_p, type_q):
    """The function registered for the most specific pair of bases of the two classes; when
    the pair most specific in p and the one most specific in q differ, it warns (torch's
    rule) and takes the first."""
    matches = []
    for rank_p, base_p in enumerate(type_p.__mro__):
        inner = _KL_REGISTRY.get(base_p)
        if inner is None:
            continue
        for rank_q, base_q in enumerate(type_q.__mro__):
            if base_q in inner:
                matches.append((rank_p, rank_q, base_p, base_q))
    if not matches:
        return NotImplemented
    left = min(matches, key=lambda m: (m[0], m[1]))
    right = min(matches, key=lambda m: (m[1], m[0]))
    left_fun = _KL_REGISTRY[left[2]][left[3]]
    if left_fun is not _KL_REGISTRY[right[2]][right[3]]:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl("
            f"{right[2].__name__}, {right[3].__name__})", RuntimeWarning)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q), batched over the two distributions' batch shapes."""
    type_p, type_q = type(p), type(q)
    known = _KL_MEMO.get(type_p)
    fun = None if known is None else known.get(type_q)
    if fun is None:
        fun = _dispatch_kl(type_p, type_q)
        _KL_MEMO.setdefault(type_p, {})[type_q] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
            f"{q.__class__.__name__}")
    return fun(p, q)


def _infinite_where(mask, value):
    return _st.where(mask, _st.full_like(value, math.inf), value)


def _zero_where(mask, value):
    return _st.where(mask, _st.zeros_like(value), value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _infinite_where((q.probs == 0).expand_as(t), t)
    t = _zero_where((p.probs == 0).expand_as(t), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    softplus = _st.nn.functional.softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _zero_where(p.probs == 0, _infinite_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _zero_where(p.probs == 1, _infinite_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _infinite_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * _st.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * _st.log(p.rate / q.rate)
    t2 = _st.lgamma(q.concentration) - _st.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * _st.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p._event_shape != q._event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    p_L, q_L = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = q._half_log_det() - p._half_log_det()
    n = p._event_shape[0]
    batch = tuple(_st.broadcast_shapes(tuple(q_L.shape[:-2]), tuple(p_L.shape[:-2])))
    q_full = q_L.expand(batch + (n, n))
    p_full = p_L.expand(batch + (n, n))
    # tr(Σq⁻¹ Σp) is the squared Frobenius norm of Lq⁻¹ Lp.
    term2 = _st.linalg.solve_triangular(q_full, p_full, upper=False).pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(q_L, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * 0.57721566490153286060
    t3 = _st.exp(ct2 + _st.lgamma(1 + ct1) - ct3)
    return t1 + t2 + t3 - (1 + 0.57721566490153286060)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - _st.log1p(-q.probs) / p.probs - q.logits


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # More trials in p than q: outcomes q cannot give, an infinite divergence.
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    inf_idxs = p.total_count > q.total_count
    return _st.where(inf_idxs, _st.full_like(kl, math.inf), kl)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p._event_shape != q._event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)

