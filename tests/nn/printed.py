"""What the scripts compared with PyTorch's printed output share: the library (torch when a
script's argument is `torch`, symtrace otherwise) and how a case's result is printed."""
import sys

if sys.argv[1:] == ["torch"]:
    import torch as st
    import torch.nn as nn
    import torch.nn.functional as F
else:
    import symtrace as st
    import symtrace.nn as nn
    import symtrace.nn.functional as F

__all__ = ["st", "nn", "F", "show"]


def rounded(value, digits):
    """A tensor as its shape and values to `digits` decimals; tuples, lists and dicts of them."""
    if isinstance(value, (tuple, list)):
        return [rounded(v, digits) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    return (tuple(value.shape), [round(x, digits) for x in value.flatten().tolist()])


def show(name, make, digits=10, message=None):
    """`name` and what `make()` gives, or the class of what it raises and the first line of
    its message (`message` characters of it; 0: none)."""
    try:
        print(name, rounded(make(), digits))
    except Exception as e:
        text = str(e).split("\n")[0]
        if message == 0:
            print(name, type(e).__name__)
        else:
            print(name, type(e).__name__, text if message is None else text[:message])
