//! Dense factorizations of the matrices in a tensor's last two dimensions, and the ops of
//! `torch.linalg` built on them: LU with partial pivoting (`linalg_solve`, `linalg_inv`,
//! `linalg_det`, `linalg_slogdet`), Cholesky (`linalg_cholesky`), Householder QR
//! (`linalg_qr`) and substitution (`linalg_solve_triangular`).
//!
//! Each is LAPACK's unblocked algorithm (`getf2`, `potf2`, `geqr2` with `org2r`), computed in
//! the tensor's own float type, so pivots, and the signs of QR's reflections, are the ones
//! LAPACK, and so PyTorch, chooses; the last bits of a result may differ from LAPACK's
//! blocked routines. Errors carry PyTorch's messages, and a batch names its element as
//! PyTorch does. The Python side (`linalg.py`) broadcasts batches and turns vectors into
//! columns before calling these, so every op here takes matrices of one batch shape.

use ndarray::{ArrayD, IxDyn};
use num_traits::Float;

use crate::tensor::data::TensorData;
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError};
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};

/// How torch names a type in the errors of its linear algebra.
fn torch_type_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "Bool",
        DType::Int64 => "Long",
        DType::Float32 => "Float",
        DType::Float64 => "Double",
    }
}

/// A float type, at least two dimensions and, unless `any_shape`, square matrices.
pub(crate) fn check_matrices(op: &str, m: &Meta, any_shape: bool) -> TResult<(usize, usize)> {
    if !m.dtype.is_float() {
        return Err(TensorError::runtime(format!(
            "{op}: Expected a floating point or complex tensor as input. Got {}",
            torch_type_name(m.dtype)
        )));
    }
    if m.shape.len() < 2 {
        return Err(TensorError::runtime(format!(
            "{op}: The input tensor A must have at least 2 dimensions."
        )));
    }
    let (r, c) = (m.shape[m.shape.len() - 2], m.shape[m.shape.len() - 1]);
    if !any_shape && r != c {
        return Err(TensorError::runtime(format!(
            "{op}: A must be batches of square matrices, but they are {r} by {c} matrices"
        )));
    }
    Ok((r, c))
}

/// The error of batch element `b` (PyTorch names it only when there is a batch).
fn batch_error(op: &str, batched: bool, b: usize, what: String) -> TensorError {
    if batched {
        TensorError::runtime(format!("{op}: (Batch element {b}): {what}"))
    } else {
        TensorError::runtime(format!("{op}: {what}"))
    }
}

/// Row-major `n × n` `a` factored in place into `L` (unit, below the diagonal) and `U`, as
/// `getf2` does: `piv[k]` is the row swapped with row `k` at step `k`. The first zero pivot
/// (0-based), if any; the factorization goes on past it as LAPACK's does.
fn lu<T: Float>(a: &mut [T], n: usize, piv: &mut [usize]) -> Option<usize> {
    let mut zero = None;
    for k in 0..n {
        let mut p = k;
        for i in k + 1..n {
            if a[i * n + k].abs() > a[p * n + k].abs() {
                p = i;
            }
        }
        piv[k] = p;
        if a[p * n + k] != T::zero() {
            if p != k {
                for j in 0..n {
                    a.swap(k * n + j, p * n + j);
                }
            }
            let pivot = a[k * n + k];
            for i in k + 1..n {
                a[i * n + k] = a[i * n + k] / pivot;
            }
        } else if zero.is_none() {
            zero = Some(k);
        }
        for i in k + 1..n {
            let l = a[i * n + k];
            for j in k + 1..n {
                a[i * n + j] = a[i * n + j] - l * a[k * n + j];
            }
        }
    }
    zero
}

/// `b` (`n × m`, row-major) overwritten with the solution of `A X = B` where `lu` and `piv`
/// factor `Aᵀ` (LAPACK's `getrs` with `trans`): PyTorch factors the transpose of a row-major
/// `A` for a solve or an inverse (it is the column-major matrix LAPACK sees), so its pivots,
/// and the element it names when one is zero, are those of `Aᵀ`.
fn lu_solve_transposed<T: Float>(lu: &[T], piv: &[usize], n: usize, b: &mut [T], m: usize) {
    // Uᵀ y = b, forward.
    for i in 0..n {
        for k in 0..i {
            let u = lu[k * n + i];
            for j in 0..m {
                b[i * m + j] = b[i * m + j] - u * b[k * m + j];
            }
        }
        let d = lu[i * n + i];
        for j in 0..m {
            b[i * m + j] = b[i * m + j] / d;
        }
    }
    // Lᵀ z = y, backward (unit diagonal).
    for i in (0..n).rev() {
        for k in i + 1..n {
            let l = lu[k * n + i];
            for j in 0..m {
                b[i * m + j] = b[i * m + j] - l * b[k * m + j];
            }
        }
    }
    // X = Pᵀ z: the interchanges undone, last first.
    for (k, &p) in piv.iter().enumerate().rev() {
        if p != k {
            for j in 0..m {
                b.swap(k * m + j, p * m + j);
            }
        }
    }
}

/// Row-major `n × n` `a` transposed, for `lu_solve_transposed`.
fn transposed<T: Float>(a: &[T], n: usize) -> Vec<T> {
    (0..n * n).map(|i| a[(i % n) * n + i / n]).collect()
}

/// The sign of `lu`'s row permutation and the diagonal of `U`.
fn permutation_sign<T: Float>(piv: &[usize]) -> T {
    let swaps = piv.iter().enumerate().filter(|(k, p)| *k != **p).count();
    if swaps % 2 == 0 { T::one() } else { -T::one() }
}

/// Lower `L` with `L Lᵀ = A` from `A`'s lower triangle, in place (the upper triangle zeroed),
/// as `potf2`; the order of the first leading minor that is not positive-definite.
fn cholesky<T: Float>(a: &mut [T], n: usize) -> Result<(), usize> {
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d = d - a[j * n + k] * a[j * n + k];
        }
        if !(d > T::zero()) {
            return Err(j + 1);
        }
        let d = d.sqrt();
        a[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s = s - a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / d;
        }
        for k in j + 1..n {
            a[j * n + k] = T::zero();
        }
    }
    Ok(())
}

/// Row-major `m × n` `a` reduced in place by Householder reflections as `geqr2`: `R` on and
/// above the diagonal, the reflections' vectors below it (their first element 1 implied);
/// their factors `tau`.
fn householder<T: Float>(a: &mut [T], m: usize, n: usize) -> Vec<T> {
    let k = m.min(n);
    let mut tau = vec![T::zero(); k];
    for j in 0..k {
        let alpha = a[j * n + j];
        let mut xnorm = T::zero();
        for i in j + 1..m {
            xnorm = xnorm.hypot(a[i * n + j]);
        }
        if xnorm == T::zero() {
            continue;
        }
        let h = alpha.hypot(xnorm);
        // LAPACK's `dlarfg`: beta = -sign(alpha) * |(alpha, x)|, +0 counting as positive.
        let beta = if alpha >= T::zero() { -h } else { h };
        tau[j] = (beta - alpha) / beta;
        let scale = T::one() / (alpha - beta);
        for i in j + 1..m {
            a[i * n + j] = a[i * n + j] * scale;
        }
        a[j * n + j] = beta;
        for c in j + 1..n {
            let mut w = a[j * n + c];
            for i in j + 1..m {
                w = w + a[i * n + j] * a[i * n + c];
            }
            let w = w * tau[j];
            a[j * n + c] = a[j * n + c] - w;
            for i in j + 1..m {
                a[i * n + c] = a[i * n + c] - w * a[i * n + j];
            }
        }
    }
    tau
}

/// The first `q` columns of `Q = H₀ H₁ …` from `householder`'s output, as `org2r` forms them
/// (column `j` made from reflection `j`'s vector, the later columns reflected), down to the
/// signs of its zeros.
fn householder_q<T: Float>(v: &[T], tau: &[T], m: usize, n: usize, q: usize) -> Vec<T> {
    let mut out = vec![T::zero(); m * q];
    for c in tau.len()..q {
        out[c * q + c] = T::one();
    }
    for j in (0..tau.len()).rev() {
        if tau[j] != T::zero() {
            for c in j + 1..q {
                let mut w = out[j * q + c];
                for i in j + 1..m {
                    w = w + v[i * n + j] * out[i * q + c];
                }
                let w = w * tau[j];
                out[j * q + c] = out[j * q + c] - w;
                for i in j + 1..m {
                    out[i * q + c] = out[i * q + c] - w * v[i * n + j];
                }
            }
        }
        for i in j + 1..m {
            out[i * q + j] = -tau[j] * v[i * n + j];
        }
        out[j * q + j] = T::one() - tau[j];
    }
    out
}

/// `b` (`n × m`) overwritten with the solution of `A X = B` for triangular `a` (its other
/// triangle ignored); a zero on the diagonal gives infinities, as LAPACK's `trsm` does.
fn triangular_solve<T: Float>(a: &[T], n: usize, b: &mut [T], m: usize, upper: bool, unit: bool) {
    let rows: Vec<usize> = if upper {
        (0..n).rev().collect()
    } else {
        (0..n).collect()
    };
    for &i in &rows {
        let known: Vec<usize> = if upper {
            (i + 1..n).collect()
        } else {
            (0..i).collect()
        };
        for k in known {
            let f = a[i * n + k];
            for j in 0..m {
                b[i * m + j] = b[i * m + j] - f * b[k * m + j];
            }
        }
        if !unit {
            let d = a[i * n + i];
            for j in 0..m {
                b[i * m + j] = b[i * m + j] / d;
            }
        }
    }
}

/// Which of QR's results an op call gives, and how big.
#[derive(Clone, Copy, PartialEq)]
enum QrMode {
    Reduced,
    Complete,
}

fn qr_mode(a: &Attrs) -> QrMode {
    if a.flag("complete") {
        QrMode::Complete
    } else {
        QrMode::Reduced
    }
}

/// The shape of `Q` (`want_r` false) or `R` for an `m × n` input.
fn qr_shape(m: usize, n: usize, mode: QrMode, want_r: bool) -> (usize, usize) {
    let k = if mode == QrMode::Complete {
        m
    } else {
        m.min(n)
    };
    if want_r { (k, n) } else { (m, k) }
}

/// A float element type of tensors: `f32` or `f64`.
pub(crate) trait FloatElement: Float + 'static {
    fn tensor(shape: Vec<usize>, data: Vec<Self>) -> TensorData;
}

impl FloatElement for f32 {
    fn tensor(shape: Vec<usize>, data: Vec<Self>) -> TensorData {
        TensorData::Float32(ArrayD::from_shape_vec(IxDyn(&shape), data).expect("sized"))
    }
}

impl FloatElement for f64 {
    fn tensor(shape: Vec<usize>, data: Vec<Self>) -> TensorData {
        TensorData::Float64(ArrayD::from_shape_vec(IxDyn(&shape), data).expect("sized"))
    }
}

/// Run `$body` with `$a` the row-major elements of float tensor `$t`.
macro_rules! each_float_elements {
    ($t:expr, $a:ident => $body:expr) => {
        match $t {
            TensorData::Float32(x) => {
                let $a: Vec<f32> = x.iter().copied().collect();
                $body
            }
            TensorData::Float64(x) => {
                let $a: Vec<f64> = x.iter().copied().collect();
                $body
            }
            _ => unreachable!("inference admits only float tensors"),
        }
    };
}

pub(crate) use each_float_elements;

/// Run `$body` with `$a`, `$b` the row-major elements of two float tensors of one type.
macro_rules! both_float {
    ($t:expr, $u:expr, $a:ident, $b:ident => $body:expr) => {
        match ($t, $u) {
            (TensorData::Float32(x), TensorData::Float32(y)) => {
                let ($a, $b): (Vec<f32>, Vec<f32>) =
                    (x.iter().copied().collect(), y.iter().copied().collect());
                $body
            }
            (TensorData::Float64(x), TensorData::Float64(y)) => {
                let ($a, $b): (Vec<f64>, Vec<f64>) =
                    (x.iter().copied().collect(), y.iter().copied().collect());
                $body
            }
            _ => unreachable!("inference admits only float tensors of one type"),
        }
    };
}

/// The batch shape of matrices of `shape`, and how many matrices there are.
pub(crate) fn batch_of(shape: &[usize]) -> (Vec<usize>, usize) {
    let batch = shape[..shape.len() - 2].to_vec();
    let count = batch.iter().product();
    (batch, count)
}

fn solve_kernel<T: FloatElement>(
    a: Vec<T>,
    mut b: Vec<T>,
    shape_b: &[usize],
) -> TResult<TensorData> {
    let n = shape_b[shape_b.len() - 2];
    let m = shape_b[shape_b.len() - 1];
    let (_, count) = batch_of(shape_b);
    let mut piv = vec![0; n];
    for i in 0..count {
        let mut lu_a = transposed(&a[i * n * n..(i + 1) * n * n], n);
        if lu(&mut lu_a, n, &mut piv).is_some() {
            return Err(TensorError::runtime(
                "torch.linalg.solve: The solver failed because the input matrix is singular.",
            ));
        }
        lu_solve_transposed(&lu_a, &piv, n, &mut b[i * n * m..(i + 1) * n * m], m);
    }
    Ok(T::tensor(shape_b.to_vec(), b))
}

fn inv_kernel<T: FloatElement>(a: Vec<T>, shape: &[usize]) -> TResult<TensorData> {
    let n = shape[shape.len() - 1];
    let (batch, count) = batch_of(shape);
    let mut out = vec![T::zero(); a.len()];
    let mut piv = vec![0; n];
    for i in 0..count {
        let mut lu_a = transposed(&a[i * n * n..(i + 1) * n * n], n);
        if let Some(k) = lu(&mut lu_a, n, &mut piv) {
            return Err(batch_error(
                "linalg.inv",
                !batch.is_empty(),
                i,
                format!(
                    "The diagonal element {} is zero, the inversion could not be completed because the input matrix is singular.",
                    k + 1
                ),
            ));
        }
        let block = &mut out[i * n * n..(i + 1) * n * n];
        for d in 0..n {
            block[d * n + d] = T::one();
        }
        lu_solve_transposed(&lu_a, &piv, n, block, n);
    }
    Ok(T::tensor(shape.to_vec(), out))
}

/// `det` (one element per matrix) or, with `log`, `slogdet`'s sign and log of the absolute
/// value side by side (a last dimension of 2).
fn det_kernel<T: FloatElement>(a: Vec<T>, shape: &[usize], log: bool) -> TensorData {
    let n = shape[shape.len() - 1];
    let (mut batch, count) = batch_of(shape);
    let mut out = Vec::with_capacity(count * 2);
    let mut piv = vec![0; n];
    for i in 0..count {
        let mut lu_a = a[i * n * n..(i + 1) * n * n].to_vec();
        lu(&mut lu_a, n, &mut piv);
        let mut sign: T = permutation_sign(&piv);
        if log {
            let mut logabs = T::zero();
            for d in 0..n {
                let u = lu_a[d * n + d];
                sign = sign * u.signum();
                logabs = logabs + u.abs().ln();
            }
            if logabs == T::neg_infinity() {
                sign = sign * T::zero();
            }
            out.extend([sign, logabs]);
        } else {
            out.push((0..n).fold(sign, |p, d| p * lu_a[d * n + d]));
        }
    }
    if log {
        batch.push(2);
    }
    T::tensor(batch, out)
}

fn cholesky_kernel<T: FloatElement>(
    mut a: Vec<T>,
    shape: &[usize],
    upper: bool,
) -> TResult<TensorData> {
    let n = shape[shape.len() - 1];
    let (batch, count) = batch_of(shape);
    for i in 0..count {
        let block = &mut a[i * n * n..(i + 1) * n * n];
        if let Err(order) = cholesky(block, n) {
            return Err(batch_error(
                "linalg.cholesky",
                !batch.is_empty(),
                i,
                format!(
                    "The factorization could not be completed because the input is not positive-definite (the leading minor of order {order} is not positive-definite)."
                ),
            ));
        }
        if upper {
            for r in 0..n {
                for c in r + 1..n {
                    block.swap(r * n + c, c * n + r);
                }
            }
        }
    }
    Ok(T::tensor(shape.to_vec(), a))
}

fn qr_kernel<T: FloatElement>(
    a: Vec<T>,
    shape: &[usize],
    mode: QrMode,
    want_r: bool,
) -> TensorData {
    let (m, n) = (shape[shape.len() - 2], shape[shape.len() - 1]);
    let (mut batch, count) = batch_of(shape);
    let (rows, cols) = qr_shape(m, n, mode, want_r);
    let mut out = Vec::with_capacity(count * rows * cols);
    for i in 0..count {
        let mut v = a[i * m * n..(i + 1) * m * n].to_vec();
        let tau = householder(&mut v, m, n);
        if want_r {
            for r in 0..rows {
                for c in 0..cols {
                    out.push(if c >= r && r < m {
                        v[r * n + c]
                    } else {
                        T::zero()
                    });
                }
            }
        } else {
            out.extend(householder_q(&v, &tau, m, n, cols));
        }
    }
    batch.extend([rows, cols]);
    T::tensor(batch, out)
}

fn triangular_kernel<T: FloatElement>(
    a: Vec<T>,
    mut b: Vec<T>,
    shape_b: &[usize],
    attrs: &Attrs,
) -> TensorData {
    let n = shape_b[shape_b.len() - 2];
    let m = shape_b[shape_b.len() - 1];
    let (_, count) = batch_of(shape_b);
    for i in 0..count {
        triangular_solve(
            &a[i * n * n..(i + 1) * n * n],
            n,
            &mut b[i * n * m..(i + 1) * n * m],
            m,
            attrs.flag("upper"),
            attrs.flag("unitriangular"),
        );
    }
    T::tensor(shape_b.to_vec(), b)
}

/// `A X = B`'s operands: square `A`, `B` of `A`'s type, batch and rows (`linalg.py` has
/// broadcast them).
fn system_meta(op: &str, m: &[Meta]) -> TResult<Meta> {
    let (n, _) = check_matrices(op, &m[0], false)?;
    let b = &m[1];
    if b.shape.len() < 2 {
        return Err(TensorError::runtime(format!(
            "{op}: The input tensor B must have at least 2 dimensions."
        )));
    }
    let rows = b.shape[b.shape.len() - 2];
    if rows != n || b.shape[..b.shape.len() - 2] != m[0].shape[..m[0].shape.len() - 2] {
        return Err(TensorError::runtime(format!(
            "{op}: Incompatible shapes of A and B for the equation AX = B ({n}x{n} and {rows}x{})",
            b.shape[b.shape.len() - 1]
        )));
    }
    if b.dtype != m[0].dtype {
        return Err(TensorError::runtime(format!(
            "{op}: Expected A and B to have the same dtype, but found A of type {} and B of type {} instead",
            torch_type_name(m[0].dtype),
            torch_type_name(b.dtype)
        )));
    }
    Ok(b.clone())
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "linalg_solve",
            Arity::Exactly(2),
            |m: &[Meta], _| system_meta("linalg.solve", m),
            |t: &[&TensorData], _| {
                let shape = t[1].shape().to_vec();
                both_float!(t[0], t[1], a, b => solve_kernel(a, b, &shape))
            },
        ),
        OpDef::new(
            "linalg_solve_triangular",
            Arity::Exactly(2),
            |m: &[Meta], _| system_meta("linalg.solve_triangular", m),
            |t: &[&TensorData], attrs| {
                let shape = t[1].shape().to_vec();
                Ok(both_float!(t[0], t[1], a, b => triangular_kernel(a, b, &shape, attrs)))
            },
        ),
        OpDef::new(
            "linalg_inv",
            Arity::Exactly(1),
            |m: &[Meta], _| check_matrices("linalg.inv", &m[0], false).map(|_| m[0].clone()),
            |t: &[&TensorData], _| {
                let shape = t[0].shape().to_vec();
                each_float_elements!(t[0], a => inv_kernel(a, &shape))
            },
        ),
        OpDef::new(
            "linalg_det",
            Arity::Exactly(1),
            |m: &[Meta], a: &Attrs| {
                check_matrices("linalg.det", &m[0], false)?;
                let mut shape = m[0].shape[..m[0].shape.len() - 2].to_vec();
                if a.flag("log") {
                    shape.push(2);
                }
                Ok(Meta {
                    shape,
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], attrs| {
                let shape = t[0].shape().to_vec();
                Ok(each_float_elements!(t[0], a => det_kernel(a, &shape, attrs.flag("log"))))
            },
        ),
        OpDef::new(
            "linalg_cholesky",
            Arity::Exactly(1),
            |m: &[Meta], _| check_matrices("linalg.cholesky", &m[0], false).map(|_| m[0].clone()),
            |t: &[&TensorData], attrs| {
                let shape = t[0].shape().to_vec();
                each_float_elements!(t[0], a => cholesky_kernel(a, &shape, attrs.flag("upper")))
            },
        ),
        OpDef::new(
            "linalg_qr",
            Arity::Exactly(1),
            |m: &[Meta], attrs: &Attrs| {
                let (rows, cols) = check_matrices("linalg.qr", &m[0], true)?;
                let (r, c) = qr_shape(rows, cols, qr_mode(attrs), attrs.flag("r"));
                let mut shape = m[0].shape[..m[0].shape.len() - 2].to_vec();
                shape.extend([r, c]);
                Ok(Meta {
                    shape,
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], attrs| {
                let shape = t[0].shape().to_vec();
                let mode = qr_mode(attrs);
                Ok(each_float_elements!(t[0], a => qr_kernel(a, &shape, mode, attrs.flag("r"))))
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lu_solves_and_factors_as_getf2_pivots() {
        let a = [2.0, 1.0, 1.0, 4.0, -6.0, 0.0, -2.0, 7.0, 2.0];
        let mut f = a.to_vec();
        let mut piv = [0; 3];
        assert_eq!(lu(&mut f, 3, &mut piv), None);
        // a tie (4 and 4 in the second column) keeps the first, as `idamax` does
        assert_eq!(piv, [1, 1, 2]);
        let mut t = transposed(&a, 3);
        let mut piv_t = [0; 3];
        assert_eq!(lu(&mut t, 3, &mut piv_t), None);
        let mut b = vec![5.0, -2.0, 9.0];
        lu_solve_transposed(&t, &piv_t, 3, &mut b, 1);
        assert_eq!(b, vec![1.0, 1.0, 2.0]);
        let mut singular = vec![1.0, 2.0, 2.0, 4.0];
        assert_eq!(lu(&mut singular, 2, &mut [0; 2]), Some(1));
    }

    #[test]
    fn qr_reconstructs_with_lapack_signs() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let mut v = a.to_vec();
        let tau = householder(&mut v, 3, 2);
        let q = householder_q(&v, &tau, 3, 2, 2);
        // dlarfg's sign: the first column's first element is positive, so R[0][0] is
        // minus its norm.
        assert_eq!(v[0], -(35.0f64).sqrt());
        for i in 0..3 {
            for j in 0..2 {
                let r = |k: usize, j: usize| if j >= k { v[k * 2 + j] } else { 0.0 };
                let x: f64 = (0..2).map(|k| q[i * 2 + k] * r(k, j)).sum();
                assert!((x - a[i * 2 + j]).abs() < 1e-12);
            }
        }
    }
}
