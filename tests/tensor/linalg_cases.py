"""torch.linalg's solves, inverses, determinants and the Cholesky and QR factorizations, and
their errors, printed (values to 10 decimals) so that PyTorch's output can be compared line
by line: `python3 linalg_cases.py torch` printed linalg_cases.expected with PyTorch 2.5.1
(tests/tensor_api.rs compares the fork's output, plain and under the plugin, with it)."""
import sys

if sys.argv[1:] == ["torch"]:
    import torch as st
    import torch.nn  # noqa: F401  (st.nn.init)
else:
    import symtrace as st
    import symtrace.nn  # noqa: F401
def show(*vals):
    out = []
    for v in vals:
        if hasattr(v, "tolist"): v = [round(x, 10) if isinstance(x, float) else x for x in st.as_tensor(v).flatten().tolist()] if v.numel() else []
        out.append(v)
    print(out)
def t(f):
    try:
        r = f()
        show(*r) if isinstance(r, tuple) else show(r)
    except Exception as e:
        # torch raises its LinAlgError, a subclass of RuntimeError, where a matrix is singular
        # or not positive-definite; symtrace raises RuntimeError with the same message.
        name = "RuntimeError" if type(e).__name__ == "_LinAlgError" else type(e).__name__
        print(name, "|", str(e).split("\n")[0])
A = st.tensor([[4., 1, 2], [1, 3, 0.5], [2, 0.5, 5]], dtype=st.float64)
S = st.tensor([[1., 2, 3], [2, 4, 6], [1, 0, 1]], dtype=st.float64)
b = st.tensor([1., 2, 3], dtype=st.float64)
Bb = st.stack([A, A * 2 + st.eye(3, dtype=st.float64)])
t(lambda: st.linalg.inv(A))
t(lambda: st.linalg.inv(S))
t(lambda: st.linalg.inv(st.stack([A, S])))
t(lambda: st.inverse(Bb))
t(lambda: st.linalg.solve(A, b))
t(lambda: st.linalg.solve(A, st.stack([b, b * 2], 1)))
t(lambda: st.linalg.solve(Bb, b))
t(lambda: st.linalg.solve(Bb, st.stack([b, b])))
t(lambda: st.linalg.solve(S, b))
t(lambda: st.linalg.solve(A, b, left=False))
t(lambda: st.linalg.det(A))
t(lambda: st.linalg.det(S))
t(lambda: st.det(Bb))
t(lambda: A.det())
t(lambda: st.linalg.slogdet(-A))
t(lambda: st.linalg.slogdet(S))
t(lambda: st.logdet(-A))
t(lambda: st.logdet(Bb))
t(lambda: st.linalg.cholesky(A))
t(lambda: st.linalg.cholesky(A, upper=True))
t(lambda: st.cholesky(Bb))
t(lambda: st.linalg.cholesky(S))
t(lambda: st.linalg.cholesky(st.stack([A, S])))
M = st.tensor([[1., 2], [3, 4], [5, 6]], dtype=st.float64)
t(lambda: tuple(st.linalg.qr(M)))
t(lambda: tuple(st.linalg.qr(M, mode="complete")))
t(lambda: tuple(st.linalg.qr(M, mode="r")))
t(lambda: tuple(st.linalg.qr(M.T)))
t(lambda: tuple(st.linalg.qr(st.stack([A, -A]))))
t(lambda: tuple(st.linalg.qr(st.zeros(3, 2, dtype=st.float64))))
t(lambda: st.linalg.qr(M, mode="bad"))
t(lambda: st.linalg.qr(b))
L = st.linalg.cholesky(A)
t(lambda: st.linalg.solve_triangular(L, st.stack([b, b], 1), upper=False))
t(lambda: st.linalg.solve_triangular(L.T, st.stack([b, b], 1), upper=True, unitriangular=True))
t(lambda: st.linalg.solve_triangular(L, st.stack([b, b]), upper=False, left=False))
t(lambda: st.linalg.solve_triangular(L, b, upper=False))
t(lambda: st.linalg.matrix_power(A, 5))
t(lambda: st.linalg.matrix_power(A, -2))
t(lambda: st.linalg.matrix_power(A, 0))
t(lambda: A.matrix_power(7))
t(lambda: st.linalg.matrix_power(st.tensor([[1, 1], [0, 1]]), 3))
t(lambda: st.linalg.matrix_power(A, 1.5))
t(lambda: st.linalg.multi_dot([b, A, A, b]))
t(lambda: st.linalg.multi_dot([A]))
t(lambda: st.linalg.vecdot(A, b))
t(lambda: st.linalg.inv(st.ones(2, 2, dtype=st.int64)))
t(lambda: st.linalg.inv(st.zeros(2, 3)))
t(lambda: st.linalg.solve(st.eye(3, dtype=st.float64), st.ones(4, dtype=st.float64)))
t(lambda: st.linalg.solve(st.ones(2, 2, 2, dtype=st.float64), st.ones(3, 2, dtype=st.float64)))
A32 = A.float()
t(lambda: st.linalg.inv(A32).dtype == st.float32)
t(lambda: st.linalg.solve(A32, b.float()))
t(lambda: st.linalg.det(A32))
t(lambda: st.linalg.cholesky(A32))
t(lambda: st.linalg.solve(A32, b))
# nn.init.orthogonal_ (QR of a normal sample): orthonormal rows or columns, times the gain
init = st.nn.init
for shape in [(3, 5), (5, 3), (4, 2, 3)]:
    w = init.orthogonal_(st.empty(*shape, dtype=st.float64), gain=2.0).reshape(shape[0], -1)
    g = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
    print("orthogonal_", shape, bool((g - 4 * st.eye(g.shape[0], dtype=st.float64)).abs().max() < 1e-12))
def r(t, digits=9):
    return [round(x, digits) for x in t.flatten().tolist()]
# eigh, svd and what is built on them: values against torch's; vectors by what they must
# satisfy (their signs are the algorithm's choice)
A = st.tensor([[4., 1, 2], [1, 3, 0.5], [2, 0.5, 5]], dtype=st.float64)
M = st.tensor([[1., 2], [3, 4], [5, 6]], dtype=st.float64)
R = st.tensor([[1., 2], [2, 4], [3, 6]], dtype=st.float64)
print(r(st.linalg.eigvalsh(A)), r(st.linalg.eigh(A).eigenvalues), r(st.linalg.eigvalsh(st.stack([A, -A]))))
print(r(st.linalg.eigvalsh(st.triu(A), UPLO="U")), r(st.linalg.eigvalsh(st.tril(A))))
print(r(st.linalg.svdvals(M)), r(st.linalg.svdvals(M.T)), r(st.linalg.svdvals(R)), r(st.linalg.svdvals(st.stack([A, 2 * A]))))
for X in (M, M.T, R, A, st.stack([M, -M])):
    for full in (True, False):
        U, S, Vh = st.linalg.svd(X, full_matrices=full)
        k = S.shape[-1]
        rec = (U[..., :, :k] * S.unsqueeze(-2)) @ Vh[..., :k, :]
        eyeU = U.mT @ U
        print(tuple(U.shape), tuple(S.shape), tuple(Vh.shape), (rec - X).abs().max().item() < 1e-12, (eyeU - st.eye(U.shape[-1], dtype=st.float64)).abs().max().item() < 1e-12)
V = st.linalg.eigh(A).eigenvectors
print(((A @ V) - V * st.linalg.eigvalsh(A)).abs().max().item() < 1e-12)
print(r(st.linalg.pinv(M)), r(st.linalg.pinv(R)), r(st.pinverse(M)))
print(st.linalg.matrix_rank(R).item(), st.linalg.matrix_rank(A).item(), r(st.linalg.matrix_rank(st.stack([R @ R.T, A]))))
print(r(st.linalg.matrix_norm(M, 2)), r(st.linalg.matrix_norm(M, -2)), r(st.linalg.matrix_norm(M, "nuc")), r(st.linalg.norm(M, 2)))
print(r(st.linalg.matrix_norm(st.stack([M, M]), 2, dim=(0, 1), keepdim=True)), tuple(st.linalg.matrix_norm(st.stack([M, M]), 2, dim=(0, 1), keepdim=True).shape))
# float32: to 5 decimals (LAPACK's and Jacobi's last bits differ)
print(r(st.linalg.svdvals(M.float()), 5), str(st.linalg.svdvals(M.float()).dtype).split('.')[-1])
try: st.linalg.eigh(M)
except Exception as e: print(type(e).__name__, str(e))
try: st.linalg.matrix_norm(M, 3)
except Exception as e: print(type(e).__name__, str(e))
# lstsq: the solution and what each LAPACK driver reports beside it
def rl(t, d=9):
    if not t.numel():
        return ("empty", tuple(t.shape), str(t.dtype).split(".")[-1])
    return [round(x, d) for x in t.flatten().tolist()]
A = st.tensor([[1., 2], [3, 4], [5, 7]], dtype=st.float64)
b = st.tensor([1., 2, 2], dtype=st.float64)
B = st.stack([b, b * 2], 1)
for args in ((A, B), (A, b), (st.stack([A, A * 2]), st.stack([B, B])), (A, B, 1e-3)):
    try:
        res = st.linalg.lstsq(*args)
        print(rl(res.solution), rl(res.residuals), rl(res.rank), rl(res.singular_values))
        print(rl(res[0]), len(res))
    except Exception as e: print(type(e).__name__, str(e).split("\n")[0])
R = st.tensor([[1., 2], [2, 4], [3, 6]], dtype=st.float64)
res = st.linalg.lstsq(R, B)
print(rl(res.solution), rl(res.rank))
try: st.linalg.lstsq(A, st.ones(4, dtype=st.float64))
except Exception as e: print(type(e).__name__, str(e).split("\n")[0])
for d in ("gelsd", "gelss"):
    res = st.linalg.lstsq(A, B, driver=d)
    print(d, rl(res.solution), rl(res.residuals), rl(res.rank), rl(res.singular_values))
res = st.linalg.lstsq(A, b, driver="gelsd")
print("vector gelsd", rl(res.solution), rl(res.residuals), rl(res.rank), rl(res.singular_values))
res = st.linalg.lstsq(A, B, driver="gels")
print("gels", rl(res.solution), rl(res.residuals), rl(res.rank), rl(res.singular_values))
res = st.linalg.lstsq(R, B, driver="gelsd")
print("rank-deficient gelsd", rl(res.solution), rl(res.residuals), rl(res.rank), rl(res.singular_values))
# edge cases: empty matrices and batches, strided and expanded inputs, NaN and infinity
def re_(t, d=9):
    if not t.numel():
        return ("empty", tuple(t.shape), str(t.dtype).split(".")[-1])
    return [round(x, d) for x in t.flatten().tolist()]
def te(name, f):
    try:
        out = f()
        out = out if isinstance(out, tuple) else (out,)
        print(name, [re_(o) for o in out])
    except Exception as e:
        name_ = "RuntimeError" if type(e).__name__ == "_LinAlgError" else type(e).__name__
        print(name, name_, str(e).split("\n")[0])
E = st.zeros(0, 0, dtype=st.float64)
te("inv0", lambda: st.linalg.inv(E))
te("det0", lambda: st.linalg.det(E))
te("slogdet0", lambda: tuple(st.linalg.slogdet(E)))
te("chol0", lambda: st.linalg.cholesky(E))
te("qr0", lambda: tuple(st.linalg.qr(st.zeros(3, 0, dtype=st.float64))))
te("svd0", lambda: tuple(st.linalg.svd(st.zeros(0, 3, dtype=st.float64))))
te("eigh0", lambda: tuple(st.linalg.eigh(E)))
te("batch0", lambda: st.linalg.inv(st.zeros(0, 2, 2, dtype=st.float64)))
A = st.tensor([[4., 1], [1, 3]], dtype=st.float64)
te("noncontig", lambda: st.linalg.inv(st.stack([A, A], 2)[..., 0].T))
te("expanded", lambda: st.linalg.det(A.expand(3, 2, 2)))
te("nan inv", lambda: st.linalg.inv(st.tensor([[float("nan"), 1.], [1., 1.]], dtype=st.float64)))
te("nan det", lambda: st.linalg.det(st.tensor([[float("nan"), 1.], [1., 1.]], dtype=st.float64)))
te("inf chol", lambda: st.linalg.cholesky(st.tensor([[float("inf"), 0.], [0., 1.]], dtype=st.float64)))
te("nan svd", lambda: st.linalg.svdvals(st.tensor([[float("nan"), 0.], [0., 1.]], dtype=st.float64)))
te("solve broadcast", lambda: st.linalg.solve(A, st.ones(3, 2, 4, dtype=st.float64)))
te("solve int", lambda: st.linalg.solve(A, st.ones(2, dtype=st.int64)))
te("solve f32 f64", lambda: st.linalg.solve(A.float(), st.ones(2, dtype=st.float64)))
te("qr wide complete", lambda: tuple(st.linalg.qr(st.tensor([[1., 2, 3], [4, 5, 6]], dtype=st.float64), mode="complete")))
te("eigh repeated", lambda: st.linalg.eigvalsh(st.eye(3, dtype=st.float64) * 2))
te("svd zeros", lambda: st.linalg.svdvals(st.zeros(2, 3, dtype=st.float64)))
te("pinv zeros", lambda: st.linalg.pinv(st.zeros(2, 3, dtype=st.float64)))
te("det 1x1", lambda: st.linalg.det(st.tensor([[-3.]], dtype=st.float64)))
te("matrix_power batch", lambda: st.linalg.matrix_power(st.stack([A, -A]), 5))

