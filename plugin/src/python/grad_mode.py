"""Gradient modes as torch spells them: `no_grad`, `enable_grad`, `inference_mode`.
symtrace records no gradients, so each changes nothing; they exist so that model code
written for torch (`with torch.no_grad():`, `@torch.inference_mode()`) runs unchanged. They
are Python so that a traced frame simulates them like the user's own code: a `with` block
over one stays in the graph."""


class _GradMode:
    """A context manager, and a decorator (`@no_grad()`), that changes nothing."""

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_value, traceback):
        return None

    def __call__(self, fn):
        return fn


class no_grad(_GradMode):
    pass


class enable_grad(_GradMode):
    pass


class inference_mode(_GradMode):
    def __init__(self, mode=True):
        self.mode = mode
