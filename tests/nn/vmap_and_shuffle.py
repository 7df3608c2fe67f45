"""symtrace.vmap and symtrace.func.vmap (in_dims, out_dims, structures in and out, nested),
F.channel_shuffle and nn.ChannelShuffle, and their errors: `python3 vmap_and_shuffle.py torch`
printed vmap_and_shuffle.expected with PyTorch 2.5.1 (tests/nn.rs compares the fork's output,
plain and under the plugin, with it)."""
from printed import F, nn, show, st


def t(name, f):
    show(name, f, message=90)


x = st.arange(24, dtype=st.float64).reshape(2, 3, 4) / 5.0
w = st.arange(12, dtype=st.float64).reshape(4, 3) / 7.0
t("vmap basic", lambda: st.vmap(lambda a: a @ w)(x))
t("vmap in_dims", lambda: st.vmap(lambda a, b: a * b, in_dims=(1, None))(x, x[0, 0]))
t("vmap out_dims", lambda: st.vmap(lambda a: a.sum(0), out_dims=1)(x))
t("vmap tuple out", lambda: st.vmap(lambda a: (a.max(), a.mean(-1)))(x))
t("vmap dict in", lambda: st.vmap(lambda d: d["p"] + d["q"].sum())({"p": x, "q": x}))
t("vmap nested", lambda: st.vmap(st.vmap(lambda a: a.dot(a)))(x))
t("vmap func", lambda: st.func.vmap(lambda a, b: F.softmax(a + b, -1), in_dims=(0, 0))(x, x * 2))
t("vmap sizes", lambda: st.vmap(lambda a, b: a + b)(x, x[:1]))
t("channel_shuffle", lambda: F.channel_shuffle(st.arange(16, dtype=st.float64).reshape(1, 4, 2, 2), 2))
t("ChannelShuffle", lambda: nn.ChannelShuffle(3)(st.arange(12, dtype=st.float64).reshape(1, 6, 2)))
t("channel_shuffle bad", lambda: F.channel_shuffle(st.ones(1, 5, 2), 2))
