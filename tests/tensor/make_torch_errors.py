"""Compute torch_errors.json with PyTorch on CPython:  python3 tests/tensor/make_torch_errors.py
(needs torch; the file is committed, the tests do not run this). The cases of cases.py that
raise in NumPy (reference.json) evaluated with torch: symtrace's API is torch's, so an error
is raised as the exception class torch raises (a shape that does not fit is a RuntimeError
there, a ValueError in NumPy), and compare.py holds the fork to these classes. A case that
raises in NumPy alone is left to NumPy's class."""
import json
import os
import sys
import tempfile
import types

import torch

sys.path.insert(0, os.path.dirname(__file__))
from harness import run  # noqa: E402


def T(data, dtype):
    return torch.tensor(data, dtype=getattr(torch, dtype or "float64"))


class TorchFunctions(types.SimpleNamespace):
    """The namespace `F` of the cases: torch's functions, and `copy` as `clone`."""

    def __getattr__(self, name):
        return torch.clone if name == "copy" else getattr(torch, name)


def to_result(x):
    x = torch.as_tensor(x)
    return list(x.shape), str(x.dtype).removeprefix("torch."), x.flatten().tolist()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "torch.json")
        run(T, TorchFunctions(), to_result, path)
        results = json.load(open(path))
    numpy_errors = {n for n, r in json.load(open(os.path.join(here, "reference.json"))).items() if "error" in r}
    errors = {name: r["error"] for name, r in results.items() if "error" in r and name in numpy_errors}
    with open(os.path.join(here, "torch_errors.json"), "w") as out:
        json.dump(errors, out, indent=0, sort_keys=True)
        out.write("\n")
    for name, cls in sorted(errors.items()):
        print(name, cls)


main()
