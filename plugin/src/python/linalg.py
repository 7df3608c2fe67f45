"""`symtrace.linalg`: the norms of torch.linalg that model code takes (gradient clipping,
RMS and weight normalisation, distances), as compositions of tensor methods, so that a traced
call simulates them like the user's code. What needs a factorisation (inverses, solves,
determinants, SVD, eigenvalues, and the matrix norms `2`, `-2`, `'nuc'` built on them) is not
here: an AttributeError or a NotImplementedError, never an approximation."""

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
    """The `ord`-norm of the matrices of `A` over the two dimensions `dim`: 'fro', or the
    largest (`inf`, `1`) or smallest (`-inf`, `-1`) absolute row or column sum."""
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
    raise NotImplementedError(f"linalg.matrix_norm(ord={ord!r}) needs a singular value decomposition, which symtrace does not have")


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


LINALG = {"vector_norm": vector_norm, "matrix_norm": matrix_norm, "norm": norm}
