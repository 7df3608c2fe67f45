"""symtrace.nn.utils: torch.nn.utils' helpers that need no gradients: `parameters_to_vector`,
`vector_to_parameters`, the weight reparametrizations `weight_norm` and `spectral_norm` (and
their removal), and `rnn` (`pad_sequence`)."""
import symtrace as st


def parameters_to_vector(parameters):
    """The parameters, flattened, one after another."""
    return st.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Each parameter's data set from its stretch of `vec`, in order."""
    if not isinstance(vec, st.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p)
        offset += n


def _norm_except_dim(v, dim):
    """torch's `norm_except_dim(v, 2, dim)`: the 2-norm of each slice of `v` along `dim`,
    shaped to broadcast against `v`; `dim=-1` the norm of the whole tensor."""
    if dim == -1:
        return v.norm()
    keep = [1] * v.ndim
    keep[dim] = v.shape[dim]
    rows = v.movedim(dim, 0).reshape(v.shape[dim], -1)
    return rows.norm(dim=1).reshape(keep)


class WeightNorm:
    """The forward pre-hook of `weight_norm`: `name` recomputed as `g * v / ||v||` from the
    parameters `name_g` and `name_v` before each call."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """torch's `nn.utils.weight_norm`: `module.name` split into a magnitude `name_g` and a
    direction `name_v`, parameters both, and recomputed from them before each call."""
    for _, hook, _ in module._forward_pre_hooks:
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    fn = WeightNorm(name, dim)
    weight = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(name + "_g", st.nn.Parameter(_norm_except_dim(weight, fn.dim)))
    module.register_parameter(name + "_v", st.nn.Parameter(weight))
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module, name="weight"):
    """The weight made a plain parameter again, from its last `g` and `v`."""
    return _remove(module, name, WeightNorm, ("_g", "_v"), "weight_norm")


def _remove(module, name, kind, parts, what):
    hooks = module._forward_pre_hooks
    for i, (_, hook, _) in enumerate(hooks):
        if isinstance(hook, kind) and hook.name == name:
            weight = hook.compute_weight(module) if kind is WeightNorm else \
                hook.compute_weight(module, do_power_iteration=False)
            del hooks[i]
            for part in parts:
                delattr(module, name + part)
            if name in module.__dict__:
                object.__delattr__(module, name)
            module.register_parameter(name, st.nn.Parameter(weight))
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")


class SpectralNorm:
    """The forward pre-hook of `spectral_norm`: `name` recomputed as `name_orig` over its
    largest singular value, estimated by power iteration on the vectors `name_u` and
    `name_v` (buffers, updated in place while the module trains)."""

    def __init__(self, name, n_power_iterations, dim, eps):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.eps = name, dim, eps
        self.n_power_iterations = n_power_iterations

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        matrix = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            for _ in range(self.n_power_iterations):
                v[...] = st.nn.functional.normalize(matrix.t() @ u, dim=0, eps=self.eps)
                u[...] = st.nn.functional.normalize(matrix @ v, dim=0, eps=self.eps)
            u, v = u.clone(), v.clone()
        sigma = st.dot(u, matrix @ v)
        return weight / sigma

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """torch's `nn.utils.spectral_norm`: `module.name` divided by its spectral norm before
    each call (`name_orig` the parameter; `name_u`, `name_v` the power iteration's vectors,
    drawn from symtrace's generator)."""
    for _, hook, _ in module._forward_pre_hooks:
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    if dim is None:
        transposed = (st.nn.ConvTranspose1d, st.nn.ConvTranspose2d)
        dim = 1 if isinstance(module, transposed) else 0
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    h, w = fn.reshape_weight_to_matrix(weight).shape
    normalize = st.nn.functional.normalize
    u = normalize(st.randn(h, dtype=weight.dtype), dim=0, eps=eps)
    v = normalize(st.randn(w, dtype=weight.dtype), dim=0, eps=eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.clone())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module, name="weight"):
    """The weight made a plain parameter again, divided by its last estimated norm."""
    return _remove(module, name, SpectralNorm, ("_orig", "_u", "_v"), "spectral_norm")
