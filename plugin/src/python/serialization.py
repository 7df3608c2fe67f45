"""torch's saving and loading (`save`, `load`: Python's pickle, tensors pickled as their
values, shape, type and parameter mark, so that a checkpoint written by `save` of a model's
`state_dict` loads back into one), its generator's state (`get_rng_state`,
`set_rng_state`, `initial_seed`, `seed`) and `Generator` objects, and `set_printoptions` (taken, not followed:
symtrace prints tensors its own way). Built into the binary; `_st` is the symtrace module.
The files are symtrace's own: torch's zip archives do not load here, nor ours in torch."""

import os as _os
import pickle as _pickle


def _rebuild_tensor(values, shape, dtype_name, requires_grad):
    """A pickled tensor made again (what `Tensor.__reduce__` names)."""
    t = _st.tensor(values, dtype=getattr(_st, dtype_name)).reshape(shape)
    if requires_grad:
        t.requires_grad = True
    return t


def _reduce(self):
    return _st._rebuild_tensor, (self.tolist(), tuple(self.shape), str(self.dtype).split(".")[-1],
                                 bool(self.requires_grad))


def _is_path(f):
    return isinstance(f, (str, bytes, _os.PathLike))


def save(obj, f, pickle_module=_pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    if _is_path(f):
        with open(f, "wb") as out:
            pickle_module.dump(obj, out, protocol=pickle_protocol)
    else:
        pickle_module.dump(obj, f, protocol=pickle_protocol)


# What `load(weights_only=True)` lets a file name: tensors, the containers a state dict is
# made of, and plain values; anything else could run code when it is made.
_WEIGHTS_ONLY = {
    ("symtrace", "_rebuild_tensor"), ("collections", "OrderedDict"),
    ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice"),
    ("builtins", "complex"),
}


class _WeightsOnlyUnpickler(_pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _WEIGHTS_ONLY:
            return super().find_class(module, name)
        raise _pickle.UnpicklingError(
            f"Weights only load failed: unsupported global {module}.{name}; load with "
            "weights_only=False if the file is trusted")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    def read(stream):
        if weights_only and pickle_module is None:
            return _WeightsOnlyUnpickler(stream, **pickle_load_args).load()
        return (pickle_module or _pickle).load(stream, **pickle_load_args)

    if _is_path(f):
        with open(f, "rb") as stream:
            return read(stream)
    return read(f)


def get_rng_state():
    """The generator's state as a one-element int64 tensor (its 64 bits, signed)."""
    state = _st._rng_state()
    return _st.tensor([state - (1 << 64) if state >= (1 << 63) else state], dtype=_st.int64)


def set_rng_state(new_state):
    _st._set_rng_state(int(new_state.reshape(-1)[0].item()) & ((1 << 64) - 1))


def seed():
    """Seed the generator from the operating system's randomness; the seed."""
    s = int.from_bytes(_os.urandom(8), "little") >> 1
    _st.manual_seed(s)
    return s


class Generator:
    """torch's `Generator`: a random stream of its own, seeded apart from the global one
    (`random_split(ds, lengths, generator=Generator().manual_seed(42))`). A draw given it
    runs on the global generator with the stream's state swapped in (`_drawing_from`)."""

    def __init__(self, device="cpu"):
        self.device = _st.device(device) if isinstance(device, str) else device
        self._seed = 67280421310721
        self._state = self._seed

    def manual_seed(self, seed):
        self._seed = int(seed) & ((1 << 64) - 1)
        self._state = self._seed
        return self

    def seed(self):
        self.manual_seed(int.from_bytes(_os.urandom(8), "little") >> 1)
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        state = self._state
        return _st.tensor([state - (1 << 64) if state >= (1 << 63) else state], dtype=_st.int64)

    def set_state(self, new_state):
        self._state = int(new_state.reshape(-1)[0].item()) & ((1 << 64) - 1)
        return self

    def __repr__(self):
        return "<symtrace.Generator>"


class _drawing_from:
    """`with _drawing_from(generator):` the global generator has `generator`'s state for the
    draws inside, and gets its own back after (a None generator changes nothing)."""

    def __init__(self, generator):
        if generator is not None and not isinstance(generator, Generator):
            raise TypeError(f"generator must be a symtrace.Generator, not {type(generator).__name__}")
        self.generator = generator

    def __enter__(self):
        if self.generator is not None:
            self.saved = _st._rng_state()
            _st._set_rng_state(self.generator._state)
        return self

    def __exit__(self, *exc):
        if self.generator is not None:
            self.generator._state = _st._rng_state()
            _st._set_rng_state(self.saved)
        return False


_PRINT_OPTIONS = {}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    _PRINT_OPTIONS.update((k, v) for k, v in dict(
        precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth,
        profile=profile, sci_mode=sci_mode).items() if v is not None)


FUNCTIONS = []
MODULE_ONLY = {
    "_rebuild_tensor": _rebuild_tensor, "save": save, "load": load,
    "get_rng_state": get_rng_state, "set_rng_state": set_rng_state, "seed": seed,
    "set_printoptions": set_printoptions, "Generator": Generator, "_drawing_from": _drawing_from,
}
METHODS = {"__reduce__": _reduce}
