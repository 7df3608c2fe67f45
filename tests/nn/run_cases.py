"""Run the cases with symtrace.nn on the fork, eagerly or traced, and write the results:
    rustpython tests/nn/run_cases.py OUT [traced]"""
import os
import sys

import symtrace as st
import symtrace.nn as nn
from symtrace.nn import functional as F

sys.path.insert(0, os.path.dirname(__file__))
from harness import run  # noqa: E402

DTYPES = {"float32": st.float32, "float64": st.float64, "int64": st.int64, "bool": st.bool}


def T(data, dtype):
    return st.tensor(data, dtype=DTYPES[dtype])


def load(module, state):
    """Set the module's parameters from nested lists, through load_state_dict (strict=False:
    the cases give only some of them)."""
    current = module.state_dict()
    module.load_state_dict({k: st.tensor(v, dtype=current[k].dtype) for k, v in state.items()},
                           strict=False)


def to_result(t):
    return list(t.shape), t.dtype.name, t.reshape(-1).tolist()


traced = len(sys.argv) > 2 and sys.argv[2] == "traced"
run(T, nn, F, load, to_result, lambda v: isinstance(v, st.Tensor), sys.argv[1],
    call=(lambda f: st.compile(f)()) if traced else None, einsum=st.einsum, lib=st)
