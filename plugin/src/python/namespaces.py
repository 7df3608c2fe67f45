"""torch's small namespaces that model code asks around its tensor work, as symtrace answers
them: `symtrace.jit` (no TorchScript: `is_scripting()` and `is_tracing()` are false, `script`
and `ignore` give what they are given), `symtrace.compiler` (`is_compiling()` is false,
traced or not: a traced program behaves as the same program run as written), and
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
}
CHECKPOINT = {
    "checkpoint": checkpoint,
    "checkpoint_sequential": checkpoint_sequential,
}
