"""F.fold and nn.Fold (torch's col2im) on what F.unfold made, with strides, padding and
dilation, and their errors: `python3 fold.py torch` printed fold.expected with PyTorch 2.5.1
(tests/nn.rs compares the fork's output, plain and under the plugin, with it)."""
from printed import F, nn, show, st


def t(name, f):
    show(name, f)


x = st.arange(2 * 3 * 5 * 6, dtype=st.float64).reshape(2, 3, 5, 6) / 7.0
for kw in ({"kernel_size": 2}, {"kernel_size": (2, 3), "stride": 2}, {"kernel_size": 3, "padding": 1}, {"kernel_size": 2, "dilation": 2, "stride": (1, 2)}):
    cols = F.unfold(x, **kw)
    t(f"fold {kw}", lambda: F.fold(cols * 1.1, (5, 6), **kw))
t("fold module unbatched", lambda: nn.Fold((5, 6), 2)(F.unfold(x, 2)[0]))
t("fold bad blocks", lambda: F.fold(F.unfold(x, 2), (4, 6), 2))
t("fold bad channels", lambda: F.fold(st.ones(1, 5, 4, dtype=st.float64), (3, 3), 2))
t("fold divisor", lambda: F.fold(F.unfold(x, 3, padding=1), (5, 6), 3, padding=1) / F.fold(F.unfold(st.ones_like(x), 3, padding=1), (5, 6), 3, padding=1))
