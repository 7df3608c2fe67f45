"""torch functions written as compositions of registry ops (`bincount`, `copysign`,
`logaddexp2`, `histc`, `ldexp`, `is_nonzero`, `result_type`, `promote_types`, `can_cast`) and
the losses `gaussian_nll_loss` and `hinge_embedding_loss`, with their
errors, printed so that PyTorch's output can be compared line by line: `python3
composite_cases.py torch` printed composite_cases.expected with PyTorch 2.5.1
(tests/tensor_api.rs compares the fork's output, plain and under the plugin, with it)."""
import sys
if sys.argv[1:] == ["torch"]:
    import torch as st
    import torch.nn.functional as F
else:
    import symtrace as st
    import symtrace.nn.functional as F
def r(t, d=12):
    return (tuple(t.shape), str(t.dtype).split(".")[-1], [round(x, d) if isinstance(x, float) else x for x in t.flatten().tolist()])
def t(name, f):
    try:
        print(name, r(f()))
    except Exception as e:
        print(name, type(e).__name__, str(e).split("\n")[0])
x = st.tensor([1, 3, 1, 0, 5])
w = st.tensor([0.5, 1.0, 2.0, 1.5, 1.0], dtype=st.float64)
t("bincount", lambda: st.bincount(x))
t("bincount min", lambda: st.bincount(x, minlength=8))
t("bincount w", lambda: st.bincount(x, weights=w))
t("bincount w32", lambda: st.bincount(x, weights=w.float()))
t("bincount empty", lambda: st.bincount(st.tensor([], dtype=st.int64)))
t("bincount neg", lambda: st.bincount(st.tensor([1, -1])))
t("bincount 2d", lambda: st.bincount(st.tensor([[1]])))
t("bincount float", lambda: st.bincount(w))
t("bincount method", lambda: x.bincount(minlength=2))
i = st.tensor([[0.5, 1.0], [2.0, -1.0]], dtype=st.float64)
tg = st.tensor([[0.0, 1.5], [1.0, 0.0]], dtype=st.float64)
v = st.tensor([[0.5, 2.0], [1e-9, 1.0]], dtype=st.float64)
t("gnll", lambda: F.gaussian_nll_loss(i, tg, v))
t("gnll full sum", lambda: F.gaussian_nll_loss(i, tg, v, full=True, reduction="sum"))
t("gnll none", lambda: F.gaussian_nll_loss(i, tg, v, reduction="none"))
t("gnll var vector", lambda: F.gaussian_nll_loss(i, tg, v[:, 0]))
t("gnll var col", lambda: F.gaussian_nll_loss(i, tg, v[:, :1], reduction="none"))
t("gnll bad", lambda: F.gaussian_nll_loss(i, tg, v[:1, :1].reshape(1)))
t("gnll neg", lambda: F.gaussian_nll_loss(i, tg, -v))
t("gnll red", lambda: F.gaussian_nll_loss(i, tg, v, reduction="avg"))
s = st.tensor([[1.0, -1.0], [-1.0, 1.0]], dtype=st.float64)
t("hinge", lambda: F.hinge_embedding_loss(i, s))
t("hinge none", lambda: F.hinge_embedding_loss(i, s, margin=2.0, reduction="none"))
t("copysign", lambda: st.copysign(i, tg - 0.5))
t("copysign num", lambda: st.copysign(i, -1))
t("logaddexp2", lambda: st.logaddexp2(i, tg))
# histc, ldexp, is_nonzero and the type rules (a dtype printed by its name)
def tv(name, f):
    try:
        out = f()
        print(name, r(out) if isinstance(out, st.Tensor) else out)
    except Exception as e:
        print(name, type(e).__name__, str(e).split("\n")[0])
x = st.tensor([1., 2, 1, 4, 2.5, -1, 7], dtype=st.float64)
tv("histc", lambda: st.histc(x, bins=4, min=0, max=4))
tv("histc auto", lambda: st.histc(x, bins=3))
tv("histc method", lambda: x.histc(5, 0, 10))
tv("histc same", lambda: st.histc(st.ones(3, dtype=st.float64), bins=2))
tv("histc empty", lambda: st.histc(st.zeros(0, dtype=st.float64), bins=2))
tv("ldexp", lambda: st.ldexp(x[:2], st.tensor([2, -1])))
tv("is_nonzero", lambda: st.tensor([3.]).is_nonzero())
tv("is_nonzero zero", lambda: st.tensor([[0]]).is_nonzero())
tv("is_nonzero many", lambda: x.is_nonzero())
tv("is_nonzero none", lambda: st.zeros(0).is_nonzero())
tv("can_cast f->i", lambda: st.can_cast(st.float64, st.int64))
tv("can_cast i->b", lambda: st.can_cast(st.int64, st.bool))
tv("can_cast b->i", lambda: st.can_cast(st.bool, st.int64))
tv("can_cast i->f", lambda: st.can_cast(st.int64, st.float32))
tv("can_cast f64->f32", lambda: st.can_cast(st.float64, st.float32))
tv("promote", lambda: str(st.promote_types(st.int64, st.float64)).split(".")[-1])
tv("promote bool", lambda: str(st.promote_types(st.bool, st.int64)).split(".")[-1])
tv("result_type", lambda: str(st.result_type(st.tensor([1, 2]), 2)).split(".")[-1])
tv("result_type f", lambda: str(st.result_type(st.tensor([1, 2]), st.tensor([1.], dtype=st.float64))).split(".")[-1])
loss = st.tensor(0.123456, dtype=st.float64)
print("format", f"{loss:.4f}", f"{loss:8.2e}", "{:>10.3f}".format(loss), f"{st.tensor(7)}", f"{st.tensor(7):03d}", f"{st.tensor(False)}")
try:
    print(f"{st.ones(2):.2f}")
except TypeError as e:
    print("format", type(e).__name__, str(e).replace("symtrace.", ""))
ints = st.tensor([12, -18, 0, 7, 0, -9])
tv("gcd", lambda: st.gcd(ints, st.tensor([8, 27, 5, 0, 0, -6])))
tv("lcm", lambda: st.lcm(ints, st.tensor([8, 27, 5, 0, 0, -6])))
tv("gcd method broadcast", lambda: ints.gcd(st.tensor(6)))
tv("gcd float", lambda: st.gcd(ints.double(), ints.double()))
L = st.tensor([[2.0, 0.0, 0.0], [0.5, 1.5, 0.0], [-0.3, 0.2, 1.1]], dtype=st.float64)
B = st.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]], dtype=st.float64)
tv("cholesky_solve", lambda: st.cholesky_solve(B, L))
tv("cholesky_solve upper", lambda: st.cholesky_solve(B, L.T.contiguous(), upper=True))
tv("cholesky_inverse", lambda: st.cholesky_inverse(L))
tv("cholesky_inverse method batched", lambda: st.stack([L, L * 2]).cholesky_inverse())
