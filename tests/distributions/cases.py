"""torch.distributions' families, their densities, moments, entropies, KL divergences,
transforms and validation errors: `python3 cases.py torch` printed cases.expected with PyTorch
2.5.1 (tests/distributions.rs compares the fork's output, plain and under the plugin, with it).
Samples come from each library's own generator: of them only shapes, types and the support
are printed, and whether a large sample's mean is near the distribution's."""
import sys

if sys.argv[1:] == ["torch"]:
    import torch as st
    import torch.distributions as D
    from torch.distributions import constraints, transforms as T
else:
    import symtrace as st
    import symtrace.distributions as D
    from symtrace.distributions import constraints, transforms as T

f64 = st.float64


def t(*values):
    return st.tensor(values, dtype=f64)


def show(name, make, digits=10):
    """`name` and what `make()` gives (tensors as shape and rounded values), or the class of
    what it raises and its message up to the distribution's repr (whose shapes torch prints
    as `torch.Size`)."""
    try:
        value = make()
    except Exception as e:
        text = str(e).split("\n")[0].split(" of distribution")[0].split(" (Tensor of")[0].split(": ")[0]
        print(name, type(e).__name__, text)
        return
    print(name, rounded(value, digits))


def rounded(value, digits):
    if isinstance(value, (tuple, list)):
        return [rounded(v, digits) for v in value]
    if isinstance(value, st.Tensor):
        return (tuple(value.shape), str(value.dtype).split(".")[-1],
                [round(x, digits) if isinstance(x, float) else x for x in value.flatten().tolist()])
    return value


loc, scale = t(0.5, -1.0, 2.0), t(1.0, 0.5, 2.0)
x = t(0.3, 0.1, -1.0)
u = t(0.1, 0.5, 0.9)
families = {
    "normal": D.Normal(loc, scale),
    "normal scalar": D.Normal(0.0, t(2.0)),
    "laplace": D.Laplace(loc, scale),
    "cauchy": D.Cauchy(loc, scale),
    "uniform": D.Uniform(t(-1.0, 0.0, 1.0), t(1.0, 0.5, 3.0)),
    "exponential": D.Exponential(t(0.5, 1.0, 3.0)),
    "gamma": D.Gamma(t(0.5, 2.0, 7.5), t(1.0, 3.0, 0.25)),
    "beta": D.Beta(t(2.0, 0.5, 1.0), t(3.0, 0.5, 4.0)),
    "lognormal": D.LogNormal(loc, scale),
    "halfnormal": D.HalfNormal(scale),
    "chi2": D.Chi2(t(1.0, 3.0, 10.0)),
    "studentt": D.StudentT(t(0.5, 2.5, 30.0), loc, scale),
    "gumbel": D.Gumbel(loc, scale),
    "geometric": D.Geometric(probs=t(0.2, 0.5, 1.0)),
    "weibull": D.Weibull(scale, t(0.5, 1.5, 3.0)),
    "pareto": D.Pareto(t(0.1, 0.2, 0.5), t(0.5, 2.5, 4.0)),
}
for name, d in families.items():
    show(f"{name} shapes", lambda: (tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample))
    value = x.abs() / 1.5 if name in ("beta",) else x.abs() + 0.05 if name in ("exponential", "gamma", "lognormal", "halfnormal", "chi2", "weibull", "pareto") else t(0.0, 3.0, 1.0) if name == "geometric" else x
    show(f"{name} log_prob", lambda: d.log_prob(value))
    show(f"{name} mean", lambda: d.mean)
    show(f"{name} variance", lambda: d.variance)
    show(f"{name} stddev", lambda: d.stddev)
    show(f"{name} entropy", lambda: d.entropy())
    show(f"{name} mode", lambda: d.mode)
    show(f"{name} cdf", lambda: d.cdf(value))
    show(f"{name} icdf", lambda: d.icdf(u))
    show(f"{name} perplexity", lambda: d.perplexity())
    show(f"{name} support", lambda: repr(d.support) if name not in ("uniform", "pareto") else type(d.support).__name__)

logits = t(1.0, 2.0, 0.5, 0.1, 0.1, 3.0).reshape(2, 3)
probs = t(0.2, 0.3, 0.5, 0.0, 0.25, 0.75).reshape(2, 3)
discrete = {
    "categorical logits": D.Categorical(logits=logits),
    "categorical probs": D.Categorical(probs=probs * 2),
    "onehot": D.OneHotCategorical(logits=logits),
    "bernoulli probs": D.Bernoulli(probs=t(0.2, 0.5, 1.0)),
    "bernoulli logits": D.Bernoulli(logits=t(-1.0, 0.0, 4.0)),
    "poisson": D.Poisson(t(0.5, 4.0, 10.0)),
    "binomial": D.Binomial(t(5.0, 5.0, 5.0), probs=t(0.2, 0.5, 0.9)),
    "binomial logits": D.Binomial(10, logits=t(-1.0, 0.0, 30.0)),
    "multinomial": D.Multinomial(6, probs=t(0.2, 0.3, 0.5)),
    "negative binomial": D.NegativeBinomial(t(3.0, 0.5, 10.0), probs=t(0.2, 0.5, 0.9)),
}
values = {
    "categorical logits": st.tensor([2, 0]), "categorical probs": st.tensor([[0, 1], [2, 2]]),
    "onehot": t(0, 0, 1, 1, 0, 0).reshape(2, 3), "bernoulli probs": t(1, 0, 1),
    "bernoulli logits": t(0, 1, 1), "poisson": t(1, 3, 12), "binomial": t(0, 3, 5),
    "binomial logits": t(2, 10, 10), "multinomial": t(1, 2, 3, 0, 0, 6).reshape(2, 3),
    "negative binomial": t(0, 4, 30),
}
for name, d in discrete.items():
    show(f"{name} shapes", lambda: (tuple(d.batch_shape), tuple(d.event_shape)))
    show(f"{name} log_prob", lambda: d.log_prob(values[name]))
    # torch computes the multinomial's log(n!) in float32 (from an int tensor): 6 decimals.
    show(f"{name} entropy", lambda: d.entropy() if name not in ("poisson", "negative binomial") else None,
         6 if name == "multinomial" else 10)
    show(f"{name} mean", lambda: d.mean)
    show(f"{name} variance", lambda: d.variance)
    show(f"{name} mode", lambda: d.mode if name != "multinomial" else None)
    show(f"{name} probs", lambda: d.probs if name != "poisson" else d.rate)
    show(f"{name} logits", lambda: d.logits if name != "poisson" else None)
    show(f"{name} support", lambda: d.enumerate_support() if name not in ("poisson", "multinomial", "negative binomial") else None)
    show(f"{name} support unexpanded", lambda: d.enumerate_support(expand=False) if name not in ("poisson", "multinomial", "negative binomial") else None)

L = t(1.0, 0, 0, 0.5, 2.0, 0, 0.1, -0.3, 0.7).reshape(3, 3)
cov = L @ L.T
mvn = D.MultivariateNormal(loc, scale_tril=L)
mvn_cov = D.MultivariateNormal(loc, covariance_matrix=cov)
mvn_prec = D.MultivariateNormal(t(0, 0, 0), precision_matrix=st.linalg.inv(cov))
batch_x = st.arange(12, dtype=f64).reshape(4, 3) / 5 - 1
for name, d in (("mvn tril", mvn), ("mvn cov", mvn_cov), ("mvn precision", mvn_prec)):
    show(f"{name} log_prob", lambda: d.log_prob(batch_x))
    show(f"{name} entropy", lambda: d.entropy())
    show(f"{name} variance", lambda: d.variance)
    show(f"{name} scale_tril", lambda: d.scale_tril)
    show(f"{name} covariance", lambda: d.covariance_matrix)
    show(f"{name} precision", lambda: d.precision_matrix)
batched = D.MultivariateNormal(st.zeros(2, 3, dtype=f64), scale_tril=st.stack([L, L * 2]))
show("mvn batched log_prob", lambda: batched.log_prob(batch_x[:2]))
show("mvn batched shapes", lambda: (tuple(batched.batch_shape), tuple(batched.event_shape)))
dirichlet = D.Dirichlet(t(0.5, 2.0, 3.0, 0.2, 0.3, 0.4).reshape(2, 3))
show("dirichlet log_prob", lambda: dirichlet.log_prob(t(0.2, 0.3, 0.5, 0.1, 0.1, 0.8).reshape(2, 3)))
show("dirichlet moments", lambda: (dirichlet.mean, dirichlet.variance, dirichlet.mode, dirichlet.entropy()))

ind = D.Independent(D.Normal(loc.expand(2, 3), scale), 1)
show("independent shapes", lambda: (tuple(ind.batch_shape), tuple(ind.event_shape)))
show("independent log_prob", lambda: ind.log_prob(batch_x[:2]))
show("independent entropy", lambda: ind.entropy())
show("independent too many", lambda: D.Independent(D.Normal(loc, scale), 2))

tanh = D.TransformedDistribution(D.Normal(loc, scale), [T.TanhTransform(cache_size=1)])
show("tanh log_prob", lambda: tanh.log_prob(t(0.3, -0.2, 0.9)))
affine = D.TransformedDistribution(D.Normal(loc, scale), [T.AffineTransform(1.0, t(2.0, -1.0, 0.5)), T.ExpTransform()])
show("affine exp log_prob", lambda: affine.log_prob(t(0.3, 1.2, 2.5)))
show("affine exp cdf", lambda: affine.cdf(t(0.3, 1.2, 2.5)))
sig = D.TransformedDistribution(D.Uniform(t(0.0), t(1.0)), [T.SigmoidTransform().inv, T.AffineTransform(0.5, 2.0)])
show("logistic log_prob", lambda: sig.log_prob(t(0.3)))
show("logistic cdf", lambda: sig.cdf(t(0.3)))
comp = T.ComposeTransform([T.AffineTransform(0.0, 3.0), T.SoftplusTransform(), T.PowerTransform(t(2.0))])
show("composed forward", lambda: comp(x))
show("composed inverse", lambda: comp.inv(comp(x)))
show("composed jacobian", lambda: comp.log_abs_det_jacobian(x, comp(x)))
show("softmax transform", lambda: T.SoftmaxTransform()(logits))
show("sigmoid transform", lambda: (T.SigmoidTransform()(x), T.SigmoidTransform().log_abs_det_jacobian(x, None)))

pairs = [
    ("normal", D.Normal(loc, scale), D.Normal(t(0.0, 0.0, 1.0), t(1.0, 2.0, 0.5))),
    ("categorical", D.Categorical(logits=logits), D.Categorical(probs=probs)),
    ("categorical zero", D.Categorical(probs=probs), D.Categorical(logits=logits)),
    ("onehot", D.OneHotCategorical(logits=logits), D.OneHotCategorical(probs=probs + 0.1)),
    ("bernoulli", D.Bernoulli(probs=t(0.2, 0.0, 1.0, 0.5)), D.Bernoulli(probs=t(0.5, 0.3, 0.7, 1.0))),
    ("uniform", D.Uniform(t(0.0, 0.0), t(1.0, 2.0)), D.Uniform(t(-1.0, 0.5), t(2.0, 3.0))),
    ("exponential", D.Exponential(t(0.5, 2.0)), D.Exponential(t(1.5, 0.25))),
    ("laplace", D.Laplace(loc, scale), D.Laplace(x, scale * 2)),
    ("gamma", D.Gamma(t(0.5, 2.0), t(1.0, 3.0)), D.Gamma(t(1.5, 1.0), t(2.0, 0.5))),
    ("beta", D.Beta(t(2.0, 0.5), t(3.0, 0.5)), D.Beta(t(1.0, 2.0), t(1.0, 2.0))),
    ("dirichlet", dirichlet, D.Dirichlet(t(1.0, 1.0, 1.0))),
    ("poisson", D.Poisson(t(0.5, 4.0)), D.Poisson(t(1.0, 2.0))),
    ("binomial", D.Binomial(t(5.0, 5.0, 6.0), probs=t(0.2, 0.5, 0.5)), D.Binomial(t(5.0, 5.0, 5.0), probs=t(0.5, 0.1, 0.5))),
    ("mvn", mvn, D.MultivariateNormal(t(0.0, 1.0, 0.0), covariance_matrix=st.eye(3, dtype=f64) * 2)),
    ("independent", ind, D.Independent(D.Normal(st.zeros(2, 3, dtype=f64), scale * 3), 1)),
    ("transformed", D.LogNormal(loc, scale), D.LogNormal(x, scale * 2)),
    ("halfnormal", D.HalfNormal(scale), D.HalfNormal(scale * 3)),
    ("gumbel", D.Gumbel(loc, scale), D.Gumbel(x, scale * 2)),
    ("geometric", D.Geometric(probs=t(0.2, 0.5)), D.Geometric(logits=t(0.3, -1.0))),
]
for name, p, q in pairs:
    show(f"kl {name}", lambda: D.kl_divergence(p, q))


class Shifted(D.Normal):
    pass


@D.register_kl(Shifted, D.Normal)
def _kl_shifted(p, q):
    return (p.loc - q.loc).abs()


show("kl registered subclass", lambda: D.kl_divergence(Shifted(loc, scale), D.Normal(x, scale)))
show("kl inherited", lambda: D.kl_divergence(D.Normal(loc, scale), Shifted(x, scale)))

errors = {
    "binomial above count": lambda: D.Binomial(3, probs=t(0.5)).log_prob(t(4.0)),
    "multinomial too many": lambda: D.Multinomial(3, probs=t(0.5, 0.5)).log_prob(t(3.0, 2.0)),
    "binomial kl counts": lambda: D.kl_divergence(D.Binomial(t(2.0), probs=t(0.5)), D.Binomial(t(3.0), probs=t(0.5))),
    "normal negative scale": lambda: D.Normal(loc, -scale),
    "normal nan loc": lambda: D.Normal(t(float("nan")), t(1.0)),
    "uniform reversed": lambda: D.Uniform(t(1.0), t(0.0)),
    "categorical both": lambda: D.Categorical(probs=probs, logits=logits),
    "categorical scalar": lambda: D.Categorical(logits=t(1.0).reshape(())),
    "categorical negative": lambda: D.Categorical(probs=t(0.5, -0.1)),
    "bernoulli above one": lambda: D.Bernoulli(probs=t(0.2, 1.5)),
    "mvn not positive definite": lambda: D.MultivariateNormal(loc, covariance_matrix=-cov),
    "mvn two matrices": lambda: D.MultivariateNormal(loc, covariance_matrix=cov, scale_tril=L),
    "mvn not lower": lambda: D.MultivariateNormal(loc, scale_tril=L.T),
    "dirichlet zero": lambda: D.Dirichlet(t(1.0, 0.0)),
    "log_prob outside support": lambda: D.Exponential(t(1.0)).log_prob(t(-1.0)),
    "log_prob wrong event": lambda: mvn.log_prob(t(1.0, 2.0)),
    "log_prob not broadcastable": lambda: D.Normal(loc, scale).log_prob(t(1.0, 2.0)),
    "log_prob category out of range": lambda: D.Categorical(logits=logits).log_prob(st.tensor([3, 0])),
    "no kl": lambda: D.kl_divergence(D.Cauchy(loc, scale), D.Normal(loc, scale)),
    "validation off": lambda: D.Normal(loc, -scale, validate_args=False).log_prob(x),
}
for name, make in errors.items():
    show(name, make)

st.manual_seed(0)
draws = {
    "normal": (D.Normal(loc, scale), (2000,)),
    "laplace": (D.Laplace(loc, scale), (2000,)),
    "uniform": (D.Uniform(t(-1.0, 0.0), t(1.0, 0.5)), (2000,)),
    "exponential": (D.Exponential(t(0.5, 3.0)), (2000,)),
    "gamma": (D.Gamma(t(0.5, 2.0, 7.5), t(1.0, 3.0, 0.25)), (4000,)),
    "beta": (D.Beta(t(2.0, 0.5), t(3.0, 0.5)), (4000,)),
    "dirichlet": (dirichlet, (4000,)),
    "bernoulli": (D.Bernoulli(probs=t(0.2, 0.9)), (2000,)),
    "categorical": (D.Categorical(probs=probs), (4000,)),
    "onehot": (D.OneHotCategorical(probs=probs), (4000,)),
    "poisson": (D.Poisson(t(0.5, 4.0, 30.0)), (4000,)),
    "mvn": (mvn, (4000,)),
    "independent": (ind, (2000,)),
    "lognormal": (D.LogNormal(t(0.0, 0.5), t(0.25, 0.5)), (4000,)),
    "halfnormal": (D.HalfNormal(t(1.0, 2.0)), (4000,)),
    "chi2": (D.Chi2(t(1.0, 4.0)), (4000,)),
    "binomial": (D.Binomial(t(10.0, 200.0, 3000.0), probs=t(0.3, 0.95, 0.5)), (4000,)),
    "multinomial": (D.Multinomial(20, probs=t(0.2, 0.3, 0.5)), (4000,)),
    "negative binomial": (D.NegativeBinomial(t(3.0, 10.0), probs=t(0.2, 0.6)), (8000,)),
    "studentt": (D.StudentT(t(5.0, 30.0), t(1.0, -1.0), t(1.0, 2.0)), (8000,)),
    "gumbel": (D.Gumbel(t(0.0, 1.0), t(1.0, 0.5)), (4000,)),
    "weibull": (D.Weibull(t(1.0, 2.0), t(1.5, 3.0)), (4000,)),
    "pareto": (D.Pareto(t(1.0, 2.0), t(4.0, 6.0)), (8000,)),
    "geometric": (D.Geometric(probs=t(0.3, 0.8)), (4000,)),
}
for name, (d, shape) in draws.items():
    sample = d.sample(shape)
    mean = d.mean if name != "categorical" else (d.probs * st.arange(3, dtype=f64)).sum(-1)
    got = sample.to(f64).mean(0)
    close = bool(((got - mean).abs() <= 0.1 * (1 + mean.abs())).all())
    inside = bool(d.support.check(sample).all()) if name != "independent" else True
    print("sample", name, tuple(sample.shape), str(sample.dtype).split(".")[-1], "mean close:", close, "in support:", inside)
    if d.has_rsample:
        print("rsample", name, tuple(d.rsample((2, 1)).shape))
print("sample scalar", tuple(D.Normal(0.0, 1.0).sample().shape), tuple(D.Categorical(logits=logits).sample().shape))
print("sample expanded", tuple(D.Normal(loc, scale).expand((4, 3)).sample((2,)).shape),
      tuple(D.Categorical(logits=logits).expand((5, 2)).sample().shape))

mixture = D.MixtureSameFamily(D.Categorical(logits=t(0.2, -0.5, 1.0)), D.Normal(t(-2.0, 0.0, 3.0), t(0.5, 1.0, 2.0)))
show("mixture shapes", lambda: (tuple(mixture.batch_shape), tuple(mixture.event_shape)))
show("mixture log_prob", lambda: mixture.log_prob(t(-1.0, 0.5, 4.0)))
show("mixture moments", lambda: (mixture.mean, mixture.variance, mixture.cdf(t(-1.0, 0.5, 4.0))))
gmm = D.MixtureSameFamily(D.Categorical(probs=t(0.3, 0.7, 0.5, 0.5).reshape(2, 2)),
                          D.Independent(D.Normal(st.arange(8, dtype=f64).reshape(2, 2, 2) / 4, t(1.0, 0.5).expand(2, 2, 2)), 1))
show("gmm shapes", lambda: (tuple(gmm.batch_shape), tuple(gmm.event_shape)))
show("gmm log_prob", lambda: gmm.log_prob(t(0.1, 0.2, 1.0, 1.5).reshape(2, 2)))
show("gmm moments", lambda: (gmm.mean, gmm.variance))
show("gmm sample", lambda: (tuple(gmm.sample((4,)).shape), tuple(mixture.sample((3, 2)).shape)))
show("mixture mismatch", lambda: D.MixtureSameFamily(D.Categorical(logits=t(0.2, 0.1)), D.Normal(loc, scale)))

for d in [D.Normal(st.zeros(3), 1.0), D.Categorical(logits=st.zeros(2, 3)), D.MultivariateNormal(st.zeros(2), st.eye(2)),
          D.MixtureSameFamily(D.Categorical(logits=st.zeros(2)), D.Normal(st.zeros(2), 1.0)), D.Bernoulli(probs=st.tensor(0.3)),
          D.Geometric(probs=st.tensor(0.3)), D.Beta(2.0, 3.0), D.StudentT(3.0), D.Independent(D.Normal(st.zeros(3), 1.0), 1),
          D.Uniform(0.0, 1.0), D.OneHotCategorical(logits=st.zeros(3)), D.Poisson(st.tensor(2.0)), D.Dirichlet(st.ones(3)),
          D.LogNormal(0.0, 1.0), D.Gumbel(0.0, 1.0), D.Chi2(st.tensor(2.0)), D.Gamma(1.0, 1.0), D.Laplace(0.0, 1.0),
          D.Cauchy(0.0, 1.0), D.Exponential(1.0), D.HalfNormal(1.0), D.Binomial(4, probs=st.tensor(0.3)),
          D.Multinomial(5, probs=st.tensor([0.2, 0.8])), D.NegativeBinomial(2.0, probs=st.tensor(0.3)),
          D.Weibull(1.0, 2.0), D.Pareto(1.0, 3.0)]:
    e = d.expand((4,) + tuple(d.batch_shape))
    print("expand", type(e).__name__, tuple(e.batch_shape), tuple(e.event_shape), tuple(e.sample((2,)).shape), e._validate_args)
