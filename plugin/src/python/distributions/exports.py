"""What `symtrace.distributions` and its submodules (`constraints`, `transforms`, `kl`,
`utils`) hold: tables of the names the distribution sources defined, run last in their
namespace; the installer (`distributions.rs`) makes a module of each."""

DISTRIBUTIONS = {
    name: globals()[name]
    for name in (
        "Distribution", "ExponentialFamily", "Normal", "Uniform", "Exponential", "Laplace",
        "Cauchy", "Gamma", "Beta", "Bernoulli", "Categorical", "OneHotCategorical", "Poisson",
        "Independent", "MultivariateNormal", "Dirichlet", "TransformedDistribution",
        "LogNormal", "HalfNormal", "MixtureSameFamily", "Chi2", "StudentT", "Gumbel", "Geometric",
        "Binomial", "Multinomial", "NegativeBinomial", "Weibull", "Pareto",
        "kl_divergence", "register_kl",
    )
}
TRANSFORMS = {
    name: globals()[name]
    for name in (
        "Transform", "ComposeTransform", "ExpTransform", "PowerTransform", "SigmoidTransform",
        "SoftplusTransform", "TanhTransform", "AbsTransform", "AffineTransform",
        "SoftmaxTransform", "identity_transform",
    )
}
UTILS = {
    name: globals()[name]
    for name in ("broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs",
                 "lazy_property")
}
KL = {"kl_divergence": kl_divergence, "register_kl": register_kl}
