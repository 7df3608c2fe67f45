"""Dynamic sizes: each function runs over batch sizes that change per call. A size the
program reads and computes with (`len(x) // 2`) and gives to a slice, a reshape or a tensor
made in its shape (`st.ones(x.shape[0], 3)`) or an identity (`st.eye(n)`) is worked out per
call; one used as a plain number (`[1.0] * n`), or rows iterated, fix the size; a shape read from a value made from
the input (an update in place reads it) is checked per call, as is each dimension a squeeze
may drop; results equal eager everywhere. Prints `<function> <translations>`."""
import symtrace as st

def half(x):          # len → a size worked out per call
    return x[: len(x) // 2] * 2.0
def flat(x):          # reshape to -1: worked out by the op per call
    return x.reshape(-1) + 1.0
def like(x):          # a tensor made in x's shape: worked out per call
    return x + st.ones(x.shape[0], 3)
def eye_of(x):        # identities of sizes: worked out per call
    return x @ st.eye(x.shape[1]) + st.eye(x.shape[0]).sum()
def numbered(x):      # a size given where it is a plain number: a list's repeat
    return x + st.tensor([1.0] * x.shape[0])[:, None]
def rows(x):          # iterating rows
    return sum([r * 1.0 for r in x], st.zeros(3))
def fine(x, w):       # nothing reads a size
    return (x @ w).relu().sum(-1) + x.mean(0).sum()
def cat(x):
    return st.cat([x, x * 2.0], 0).sum(0)
class Stats:
    def __init__(self):
        self.running = st.zeros(3)
state = Stats()
def stats(x):         # an update in place reads the shape of a per-column mean: the same at
    state.running *= 0.9          # every batch size, checked per call
    state.running += x.mean(0) * 0.1
    return x - state.running
def fits_or_not(x):   # the same read where the shape follows the batch size: it fits at 1 only
    acc = st.zeros(1)
    try:
        acc += x.sum(1)
    except RuntimeError:
        return x * 0.0
    return acc * x
def head(x, w):       # a squeeze of a dimension that is 1 whatever the batch size (a linear
    return (x @ w[:, :1]).squeeze(-1) * 2.0      # head's): checked per call, one graph
def squeeze_all(x):   # squeeze() drops the batch dimension too when it is 1
    return x.unsqueeze(1).squeeze() + 1.0
def squeeze_batch(x): # a squeeze of the dynamic dimension: nothing at 2 or more
    return x.squeeze(0).sum(-1)
def residual(x):      # an update in place of a value made from the input: that it fits is
    out = x * 2.0                 # checked per call, one graph
    out += x
    out *= x.mean(0)
    return out.relu()
w = st.randn(3, 4)
for f, args in [(half, ()), (flat, ()), (like, ()), (eye_of, ()), (numbered, ()), (rows, ()), (fine, (w,)), (cat, ()),
                (stats, ()), (fits_or_not, ()), (head, (w,)), (squeeze_all, ()), (squeeze_batch, ()),
                (residual, ())]:
    st.reset()
    cf = st.compile(f)
    for b in [2, 3, 5, 4, 7, 2, 9, 16, 1, 3]:
        x = st.randn(b, 3)
        before = state.running.clone()
        a = cf(x, *args)
        traced_running = state.running.clone()
        state.running[...] = before
        e = f(x, *args)
        assert traced_running.tolist() == state.running.tolist(), (f.__name__, b)
        assert a.shape == e.shape and a.tolist() == e.tolist(), (f.__name__, b, a, e)
    print(f.__name__, st.stats()["translations"])
# A size used as a number beside one that changes freely: the rows a mask picked (their count
# depends on the data) summed with a count of x's rows. The count fixes x's size; the picked
# rows stay dynamic: one entry per size of x, not one per pair of sizes.
def pinned_beside_free(x, picked):
    return st.tensor([1.0] * x.shape[0]).sum() + picked.sum(0) * float(len(x))
st.reset()
cf = st.compile(pinned_beside_free)
for b, k in [(2, 3), (3, 5), (2, 4), (3, 7), (2, 9), (3, 2), (2, 16), (3, 6), (4, 5), (2, 11)]:
    x, picked = st.randn(b, 3), st.randn(k, 3)
    a, e = cf(x, picked), pinned_beside_free(x, picked)
    assert a.shape == e.shape and a.tolist() == e.tolist(), (b, k, a, e)
print("pinned_beside_free", st.stats()["translations"])
print("LEAKS OK")
