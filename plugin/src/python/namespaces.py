"""torch's small namespaces that model code asks around its tensor work, as symtrace answers
them: `symtrace.jit` (no TorchScript: `is_scripting()` and `is_tracing()` are false, `script`
and `ignore` give what they are given), `symtrace.compiler` (`is_compiling()` is false,
traced or not: a traced program behaves as the same program run as written; `reset`,
`disable`, `set_stance` are symtrace's), `symtrace._dynamo` (the same, and `mark_dynamic`,
`explain`, a `config` whose settings are taken and not read), and
`symtrace.utils.checkpoint` (activation checkpointing trades memory for a second forward pass
when gradients are computed; symtrace computes none, so `checkpoint(fn, *args)` is
`fn(*args)`). Plain Python, so that a traced call simulates them like the user's code."""


def is_scripting():
    return False


def is_tracing():
    return False


def script(obj=None, *args, **kwargs):
    return obj


def ignore(drop=False, **kwargs):
    # `@jit.ignore` and `@jit.ignore(drop=True)`.
    if callable(drop):
        return drop
    return _unchanged


def _unchanged(fn):
    return fn


def is_compiling():
    return False


def reset():
    import symtrace
    symtrace.reset()


def disable(fn=None, recursive=True, *, reason=None):
    import symtrace
    return symtrace.disable(fn, recursive=recursive)


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    import symtrace
    return symtrace.set_stance(stance)


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    import symtrace
    symtrace.mark_dynamic(t, index)


def explain(f, *args, **kwargs):
    """torch's `explain(f)(*args)`, and the older `explain(f, *args)`."""
    import symtrace
    if args or kwargs:
        return symtrace.explain(f, *args, **kwargs)

    def explained(*args, **kwargs):
        return symtrace.explain(f, *args, **kwargs)

    return explained


def _unchanged_value(value, *args, **kwargs):
    # `mark_static` (symtrace makes a dimension dynamic only once it changes) and
    # `allow_in_graph` (symtrace inlines the function anyway): nothing to do.
    return value


def _false(*args, **kwargs):
    return False


def _zero():
    return 0


def _nothing(*args, **kwargs):
    # torch.cuda.manual_seed, manual_seed_all and empty_cache without CUDA: "silently
    # ignored", as torch says of them.
    return None


_SETTINGS = {"float32_matmul_precision": "highest", "deterministic": False, "threads": None}


def set_float32_matmul_precision(precision):
    # On the CPU torch computes float32 products in float32 at every precision; so does
    # symtrace.
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision: {precision}")
    _SETTINGS["float32_matmul_precision"] = precision


def get_float32_matmul_precision():
    return _SETTINGS["float32_matmul_precision"]


def use_deterministic_algorithms(mode, *, warn_only=False):
    # symtrace's kernels are deterministic whatever is asked (no result depends on the
    # thread count).
    _SETTINGS["deterministic"] = bool(mode)


def are_deterministic_algorithms_enabled():
    return _SETTINGS["deterministic"]


def get_num_threads():
    import os
    threads = _SETTINGS["threads"]
    return threads if threads is not None else (os.cpu_count() or 1)


def set_num_threads(n):
    # The pool's size is fixed when it starts; the number is remembered for get_num_threads.
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _SETTINGS["threads"] = n


class autocast:
    """torch.autocast on a machine without CUDA: for `cuda` (and `mps`) torch warns and runs
    without it, and so does symtrace; on the CPU it would compute in bfloat16, which symtrace
    has not: refused unless `enabled=False`."""

    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if enabled and device_type in ("cuda", "mps", "xpu"):
            import warnings
            warnings.warn(f"User provided device_type of '{device_type}', but "
                          f"{device_type.upper()} is not available. Disabling")
            enabled = False
        if enabled:
            raise NotImplementedError(
                f"symtrace has no float16 or bfloat16: autocast on '{device_type}' is not "
                "supported (enabled=False runs without it)")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = False

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return False

    def __call__(self, func):
        return func


def _cuda_autocast(enabled=True, dtype=None, cache_enabled=True):
    return autocast("cuda", dtype, enabled, cache_enabled)


# torch.testing's default tolerances, by dtype name: (rtol, atol).
_TOLERANCES = {"float64": (1e-7, 1e-7), "float32": (1.3e-6, 1e-5)}


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """torch.testing.assert_close: `|actual - expected| <= atol + rtol * |expected|` element by
    element (of tensors, numbers, or sequences and mappings of them), with torch's default
    tolerances for the dtype, and the same shape and (unless told not to) dtype."""
    import symtrace
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")

    def fail(what):
        raise AssertionError(msg if isinstance(msg, str) else what)

    if isinstance(expected, (list, tuple)) and not isinstance(expected, symtrace.Tensor):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            fail("The keys of the mappings do not match")
        for k in expected:
            assert_close(actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    a = actual if isinstance(actual, symtrace.Tensor) else symtrace.tensor(actual)
    e = expected if isinstance(expected, symtrace.Tensor) else symtrace.tensor(expected)
    if isinstance(actual, symtrace.Tensor) != isinstance(expected, symtrace.Tensor):
        fail(f"Expected both inputs to be tensors or numbers, got {type(actual).__name__} and "
             f"{type(expected).__name__}")
    if tuple(a.shape) != tuple(e.shape):
        fail(f"The values for attribute 'shape' do not match: {tuple(a.shape)} != "
             f"{tuple(e.shape)}.")
    if check_dtype and a.dtype != e.dtype:
        fail(f"The values for attribute 'dtype' do not match: {a.dtype} != {e.dtype}.")
    if rtol is None:
        rtol, atol = _TOLERANCES.get(e.dtype.name, (0.0, 0.0))
    close = symtrace.isclose(a.to(e.dtype) if a.dtype != e.dtype else a, e, rtol=rtol, atol=atol,
                             equal_nan=equal_nan)
    if not bool(close.all()):
        bad = int((~close).sum())
        kind = "equal" if rtol == 0 and atol == 0 else "close"
        fail(f"Tensor-likes are not {kind}!\n\nMismatched elements: {bad} / {e.numel()}")


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check=None,
               debug=None, preserve_rng_state=True, **kwargs):
    return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    if hasattr(functions, "children"):
        functions = list(functions.children())
    for function in functions:
        input = function(input)
    return input


JIT = {
    "is_scripting": is_scripting,
    "is_tracing": is_tracing,
    "script": script,
    "trace": lambda func, *args, **kwargs: func,
    "ignore": ignore,
    "unused": _unchanged,
    "export": _unchanged,
}
COMPILER = {
    "is_compiling": is_compiling,
    "is_dynamo_compiling": is_compiling,
    "reset": reset,
    "disable": disable,
    "set_stance": set_stance,
    "allow_in_graph": _unchanged_value,
}
# `torch.cuda` on a machine without CUDA, as torch answers there.
CUDA = {
    "is_available": _false,
    "is_initialized": _false,
    "device_count": _zero,
    "manual_seed": _nothing,
    "manual_seed_all": _nothing,
    "empty_cache": _nothing,
}
# `torch.backends`: no CUDA, cuDNN or MPS; their switches take what programs write.
BACKENDS_CUDNN = {
    "is_available": _false,
    "enabled": True,
    "benchmark": False,
    "deterministic": False,
    "allow_tf32": True,
}
BACKENDS_MPS = {"is_available": _false, "is_built": _false}
BACKENDS_CUDA_MATMUL = {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True}
AMP = {"autocast": autocast}
CUDA_AMP = {"autocast": _cuda_autocast}
def _assert(condition, message):
    """torch._assert: an assert that a traced program keeps (FX's symbolic tracing could not
    see a Python assert); here the same as one."""
    if not condition:
        raise AssertionError(message)


def _mapped_dims(in_dims, args):
    if isinstance(in_dims, int) or in_dims is None:
        return [in_dims] * len(args)
    if len(in_dims) != len(args):
        raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure of `inputs`. in_dims has structure {len(in_dims)} but inputs has structure {len(args)}.")
    return list(in_dims)


def _tensor_leaves(x):
    if isinstance(x, _st.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensor_leaves(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _tensor_leaves(v)]
    return []


def _sliced(x, dim, i):
    """`x` with every tensor in it taken at `i` along `dim`."""
    if isinstance(x, _st.Tensor):
        return x.select(dim, i)
    if isinstance(x, (list, tuple)):
        return type(x)(_sliced(v, dim, i) for v in x)
    if isinstance(x, dict):
        return {k: _sliced(v, dim, i) for k, v in x.items()}
    return x


def _stacked(results, out_dims):
    first = results[0]
    if isinstance(first, _st.Tensor):
        return _st.stack(results, out_dims)
    if isinstance(first, (int, float, bool)):
        return _st.stack([_st.tensor(r) for r in results], out_dims)
    if isinstance(first, (list, tuple)):
        dims = out_dims if isinstance(out_dims, (list, tuple)) else [out_dims] * len(first)
        return type(first)(_stacked([r[k] for r in results], dims[k]) for k in range(len(first)))
    if isinstance(first, dict):
        return {k: _stacked([r[k] for r in results], out_dims) for k in first}
    raise ValueError(f"vmap: The function returned a {type(first).__name__}; only tensors and structures of them can be returned")


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.vmap as a loop: `func` applied to each slice of the mapped arguments (their
    tensors taken along `in_dims`), the results stacked along `out_dims`. A function torch
    can vmap gives the same values; what torch refuses under vmap (`item()`, a branch on a
    tensor) simply runs. An in-place write in `func` to its slice stays in the slice, as a
    write to any slice of a symtrace tensor does (slices are copies, not views). A traced
    call unrolls the loop into the graph."""
    def mapped(*args):
        dims = _mapped_dims(in_dims, args)
        sizes = [leaf.shape[d] for a, d in zip(args, dims) if d is not None for leaf in _tensor_leaves(a)]
        if not sizes:
            raise ValueError(f"vmap({getattr(func, '__name__', func)}, in_dims={in_dims}, ...)(<inputs>): at least one input must be a tensor mapped over a dimension")
        if len(set(sizes)) > 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes {sizes} for the mapped dimension")
        size = sizes[0]
        results = [func(*(a if d is None else _sliced(a, d, i) for a, d in zip(args, dims)))
                   for i in range(size)]
        return _stacked(results, out_dims)
    return mapped


FUNC = {"vmap": vmap}
def _standard_gamma(input):
    """Gamma(input, 1) draws, one per element (torch's `_standard_gamma`)."""
    return _st.call_op("standard_gamma", input)


def poisson(input, generator=None):
    """Poisson draws, one per element of the rates `input` (as floats of its type)."""
    if generator is not None:
        with _st._drawing_from(generator):
            return _st.call_op("poisson", input)
    return _st.call_op("poisson", input)


def binomial(count, prob, generator=None):
    """Binomial draws, one per element of the counts `count` and probabilities `prob`."""
    if generator is not None:
        with _st._drawing_from(generator):
            return _st.call_op("binomial", count, prob)
    return _st.call_op("binomial", count, prob)


TOP_LEVEL = {
    "_assert": _assert,
    "_standard_gamma": _standard_gamma,
    "poisson": poisson,
    "binomial": binomial,
    "vmap": vmap,
    "autocast": autocast,
    "set_float32_matmul_precision": set_float32_matmul_precision,
    "get_float32_matmul_precision": get_float32_matmul_precision,
    "use_deterministic_algorithms": use_deterministic_algorithms,
    "are_deterministic_algorithms_enabled": are_deterministic_algorithms_enabled,
    "get_num_threads": get_num_threads,
    "set_num_threads": set_num_threads,
}
TESTING = {"assert_close": assert_close}
def _entr(x):
    """`-x * log(x)`: 0 at 0, -inf below, NaN where x is."""
    positive = x > 0
    value = -x * _st.log(_st.where(positive, x, 1.0))
    rest = _st.where(x == 0, 0.0, _st.where(_st.isnan(x), x, float("-inf")))
    return _st.where(positive, value, rest.to(value.dtype))


def _xlog1py(x, y):
    """`x * log1p(y)`, 0 where x is 0 and y is not NaN."""
    y = y if isinstance(y, _st.Tensor) else _st.tensor(y, dtype=x.dtype)
    return _st.where((x == 0) & ~_st.isnan(y), 0.0, x * _st.log1p(y))


# `torch.special`: its functions under their SciPy names (`_st` is `symtrace`, given by the
# loader), resolved when called.
SPECIAL = {
    "erf": lambda input: _st.erf(input),
    "erfc": lambda input: _st.erfc(input),
    "erfinv": lambda input: _st.erfinv(input),
    "gammaln": lambda input: _st.lgamma(input),
    "digamma": lambda input: _st.digamma(input),
    "gammainc": lambda input, other: _st.igamma(input, other),
    "gammaincc": lambda input, other: _st.igammac(input, other),
    "psi": lambda input: _st.digamma(input),
    "expit": lambda input: _st.sigmoid(input),
    "logit": lambda input, eps=None: _st.logit(input, eps),
    "log1p": lambda input: _st.log1p(input),
    "expm1": lambda input: _st.expm1(input),
    "exp2": lambda input: _st.exp2(input),
    "xlogy": lambda input, other: _st.xlogy(input, other),
    "sinc": lambda input: _st.sinc(input),
    # The standard normal's cdf, as torch's `calc_ndtr` computes it: through erfc below -1,
    # where 1 + erf would cancel.
    "ndtr": lambda input: _st.where(input < -1.0, 0.5 * _st.erfc(-input * 0.7071067811865476),
                                    0.5 * (1.0 + _st.erf(input * 0.7071067811865476))),
    "entr": lambda input: _entr(input),
    "xlog1py": lambda input, other: _xlog1py(input, other),
    "round": lambda input, decimals=0: _st.round(input, decimals=decimals),
    "softmax": lambda input, dim, dtype=None: _st.softmax(input, dim, dtype=dtype),
    "log_softmax": lambda input, dim, dtype=None: _st.log_softmax(input, dim, dtype=dtype),
    "logsumexp": lambda input, dim, keepdim=False: _st.logsumexp(input, dim, keepdim),
}
# `torch._dynamo`, as programs written for torch.compile use it.
DYNAMO = {
    "reset": reset,
    "disable": disable,
    "mark_dynamic": mark_dynamic,
    "maybe_mark_dynamic": mark_dynamic,
    "mark_static": _unchanged_value,
    "allow_in_graph": _unchanged_value,
    "explain": explain,
    "is_compiling": is_compiling,
}
# `torch._dynamo.config`: the settings programs write. symtrace reads none of them (its own
# are the plugin's options); they are here so that the writes work.
DYNAMO_CONFIG = {
    "cache_size_limit": 8,
    "recompile_limit": 8,
    "accumulated_cache_size_limit": 256,
    "suppress_errors": False,
    "verbose": False,
    "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False,
    "automatic_dynamic_shapes": True,
    "assume_static_by_default": True,
    "optimize_ddp": True,
}
CHECKPOINT = {
    "checkpoint": checkpoint,
    "checkpoint_sequential": checkpoint_sequential,
}
