"""MixtureSameFamily: a Categorical choice among the components of one batched family (a
Gaussian mixture, a mixture density network's output). Run after `transforms.py`, in the
same namespace."""


class MixtureSameFamily(Distribution):
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "torch.distributions.Distribution")
        mixture_batch = tuple(mixture_distribution.batch_shape)
        component_batch = tuple(component_distribution.batch_shape)[:-1]
        for m, c in zip(reversed(mixture_batch), reversed(component_batch)):
            if m != 1 and c != 1 and m != c:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({_st.Size(mixture_batch)}) is not "
                    f"compatible with `component_distribution.batch_shape`"
                    f"({_st.Size(component_batch)})")
        km = mixture_distribution.logits.shape[-1]
        kc = tuple(component_distribution.batch_shape)[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = tuple(component_distribution.event_shape)
        self._event_ndims = len(event_shape)
        super().__init__(component_batch, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        return _expanded_from(self, new, batch_shape, tuple(new._component_distribution.event_shape))

    @dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _component_dim(self):
        return -1 - self._event_ndims

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(self._component_dim())

    @property
    def variance(self):
        # The law of total variance: the mean of the components' variances plus the
        # variance of their means.
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        components = self._component_distribution
        within = (probs * components.variance).sum(self._component_dim())
        between = (probs * (components.mean - self._pad(self.mean)).pow(2.0)).sum(self._component_dim())
        return within + between

    def cdf(self, x):
        cdf_x = self._component_distribution.cdf(self._pad(x))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_mix_prob = _st.log_softmax(self._mixture_distribution.logits, dim=-1)
        return _st.logsumexp(log_prob_x + log_mix_prob, dim=-1)

    def sample(self, sample_shape=()):
        sample_shape = _size(sample_shape)
        with _st.no_grad():
            gather_dim = len(sample_shape) + len(self._batch_shape)
            es = self._event_shape
            mix_sample = self._mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self._component_distribution.sample(sample_shape)
            # The chosen component's index, repeated over its event dimensions.
            index = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1))
            index = index.repeat((1,) * len(mix_shape) + (1,) + es)
            return _st.gather(comp_samples, gather_dim, index).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        batch_ndims = len(self._batch_shape)
        mixture_ndims = len(self._mixture_distribution.batch_shape)
        pad = 0 if mixture_ndims == 1 else batch_ndims - mixture_ndims
        shape = tuple(x.shape)
        return x.reshape(shape[:-1] + (1,) * pad + shape[-1:] + (1,) * self._event_ndims)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self._mixture_distribution},\n  {self._component_distribution})"
