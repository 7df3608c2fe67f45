"""F.fold and nn.Fold (torch's col2im) on what F.unfold made, with strides, padding and
dilation, and their errors: `python3 fold.py torch` printed fold.expected with PyTorch 2.5.1
(tests/nn.rs compares the fork's output, plain and under the plugin, with it)."""
import sys
if sys.argv[1:] == ["torch"]:
    import torch as st
    import torch.nn as nn
    import torch.nn.functional as F
else:
    import symtrace as st
    import symtrace.nn as nn
    import symtrace.nn.functional as F
def r(t, d=10):
    return (tuple(t.shape), [round(x, d) for x in t.flatten().tolist()])
def t(name, f):
    try:
        print(name, r(f()))
    except Exception as e:
        print(name, type(e).__name__, str(e).split("\n")[0])
x = st.arange(2 * 3 * 5 * 6, dtype=st.float64).reshape(2, 3, 5, 6) / 7.0
for kw in ({"kernel_size": 2}, {"kernel_size": (2, 3), "stride": 2}, {"kernel_size": 3, "padding": 1}, {"kernel_size": 2, "dilation": 2, "stride": (1, 2)}):
    cols = F.unfold(x, **kw)
    t(f"fold {kw}", lambda: F.fold(cols * 1.1, (5, 6), **kw))
t("fold module unbatched", lambda: nn.Fold((5, 6), 2)(F.unfold(x, 2)[0]))
t("fold bad blocks", lambda: F.fold(F.unfold(x, 2), (4, 6), 2))
t("fold bad channels", lambda: F.fold(st.ones(1, 5, 4, dtype=st.float64), (3, 3), 2))
t("fold divisor", lambda: F.fold(F.unfold(x, 3, padding=1), (5, 6), 3, padding=1) / F.fold(F.unfold(st.ones_like(x), 3, padding=1), (5, 6), 3, padding=1))
