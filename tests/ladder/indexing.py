"""Tensor indexing in graphs: ints, slices with steps, None, `...`, int tensors (an embedding
lookup, from an input or made in the frame), lists of ints, bool masks made in the frame;
gather, index_select, masked_fill, split/chunk/narrow; and tensors made from constants in the
frame (arange, zeros, ones, eye, full, tril) combined with traced ones."""
from runner import case, finish
import symtrace as st

x = st.randn(4, 6)
table = st.randn(10, 3)
ids = st.tensor([[1, 2, 9], [0, 0, 4]])


def basic(a):
    return a[1], a[:2], a[::2], a[1:, ::-2], a[None, 0], a[..., -1], a[-1, 2:5]


def embedding(w, i):
    return w[i], w[st.tensor([3, 3])], w[[0, 5]]


def masks(a):
    keep = st.arange(6) % 2 == 0  # made from constants: its count is known
    first = st.arange(4) < 2
    return a[first], a[0][keep], a.T[keep]


def gathers(a, i):
    picks = st.tensor([[0, 5], [1, 1], [2, 0], [3, 3]])
    return a.gather(1, picks), a.index_select(0, st.tensor([3, 0])), i.sum()


def constants(a):
    n, m = a.shape
    pos = st.arange(0, n).reshape(n, 1)
    causal = st.tril(st.ones(n, m, dtype=st.bool))
    return (a * pos + st.eye(n, m) + st.zeros(n, m) + st.full((n, m), 0.5),
            a.masked_fill(~causal, float("-inf")))


def pieces(a):
    p, q = a.split(4, dim=1)
    c = a.chunk(3, dim=1)
    return p + 1.0, q, c[2] * 2.0, a.narrow(0, 1, 2), a.view(2, 12).size(), a.size(-1)


def rows(a):
    total = a[0] * 0.0
    for row in a:
        total = total + row
    return total


case(basic, x)
case(embedding, table, ids)
case(masks, x)
case(gathers, x, ids)
case(constants, x)
case(pieces, x)
case(rows, x)
finish()
