"""`symtrace.linalg`: the norms of torch.linalg that model code takes (gradient clipping,
RMS and weight normalisation, distances), as compositions of tensor methods, so that a traced
call simulates them like the user's code; and the solves, inverses, determinants and the
Cholesky and QR factorizations, through the ops of `tensor/ops/factorize.rs` (LAPACK's
algorithms, in the tensor's own float type), broadcast over batches here as torch does; and
`eigh`, `svd` and what is built on them (`pinv`, `matrix_rank`, the matrix norms `2`, `-2`,
`'nuc'`) through `tensor/ops/spectral.rs` (Jacobi rotations: a vector's sign may be other
than LAPACK's), and `lstsq` through the SVD. General `eig` is not here: an AttributeError,
never an approximation.
`_st` is the `symtrace` module, given by the loader (`namespaces.rs`)."""

from collections import namedtuple

_INF = float("inf")


def _all_dims(x, dim):
    if dim is None:
        return tuple(range(x.ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The `ord`-norm of `x` over `dim` (every element when None) as one vector."""
    if dtype is not None:
        x = x.to(dtype)
    if not x.is_floating_point():
        # torch's own class for it.
        raise NotImplementedError(f"linalg.vector_norm: expected a floating point tensor as input, got {x.dtype}")
    dims = _all_dims(x, dim)
    a = x.abs()
    if x.ndim == 0:
        a = a.reshape(1)
        dims, squeeze = (0,), True
    else:
        squeeze = False
    if ord == _INF:
        r = a.amax(dims, keepdim=keepdim)
    elif ord == -_INF:
        r = a.amin(dims, keepdim=keepdim)
    elif ord == 0:
        r = (a != 0).to(x.dtype).sum(dims, keepdim=keepdim)
    elif ord == 1:
        r = a.sum(dims, keepdim=keepdim)
    elif ord == 2:
        r = (a * a).sum(dims, keepdim=keepdim).sqrt()
    else:
        r = (a ** ord).sum(dims, keepdim=keepdim) ** (1.0 / ord)
    return r.reshape(()) if squeeze else r


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The `ord`-norm of the matrices of `A` over the two dimensions `dim`: 'fro', the
    largest (`inf`, `1`) or smallest (`-inf`, `-1`) absolute row or column sum, the largest
    (`2`) or smallest (`-2`) singular value or their sum (`'nuc'`)."""
    if dtype is not None:
        A = A.to(dtype)
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: the input must have at least 2 dimensions, not {A.ndim}")
    rows, cols = (d % A.ndim for d in dim)
    if rows == cols:
        raise RuntimeError("linalg.matrix_norm: dims must be different")
    if ord == "fro":
        return vector_norm(A, 2, (rows, cols), keepdim)
    if ord in (_INF, -_INF, 1, -1):
        # inf: the sum along each row (over the columns), then the largest of those.
        summed, across = (cols, rows) if ord in (_INF, -_INF) else (rows, cols)
        sums = A.abs().sum(summed, keepdim=True)
        r = sums.amax(across, keepdim=True) if ord > 0 else sums.amin(across, keepdim=True)
        return r if keepdim else r.squeeze(max(rows, cols)).squeeze(min(rows, cols))
    if ord in (2, -2, "nuc"):
        # The singular values of the matrices, moved to the last two dimensions.
        S = svdvals(A.movedim((rows, cols), (-2, -1)))
        r = S.sum(-1) if ord == "nuc" else (S.amax(-1) if ord == 2 else S.amin(-1))
        if keepdim:
            r = r.unsqueeze(min(rows, cols)).unsqueeze(max(rows, cols))
        return r
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a vector norm over one dimension (or every element, with no `ord`),
    a matrix norm over two."""
    if dim is not None and not isinstance(dim, int) and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is None or dim is not None or A.ndim == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: if dim is not given but ord is, the input must be 1-D or 2-D, not {A.ndim}-D")


_SlogdetResult = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
_QRResult = namedtuple("linalg_qr", ["Q", "R"])


def _as_system(A, B):
    """A and B of `A X = B` broadcast over their batches, B as a column where torch takes it
    for a vector (1-D, or A's batch of vectors), and whether it was."""
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        B = B.unsqueeze(-1)
    if A.ndim >= 2 and B.ndim >= 2:
        batch = _st.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
        A = A.expand(*batch, *A.shape[-2:])
        B = B.expand(*batch, *B.shape[-2:])
    return A, B, vector


def solve(A, B, *, left=True):
    """The X of `A X = B` (`X A = B` with left=False), by LU with partial pivoting."""
    if not left:
        if B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1])):
            n = A.shape[-1]
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation XA = B ({n}x{n} and {B.shape[-1]}x1)")
        return solve(A.mT, B.mT).mT
    A, B, vector = _as_system(A, B)
    X = _st.call_op("linalg_solve", A, B)
    return X.squeeze(-1) if vector else X


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """The X of `A X = B` (`X A = B` with left=False) for triangular A, by substitution."""
    if not left:
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    batch = _st.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    A = A.expand(*batch, *A.shape[-2:])
    B = B.expand(*batch, *B.shape[-2:])
    return _st.call_op("linalg_solve_triangular", A, B, upper=bool(upper), unitriangular=bool(unitriangular))


def inv(A):
    return _st.call_op("linalg_inv", A)


def det(A):
    return _st.call_op("linalg_det", A)


def slogdet(A):
    both = _st.call_op("linalg_det", A, log=True)
    return _SlogdetResult(both[..., 0], both[..., 1])


def logdet(A):
    """torch.logdet: the log of the determinant, NaN where it is negative."""
    sign, logabsdet = slogdet(A)
    return logabsdet.masked_fill(sign < 0, float("nan"))


def cholesky(A, upper=False):
    return _st.call_op("linalg_cholesky", A, upper=bool(upper))


def cholesky_solve(B, L, upper=False):
    """The X of `A X = B` for A = L Lᵀ (U U ᵀ upside: `upper=True`, A = Uᵀ U), given its
    Cholesky factor: two triangular solves."""
    if upper:
        return solve_triangular(L, solve_triangular(L.mT, B, upper=False), upper=True)
    return solve_triangular(L.mT, solve_triangular(L, B, upper=False), upper=True)


def cholesky_inverse(L, upper=False):
    """The inverse of A = L Lᵀ (Uᵀ U with `upper=True`) from its Cholesky factor."""
    eye = _st.eye(L.shape[-1], dtype=L.dtype).expand(L.shape)
    return cholesky_solve(eye, L, upper=upper)


def qr(A, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'")
    complete = mode == "complete"
    R = _st.call_op("linalg_qr", A, r=True, complete=complete)
    Q = _st.zeros(0, dtype=A.dtype) if mode == "r" else _st.call_op("linalg_qr", A, complete=complete)
    return _QRResult(Q, R)


def matrix_power(A, n):
    """A to the integer power n (an inverse's power for n < 0), by squaring, in torch's order
    of products."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices")
    if n == 0:
        return _st.eye(A.shape[-1], dtype=A.dtype).expand(*A.shape).clone()
    if n < 0:
        A, n = inv(A), -n
    if n == 1:
        return A.clone()
    if n == 2:
        return A @ A
    if n == 3:
        return (A @ A) @ A
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else z @ z
        if bit:
            result = z if result is None else result @ z
    return result


def multi_dot(tensors):
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vector, last_vector = tensors[0].ndim == 1, tensors[-1].ndim == 1
    out = tensors[0].unsqueeze(0) if first_vector else tensors[0]
    for i, t in enumerate(tensors[1:], 1):
        out = out @ (t.unsqueeze(-1) if i == len(tensors) - 1 and last_vector else t)
    if last_vector:
        out = out.squeeze(-1)
    if first_vector:
        out = out.squeeze(0)
    return out


def vecdot(x, y, *, dim=-1):
    return (x * y).sum(dim)


_EighResult = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
_SVDResult = namedtuple("linalg_svd", ["U", "S", "Vh"])


def _uplo_lower(A, UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return A if UPLO == "L" else A.mT


def eigh(A, UPLO="L"):
    A = _uplo_lower(A, UPLO)
    return _EighResult(_st.call_op("linalg_eigh", A), _st.call_op("linalg_eigh", A, vectors=True))


def eigvalsh(A, UPLO="L"):
    return _st.call_op("linalg_eigh", _uplo_lower(A, UPLO))


def svd(A, full_matrices=True):
    full = bool(full_matrices)
    return _SVDResult(*(_st.call_op("linalg_svd", A, part=p, full=full) for p in range(3)))


def svdvals(A):
    return _st.call_op("linalg_svd", A, part=1)


def _default_rtol(A):
    eps = 1.1920928955078125e-07 if A.dtype == _st.float32 else 2.220446049250313e-16
    return max(A.shape[-2], A.shape[-1]) * eps


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The pseudo-inverse: V diag(1/s) Uᵀ over the singular values above the tolerance."""
    U, S, Vh = svd(A, full_matrices=False)
    if rtol is None:
        rtol = _default_rtol(A) if atol is None or atol == 0 else 0.0
    limit = S.amax(-1, keepdim=True) * rtol
    if atol is not None:
        limit = limit.clamp(min=atol)
    kept = S > limit
    inverse = _st.where(kept, 1.0 / S.masked_fill(~kept, 1.0), 0.0)
    return (Vh.mT * inverse.unsqueeze(-2)) @ U.mT


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    S = svdvals(A)
    if rtol is None:
        rtol = _default_rtol(A) if atol is None or atol == 0 else 0.0
    limit = S.amax(-1, keepdim=True) * rtol
    if atol is not None:
        limit = limit.clamp(min=atol)
    return (S > limit).sum(-1)


_LstsqResult = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of `A X = B` of least norm, through the SVD (the singular
    values at or below `rcond` times the largest left out), with what each of LAPACK's
    drivers reports beside it: the rank (not `gels`), the singular values (`gelsd`, `gelss`)
    and, for a tall full-rank system, the residual sums of squares (not `gelsy`, the
    default)."""
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.ndim == A.ndim - 1
    if vector:
        if A.shape[-2] != B.shape[-1]:
            raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-1)")
        B = B.unsqueeze(-1)
    elif A.shape[-2] != B.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    batch = _st.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    A = A.expand(*batch, *A.shape[-2:])
    B = B.expand(*batch, *B.shape[-2:])
    m, n = A.shape[-2], A.shape[-1]
    if rcond is None:
        rcond = _default_rtol(A)
    U, S, Vh = svd(A, full_matrices=False)
    kept = S > S.amax(-1, keepdim=True) * rcond
    inverse = _st.where(kept, 1.0 / S.masked_fill(~kept, 1.0), 0.0)
    X = Vh.mT @ ((U.mT @ B) * inverse.unsqueeze(-1))
    rank = kept.sum(-1)
    empty = _st.zeros(0, dtype=A.dtype)
    residuals = empty
    if driver != "gelsy" and m > n and bool((rank == n).all()):
        residuals = ((A @ X - B) ** 2).sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    if vector:
        X = X.squeeze(-1)
    return _LstsqResult(
        X,
        residuals,
        _st.zeros(0, dtype=_st.int64) if driver == "gels" else rank,
        S if driver in ("gelsd", "gelss") else empty,
    )


LINALG = {
    "vector_norm": vector_norm, "matrix_norm": matrix_norm, "norm": norm, "solve": solve,
    "solve_triangular": solve_triangular, "inv": inv, "det": det, "slogdet": slogdet,
    "cholesky": cholesky, "qr": qr, "matrix_power": matrix_power, "multi_dot": multi_dot,
    "vecdot": vecdot, "eigh": eigh, "eigvalsh": eigvalsh, "svd": svd, "svdvals": svdvals,
    "pinv": pinv, "matrix_rank": matrix_rank, "lstsq": lstsq,
}

# The names torch also has at its top level and as tensor methods.
TOP_LEVEL = {
    "inverse": inv, "det": det, "logdet": logdet, "slogdet": slogdet, "cholesky": cholesky,
    "qr": qr, "matrix_power": matrix_power, "pinverse": pinv,
    "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
}
