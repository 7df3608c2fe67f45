"""Empty tensors (a size of 0) in traced code: a KV cache that starts with no positions, a
slice of no rows, an empty argument, the reductions, products and factories of empty
tensors, and the ops that raise on one. Each function runs eagerly and compiled over the
same calls; the results (dtype, shape and values, NaN included), what they raise, and the
state they leave must be equal, and explain() of the last call must count one graph and no
break (but where an op raises): an empty tensor is a fake of its own like any other. Prints one line per case;
`FAIL` marks a failed one."""
import symtrace as st
import symtrace.nn as nn
import symtrace.nn.functional as F
from case_report import count_problems, report

failures = []


def plain(v):
    """A result as values only: tensors by dtype, shape and the repr of their items (so
    that NaN equals NaN)."""
    if isinstance(v, st.Tensor):
        return ("tensor", repr(v.dtype), tuple(v.shape), repr(v.tolist()))
    if isinstance(v, (list, tuple)):
        return [plain(i) for i in v]
    return v


def outcome(fn, args):
    try:
        return ("ok", plain(fn(*args)))
    except Exception as e:
        return ("raises", type(e).__name__, str(e))


@st.disable
def check(name, make, calls, state=lambda f: None, counted=True):
    eager_fn = make()
    eager = [outcome(eager_fn, a) for a in calls], plain(state(eager_fn))
    fn = make()
    compiled = st.compile(fn)
    before = st.stats()["translations"]
    traced = [outcome(compiled, a) for a in calls], plain(state(fn))
    made = st.stats()["translations"] - before
    problems = []
    if traced != eager:
        problems.append(f"traced {traced} != eager {eager}")
    if made == 0:
        problems.append("never translated")
    if counted:
        problems += count_problems(st.explain(fn, *calls[-1]), 1, 0)
    report(f"{name} ({made} translations)", problems, failures)


class Cache(nn.Module):
    """Keys appended per step to a cache that starts with no positions."""

    def __init__(self):
        super().__init__()
        st.manual_seed(0)
        self.proj = nn.Linear(4, 4)
        self.k = st.zeros(1, 0, 4)

    def forward(self, x):
        k = self.proj(x)
        self.k = st.cat([self.k, k], dim=1)
        att = (k @ self.k.transpose(-1, -2)).softmax(-1)
        return att @ self.k


check("a KV cache that starts empty", Cache, [(st.ones(1, 1, 4),)] * 5,
      state=lambda m: m.k)


def rows(x, n):
    e = x[:n]
    return e.sum(0), e.shape, st.cat([e, x]).mean(0), e * 2.0, e.numel(), len(e)


check("a slice of no rows, then of some", lambda: rows,
      [(st.arange(6.0).view(3, 2), 0), (st.arange(6.0).view(3, 2), 2), (st.arange(6.0).view(3, 2), 0)])


def reductions(e, x):
    # The sums and products of nothing, a mean of nothing (NaN), a product over an empty
    # inner dimension (zeros), a softmax and a reshape of nothing.
    return (e.sum(), e.prod(), e.mean(0), e.sum(0), e @ x, e.t() @ e, e.softmax(-1),
            e.reshape(0, 3), e.view(-1), e.exp() + 1.0, st.zeros_like(e), e.to(st.int64))


check("reductions and products of an empty argument", lambda: reductions,
      [(st.ones(0, 3), st.ones(3, 2)), (st.ones(0, 3), st.ones(3, 2))])


def grown(x, lengths):
    # An empty int tensor grown by steps; an index tensor that picks nothing.
    seen = st.zeros(0, dtype=st.int64)
    for n in lengths:
        seen = st.cat([seen, st.tensor([n])])
    picked = x[st.zeros(0, dtype=st.int64)]
    return seen, picked, picked.sum(), x.new_zeros(0, 2).sum(1)


check("an int tensor grown from empty, an index picking nothing", lambda: grown,
      [(st.arange(4.0), (1, 2)), (st.arange(4.0), (3, 4))])


def extremes(e):
    try:
        return e.max()
    except RuntimeError as err:
        return "raised " + str(err)


# The call on an empty tensor runs as written (the op raises), the other is captured.
check("max of an empty tensor raises as eager", lambda: extremes,
      [(st.ones(0, 2),), (st.ones(2, 2),), (st.ones(0, 2),)], counted=False)


def padded(x, width):
    # Padding to the width the sequence has already: pads of 0, an empty pad made and cat.
    pad = x.new_zeros(x.shape[0], width - x.shape[1])
    return st.cat([x, pad], 1), F.pad(x, (0, width - x.shape[1]))


check("pads of no width", lambda: padded, [(st.ones(2, 3), 3), (st.ones(2, 3), 5), (st.ones(2, 3), 3)])


def written(e, x):
    e.add_(1.0)
    e[:] = 5.0
    return e, x + e.sum()


check("in-place writes to an empty argument", lambda: written,
      [(st.ones(0, 2), st.ones(2)), (st.ones(0, 2), st.ones(2))])

print("EMPTY TENSORS", "FAILED " + ", ".join(failures) if failures else "OK")
