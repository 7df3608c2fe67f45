from runner import case, finish
import symtrace as st

x = st.randn(3, 2)

def sizes(a, xs):
    return len(xs), len(a), isinstance(a, st.Tensor), isinstance(xs, (list, tuple)), a

def numbers(n, f):
    return abs(-n), min(n, 2), max(n, 5, 1), round(f, 1), int(f), float(n), str(n), divmod(n, 3), pow(n, 2)

def tensor_builtins(a, xs):
    return sum(xs), abs(a), getattr(a, "shape"), sum([a, a], a)

def sequences(a):
    return tuple([a, 1]), list((a,)), sorted([3, 1, 2]), list(reversed([1, 2, 3]))

class Flag:
    def __init__(self, on):
        self.on = on

    def __bool__(self):
        return self.on


class Box:
    def __len__(self):
        return 0


def truths(a, d, flag):
    # `bool()` is the truth `if` takes: a caller's dict, `__bool__`, `__len__`, a number.
    return a * 2.0 if bool(d) and bool(flag) and not bool(Box()) and bool(len(d)) else a

def callables(a, act, scale, module):
    # `callable()` of a function, a number, None, a module, a method, a lambda made here.
    out = act(a) if callable(act) else a
    out = out * (scale() if callable(scale) else scale)
    if callable(None) or not callable(module) or not callable(a.sum):
        return out
    return module(out) if callable(lambda: 0) else out


case(sizes, x, [1, 2, 3], graphs=0)
case(callables, x, st.relu, 2.0, st.nn.Identity())
case(truths, x, {"k": 1}, Flag(True))
case(numbers, 7, 2.56, graphs=0)
case(tensor_builtins, x, [x, x, x])
case(sequences, x, graphs=0)
finish()
