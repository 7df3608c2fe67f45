"""F.affine_grid and F.grid_sample (bilinear and nearest, zeros and border padding, with and
without align_corners) printed to 10 decimals: `python3 grid_sampling.py torch` printed
grid_sampling.expected with PyTorch 2.5.1 (tests/nn.rs compares the fork's output, plain and
under the plugin, with it)."""
from printed import F, show, st


def t(name, f):
    show(name, f)


img = st.arange(2 * 3 * 4 * 5, dtype=st.float64).reshape(2, 3, 4, 5) / 7.0
theta = st.tensor([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.25]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=st.float64)
for ac in (False, True):
    t(f"affine_grid ac={ac}", lambda: F.affine_grid(theta, (2, 3, 3, 4), align_corners=ac))
    g = F.affine_grid(theta, (2, 3, 3, 4), align_corners=ac)
    for mode in ("bilinear", "nearest"):
        for pad in ("zeros", "border"):
            t(f"grid_sample {mode} {pad} ac={ac}", lambda: F.grid_sample(img, g * 1.3, mode=mode, padding_mode=pad, align_corners=ac))
t("affine_grid 1 wide", lambda: F.affine_grid(theta, (2, 1, 2, 1), align_corners=False))
t("identity", lambda: (F.grid_sample(img, F.affine_grid(theta[1:].expand(2, 2, 3), img.shape, align_corners=False), align_corners=False) - img).abs().max())
try:
    F.affine_grid(theta[:, :1], (2, 3, 3, 4))
except ValueError:
    print("bad theta ValueError")
