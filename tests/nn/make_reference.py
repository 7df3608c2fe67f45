"""Compute reference.json with PyTorch on CPython (needs torch; the file is committed, the
tests do not run this):  python3 tests/nn/make_reference.py"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from harness import run  # noqa: E402

torch.set_default_dtype(torch.float64)
DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64, "bool": torch.bool}


def T(data, dtype):
    return torch.tensor(data, dtype=DTYPES[dtype])


def load(module, state):
    with torch.no_grad():
        for name, value in state.items():
            param = module.get_parameter(name)
            param.copy_(torch.tensor(value, dtype=param.dtype))


def to_result(t):
    t = t.detach()
    return list(t.shape), str(t.dtype).replace("torch.", ""), t.reshape(-1).tolist()


run(T, nn, F, load, to_result, lambda v: isinstance(v, torch.Tensor),
    os.path.join(os.path.dirname(__file__), "reference.json"), einsum=torch.einsum, lib=torch)
