"""Evaluate the cases with symtrace on the fork:  rustpython tests/tensor/run_cases.py OUT
(cases.py, against NumPy's reference), or  ... run_cases.py OUT torch  (torch_cases.py, torch's
API where NumPy has none, with `F` the symtrace module itself)."""
import os
import sys
import types

import symtrace as st

sys.path.insert(0, os.path.dirname(__file__))
from harness import run  # noqa: E402

DTYPES = {"float32": st.float32, "float64": st.float64, "int64": st.int64, "bool": st.bool, None: None}


def T(data, dtype):
    return st.tensor(data, dtype=DTYPES[dtype])


F = types.SimpleNamespace(
    exp=st.exp, log=st.log, sqrt=st.sqrt, tanh=st.tanh, sin=st.sin, cos=st.cos,
    sigmoid=st.sigmoid, relu=st.relu,
    clamp=lambda x, lo, hi: x.clamp(min=lo, max=hi),
    maximum=st.maximum, minimum=st.minimum, where=st.where,
    sum=lambda x, dim=None, keepdim=False: x.sum(dim=dim, keepdim=keepdim),
    mean=lambda x, dim=None, keepdim=False: st.mean(x, dim=dim, keepdim=keepdim),
    max=lambda x, dim=None, keepdim=False: x.amax(dim=dim, keepdim=keepdim),
    min=lambda x, dim=None, keepdim=False: x.amin(dim=dim, keepdim=keepdim),
    argmax=lambda x, dim=None: st.argmax(x, dim=dim),
    argmin=lambda x, dim=None: x.argmin(dim=dim),
    softmax=lambda x, dim: st.softmax(x, dim=dim),
    log_softmax=lambda x, dim: x.log_softmax(dim),
    matmul=st.matmul, dot=st.dot,
    cat=lambda seq, dim: st.cat(seq, dim=dim),
    stack=lambda seq, dim: st.stack(seq, dim),
    copy=lambda x: x.clone(),
    rsqrt=st.rsqrt,
    full_like=st.full_like,
    einsum=st.einsum,
)


def to_result(x):
    if not isinstance(x, st.Tensor):
        x = st.tensor(x)
    return list(x.shape), x.dtype.name, x.reshape(-1).tolist()


if sys.argv[2:] == ["torch"]:
    from torch_cases import ASSIGNMENTS, CASES  # noqa: E402

    run(T, st, to_result, sys.argv[1], CASES, ASSIGNMENTS)
else:
    run(T, F, to_result, sys.argv[1])
