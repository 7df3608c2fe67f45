"""symtrace.nn: neural-network modules written the way torch.nn is. A `Module` registers the
parameters, buffers and submodules assigned to it through `__setattr__` and finds them again
through `__getattr__`; calling it calls `forward`. Everything here is plain Python over
symtrace's tensors: a traced call simulates it like the user's own code, and the whole
forward pass, from the model's `__call__` down to its leaf ops, becomes one graph."""
import math
from collections import OrderedDict, namedtuple

import symtrace as st
from symtrace.nn import functional as F


class _ParameterMeta(type):
    """`isinstance(t, Parameter)` holds for a tensor made by `Parameter(...)` (torch keeps
    the same test on a tensor's flag)."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, st.Tensor) and instance.requires_grad


class Parameter(metaclass=_ParameterMeta):
    """A tensor that a module registers as a parameter: a copy of `data` marked
    `requires_grad` (symtrace has no autograd; the mark says what is a parameter)."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = st.zeros(0)
        t = data.clone()
        t.requires_grad = requires_grad
        return t


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class RemovableHandle:
    """What registering a hook returns: `remove()` takes the hook out again."""

    _next_id = 0

    def __init__(self, hooks):
        self.hooks = hooks
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self):
        self.hooks[:] = [entry for entry in self.hooks if entry[0] != self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# How many hooks were ever registered on any module.
_hooks_registered = 0


def _add_hook(hooks, hook, with_kwargs, prepend):
    global _hooks_registered
    _hooks_registered += 1
    handle = RemovableHandle(hooks)
    hooks.insert(0 if prepend else len(hooks), (handle.id, hook, with_kwargs))
    return handle


class Module:
    """The base class of every module: parameters, buffers and submodules by name, in the
    order they were assigned; `train()`/`eval()`; `state_dict()`/`load_state_dict()`."""

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", {})
        # `(handle id, hook, with_kwargs)` in the order they run.
        object.__setattr__(self, "_forward_pre_hooks", [])
        object.__setattr__(self, "_forward_hooks", [])

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        # One global read while no module has a hook (a traced call guards one number, not
        # two lists per module).
        if _hooks_registered and (self._forward_pre_hooks or self._forward_hooks):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def compile(self, *args, **kwargs):
        """torch's `Module.compile`: calls of this module run traced from now on (its
        `forward`, with `symtrace.compile`'s arguments; hooks run around it)."""
        self.forward = st.compile(self.forward, *args, **kwargs)

    # --- hooks ---

    def _call_with_hooks(self, args, kwargs):
        """torch's order: each pre-hook may replace the arguments, each forward hook the
        result; a hook registered `with_kwargs` sees the keyword arguments too."""
        for _, hook, with_kwargs in list(self._forward_pre_hooks):
            if with_kwargs:
                changed = hook(self, args, kwargs)
                if changed is not None:
                    if not (isinstance(changed, tuple) and len(changed) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {changed}."
                        )
                    args, kwargs = changed
            else:
                changed = hook(self, args)
                if changed is not None:
                    args = changed if isinstance(changed, tuple) else (changed,)
        result = self.forward(*args, **kwargs)
        for _, hook, with_kwargs in list(self._forward_hooks):
            changed = hook(self, args, kwargs, result) if with_kwargs else hook(self, args, result)
            if changed is not None:
                result = changed
        return result

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        return _add_hook(self._forward_pre_hooks, hook, with_kwargs, prepend)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        return _add_hook(self._forward_hooks, hook, with_kwargs, prepend)

    # --- registration ---

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(symtrace.nn.Parameter or None required)"
            )
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, st.Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(symtrace Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name, module):
        self.add_module(name, module)

    def __setattr__(self, name, value):
        def remove_from(*dicts):
            for d in dicts:
                if name in d:
                    del d[name]

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(symtrace.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{type(value).__name__}' as child module '{name}' "
                        "(symtrace.nn.Module or None expected)"
                    )
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, st.Tensor):
                        raise TypeError(
                            f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                            "(symtrace Tensor or None expected)"
                        )
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __getattr__(self, name):
        if "_parameters" in self.__dict__:
            _parameters = self.__dict__["_parameters"]
            if name in _parameters:
                return _parameters[name]
        if "_buffers" in self.__dict__:
            _buffers = self.__dict__["_buffers"]
            if name in _buffers:
                return _buffers[name]
        if "_modules" in self.__dict__:
            modules = self.__dict__["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    # --- walking the tree ---

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                sub = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- modes ---

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def get_submodule(self, target):
        """The module at the dotted path `target` (`"encoder.layers.0"`); `""` is this one."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        """The parameter at the dotted path `target` (`"encoder.fc.weight"`)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return mod._parameters[name]

    def get_buffer(self, target):
        """The buffer at the dotted path `target` (`"bn.running_mean"`)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def zero_grad(self, set_to_none=True):
        """symtrace has no autograd: there is no gradient to clear."""

    # --- dtype and device ---

    def _cast_floats(self, dtype):
        for module in self.modules():
            for table, as_parameter in ((module._parameters, True), (module._buffers, False)):
                for name, t in list(table.items()):
                    if t is not None and t.dtype in (st.float32, st.float64) and t.dtype != dtype:
                        table[name] = Parameter(t.to(dtype), t.requires_grad) if as_parameter \
                            else t.to(dtype)
        return self

    def to(self, *args, dtype=None, device=None, non_blocking=False):
        """`to(dtype)`, `to(device)`, `to(device, dtype)`, `to(tensor)`: floating parameters and
        buffers cast to the dtype; the CPU is the one device."""
        dtype = st._to_target(args, dtype, device)
        return self if dtype is None else self._cast_floats(dtype)

    def float(self):
        return self._cast_floats(st.float32)

    def double(self):
        return self._cast_floats(st.float64)

    def cpu(self):
        return self

    def cuda(self, device=None):
        raise RuntimeError("symtrace computes on the CPU only: there is no CUDA device")

    # --- state ---

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        if destination is None:
            destination = OrderedDict()
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.clone()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = buf if keep_vars else buf.clone()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy every parameter and persistent buffer from `state_dict` into the module's own
        tensors (their shapes must match), as torch does: the module keeps its tensors, so an
        optimizer holding them still updates the model, and the loaded dict is not aliased
        (a running statistic updated in place afterwards leaves the dict as it was). With
        `assign`, the module takes the dict's tensors instead. With `strict`, missing and
        unexpected keys are errors."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        expected = {}

        def collect(module, prefix):
            for name, p in module._parameters.items():
                if p is not None:
                    expected[prefix + name] = (module._parameters, name)
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent_buffers:
                    expected[prefix + name] = (module._buffers, name)
            for name, child in module._modules.items():
                if child is not None:
                    collect(child, prefix + name + ".")

        collect(self, "")
        for key, (owner, name) in expected.items():
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            current = owner[name]
            if not isinstance(value, st.Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected symtrace Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
            elif tuple(value.shape) != tuple(current.shape):
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {list(value.shape)} "
                    f"from checkpoint, the shape in current model is {list(current.shape)}."
                )
            elif assign:
                taken = Parameter(value, current.requires_grad) if isinstance(current, Parameter) else value
                owner[name] = taken
            else:
                with st.no_grad():
                    current.copy_(value)
        for key in state_dict:
            if key not in expected:
                unexpected.append(key)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # --- printing ---

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        children = []
        for key, module in self._modules.items():
            children.append("(" + key + "): " + _addindent(repr(module), 2))
        lines = lines + children
        main = type(self).__name__ + "("
        if lines:
            if len(extra.split("\n")) == 1 and not children:
                main += extra
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        names = list(type(self).__dict__) + list(self.__dict__)
        names += list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(set(n for n in names if not n[:1].isdigit()))


class OptimizedModule(Module):
    """What `symtrace.compile(module)` returns, as torch's: a module holding the original as
    its one submodule `_orig_mod` (so its `state_dict()` keys start with `_orig_mod.`, as
    programs that strip that prefix expect), whose calls run traced, and which reads and
    writes every other attribute on the original (`compiled.generate(...)`, `compiled.config`,
    `compiled.training`)."""

    _OWN = frozenset(("_orig_mod", "_parameters", "_buffers", "_non_persistent_buffers",
                      "_modules", "_forward_pre_hooks", "_forward_hooks"))

    def __init__(self, mod, compiled):
        # First: `training`, set by Module.__init__, reads it.
        object.__setattr__(self, "_orig_mod", mod)
        super().__init__()
        self._orig_mod = mod
        # The traced call is the original module's whole call, its hooks included; hooks
        # registered on this wrapper run around it, untraced.
        object.__setattr__(self, "forward", compiled)

    def __call__(self, *args, **kwargs):
        # Module.__call__'s steps; without keywords, a call without `**` (the interpreter
        # names the callee for each call that passes a mapping: some µs).
        if _hooks_registered and (self._forward_pre_hooks or self._forward_hooks):
            return self._call_with_hooks(args, kwargs)
        if kwargs:
            return self.forward(*args, **kwargs)
        return self.forward(*args)

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        # Module.__init__'s default is not the original's mode.
        if "_modules" in self.__dict__:
            self._orig_mod.training = value

    def __len__(self):
        return len(self._orig_mod)

    def __getattr__(self, name):
        # Held in `__dict__` until Module.__init__ has run, in `_modules` after.
        orig = self.__dict__.get("_modules", self.__dict__).get("_orig_mod")
        if orig is None:
            raise AttributeError(f"'OptimizedModule' object has no attribute '{name}'")
        return orig if name == "_orig_mod" else getattr(orig, name)

    def __setattr__(self, name, value):
        if name in OptimizedModule._OWN or hasattr(type(self), name):
            Module.__setattr__(self, name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if name in OptimizedModule._OWN or hasattr(type(self), name):
            Module.__delattr__(self, name)
        else:
            delattr(self._orig_mod, name)

    def __dir__(self):
        return sorted(set(Module.__dir__(self)) | set(dir(self._orig_mod)))


class _IncompatibleKeys:
    def __init__(self, missing_keys, unexpected_keys):
        self.missing_keys = missing_keys
        self.unexpected_keys = unexpected_keys

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")

    def __iter__(self):
        return iter((self.missing_keys, self.unexpected_keys))


def _uniform(shape, bound, dtype):
    return (st.rand(*shape, dtype=dtype) * 2.0 - 1.0) * bound


class Linear(Module):
    """`y = x @ W.T + b`, W (out_features, in_features) and b drawn from U(-k, k) with
    k = 1/sqrt(in_features), as torch initializes them."""

    def __init__(self, in_features, out_features, bias=True, dtype=None):
        super().__init__()
        dtype = dtype or st.get_default_dtype()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = Parameter(_uniform((out_features, in_features), bound, dtype))
        if bias:
            self.bias = Parameter(_uniform((out_features,), bound, dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class LazyLinear(Linear):
    """A Linear whose `in_features` is the last size of its first input: its parameters are
    made then (drawn as Linear draws them), and it becomes a Linear."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self._lazy_bias, self._lazy_dtype = bias, dtype
        self.weight = Parameter(st.empty(0, dtype=dtype or st.get_default_dtype()))
        if bias:
            self.bias = Parameter(st.empty(0, dtype=dtype or st.get_default_dtype()))
        else:
            self.register_parameter("bias", None)

    def has_uninitialized_params(self):
        return True

    def initialize_parameters(self, input):
        made = Linear(input.shape[-1], self.out_features, self._lazy_bias, self._lazy_dtype)
        self.in_features = made.in_features
        self.weight = made.weight
        if self._lazy_bias:
            self.bias = made.bias
        del self._lazy_bias, self._lazy_dtype
        self.__class__ = self.cls_to_become

    def forward(self, input):
        self.initialize_parameters(input)
        return F.linear(input, self.weight, self.bias)


def _table_padding_idx(padding_idx, num_embeddings, name):
    """`padding_idx` counted from the front, checked as torch checks it (`name` spelled as
    each module's own message spells it)."""
    if padding_idx is None:
        return None
    if padding_idx < 0:
        padding_idx = num_embeddings + padding_idx
    if not 0 <= padding_idx < num_embeddings:
        raise AssertionError(f"{name} must be within num_embeddings")
    return padding_idx


def _table(num_embeddings, embedding_dim, padding_idx, dtype):
    """A table of vectors drawn from N(0, 1), the padding row zero."""
    weight = st.randn(num_embeddings, embedding_dim, dtype=dtype or st.get_default_dtype())
    if padding_idx is not None:
        weight[padding_idx] = 0.0
    return weight


class Embedding(Module):
    """A table of `num_embeddings` vectors of `embedding_dim`, drawn from N(0, 1)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _table_padding_idx(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            _weight = _table(num_embeddings, embedding_dim, self.padding_idx, dtype)
        elif tuple(_weight.shape) != (num_embeddings, embedding_dim):
            raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
        # `_freeze` is taken, not kept: the mark says what is a parameter, and symtrace has
        # no training to freeze a table from.
        self.weight = Parameter(_weight)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An embedding whose table is `embeddings` (2-D), frozen unless told otherwise."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.sparse:
            s += ", sparse=True"
        return s


class EmbeddingBag(Module):
    """A table of `num_embeddings` vectors of `embedding_dim` (drawn from N(0, 1)), read as
    the sum, mean or max of bags of them (`F.embedding_bag`)."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, dtype=None):
        super().__init__()
        padding_idx = _table_padding_idx(padding_idx, num_embeddings, "padding_idx")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.mode = max_norm, norm_type, mode
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        if _weight is None:
            _weight = _table(num_embeddings, embedding_dim, padding_idx, dtype)
        self.weight = Parameter(_weight)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, False,
                               self.mode, False, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=None):
        super().__init__()
        dtype = dtype or st.get_default_dtype()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(st.ones(*self.normalized_shape, dtype=dtype))
            if bias:
                self.bias = Parameter(st.zeros(*self.normalized_shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class AlphaDropout(Dropout):
    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class ReLU(Module):
    # A class default, set on the instance only when true: a traced forward reads it from
    # the class, whose version is guarded anyway (an attribute of the instance would be
    # guarded by value on every call).
    inplace = False

    def __init__(self, inplace=False):
        super().__init__()
        if inplace:
            self.inplace = True

    def forward(self, input):
        return F.relu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class SiLU(Module):
    def forward(self, input):
        return F.silu(input)


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)


class ChannelShuffle(Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)


class Unfold(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(Module):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, dtype=None):
        super().__init__()
        dtype = dtype or st.get_default_dtype()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(st.ones(*self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class _BatchNorm(Module):
    """Normalize each channel (dimension 1) by the batch's statistics while training,
    updating the running ones in place (the unbiased variance, a moving average with
    `momentum`, or the cumulative average if it is None), and by the running ones in eval
    mode, as torch's. The subclasses say which inputs they take."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, dtype=None):
        super().__init__()
        dtype = dtype or st.get_default_dtype()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(st.ones(num_features, dtype=dtype))
            self.bias = Parameter(st.zeros(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", st.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", st.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", st.tensor(0))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        # Running statistics are updated while training, read otherwise; without them the
        # batch's own serve always.
        tracked = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if tracked else None,
                            self.running_var if tracked else None, self.weight, self.bias,
                            self.training or not self.track_running_stats, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm of an (N, C) or (N, C, L) input."""

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm of the channels of a batch of images (N, C, H, W)."""

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch norm of the channels of a batch of volumes (N, C, D, H, W)."""

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class MaxPool3d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = stride if stride is not None else kernel_size
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool3d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = stride if stride is not None else kernel_size
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool3d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class GroupNorm(Module):
    """Normalize groups of channels of each sample (`F.group_norm`), with a per-channel
    weight (ones) and bias (zeros) when `affine`."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        dtype = dtype or st.get_default_dtype()
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(st.ones(num_channels, dtype=dtype))
            self.bias = Parameter(st.zeros(num_channels, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _ConvNd(Module):
    """Filters `(out_channels, in_channels / groups, *kernel_size)` and a bias drawn from
    U(-k, k), k = 1/sqrt(fan_in), as torch initializes them (kaiming_uniform with a=sqrt(5))."""

    _dims = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', "
                             f"'circular'], but got padding_mode='{padding_mode}'")
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string {padding!r}, should be one of ('valid', 'same')")
        dtype = dtype or st.get_default_dtype()
        n = self._dims

        def tup(v):
            return (v,) * n if isinstance(v, int) else tuple(v)

        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride)
        self.padding = padding if isinstance(padding, str) else tup(padding)
        self.dilation = tup(dilation)
        self.groups = groups
        self.padding_mode = padding_mode
        fan_in = in_channels // groups * math.prod(self.kernel_size)
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(_uniform(shape, bound, dtype))
        if bias:
            self.bias = Parameter(_uniform((out_channels,), bound, dtype))
        else:
            self.register_parameter("bias", None)

    def _padded(self, input):
        """The input, and the padding left for the convolution: a `padding_mode` other than
        zeros pads the input first (torch's order of pairs, the last dimension first)."""
        if self.padding_mode == "zeros" or self.padding == "valid":
            return input, self.padding
        if self.padding == "same":
            totals = [d * (k - 1) for k, d in zip(self.kernel_size, self.dilation)]
            pairs = [(t // 2, t - t // 2) for t in totals]
        else:
            pairs = [(p, p) for p in self.padding]
        flat = tuple(v for pair in reversed(pairs) for v in pair)
        return F.pad(input, flat, mode=self.padding_mode), (0,) * self._dims

    def extra_repr(self):
        return _conv_repr(self)


class Conv1d(_ConvNd):
    _dims = 1

    def forward(self, input):
        input, padding = self._padded(input)
        return F.conv1d(input, self.weight, self.bias, self.stride, padding,
                        self.dilation, self.groups)


class Conv2d(_ConvNd):
    _dims = 2

    def forward(self, input):
        input, padding = self._padded(input)
        return F.conv2d(input, self.weight, self.bias, self.stride, padding,
                        self.dilation, self.groups)


class Conv3d(_ConvNd):
    _dims = 3

    def forward(self, input):
        input, padding = self._padded(input)
        return F.conv3d(input, self.weight, self.bias, self.stride, padding,
                        self.dilation, self.groups)


def _conv_repr(m):
    """A convolution's arguments as torch prints them: those that differ from the default."""
    s = f"{m.in_channels}, {m.out_channels}, kernel_size={m.kernel_size}, stride={m.stride}"
    if m.padding != (0,) * m._dims:
        s += f", padding={m.padding!r}"
    if m.dilation != (1,) * m._dims:
        s += f", dilation={m.dilation}"
    if getattr(m, "output_padding", (0,) * m._dims) != (0,) * m._dims:
        s += f", output_padding={m.output_padding}"
    if m.groups != 1:
        s += f", groups={m.groups}"
    if m.bias is None:
        s += ", bias=False"
    return s


class _ConvTransposeNd(Module):
    """Filters `(in_channels, out_channels / groups, *kernel_size)` and a bias drawn from
    U(-k, k), k = 1/sqrt(out_channels / groups * prod(kernel_size)), as torch initializes
    them (the fan-in torch reads from the weight's second dimension)."""

    _dims = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        dtype = dtype or st.get_default_dtype()
        n = self._dims

        def tup(v):
            return (v,) * n if isinstance(v, int) else tuple(v)

        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride)
        self.padding = tup(padding)
        self.output_padding = tup(output_padding)
        self.dilation = tup(dilation)
        self.groups = groups
        self.padding_mode = padding_mode
        fan_in = out_channels // groups * math.prod(self.kernel_size)
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        self.weight = Parameter(_uniform((in_channels, out_channels // groups) + self.kernel_size,
                                         bound, dtype))
        if bias:
            self.bias = Parameter(_uniform((out_channels,), bound, dtype))
        else:
            self.register_parameter("bias", None)

    def _output_padding(self, input, output_size):
        """The output padding that makes the output `output_size` (torch's rule: between
        the smallest size the input gives and that plus the stride, exclusive)."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        output_size = list(output_size)[-n:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have "
                             f"{n} or {n + 2} elements (got {len(output_size)})")
        padding = []
        for d in range(n):
            size = input.shape[input.ndim - n + d]
            smallest = ((size - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            if not smallest <= output_size[d] < smallest + self.stride[d]:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{smallest} to {smallest + self.stride[d] - 1} (for an input of "
                    f"{list(input.shape)[-n:]})")
            padding.append(output_size[d] - smallest)
        return tuple(padding)

    def extra_repr(self):
        return _conv_repr(self)


class ConvTranspose1d(_ConvTransposeNd):
    _dims = 1

    def forward(self, input, output_size=None):
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    _dims = 2

    def forward(self, input, output_size=None):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(MaxPool2d):
    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(AvgPool2d):
    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class MultiheadAttention(Module):
    """torch's multi-head attention: the query, key and value projected by `in_proj_weight`
    (3E, E) and `in_proj_bias`, split into heads, scaled dot products with an optional
    `attn_mask` (bool: True is masked out; or float, added) and `key_padding_mask` (True is
    ignored), softmax, dropout in training, heads joined and projected by `out_proj`. Returns
    the output and the attention weights (averaged over heads unless asked otherwise), or
    None for them with `need_weights=False`."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, dtype=None):
        super().__init__()
        if embed_dim % num_heads != 0:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("symtrace's MultiheadAttention has no add_bias_kv or add_zero_attn")
        if (kdim is not None and kdim != embed_dim) or (vdim is not None and vdim != embed_dim):
            raise NotImplementedError("symtrace's MultiheadAttention takes keys and values of embed_dim")
        dtype = dtype or st.get_default_dtype()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        bound = math.sqrt(6.0 / (embed_dim + 3 * embed_dim))  # xavier_uniform_ on (3E, E)
        self.in_proj_weight = Parameter(_uniform((3 * embed_dim, embed_dim), bound, dtype))
        if bias:
            self.in_proj_bias = Parameter(st.zeros(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if bias:
            self.out_proj.bias = Parameter(st.zeros(embed_dim, dtype=dtype))

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.ndim == 3
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        n, length, e = query.shape
        source = key.shape[1]
        h, d = self.num_heads, self.head_dim
        w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        b_q = b_k = b_v = None
        if self.in_proj_bias is not None:
            b_q, b_k, b_v = self.in_proj_bias.chunk(3)
        q = F.linear(query, w_q, b_q).reshape(n, length, h, d).transpose(1, 2)
        k = F.linear(key, w_k, b_k).reshape(n, source, h, d).transpose(1, 2)
        v = F.linear(value, w_v, b_v).reshape(n, source, h, d).transpose(1, 2)
        scores = (q * (1.0 / math.sqrt(d))) @ k.transpose(-2, -1)
        if is_causal and attn_mask is None:
            raise RuntimeError(
                "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                "module method `generate_square_subsequent_mask` to create this mask.")
        if attn_mask is not None:
            if attn_mask.ndim == 3:
                attn_mask = attn_mask.reshape(n, h, length, source)
            if attn_mask.dtype == st.bool:
                scores = scores.masked_fill(attn_mask, float("-inf"))
            else:
                scores = scores + attn_mask
        if key_padding_mask is not None:
            padding = key_padding_mask.reshape(n, 1, 1, source)
            if padding.dtype == st.bool:
                scores = scores.masked_fill(padding, float("-inf"))
            else:
                scores = scores + padding
        weights = scores.softmax(-1)
        if self.training and self.dropout > 0.0:
            weights = F.dropout(weights, self.dropout, True)
        out = (weights @ v).transpose(1, 2).reshape(n, length, e)
        out = self.out_proj(out)
        if not batched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(dim=1)
        return out, weights if batched else weights.squeeze(0)

    def extra_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"


def _activation(activation):
    """A transformer layer's activation: `"relu"`, `"gelu"`, or a callable (a module too)."""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _copies(layer, n):
    import copy

    return ModuleList([copy.deepcopy(layer) for _ in range(n)])


class TransformerEncoderLayer(Module):
    """torch's encoder layer: self-attention and a feed-forward block, each with a residual
    connection and a layer norm, after (`norm_first=False`, torch's default) or before it.
    Same parameter names as torch's (`self_attn`, `linear1`, `linear2`, `norm1`, `norm2`)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """torch's decoder layer: self-attention, attention over the encoder's output
    (`multihead_attn`), and a feed-forward block, each with a residual connection and a
    layer norm (`norm1`, `norm2`, `norm3`), after it or before it (`norm_first`)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask,
                                               memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """`num_layers` copies of an encoder layer (`layers.0`, `layers.1`...), then an optional
    norm. (torch's fast path in eval mode, which gives zeros at padded positions when a key
    padding mask is passed, is not taken: every position is computed.)"""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _copies(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=bool(is_causal),
                         src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """`num_layers` copies of a decoder layer, then an optional norm."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _copies(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """torch's encoder-decoder transformer: an encoder and a decoder stack, each ending in a
    layer norm; parameters of more than one dimension initialized as torch does
    (`xavier_uniform_`)."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias,
                                            dtype=dtype)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias,
                                            dtype=dtype)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        for p in self.parameters():
            if p.dim() > 1:
                bound = math.sqrt(6.0 / (p.shape[0] + p.shape[1]))
                p.data = _uniform(p.shape, bound, p.dtype)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float mask that hides the positions after each one: -inf above the diagonal."""
        dtype = dtype or st.get_default_dtype()
        return st.full((sz, sz), float("-inf"), dtype=dtype).triu(1)


def _lstm_step(x, h, c, w_hh, b_hh):
    i, f, g, o = (x + F.linear(h, w_hh, b_hh)).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _gru_step(x, h, w_hh, b_hh):
    x_r, x_z, x_n = x.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r = (x_r + h_r).sigmoid()
    z = (x_z + h_z).sigmoid()
    n = (x_n + r * h_n).tanh()
    return (1.0 - z) * n + z * h


def _rnn_step(x, h, w_hh, b_hh, nonlinearity):
    y = x + F.linear(h, w_hh, b_hh)
    return y.tanh() if nonlinearity == "tanh" else y.relu()


class _PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices",
                                                    "unsorted_indices"])):
    """torch's PackedSequence (`nn.utils.rnn`): the steps of sequences sorted longest first,
    step after step (`data`), with how many sequences each step has (`batch_sizes`) and the
    sort's permutation and its inverse (None where the batch came sorted)."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = st.empty_like(sorted_indices).scatter(
                0, sorted_indices, st.arange(sorted_indices.numel()))
        return tuple.__new__(cls, (data, batch_sizes, sorted_indices, unsorted_indices))

    def to(self, *args, **kwargs):
        return type(self)(self.data.to(*args, **kwargs), self.batch_sizes, self.sorted_indices,
                          self.unsorted_indices)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


_PackedSequence.__name__ = _PackedSequence.__qualname__ = "PackedSequence"


def _packed_steps(packed):
    """A packed batch as a padded, time-major tensor in its sorted order, and the batch size
    of each step."""
    sizes = packed.batch_sizes.tolist()
    data = packed.data
    padded = st.zeros((len(sizes), sizes[0]) + tuple(data.shape[1:]), dtype=data.dtype)
    offset = 0
    for t, n in enumerate(sizes):
        padded[t, :n] = data[offset:offset + n]
        offset += n
    return padded, sizes


class _RNNBase(Module):
    """torch's recurrent layers: per layer and direction, `weight_ih_l{k}[_reverse]`,
    `weight_hh_l{k}`, `bias_ih_l{k}`, `bias_hh_l{k}` (gates stacked in torch's order: i, f,
    g, o for an LSTM; r, z, n for a GRU), initialized uniform in ±1/√hidden_size. The input's
    projection is one product for all steps; the steps are one op (`recurrence`), one graph
    for every sequence length (a packed batch's steps run in a Python loop)."""

    GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 nonlinearity="tanh", device=None, dtype=None):
        super().__init__()
        if proj_size:
            raise NotImplementedError("symtrace's LSTM has no proj_size")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        dtype = dtype or st.get_default_dtype()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.nonlinearity = nonlinearity
        gates = self.GATES[mode] * hidden_size
        bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
        dirs = 2 if bidirectional else 1
        for layer in range(num_layers):
            for d in range(dirs):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                width = input_size if layer == 0 else hidden_size * dirs
                setattr(self, "weight_ih" + suffix, Parameter(_uniform((gates, width), bound, dtype)))
                setattr(self, "weight_hh" + suffix, Parameter(_uniform((gates, hidden_size), bound, dtype)))
                if bias:
                    setattr(self, "bias_ih" + suffix, Parameter(_uniform((gates,), bound, dtype)))
                    setattr(self, "bias_hh" + suffix, Parameter(_uniform((gates,), bound, dtype)))

    def _weights(self, layer, d):
        suffix = f"_l{layer}" + ("_reverse" if d else "")
        get = lambda name: getattr(self, name + suffix) if self.bias or name.startswith("w") else None
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def forward(self, input, hx=None):
        if isinstance(input, _PackedSequence):
            return self._forward_packed(input, hx)
        lstm = self.mode == "LSTM"
        batched = input.ndim == 3
        if not batched:
            input = input.unsqueeze(1)
            if hx is not None:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if lstm else hx.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        steps, batch = input.shape[0], input.shape[1]
        dirs = 2 if self.bidirectional else 1
        if hx is None:
            h0 = st.zeros(self.num_layers * dirs, batch, self.hidden_size, dtype=input.dtype)
            c0 = h0
        elif lstm:
            h0, c0 = hx
        else:
            h0, c0 = hx, None
        output, h_n, c_n = self._layers(input, h0, c0, None)
        if not batched:
            output = output.flatten(1)
            h_n = h_n.flatten(1)
            c_n = c_n.flatten(1) if lstm else None
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, ((h_n, c_n) if lstm else h_n)

    def _layers(self, input, h0, c0, sizes):
        """Every layer and direction over the time-major `input`; with `sizes` (a packed
        batch, sorted longest first), step `t` advances only its first `sizes[t]` sequences,
        the others keeping their state (a reverse pass starts each at its own last step)."""
        lstm = self.mode == "LSTM"
        steps = input.shape[0]
        dirs = 2 if self.bidirectional else 1
        layer_input = input
        h_last, c_last = [], []
        for layer in range(self.num_layers):
            outputs = []
            for d in range(dirs):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, d)
                xs = F.linear(layer_input, w_ih, b_ih)
                k = layer * dirs + d
                h = h0[k]
                c = c0[k] if lstm else None
                if sizes is None and steps > 0:
                    # Every step as one op: one graph for every sequence length.
                    ys, h, c = self._recurrence(xs, h, c, w_hh, b_hh, d)
                    outputs.append(ys)
                    h_last.append(h)
                    c_last.append(c)
                    continue
                ys = [None] * steps
                for t in (range(steps - 1, -1, -1) if d else range(steps)):
                    n = None if sizes is None or sizes[t] == h.shape[0] else sizes[t]
                    x_t, h_t = (xs[t], h) if n is None else (xs[t, :n], h[:n])
                    if lstm:
                        h_t, c_t = _lstm_step(x_t, h_t, c if n is None else c[:n], w_hh, b_hh)
                    elif self.mode == "GRU":
                        h_t = _gru_step(x_t, h_t, w_hh, b_hh)
                    else:
                        h_t = _rnn_step(x_t, h_t, w_hh, b_hh, self.nonlinearity)
                    if n is None:
                        h, c = h_t, (c_t if lstm else None)
                        ys[t] = h
                    else:
                        h = st.cat([h_t, h[n:]])
                        c = st.cat([c_t, c[n:]]) if lstm else None
                        ys[t] = st.cat([h_t, st.zeros_like(h[n:])])
                outputs.append(st.stack(ys))
                h_last.append(h)
                c_last.append(c)
            layer_input = outputs[0] if dirs == 1 else st.cat(outputs, -1)
            if self.dropout > 0.0 and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, st.stack(h_last), (st.stack(c_last) if lstm else None)

    def _recurrence(self, xs, h, c, w_hh, b_hh, reverse):
        """The steps of one layer and direction (the op `recurrence`): each step's state, and
        the last step's state and cell."""
        lstm = self.mode == "LSTM"
        mode = 3 if lstm else 2 if self.mode == "GRU" else (0 if self.nonlinearity == "tanh" else 1)
        bias = () if b_hh is None else (b_hh,)
        out = st.call_op("recurrence", xs, h, c if lstm else h, w_hh, *bias, mode=mode,
                         reverse=bool(reverse))
        last = 0 if reverse else -1
        if not lstm:
            return out, out[last], None
        H = self.hidden_size
        return out[..., :H].contiguous(), out[last, :, :H], out[last, :, H:]

    def _forward_packed(self, packed, hx):
        """A packed batch: run in its sorted order, the output packed as the input is, the
        final states (the last step of each sequence) in the batch's own order."""
        lstm = self.mode == "LSTM"
        padded, sizes = _packed_steps(packed)
        order, back = packed.sorted_indices, packed.unsorted_indices
        dirs = 2 if self.bidirectional else 1
        if hx is None:
            h0 = st.zeros(self.num_layers * dirs, sizes[0], self.hidden_size, dtype=padded.dtype)
            c0 = h0
        else:
            h0, c0 = hx if lstm else (hx, None)
            if order is not None:
                h0 = h0.index_select(1, order)
                c0 = c0.index_select(1, order) if lstm else None
        output, h_n, c_n = self._layers(padded, h0, c0, sizes)
        data = st.cat([output[t, :n] for t, n in enumerate(sizes)])
        if back is not None:
            h_n = h_n.index_select(1, back)
            c_n = c_n.index_select(1, back) if lstm else None
        packed_out = _PackedSequence(data, packed.batch_sizes, order, back)
        return packed_out, ((h_n, c_n) if lstm else h_n)

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.batch_first:
            text += ", batch_first=True"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


class LSTM(_RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(_RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class RNN(_RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("RNN", *args, **kwargs)


class _CellBase(Module):
    """One step of a recurrent layer: `weight_ih`, `weight_hh`, `bias_ih`, `bias_hh`."""

    def __init__(self, gates, input_size, hidden_size, bias=True, dtype=None):
        super().__init__()
        dtype = dtype or st.get_default_dtype()
        self.input_size = input_size
        self.hidden_size = hidden_size
        bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
        self.weight_ih = Parameter(_uniform((gates * hidden_size, input_size), bound, dtype))
        self.weight_hh = Parameter(_uniform((gates * hidden_size, hidden_size), bound, dtype))
        if bias:
            self.bias_ih = Parameter(_uniform((gates * hidden_size,), bound, dtype))
            self.bias_hh = Parameter(_uniform((gates * hidden_size,), bound, dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)

    def _zeros(self, input):
        shape = (input.shape[0], self.hidden_size) if input.ndim == 2 else (self.hidden_size,)
        return st.zeros(*shape, dtype=input.dtype)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}"


class LSTMCell(_CellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(4, input_size, hidden_size, bias, dtype)

    def forward(self, input, hx=None):
        h, c = (self._zeros(input), self._zeros(input)) if hx is None else hx
        return _lstm_step(F.linear(input, self.weight_ih, self.bias_ih), h, c,
                          self.weight_hh, self.bias_hh)


class GRUCell(_CellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(3, input_size, hidden_size, bias, dtype)

    def forward(self, input, hx=None):
        h = self._zeros(input) if hx is None else hx
        return _gru_step(F.linear(input, self.weight_ih, self.bias_ih), h,
                         self.weight_hh, self.bias_hh)


class RNNCell(_CellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(1, input_size, hidden_size, bias, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        h = self._zeros(input) if hx is None else hx
        return _rnn_step(F.linear(input, self.weight_ih, self.bias_ih), h,
                         self.weight_hh, self.bias_hh, self.nonlinearity)


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) \
            else scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        what = f"scale_factor={self.scale_factor}" if self.scale_factor is not None else f"size={self.size}"
        return f"{what}, mode='{self.mode}'"


class LeakyReLU(Module):
    inplace = False  # see ReLU

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        if inplace:
            self.inplace = True

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}"


class _Elementwise(Module):
    """An activation without parameters: `FN` of the input, with the module's arguments."""

    FN = None
    ARGS = ()
    inplace = False  # see ReLU

    def __init__(self, *args, inplace=False, **kwargs):
        super().__init__()
        for name, default in self.ARGS:
            setattr(self, name, kwargs.pop(name, default))
        for (name, _), value in zip(self.ARGS, args):
            setattr(self, name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got unexpected arguments {sorted(kwargs)}")
        if inplace:
            self.inplace = True

    def forward(self, input):
        out = type(self).FN(input, *[getattr(self, name) for name, _ in self.ARGS])
        return F._in_place(input, out, self.inplace)

    def extra_repr(self):
        return ", ".join(f"{name}={getattr(self, name)}" for name, _ in self.ARGS)


class ReLU6(_Elementwise):
    FN = staticmethod(F.relu6)


class Hardtanh(_Elementwise):
    FN = staticmethod(F.hardtanh)
    ARGS = (("min_val", -1.0), ("max_val", 1.0))


class Hardsigmoid(_Elementwise):
    FN = staticmethod(F.hardsigmoid)


class Hardswish(_Elementwise):
    FN = staticmethod(F.hardswish)


class Mish(_Elementwise):
    FN = staticmethod(F.mish)


class SELU(_Elementwise):
    FN = staticmethod(F.selu)


class CELU(_Elementwise):
    FN = staticmethod(F.celu)
    ARGS = (("alpha", 1.0),)


class LogSigmoid(_Elementwise):
    FN = staticmethod(F.logsigmoid)


class Softsign(_Elementwise):
    FN = staticmethod(F.softsign)


class Tanhshrink(_Elementwise):
    FN = staticmethod(F.tanhshrink)


class Threshold(_Elementwise):
    FN = staticmethod(F.threshold)
    ARGS = (("threshold", None), ("value", None))


class GLU(_Elementwise):
    FN = staticmethod(F.glu)
    ARGS = (("dim", -1),)


class PReLU(Module):
    """`x` where it is positive, else `weight * x`: one learned slope, or one per channel."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(st.full((num_parameters,), init, dtype=dtype or st.get_default_dtype()))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class ELU(Module):
    inplace = False  # see ReLU

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        if inplace:
            self.inplace = True

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Softmax(Module):
    """`FN` (a softmax) along `dim`; LogSoftmax and Softmin are the same with their own."""

    FN = staticmethod(F.softmax)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return type(self).FN(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class _ChannelDropout(Dropout):
    FN = None

    def forward(self, input):
        return type(self).FN(input, self.p, self.training)


class Dropout1d(_ChannelDropout):
    FN = staticmethod(F.dropout1d)


class Dropout2d(_ChannelDropout):
    FN = staticmethod(F.dropout2d)


class Dropout3d(_ChannelDropout):
    FN = staticmethod(F.dropout3d)


class _PadNd(Module):
    """A border of `padding` (one int for every side, or torch's (before, after) pairs from
    the last dimension backwards) in `MODE`."""

    MODE = "constant"
    DIMS = 1

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = (padding,) * (2 * self.DIMS) if isinstance(padding, int) else tuple(padding)
        self.value = value

    def forward(self, input):
        if self.MODE == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self.MODE)

    def extra_repr(self):
        return f"{self.padding}" + (f", value={self.value}" if self.MODE == "constant" else "")


class ConstantPad1d(_PadNd):
    pass


class ConstantPad2d(_PadNd):
    DIMS = 2


class ConstantPad3d(_PadNd):
    DIMS = 3


class ZeroPad1d(_PadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ZeroPad2d(ZeroPad1d):
    DIMS = 2


class ZeroPad3d(ZeroPad1d):
    DIMS = 3


class ReflectionPad1d(ZeroPad1d):
    MODE = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    DIMS = 2


class ReplicationPad1d(ZeroPad1d):
    MODE = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    DIMS = 2


class CircularPad1d(ZeroPad1d):
    MODE = "circular"


class CircularPad2d(CircularPad1d):
    DIMS = 2


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Softmax2d(Module):
    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


class Hardshrink(_Elementwise):
    FN = staticmethod(F.hardshrink)
    ARGS = (("lambd", 0.5),)


class Softshrink(_Elementwise):
    FN = staticmethod(F.softshrink)
    ARGS = (("lambd", 0.5),)


class _InstanceNorm(Module):
    """Each channel of each sample normalized over its own positions, with a learnt scale
    and shift per channel when `affine` (torch's default: not). No running statistics."""

    _dims = 1

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, dtype=None):
        super().__init__()
        if track_running_stats:
            raise NotImplementedError("symtrace's instance norms keep no running statistics")
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            dtype = dtype or st.get_default_dtype()
            self.weight = Parameter(st.ones(num_features, dtype=dtype))
            self.bias = Parameter(st.zeros(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        if input.ndim not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input "
                             f"(got {input.ndim}D input)")
        if input.ndim == self._dims + 1:
            return F.instance_norm(input.unsqueeze(0), weight=self.weight, bias=self.bias,
                                   eps=self.eps)[0]
        return F.instance_norm(input, weight=self.weight, bias=self.bias, eps=self.eps)

    def extra_repr(self):
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, track_running_stats={self.track_running_stats}"


class InstanceNorm1d(_InstanceNorm):
    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    _dims = 2


class AdaptiveAvgPool1d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)




class _Loss(Module):
    """A loss as a module: its reduction, settled from the legacy flags as torch settles it."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = F._reduction(size_average, reduce, reduction)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with a weight per class, a buffer (it moves with the module, not trained)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class BCELoss(_WeightedLoss):
    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class CosineEmbeddingLoss(MarginRankingLoss):
    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class TripletMarginLoss(_Loss):
    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class KLDivLoss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class LogSoftmax(Softmax):
    FN = staticmethod(F.log_softmax)


class Softmin(Softmax):
    FN = staticmethod(F.softmin)


class Sequential(Module):
    """Modules applied in order; built from arguments or from an ordered dict."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        values = list(self._modules.values())
        if not -len(values) <= idx < len(values):
            raise IndexError(f"index {idx} is out of range")
        return values[idx]

    def _key(self, idx):
        keys = list(self._modules)
        if not -len(keys) <= idx < len(keys):
            raise IndexError(f"index {idx} is out of range")
        return keys[idx]

    def __setitem__(self, idx, module):
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules)[idx]:
                del self._modules[key]
        else:
            del self._modules[self._key(idx)]
        # Positions stay numbered from 0, as torch's Sequential keeps them.
        modules = list(self._modules.values())
        self._modules.clear()
        for i, module in enumerate(modules):
            self._modules[str(i)] = module

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m
        return self

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class _Listed(Module):
    """Entries held in a list, registered in the table `TABLE` (`_modules`, `_parameters`)
    under their positions (`"0"`, `"1"`...) by `_register`."""

    TABLE = "_modules"

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def _entries(self):
        return getattr(self, self.TABLE)

    def _index(self, idx):
        n = len(self._entries())
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return str(idx % n)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._entries().values())[idx])
        return self._entries()[self._index(idx)]

    def __setitem__(self, idx, value):
        self._register(self._index(idx), value)

    def __delitem__(self, idx):
        entries = self._entries()
        if isinstance(idx, slice):
            for key in list(entries)[idx]:
                del entries[key]
        else:
            del entries[self._index(idx)]
        self._renumber(list(entries.values()))

    def _renumber(self, values):
        # Positions stay numbered from 0, as torch's lists keep them.
        entries = self._entries()
        entries.clear()
        for i, value in enumerate(values):
            entries[str(i)] = value

    def insert(self, index, value):
        values = list(self._entries().values())
        values.insert(index, value)
        self._entries().clear()
        for i, v in enumerate(values):
            self._register(str(i), v)

    def pop(self, idx=-1):
        value = self[idx]
        del self[idx]
        return value

    def __len__(self):
        return len(self._entries())

    def __iter__(self):
        return iter(self._entries().values())

    def append(self, value):
        self._register(str(len(self)), value)
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} is not callable: iterate over it")


class _Keyed(Module):
    """Entries held by name in the table `TABLE`, in insertion order, registered by
    `_register`."""

    TABLE = "_modules"

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.update(values)

    def _entries(self):
        return getattr(self, self.TABLE)

    def __getitem__(self, key):
        return self._entries()[key]

    def __setitem__(self, key, value):
        self._register(key, value)

    def __delitem__(self, key):
        del self._entries()[key]

    def __len__(self):
        return len(self._entries())

    def __iter__(self):
        return iter(self._entries())

    def __contains__(self, key):
        return key in self._entries()

    def keys(self):
        return self._entries().keys()

    def items(self):
        return self._entries().items()

    def values(self):
        return self._entries().values()

    def get(self, key, default=None):
        return self._entries().get(key, default)

    def update(self, values):
        items = values.items() if hasattr(values, "items") else values
        for key, value in items:
            self[key] = value

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} is not callable: index it")


def _as_parameter(value):
    """What torch's parameter containers keep of `value`: a tensor as a parameter (one that
    is not yet one made into one), anything else as it is."""
    if isinstance(value, st.Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ModuleList(_Listed):
    """Submodules held in a list, registered under their positions."""

    def _register(self, name, module):
        self.add_module(name, module)


class ModuleDict(_Keyed):
    """Submodules held by name, in insertion order."""

    def _register(self, name, module):
        self.add_module(name, module)


class ParameterList(_Listed):
    """Parameters held in a list, registered under their positions (`"0"`, `"1"`...)."""

    TABLE = "_parameters"

    def _register(self, name, value):
        self.register_parameter(name, _as_parameter(value))


class ParameterDict(_Keyed):
    """Parameters held by name, in insertion order."""

    TABLE = "_parameters"

    def _register(self, name, value):
        self.register_parameter(name, _as_parameter(value))


class Bilinear(Module):
    """`y = x1^T A x2 + b`, A (out, in1, in2) and b drawn from U(-k, k) with
    k = 1/sqrt(in1_features), as torch initializes them."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        dtype = dtype or st.get_default_dtype()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        bound = 1.0 / math.sqrt(in1_features) if in1_features > 0 else 0.0
        self.weight = Parameter(_uniform((out_features, in1_features, in2_features), bound, dtype))
        if bias:
            self.bias = Parameter(_uniform((out_features,), bound, dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class SoftMarginLoss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = F._reduction(size_average, reduce, reduction)

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class PoissonNLLLoss(Module):
    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__()
        self.log_input, self.full, self.eps = log_input, full, eps
        self.reduction = F._reduction(size_average, reduce, reduction)

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)
