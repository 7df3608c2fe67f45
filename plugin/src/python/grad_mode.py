"""Gradient modes as torch spells them: `no_grad`, `enable_grad`, `inference_mode`,
`set_grad_enabled`, `is_grad_enabled`. symtrace records no gradients, so a mode changes no
result; it is kept, entered and restored as torch keeps it, so that model code that asks
(`if torch.is_grad_enabled(): ...`) takes the branch it takes under torch. They are Python
so that a traced frame simulates them like the user's own code: a `with` block over one
stays in the graph, its store into the mode replayed."""


class _State:
    """The process's mode (torch keeps one per thread; symtrace traces one thread)."""

    def __init__(self):
        self.grad = True
        self.inference = False


_state = _State()


def is_grad_enabled():
    return _state.grad


def is_inference_mode_enabled():
    return _state.inference


class _GradMode:
    """A context manager that sets the mode on entry and restores it on exit, and a decorator
    (`@no_grad()`, or `@no_grad` bare, as torch allows) that runs the function in the mode."""

    GRAD = True

    def __init__(self, orig_func=None):
        # `@no_grad` without parentheses: this object stands for the function.
        self.orig_func = orig_func

    def __enter__(self):
        self.prev = (_state.grad, _state.inference)
        _state.grad = self.GRAD
        return None

    def __exit__(self, exc_type, exc_value, traceback):
        _state.grad, _state.inference = self.prev
        return None

    def __call__(self, *args, **kwargs):
        if self.orig_func is not None:
            with self.clone():
                return self.orig_func(*args, **kwargs)
        return self._decorate(*args)

    def __get__(self, obj, objtype=None):
        # A bare-decorated method binds as the function would.
        if obj is None or self.orig_func is None:
            return self
        return _bound(self, obj)

    def _decorate(self, fn):
        mode = self

        def run_in_mode(*args, **kwargs):
            with mode.clone():
                return fn(*args, **kwargs)

        run_in_mode.__name__ = getattr(fn, "__name__", "run_in_mode")
        run_in_mode.__qualname__ = getattr(fn, "__qualname__", "run_in_mode")
        run_in_mode.__doc__ = getattr(fn, "__doc__", None)
        run_in_mode.__wrapped__ = fn
        return run_in_mode

    def clone(self):
        return type(self)()


def _bound(decorated, obj):
    def method(*args, **kwargs):
        return decorated(obj, *args, **kwargs)

    return method


class no_grad(_GradMode):
    GRAD = False


class enable_grad(_GradMode):
    GRAD = True


class inference_mode(_GradMode):
    def __init__(self, mode=True):
        # `@inference_mode` bare: the function in place of the mode.
        self.orig_func = None if isinstance(mode, bool) else mode
        self.mode = True if self.orig_func is not None else mode

    def __enter__(self):
        self.prev = (_state.grad, _state.inference)
        if self.mode:
            _state.grad, _state.inference = False, True
        return None

    def clone(self):
        return inference_mode(self.mode)


class set_grad_enabled(_GradMode):
    """Sets the mode when made (`torch.set_grad_enabled(False)` as a call); as a context
    manager, restores the one before on exit."""

    def __init__(self, mode):
        self.orig_func = None
        self.mode = bool(mode)
        self.prev = (_state.grad, _state.inference)
        _state.grad = self.mode

    def __enter__(self):
        return None

    def _decorate(self, fn):
        # As a decorator it changes nothing until the function runs.
        _state.grad, _state.inference = self.prev
        return super()._decorate(fn)

    def clone(self):
        return set_grad_enabled(self.mode)
