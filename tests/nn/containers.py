"""Sequential and ModuleList edited as lists (item assignment, deletion, insert, pop, extend):
the keys stay numbered from 0 and the modules keep their order, as in PyTorch. Runs under
PyTorch too (`python3 containers.py torch`), which printed what tests/nn.rs expects."""
import sys

if sys.argv[1:] == ["torch"]:
    import torch.nn as nn
else:
    import symtrace.nn as nn


def show(label, container):
    print(label, [(k, type(m).__name__) for k, m in container._modules.items()])


seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))
seq[1] = nn.Tanh()
show("set", seq)
seq.insert(1, nn.GELU())
show("insert", seq)
seq.insert(-1, nn.Sigmoid())
show("insert -1", seq)
del seq[0]
show("del 0", seq)
print("pop", type(seq.pop(1)).__name__)
show("after pop", seq)
seq.extend([nn.ReLU(), nn.Identity()])
show("extend", seq)
del seq[1:3]
show("del 1:3", seq)
seq[-1] = nn.Softplus()
show("set -1", seq)
for bad in (lambda: seq.__setitem__(9, nn.ReLU()), lambda: seq.__delitem__(-9)):
    try:
        bad()
    except IndexError:
        print("IndexError")

lst = nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.GELU()])
lst.insert(1, nn.Sigmoid())
show("list insert", lst)
del lst[0]
show("list del 0", lst)
print("list pop", type(lst.pop(-1)).__name__)
show("list after pop", lst)
del lst[::2]
show("list del ::2", lst)
