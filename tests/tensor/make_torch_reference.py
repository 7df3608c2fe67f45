"""Compute torch_reference.json with PyTorch on CPython:  python3 tests/tensor/make_torch_reference.py
(needs torch; the file is committed, the tests do not run this). The cases of torch_cases.py,
torch's API where NumPy has no counterpart, evaluated with torch itself."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from harness import run  # noqa: E402
from torch_cases import ASSIGNMENTS, CASES  # noqa: E402


def T(data, dtype):
    return torch.tensor(data, dtype=getattr(torch, dtype or "float64"))


def to_result(x):
    x = torch.as_tensor(x)
    return list(x.shape), str(x.dtype).removeprefix("torch."), x.flatten().tolist()


here = os.path.dirname(os.path.abspath(__file__))
run(T, torch, to_result, os.path.join(here, "torch_reference.json"), CASES, ASSIGNMENTS)
print(f"{len(CASES) + len(ASSIGNMENTS)} cases written to torch_reference.json")
