"""F.conv3d and nn.Conv3d (groups, strides, padding including 'same', dilation, unbatched
input, a module's repr): `python3 conv3d.py torch` printed conv3d.expected with PyTorch 2.5.1
(tests/nn.rs compares the fork's output, plain and under the plugin, with it)."""
from printed import F, nn, show, st


def t(name, f):
    show(name, f, digits=9, message=0)


x = (st.arange(2 * 4 * 5 * 6 * 7, dtype=st.float64).reshape(2, 4, 5, 6, 7) % 11) / 7.0 - 0.5
w = (st.arange(6 * 2 * 3 * 2 * 3, dtype=st.float64).reshape(6, 2, 3, 2, 3) % 5) / 9.0 - 0.2
b = st.tensor([0.1, -0.2, 0.3, 0.0, 0.5, -0.5], dtype=st.float64)
t("conv3d", lambda: F.conv3d(x, w[:, :2].repeat(1, 2, 1, 1, 1)[:, :4], b))
t("conv3d groups", lambda: F.conv3d(x, w, b, groups=2))
t("conv3d stride pad dil", lambda: F.conv3d(x, w, None, stride=(2, 1, 2), padding=(1, 0, 2), dilation=(1, 2, 1), groups=2))
t("conv3d same", lambda: F.conv3d(x, w, b, padding="same", groups=2))
t("conv3d valid unbatched", lambda: F.conv3d(x[0], w, b, padding="valid", groups=2))
t("conv3d too small", lambda: F.conv3d(x[:, :, :1], w, groups=2))
m = nn.Conv3d(4, 6, (3, 2, 3), groups=2, padding=1, dtype=st.float64)
m.weight.data.copy_(w); m.bias.data.copy_(b)
t("Conv3d module", lambda: m(x))
print(m)
