"""Model code built on symtrace.distributions, compiled: each case prints whether the compiled
calls gave eager's values (the generator reseeded alike for both), and how many graphs and
breaks `symtrace.explain` finds (tests/distributions.rs compares with policies.expected)."""
import symtrace as st
import symtrace.nn as nn
from symtrace.distributions import (Categorical, Normal, Independent, TransformedDistribution,
                                    MultivariateNormal, Bernoulli, Gamma, Distribution,
                                    kl_divergence, constraints)
from symtrace.distributions.transforms import TanhTransform


def values(v):
    if isinstance(v, (tuple, list)):
        return [values(i) for i in v]
    return v.tolist() if isinstance(v, st.Tensor) else v


def case(name, make, calls):
    """`make()` builds the function afresh (same seed) for the eager and the compiled runs."""
    st.manual_seed(0)
    f = make()
    eager = [values(f(*args)) for args in calls]
    st.manual_seed(0)
    f = make()
    compiled = st.compile(f)
    traced = [values(compiled(*args)) for args in calls]
    e = st.explain(make(), *calls[-1])
    print(f"{name}: same={traced == eager} graphs={e.graph_count} breaks={e.graph_break_count}")


class Policy(nn.Module):
    """An actor-critic head, as PPO writes it."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 16)
        self.pi = nn.Linear(16, 3)
        self.v = nn.Linear(16, 1)

    def forward(self, obs, actions):
        h = st.tanh(self.body(obs))
        dist = Categorical(logits=self.pi(h))
        return dist.log_prob(actions), dist.entropy(), self.v(h).squeeze(-1)


def ppo():
    m = Policy()
    return lambda obs, actions: m(obs, actions)


obs = [st.randn(8, 4) for _ in range(3)]
acts = [st.tensor([0, 1, 2, 0, 1, 2, 0, 1]), st.tensor([2, 2, 1, 0, 0, 1, 2, 0]), st.tensor([1] * 8)]
case("ppo categorical", ppo, list(zip(obs, acts)))


def actor():
    m = Policy()

    def act(o):
        d = Categorical(logits=m.pi(st.tanh(m.body(o))))
        a = d.sample()
        return a, d.log_prob(a)
    return act


case("categorical sample", actor, [(o,) for o in obs])


def gaussian():
    mu = nn.Linear(4, 2)
    log_std = nn.Parameter(st.zeros(2))

    def f(o, a):
        d = Independent(Normal(mu(o), log_std.exp()), 1)
        return d.log_prob(a), d.entropy(), d.rsample()
    return f


case("diagonal gaussian", gaussian, [(o, st.randn(8, 2)) for o in obs])


def squashed():
    mu, log_std = nn.Linear(4, 2), nn.Linear(4, 2)

    def f(o):
        d = TransformedDistribution(Normal(mu(o), log_std(o).clamp(-5, 2).exp()), [TanhTransform(cache_size=1)])
        a = d.rsample()
        return a, d.log_prob(a).sum(-1)
    return f


case("tanh squashed gaussian", squashed, [(o,) for o in obs])


def vae():
    enc = nn.Linear(4, 4)

    def f(x):
        mu, logvar = enc(x).chunk(2, -1)
        q = Normal(mu, (0.5 * logvar).exp())
        z = q.rsample()
        return kl_divergence(q, Normal(st.zeros_like(mu), st.ones_like(mu))).sum(-1).mean(), z
    return f


case("vae kl", vae, [(o,) for o in obs])


def gaussian_process():
    L = st.tensor([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [0.1, -0.3, 0.7]])

    def f(loc, x):
        d = MultivariateNormal(loc, scale_tril=L)
        return d.log_prob(x), kl_divergence(d, MultivariateNormal(st.zeros_like(loc), covariance_matrix=L @ L.T))
    return f


case("multivariate normal", gaussian_process, [(st.randn(3), st.randn(5, 3)) for _ in range(2)])


def gamma_kl_first_traced():
    def f(c, r):
        return kl_divergence(Gamma(c, r), Gamma(r, c)), Gamma(c, r).cdf(r)
    return f


case("gamma kl and cdf", gamma_kl_first_traced, [(st.rand(4) + 0.5, st.rand(4) + 0.5) for _ in range(2)])


class Reflected(Distribution):
    """A user's own family: a Laplace at 0, with its parameter checked."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.real

    def __init__(self, scale, validate_args=None):
        self.scale = scale
        super().__init__(tuple(scale.shape), validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(value.abs() / self.scale) - (2 * self.scale).log()


case("user family", lambda: (lambda s, v: Reflected(s).log_prob(v)), [(st.rand(3) + 0.1, st.randn(3)) for _ in range(2)])


def validated(p):
    return Bernoulli(probs=p).log_prob(st.ones_like(p))


compiled = st.compile(validated)
print("valid probs:", compiled(st.tensor([0.25, 0.5])).tolist())
try:
    compiled(st.tensor([0.25, 1.5]))
except ValueError as e:
    print("invalid probs raise:", str(e).split(" (")[0])
print("valid again:", compiled(st.tensor([0.5, 0.5])).tolist(), "graphs:", st.explain(validated, st.tensor([0.5])).graph_count)

from symtrace.distributions import Exponential, Laplace


def exponential_kl(a, b):
    return kl_divergence(Exponential(a), Exponential(b))


traced_first = st.compile(exponential_kl)(st.tensor([0.5, 2.0]), st.tensor([1.5, 0.25])).tolist()
print("kl dispatched in a traced call first:", traced_first == exponential_kl(st.tensor([0.5, 2.0]), st.tensor([1.5, 0.25])).tolist())


def laplace_kl(a, b):
    return kl_divergence(Laplace(a, 1.0), Laplace(b, 2.0))


# The dispatch itself traced: the classes' __mro__ walked, the memo keyed by class written.
e = st.explain(laplace_kl, st.tensor([0.5, 2.0]), st.tensor([1.5, 0.25]))
print("kl dispatched first inside a graph:", e.graph_count, e.graph_break_count)
print("and the same values:", st.compile(laplace_kl)(st.tensor([0.5, 2.0]), st.tensor([1.5, 0.25])).tolist() ==
      laplace_kl(st.tensor([0.5, 2.0]), st.tensor([1.5, 0.25])).tolist())


def mixture_density():
    """A mixture density network's head and loss."""
    head = nn.Linear(3, 9)

    def f(x, y):
        logits, mu, log_sigma = head(x).chunk(3, -1)
        from symtrace.distributions import MixtureSameFamily
        mix = MixtureSameFamily(Categorical(logits=logits), Normal(mu, log_sigma.exp()))
        return -mix.log_prob(y).mean(), mix.mean
    return f


case("mixture density network", mixture_density, [(st.randn(5, 3), st.randn(5)) for _ in range(2)])


def draws():
    """Gamma, Dirichlet, Beta and Poisson samples: one draw op each, no loop to break on."""
    from symtrace.distributions import Dirichlet, Beta, Poisson

    def f(c):
        return (Gamma(c, 2.0).sample((3,)), Dirichlet(c).rsample(), Beta(c, c + 1).sample(),
                Poisson(c * 20).sample((2,)))
    return f


case("gamma, dirichlet, beta and poisson draws", draws, [(st.rand(4) + 0.3,) for _ in range(2)])


def heavy_tails():
    """A Student-t likelihood (robust regression) and Gumbel noise on logits."""
    from symtrace.distributions import StudentT, Gumbel
    lin = nn.Linear(3, 1)

    def f(x, y):
        pred = lin(x).squeeze(-1)
        noisy = pred + Gumbel(0.0, 1.0).sample(pred.shape)
        return -StudentT(4.0, pred, 0.5).log_prob(y).mean(), noisy.argmax()
    return f


case("student-t likelihood and gumbel noise", heavy_tails, [(st.randn(6, 3), st.randn(6)) for _ in range(2)])


def count_draws():
    """Binomial, Multinomial and NegativeBinomial samples and log-probabilities."""
    from symtrace.distributions import Binomial, Multinomial, NegativeBinomial

    def f(p):
        b = Binomial(st.full_like(p, 12.0), probs=p)
        m = Multinomial(10, probs=p / p.sum())
        nb = NegativeBinomial(st.full_like(p, 3.0), probs=p)
        kb, km = b.sample(), m.sample((2,))
        return kb, b.log_prob(kb), km, m.log_prob(km), nb.sample(), nb.log_prob(st.ones_like(p))
    return f


case("binomial, multinomial and negative binomial", count_draws, [(st.rand(4) * 0.8 + 0.1,) for _ in range(2)])
