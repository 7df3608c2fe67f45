//! The eigendecomposition of symmetric matrices (`linalg_eigh`) and the singular value
//! decomposition (`linalg_svd`), by Jacobi rotations in the tensor's own float type: the
//! cyclic two-sided method for `eigh`, Hestenes' one-sided method for the SVD. Both are
//! accurate to the last bits for the small matrices model code factors (PCA of a batch, a
//! whitening, a spectral norm); LAPACK's divide-and-conquer would pay only for large ones.
//!
//! The values are PyTorch's (ascending eigenvalues, descending singular values). A vector's
//! sign is not fixed by the decomposition, and LAPACK's choice of it is not ours: a program
//! that depends on it (not on `U diag(S) Vh`, `V diag(L) Vᵀ` or the values) sees other signs
//! than under torch.

use crate::tensor::data::TensorData;
use crate::tensor::error::{TResult, TensorError};
use crate::tensor::ops::factorize::{FloatElement, batch_of, check_matrices, each_float_elements};
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};

/// Sweeps after which a matrix that has not converged is given up on (a sweep squares the
/// off-diagonal mass once converging; finite input converges in well under 20).
const MAX_SWEEPS: usize = 60;

/// The eigenvalues (ascending) of symmetric `n × n` `a`, read from its lower triangle as
/// torch's default `UPLO='L'`, and the eigenvectors as the columns of a row-major matrix.
fn jacobi_eigh<T: FloatElement>(lower: &[T], n: usize) -> (Vec<T>, Vec<T>) {
    let mut a = vec![T::zero(); n * n];
    for i in 0..n {
        for j in 0..=i {
            a[i * n + j] = lower[i * n + j];
            a[j * n + i] = lower[i * n + j];
        }
    }
    if a.iter().any(|x| !x.is_finite()) {
        // LAPACK returns what its arithmetic made of them, and torch passes it on; NaNs say
        // as much without pretending to be values.
        return (vec![T::nan(); n], vec![T::nan(); n * n]);
    }
    let mut v = vec![T::zero(); n * n];
    for i in 0..n {
        v[i * n + i] = T::one();
    }
    let frob = a.iter().fold(T::zero(), |s, x| s.hypot(*x));
    for _ in 0..MAX_SWEEPS {
        let off = (0..n)
            .flat_map(|p| (p + 1..n).map(move |q| (p, q)))
            .fold(T::zero(), |s, (p, q)| s.hypot(a[p * n + q]));
        if off <= T::epsilon() * frob {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq == T::zero() {
                    continue;
                }
                let two = T::one() + T::one();
                let theta = (a[q * n + q] - a[p * n + p]) / (two * apq);
                let sign = if theta >= T::zero() {
                    T::one()
                } else {
                    -T::one()
                };
                let t = sign / (theta.abs() + theta.hypot(T::one()));
                let c = T::one() / t.hypot(T::one());
                let s = t * c;
                rotate_columns(&mut a, n, n, p, q, c, s);
                for k in 0..n {
                    let (x, y) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * x - s * y;
                    a[q * n + k] = s * x + c * y;
                }
                rotate_columns(&mut v, n, n, p, q, c, s);
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| a[i * n + i].partial_cmp(&a[j * n + j]).expect("finite"));
    let values = order.iter().map(|&i| a[i * n + i]).collect();
    let vectors = (0..n * n).map(|e| v[(e / n) * n + order[e % n]]).collect();
    (values, vectors)
}

/// Columns `p` and `q` of row-major `rows × cols` `m` turned by the rotation `(c, s)`.
#[allow(clippy::too_many_arguments)]
fn rotate_columns<T: FloatElement>(
    m: &mut [T],
    rows: usize,
    cols: usize,
    p: usize,
    q: usize,
    c: T,
    s: T,
) {
    for k in 0..rows {
        let (x, y) = (m[k * cols + p], m[k * cols + q]);
        m[k * cols + p] = c * x - s * y;
        m[k * cols + q] = s * x + c * y;
    }
}

/// The SVD of row-major `m × n` `a` with `m ≥ n`: `U` (`m × k`, `k` = `m` when `full`, else
/// `n`), the singular values (descending) and `V` (`n × n`, not transposed).
fn jacobi_svd<T: FloatElement>(
    a: &[T],
    m: usize,
    n: usize,
    full: bool,
) -> (Vec<T>, Vec<T>, Vec<T>) {
    let mut u = a.to_vec();
    let mut v = vec![T::zero(); n * n];
    for i in 0..n {
        v[i * n + i] = T::one();
    }
    let two = T::one() + T::one();
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (mut alpha, mut beta, mut gamma) = (T::zero(), T::zero(), T::zero());
                for i in 0..m {
                    let (x, y) = (u[i * n + p], u[i * n + q]);
                    alpha = alpha + x * x;
                    beta = beta + y * y;
                    gamma = gamma + x * y;
                }
                if gamma == T::zero() || gamma.abs() <= T::epsilon() * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (two * gamma);
                let sign = if zeta >= T::zero() {
                    T::one()
                } else {
                    -T::one()
                };
                let t = sign / (zeta.abs() + zeta.hypot(T::one()));
                let c = T::one() / t.hypot(T::one());
                let s = t * c;
                rotate_columns(&mut u, m, n, p, q, c, s);
                rotate_columns(&mut v, n, n, p, q, c, s);
            }
        }
        if !rotated {
            break;
        }
    }
    let norms: Vec<T> = (0..n)
        .map(|j| (0..m).fold(T::zero(), |s, i| s.hypot(u[i * n + j])))
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| {
        norms[j]
            .partial_cmp(&norms[i])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let k = if full { m } else { n };
    let mut left = vec![T::zero(); m * k];
    let mut made = Vec::with_capacity(k);
    for (c, &j) in order.iter().enumerate() {
        if norms[j] > T::zero() {
            for i in 0..m {
                left[i * k + c] = u[i * n + j] / norms[j];
            }
            made.push(c);
        }
    }
    complete_orthonormal(&mut left, m, k, &made);
    let values = order.iter().map(|&j| norms[j]).collect();
    let right = (0..n * n).map(|e| v[(e / n) * n + order[e % n]]).collect();
    (left, values, right)
}

/// The columns of row-major `m × k` `q` not in `made` filled with unit vectors orthogonal to
/// all before them: the standard basis vectors, in order, Gram-Schmidt orthogonalized twice.
fn complete_orthonormal<T: FloatElement>(q: &mut [T], m: usize, k: usize, made: &[usize]) {
    let mut done: Vec<usize> = made.to_vec();
    let mut basis = 0;
    for c in (0..k).filter(|c| !made.contains(c)) {
        while basis < m {
            let mut w = vec![T::zero(); m];
            w[basis] = T::one();
            basis += 1;
            for _ in 0..2 {
                for &d in &done {
                    let dot = (0..m).fold(T::zero(), |s, i| s + q[i * k + d] * w[i]);
                    for i in 0..m {
                        w[i] = w[i] - dot * q[i * k + d];
                    }
                }
            }
            let norm = w.iter().fold(T::zero(), |s, x| s.hypot(*x));
            if norm > T::from(0.5).expect("a float") {
                for i in 0..m {
                    q[i * k + c] = w[i] / norm;
                }
                done.push(c);
                break;
            }
        }
    }
}

/// Which of the SVD's results an op call gives.
#[derive(Clone, Copy, PartialEq)]
enum SvdPart {
    U,
    S,
    Vh,
}

fn svd_part(a: &Attrs) -> TResult<SvdPart> {
    match a.int("part")? {
        0 => Ok(SvdPart::U),
        1 => Ok(SvdPart::S),
        2 => Ok(SvdPart::Vh),
        other => Err(TensorError::value(format!("no part {other} of an SVD"))),
    }
}

/// The shape of `part` for `m × n` matrices.
fn svd_shape(m: usize, n: usize, part: SvdPart, full: bool) -> Vec<usize> {
    let k = m.min(n);
    match part {
        SvdPart::U => vec![m, if full { m } else { k }],
        SvdPart::S => vec![k],
        SvdPart::Vh => vec![if full { n } else { k }, n],
    }
}

fn svd_kernel<T: FloatElement>(
    a: Vec<T>,
    shape: &[usize],
    part: SvdPart,
    full: bool,
) -> TResult<TensorData> {
    if a.iter().any(|x| !x.is_finite()) {
        return Err(TensorError::runtime(
            "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values.",
        ));
    }
    let (m, n) = (shape[shape.len() - 2], shape[shape.len() - 1]);
    let (mut batch, count) = batch_of(shape);
    let mut out = Vec::new();
    for b in 0..count {
        let block = &a[b * m * n..(b + 1) * m * n];
        // A wide matrix is the transpose of a tall one: A = (V' S U'ᵀ) for Aᵀ = U' S V'ᵀ.
        let wide = m < n;
        let (rows, cols, tall) = if wide {
            (
                n,
                m,
                (0..m * n).map(|e| block[(e % m) * n + e / m]).collect(),
            )
        } else {
            (m, n, block.to_vec())
        };
        let (left, values, right) = jacobi_svd(&tall, rows, cols, full);
        let k_left = if full { rows } else { cols };
        match (part, wide) {
            (SvdPart::S, _) => out.extend(values),
            // U of A: the tall U, or (wide) the tall V.
            (SvdPart::U, false) => out.extend(left),
            (SvdPart::U, true) => out.extend(right),
            // Vh of A: the tall Vᵀ, or (wide) the tall Uᵀ.
            (SvdPart::Vh, false) => {
                out.extend((0..cols * cols).map(|e| right[(e % cols) * cols + e / cols]))
            }
            (SvdPart::Vh, true) => {
                out.extend((0..k_left * rows).map(|e| left[(e % rows) * k_left + e / rows]))
            }
        }
    }
    batch.extend(svd_shape(m, n, part, full));
    Ok(T::tensor(batch, out))
}

fn eigh_kernel<T: FloatElement>(a: Vec<T>, shape: &[usize], vectors: bool) -> TensorData {
    let n = shape[shape.len() - 1];
    let (mut batch, count) = batch_of(shape);
    let mut out = Vec::new();
    for b in 0..count {
        let (values, vecs) = jacobi_eigh(&a[b * n * n..(b + 1) * n * n], n);
        out.extend(if vectors { vecs } else { values });
    }
    batch.push(n);
    if vectors {
        batch.push(n);
    }
    T::tensor(batch, out)
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "linalg_eigh",
            Arity::Exactly(1),
            |m: &[Meta], a: &Attrs| {
                check_matrices("linalg.eigh", &m[0], false)?;
                let mut shape = m[0].shape.clone();
                if !a.flag("vectors") {
                    shape.pop();
                }
                Ok(Meta {
                    shape,
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], attrs| {
                let shape = t[0].shape().to_vec();
                Ok(each_float_elements!(t[0], a => eigh_kernel(a, &shape, attrs.flag("vectors"))))
            },
        ),
        OpDef::new(
            "linalg_svd",
            Arity::Exactly(1),
            |m: &[Meta], a: &Attrs| {
                let (rows, cols) = check_matrices("linalg.svd", &m[0], true)?;
                let mut shape = m[0].shape[..m[0].shape.len() - 2].to_vec();
                shape.extend(svd_shape(rows, cols, svd_part(a)?, a.flag("full")));
                Ok(Meta {
                    shape,
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], attrs| {
                let shape = t[0].shape().to_vec();
                let part = svd_part(attrs)?;
                each_float_elements!(t[0], a => svd_kernel(a, &shape, part, attrs.flag("full")))
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobi_eigh_diagonalizes_in_ascending_order() {
        let a: [f64; 4] = [2.0, 0.0, 1.0, 2.0];
        let (values, vectors) = jacobi_eigh(&a, 2);
        assert!((values[0] - 1.0).abs() < 1e-15 && (values[1] - 3.0).abs() < 1e-15);
        // A v = λ v for each column.
        let full = [2.0, 1.0, 1.0, 2.0];
        for c in 0..2 {
            for r in 0..2 {
                let av: f64 = (0..2).map(|k| full[r * 2 + k] * vectors[k * 2 + c]).sum();
                assert!((av - values[c] * vectors[r * 2 + c]).abs() < 1e-15);
            }
        }
    }

    #[test]
    fn a_rank_deficient_svd_has_orthonormal_u() {
        let a: [f64; 6] = [1.0, 2.0, 2.0, 4.0, 3.0, 6.0];
        let (u, s, _) = jacobi_svd(&a, 3, 2, true);
        assert!(s[1].abs() < 1e-12 && (s[0] - 70.0f64.sqrt()).abs() < 1e-12);
        for i in 0..3 {
            for j in 0..3 {
                let d: f64 = (0..3).map(|r| u[r * 3 + i] * u[r * 3 + j]).sum();
                assert!((d - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
    }
}
