"""torch's special functions (`erfc`, `erfinv`, `lgamma`, `digamma`, `torch.special`) printed
to 12 decimals, so that PyTorch's output can be compared line by line: `python3
special_cases.py torch` printed special_cases.expected with PyTorch 2.5.1 (tests/tensor_api.rs
compares the fork's output, plain and under the plugin, with it)."""
import sys
if sys.argv[1:] == ["torch"]:
    import torch as st
else:
    import symtrace as st
def r(t, d=12): return [x if x != x or abs(x) == float("inf") else round(x, d) for x in t.flatten().tolist()]
x = st.tensor([-3.5, -2.0, -0.5, -0.0, 0.0, 1e-8, 0.3, 1.0, 2.5, 7.0, 30.0, 1e6, float("inf"), float("nan")], dtype=st.float64)
for name in ("erfc", "lgamma", "digamma"):
    print(name, r(getattr(st, name)(x)))
p = st.tensor([-1.5, -1.0, -0.999999, -0.5, -1e-12, 0.0, 0.1, 0.5, 0.9, 0.99999999, 1.0, 2.0, float("nan")], dtype=st.float64)
print("erfinv", r(st.erfinv(p)))
print("f32", r(st.erfinv(p.float()), 5), r(st.lgamma(x.float()), 4), r(st.digamma(x[5:11].float()), 4), r(st.erfc(x.float()), 6))
print("methods", r(x[6:9].erfc()), r(p[5:9].erfinv()), r(x[6:9].lgamma()), r(x[6:9].digamma()))
y = p[5:9].clone(); y.erfinv_(); print("inplace", r(y))
print("special", r(st.special.erfinv(p[6:8])), r(st.special.gammaln(x[7:9])), r(st.special.psi(x[7:9])), r(st.special.expit(x[6:8])), r(st.special.xlogy(x[6:8], x[7:9])))
a = st.tensor([0.0, 1e-3, 0.5, 1.0, 2.5, 7.5, 30.0, 60.0, -1.0, float("inf"), float("nan")], dtype=st.float64)
for v in (0.0, 1e-6, 0.3, 1.0, 2.5, 8.0, 40.0, 65.0, float("inf"), -0.5):
    # To 8 decimals: where a is large and x near it, torch's asymptotic expansion is good to
    # about 1e-10 only (P(60, 65) is 0.7489376030234, torch gives 0.7489376028).
    print("gammainc", v, r(st.special.gammainc(a, st.full_like(a, v)), 8), r(st.special.gammaincc(a, st.full_like(a, v)), 8))
print("igamma", r(st.igamma(a[1:8], a[2:9].abs())), r(a[1:8].igammac(a[2:9].abs())), r(st.igamma(a[1:8].float(), a[2:9].abs().float()), 5))
