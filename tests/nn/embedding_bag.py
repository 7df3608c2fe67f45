"""F.embedding_bag and nn.EmbeddingBag (sum, mean and max bags of 1-D input with offsets or
of 2-D input; padding_idx, include_last_offset, per_sample_weights) and their errors:
`python3 embedding_bag.py torch` printed embedding_bag.expected with PyTorch 2.5.1
(tests/nn.rs compares the fork's output, plain and under the plugin, with it)."""
from printed import F, nn, show, st


def t(name, f):
    show(name, f, message=100)


w = st.arange(6 * 3, dtype=st.float64).reshape(6, 3) / 7.0 - 1.0
x1 = st.tensor([1, 2, 4, 5, 4, 3, 2, 0])
off = st.tensor([0, 3, 3, 6])
x2 = st.tensor([[1, 2, 0], [4, 4, 5]])
psw = st.tensor([0.5, 1.0, 2.0, -1.0, 1.5, 0.25, 1.0, 3.0], dtype=st.float64)
for mode in ("sum", "mean", "max"):
    t(f"1d {mode}", lambda: F.embedding_bag(x1, w, off, mode=mode))
    t(f"2d {mode}", lambda: F.embedding_bag(x2, w, mode=mode))
    t(f"1d {mode} pad", lambda: F.embedding_bag(x1, w, off, mode=mode, padding_idx=4))
    t(f"2d {mode} last", lambda: F.embedding_bag(x1, w, st.tensor([0, 3, 8]), mode=mode, include_last_offset=True))
t("psw", lambda: F.embedding_bag(x1, w, off, mode="sum", per_sample_weights=psw))
t("psw mean", lambda: F.embedding_bag(x1, w, off, mode="mean", per_sample_weights=psw))
t("2d offsets", lambda: F.embedding_bag(x2, w, off))
t("1d no offsets", lambda: F.embedding_bag(x1, w))
bag = nn.EmbeddingBag(6, 3, mode="sum", dtype=st.float64)
bag.weight.data.copy_(w)
t("module", lambda: bag(x1, off))
t("module 2d max", lambda: nn.EmbeddingBag(6, 3, mode="max", _weight=w)(x2))
