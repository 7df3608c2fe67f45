"""torch's 3-D poolings (`max_pool3d`, `avg_pool3d`, `adaptive_avg_pool3d`,
`adaptive_max_pool3d` and their modules): strides, padding, dilation, `ceil_mode`,
`count_include_pad`, `divisor_override`, unbatched volumes, windows that do not tile.
`python3 pool3d_cases.py torch` printed pool3d_cases.expected with PyTorch 2.5.1
(tests/tensor_api.rs compares the fork's output, plain and under the plugin, with it)."""
import sys
if sys.argv[1:] == ["torch"]:
    import torch as st
else:
    import symtrace as st
nn = st.nn
F = st.nn.functional


def show(name, make):
    try:
        v = make()
    except Exception as e:
        print(name, type(e).__name__)
        return
    if isinstance(v, st.Tensor):
        v = (tuple(v.shape), [round(x, 10) + 0.0 for x in v.flatten().tolist()])
    print(name, v)


d = st.float64
x = (st.arange(2 * 2 * 5 * 6 * 7, dtype=d).reshape(2, 2, 5, 6, 7) * 0.37).sin()
show("max k2", lambda: F.max_pool3d(x, 2))
show("max k3 s2 p1", lambda: F.max_pool3d(x, 3, 2, 1))
show("max k(2,3,2) s(1,2,3)", lambda: F.max_pool3d(x, (2, 3, 2), (1, 2, 3)))
show("max dilation", lambda: F.max_pool3d(x, 2, 1, 0, dilation=(2, 1, 2)))
show("max ceil", lambda: F.max_pool3d(x, 2, 2, ceil_mode=True))
show("max unbatched", lambda: F.max_pool3d(x[0], 2))
show("avg k2", lambda: F.avg_pool3d(x, 2))
show("avg k3 s2 p1", lambda: F.avg_pool3d(x, 3, 2, 1))
show("avg k3 s2 p1 exclude pad", lambda: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False))
show("avg ceil", lambda: F.avg_pool3d(x, 2, 2, ceil_mode=True))
show("avg ceil pad exclude", lambda: F.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False))
show("avg divisor", lambda: F.avg_pool3d(x, 2, divisor_override=3))
show("adaptive avg 2", lambda: F.adaptive_avg_pool3d(x, 2))
show("adaptive avg (3,4,5)", lambda: F.adaptive_avg_pool3d(x, (3, 4, 5)))
show("adaptive avg None", lambda: F.adaptive_avg_pool3d(x, (None, 1, 3)))
show("adaptive avg 1", lambda: F.adaptive_avg_pool3d(x, 1))
show("adaptive max (2,4,3)", lambda: F.adaptive_max_pool3d(x, (2, 4, 3)))
show("adaptive max unbatched", lambda: F.adaptive_max_pool3d(x[1], 3))
show("MaxPool3d", lambda: nn.MaxPool3d(2, stride=1)(x))
show("MaxPool3d repr", lambda: repr(nn.MaxPool3d(3, padding=1)))
show("AvgPool3d", lambda: nn.AvgPool3d((1, 2, 2))(x))
show("AdaptiveAvgPool3d", lambda: nn.AdaptiveAvgPool3d((1, 1, 1))(x))
show("AdaptiveAvgPool3d repr", lambda: repr(nn.AdaptiveAvgPool3d(2)))
show("AdaptiveMaxPool3d", lambda: nn.AdaptiveMaxPool3d(2)(x))
show("max 2d input", lambda: F.max_pool3d(x[0, 0], 2))
