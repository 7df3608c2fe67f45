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

case(sizes, x, [1, 2, 3], graphs=0)
case(numbers, 7, 2.56, graphs=0)
case(tensor_builtins, x, [x, x, x])
case(sequences, x, graphs=0)
finish()
