//! matmul (NumPy's rules: 1-D operands are promoted and the added dimension dropped, batch
//! dimensions broadcast), dot (two 1-D tensors), and linear (`x @ w.T + b`, torch's layer).

use std::mem::MaybeUninit;

use ndarray::{ArrayD, ArrayView2, ArrayViewD, Axis, Ix2, IxDyn, LinalgScalar};
use rayon::prelude::*;

use crate::tensor::data::{Element, TensorData};
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError, shape_str};
use crate::tensor::layout::{row_major, standard};
use crate::tensor::registry::{Arity, Meta, OpDef};

use super::product::{Product, as_uninit, threaded, written, zeroed};
use super::transpose::transpose_into;
use crate::tensor::shape::broadcast;

/// The result shape of `a @ b`.
pub fn matmul_shape(a: &[usize], b: &[usize]) -> TResult<Vec<usize>> {
    if a.is_empty() || b.is_empty() {
        return Err(TensorError::runtime(
            "matmul: both operands need at least one dimension",
        ));
    }
    let a2: Vec<usize> = if a.len() == 1 {
        vec![1, a[0]]
    } else {
        a.to_vec()
    };
    let b2: Vec<usize> = if b.len() == 1 {
        vec![b[0], 1]
    } else {
        b.to_vec()
    };
    let (n, k1) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (k2, p) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if k1 != k2 {
        return Err(TensorError::runtime(format!(
            "matmul: shapes {} and {} do not align ({k1} != {k2})",
            shape_str(a),
            shape_str(b)
        )));
    }
    let batch = broadcast(&a2[..a2.len() - 2], &b2[..b2.len() - 2])?;
    let mut out = batch;
    if a.len() > 1 {
        out.push(n);
    }
    if b.len() > 1 {
        out.push(p);
    }
    Ok(out)
}

/// Products with at most this many multiply-adds run in a plain loop ([`small_product_into`]): for
/// them matrixmultiply's packing costs more than the arithmetic. The choice depends on the
/// shapes only (never on memory layout), so that eager execution and a compiled graph, which
/// both follow it, round alike.
pub const SMALL_PRODUCT: usize = 32 * 32 * 32;

/// `a @ b` for row-major `a` (m × k) and `b` (k × n), by a plain loop: every output element
/// is 0 + a[i,0]·b[0,j] + a[i,1]·b[1,j] + ..., its products and sums rounded one by one in order
/// of `p` (never fused), so that the result does not depend on the CPU nor on how the loop is
/// blocked. Written into `out`, whose `m * n` elements it overwrites (`m` is `out.len() / n`):
/// lowered graphs keep their results in one reused buffer.
pub fn small_product_into<T: LinalgScalar>(a: &[T], b: &[T], k: usize, n: usize, out: &mut [T]) {
    super::vector_math::wide_vectors!(small_product_avx2, small_product_loop(a, b, k, n, out))
}

/// Output rows computed together: each block of columns keeps `ROWS` rows of sums in
/// registers, so that `ROWS` independent chains of additions run side by side; row by row, an
/// addition waited for the one before it. Float64 on AVX-512: 4×16×16 ~100 → ~60 ns,
/// 32×32×32 ~3000 → ~1600 ns.
const ROWS: usize = 4;

#[inline(always)]
fn small_product_loop<T: LinalgScalar>(a: &[T], b: &[T], k: usize, n: usize, out: &mut [T]) {
    if k == 0 || n == 0 {
        out.fill(T::zero());
        return;
    }
    let mut rows = out.chunks_exact_mut(n * ROWS);
    let mut a_rows = a.chunks_exact(k * ROWS);
    for (block, a_block) in (&mut rows).zip(&mut a_rows) {
        row_block::<T, ROWS>(block, a_block, b, k, n);
    }
    for (row, a_row) in rows
        .into_remainder()
        .chunks_exact_mut(n)
        .zip(a_rows.remainder().chunks_exact(k))
    {
        row_block::<T, 1>(row, a_row, b, k, n);
    }
}

/// `R` output rows (`out`, from the `R` rows of `a` in `a_rows`), in blocks of columns whose
/// sums stay in registers for the whole of `p`. A block's sums fill at most eight 256-bit
/// registers (16 columns, or 8 of float64 when `R` rows are four): 16 float64 columns of four
/// rows took all 16 registers and spilled half of them to the stack on every step of `p` (the
/// tiny attention's products ran at 2.5 times the instructions of their arithmetic).
#[inline(always)]
fn row_block<T: LinalgScalar, const R: usize>(
    out: &mut [T],
    a_rows: &[T],
    b: &[T],
    k: usize,
    n: usize,
) {
    let mut j = 0;
    if R * std::mem::size_of::<T>() <= 16 {
        while j + 16 <= n {
            column_block::<T, R, 16>(out, a_rows, b, k, n, j);
            j += 16;
        }
    }
    while j + 8 <= n {
        column_block::<T, R, 8>(out, a_rows, b, k, n, j);
        j += 8;
    }
    while j + 4 <= n {
        column_block::<T, R, 4>(out, a_rows, b, k, n, j);
        j += 4;
    }
    while j < n {
        column_block::<T, R, 1>(out, a_rows, b, k, n, j);
        j += 1;
    }
}

/// Columns `j .. j + W` of `R` output rows.
#[inline(always)]
fn column_block<T: LinalgScalar, const R: usize, const W: usize>(
    out: &mut [T],
    a_rows: &[T],
    b: &[T],
    k: usize,
    n: usize,
    j: usize,
) {
    // Each row of `a` as a slice of exactly `k`: indexing it by `p < k` needs no check in
    // the loop (a check per row and step cost more instructions than the arithmetic).
    let a: [&[T]; R] = std::array::from_fn(|r| &a_rows[r * k..][..k]);
    let mut acc = [[T::zero(); W]; R];
    for (p, b_row) in (0..k).zip(b.chunks_exact(n)) {
        let b_block: &[T; W] = b_row[j..j + W].try_into().expect("W columns");
        for (sums, a_r) in acc.iter_mut().zip(&a) {
            let a_rp = a_r[p];
            for (s, &b_pj) in sums.iter_mut().zip(b_block) {
                *s = *s + a_rp * b_pj;
            }
        }
    }
    for (r, sums) in acc.iter().enumerate() {
        out[r * n + j..r * n + j + W].copy_from_slice(sums);
    }
}

/// `out = x @ y` (row-major `m × n`) for two matrices, every element of `out` written: a
/// plain loop for small products, the `gemm` kernels above. `threads`: whether a large
/// product may use rayon's threads.
pub(crate) fn product_into<T: Product>(
    x: ArrayView2<'_, T>,
    y: ArrayView2<'_, T>,
    out: &mut [MaybeUninit<T>],
    threads: bool,
) {
    let ((m, k), (_, n)) = (x.dim(), y.dim());
    if m * k * n <= SMALL_PRODUCT {
        let (a, b) = (standard(x), standard(y));
        let (a, b) = (
            a.as_slice().expect("standard layout"),
            b.as_slice().expect("standard layout"),
        );
        return small_product_into(a, b, k, n, zeroed(out));
    }
    T::product_into(x, y, out, threads)
}

/// `x @ y` for two matrices, as an array of `out_shape` (its `m × n` elements).
fn product_2d<T: Product>(
    x: ArrayView2<'_, T>,
    y: ArrayView2<'_, T>,
    out_shape: &[usize],
) -> ArrayD<T> {
    // SAFETY: a product writes each of its m × n elements.
    let out = unsafe { written(x.nrows() * y.ncols(), |out| product_into(x, y, out, true)) };
    ArrayD::from_shape_vec(IxDyn(out_shape), out).expect("shape computed by inference")
}

fn matmul_typed<T: Element + Product>(
    a: &ArrayD<T>,
    b: &ArrayD<T>,
    out_shape: &[usize],
) -> ArrayD<T> {
    let a2 = if a.ndim() == 1 {
        a.view().insert_axis(Axis(0))
    } else {
        a.view()
    };
    let b2 = if b.ndim() == 1 {
        b.view().insert_axis(Axis(1))
    } else {
        b.view()
    };
    if a2.ndim() == 2 && b2.ndim() == 2 {
        // No batch: one product straight on the operands, no copies.
        let x = a2.into_dimensionality::<Ix2>().expect("2-D");
        let y = b2.into_dimensionality::<Ix2>().expect("2-D");
        return product_2d(x, y, out_shape);
    }
    let (n, k, p) = (
        a2.shape()[a2.ndim() - 2],
        a2.shape()[a2.ndim() - 1],
        b2.shape()[b2.ndim() - 1],
    );
    if b2.ndim() == 2 {
        // A batch of matrices times one matrix (a linear layer on a batch of sequences) is
        // one product: the batch's rows stacked, the matrix used once, never copied per batch.
        let rows: usize = a2.shape()[..a2.ndim() - 1].iter().product();
        let a_std = standard(a2.view());
        let x = a_std
            .view()
            .into_shape_with_order((rows, k))
            .expect("standard layout");
        let y = b2.into_dimensionality::<Ix2>().expect("2-D");
        return product_2d(x, y, out_shape);
    }
    let batch = broadcast(&a2.shape()[..a2.ndim() - 2], &b2.shape()[..b2.ndim() - 2])
        .expect("checked by inference");
    let count: usize = batch.iter().product();
    // Each operand as `count` matrices: used in place when it is a row-major batch already,
    // or a batch of one dimension with any strides (each matrix's product reads its
    // strides), otherwise broadcast and copied once.
    let spread = |v: &ArrayViewD<'_, T>, rows: usize, cols: usize| {
        let mut s = batch.clone();
        s.extend([rows, cols]);
        let in_place = v.shape() == s.as_slice() && (v.is_standard_layout() || v.ndim() == 3);
        (!in_place).then(|| row_major(v.broadcast(IxDyn(&s)).expect("checked")))
    };
    fn as_batch<T>(v: ArrayViewD<'_, T>, shape: [usize; 3]) -> ArrayViewD<'_, T> {
        if v.ndim() == 3 {
            v
        } else {
            v.into_shape_with_order(IxDyn(&shape))
                .expect("standard layout")
        }
    }
    let (a_copy, b_copy) = (spread(&a2, n, k), spread(&b2, k, p));
    let a3 = as_batch(
        a_copy.as_ref().map_or_else(|| a2.view(), |c| c.view()),
        [count, n, k],
    );
    let b3 = as_batch(
        b_copy.as_ref().map_or_else(|| b2.view(), |c| c.view()),
        [count, k, p],
    );
    let one = |(i, o): (usize, &mut [MaybeUninit<T>])| {
        let x = a3.index_axis(Axis(0), i).into_dimensionality::<Ix2>();
        let y = b3.index_axis(Axis(0), i).into_dimensionality::<Ix2>();
        product_into(x.expect("2-D"), y.expect("2-D"), o, false);
    };
    let write = |out: &mut [MaybeUninit<T>]| {
        if count > 1 && threaded(count * n * k * p) {
            // The batch's products side by side, each on one thread: the same products (and
            // the same roundings) as one after another.
            out.par_chunks_mut((n * p).max(1)).enumerate().for_each(one);
        } else {
            out.chunks_mut((n * p).max(1)).enumerate().for_each(one);
        }
    };
    // SAFETY: the chunks cover the output and each product writes its whole chunk.
    let out = unsafe { written(count * n * p, write) };
    ArrayD::from_shape_vec(IxDyn(out_shape), out).expect("shape computed by inference")
}

/// `linear(x, w, b)`: `x @ w.T + b` for `w` of (out_features, in_features), the bias added
/// to each row of the product.
fn linear_typed<T: Element + Product>(
    x: &ArrayD<T>,
    w: &ArrayD<T>,
    bias: Option<&ArrayD<T>>,
    out_shape: &[usize],
) -> ArrayD<T> {
    let (n, k) = (w.shape()[0], w.shape()[1]);
    let rows: usize = x.shape()[..x.ndim() - 1].iter().product();
    let xs = standard(x.view());
    let ws = standard(w.view());
    let (xs, ws) = (
        xs.as_slice().expect("standard layout"),
        ws.as_slice().expect("standard layout"),
    );
    let mut out = if rows * k * n <= SMALL_PRODUCT {
        let mut out = vec![T::zero(); rows * n];
        linear_into(xs, ws, (rows, k, n), &mut out, &mut Vec::new());
        out
    } else {
        // SAFETY: a product writes each of its rows × n elements.
        unsafe { written(rows * n, |out| linear_product(xs, ws, (rows, k, n), out)) }
    };
    if let Some(b) = bias {
        let bs = standard(b.view());
        add_bias(&mut out, bs.as_slice().expect("standard layout"));
    }
    ArrayD::from_shape_vec(IxDyn(out_shape), out).expect("shape computed by inference")
}

/// `x @ w.T` for row-major `x` (`rows × k`) and `w` (`n × k`), into `out` (`rows × n`), as
/// `linear` computes it: a small product on `w.T` made row-major in `w_t` (the product
/// `matmul` computes, the same loops in the same order), a large one reading `w.T` in place
/// as a column-major matrix.
pub(crate) fn linear_into<T: Product>(
    x: &[T],
    w: &[T],
    (rows, k, n): (usize, usize, usize),
    out: &mut [T],
    w_t: &mut Vec<T>,
) {
    if rows * k * n <= SMALL_PRODUCT {
        w_t.resize(k * n, T::zero());
        transpose_into(w, n, k, w_t);
        small_product_into(x, w_t, k, n, out);
    } else {
        linear_product(x, w, (rows, k, n), as_uninit(out));
    }
}

/// A large `x @ w.T`, written into `out` whatever it held: `w.T` read in place as a
/// column-major matrix.
fn linear_product<T: Product>(
    x: &[T],
    w: &[T],
    (rows, k, n): (usize, usize, usize),
    out: &mut [MaybeUninit<T>],
) {
    let xv = ArrayView2::from_shape((rows, k), x).expect("rows × k");
    let wv = ArrayView2::from_shape((n, k), w).expect("n × k");
    T::product_into(xv, wv.t(), out, true);
}

/// `bias` added to each row of `out` (rows of `bias.len()` elements), as `linear` adds it.
pub(crate) fn add_bias<T: LinalgScalar>(out: &mut [T], bias: &[T]) {
    for row in out.chunks_exact_mut(bias.len().max(1)) {
        for (o, &c) in row.iter_mut().zip(bias) {
            *o = *o + c;
        }
    }
}

fn linear_meta(m: &[Meta]) -> TResult<Meta> {
    let (x, w) = (&m[0], &m[1]);
    if m.len() > 3 || x.shape.is_empty() || w.shape.len() != 2 {
        return Err(TensorError::runtime(
            "linear takes an input of one or more dimensions, a 2-D weight and a 1-D bias",
        ));
    }
    let (n, k) = (w.shape[0], w.shape[1]);
    if x.shape[x.shape.len() - 1] != k {
        let rows: usize = x.shape[..x.shape.len() - 1].iter().product();
        return Err(TensorError::runtime(format!(
            "mat1 and mat2 shapes cannot be multiplied ({rows}x{} and {k}x{n})",
            x.shape[x.shape.len() - 1]
        )));
    }
    if let Some(b) = m.get(2)
        && b.shape != [n]
    {
        return Err(TensorError::runtime(format!(
            "the bias has shape {}, not ({n},)",
            shape_str(&b.shape)
        )));
    }
    let dtype = m.iter().map(|t| t.dtype).fold(x.dtype, DType::promote);
    if !dtype.is_float() {
        return Err(TensorError::type_error(format!(
            "linear needs float tensors, not {}",
            dtype.name()
        )));
    }
    let mut shape = x.shape.clone();
    *shape.last_mut().expect("one dimension or more") = n;
    Ok(Meta { shape, dtype })
}

pub fn linear(t: &[&TensorData]) -> TResult<TensorData> {
    let metas: Vec<Meta> = t.iter().map(|d| Meta::of(d)).collect();
    let meta = linear_meta(&metas)?;
    let cast: Vec<_> = t.iter().map(|d| d.to_dtype(meta.dtype)).collect();
    Ok(match meta.dtype {
        DType::Float32 => {
            let arr = |i: usize| match cast.get(i).map(|c| c.as_ref()) {
                Some(TensorData::Float32(a)) => Some(a),
                _ => None,
            };
            TensorData::Float32(linear_typed(
                arr(0).expect("x"),
                arr(1).expect("w"),
                arr(2),
                &meta.shape,
            ))
        }
        _ => {
            let arr = |i: usize| match cast.get(i).map(|c| c.as_ref()) {
                Some(TensorData::Float64(a)) => Some(a),
                _ => None,
            };
            TensorData::Float64(linear_typed(
                arr(0).expect("x"),
                arr(1).expect("w"),
                arr(2),
                &meta.shape,
            ))
        }
    })
}

pub fn matmul(a: &TensorData, b: &TensorData) -> TResult<TensorData> {
    let shape = matmul_shape(a.shape(), b.shape())?;
    let dt = DType::promote(a.dtype(), b.dtype());
    let compute = dt.max(DType::Int64);
    Ok(
        match (a.to_dtype(compute).as_ref(), b.to_dtype(compute).as_ref()) {
            (TensorData::Int64(x), TensorData::Int64(y)) => {
                let r = TensorData::Int64(matmul_typed(x, y, &shape));
                // bool @ bool is "any of the ands", as in NumPy.
                if dt == DType::Bool {
                    r.cast(DType::Bool)
                } else {
                    r
                }
            }
            (TensorData::Float32(x), TensorData::Float32(y)) => {
                TensorData::Float32(matmul_typed(x, y, &shape))
            }
            (TensorData::Float64(x), TensorData::Float64(y)) => {
                TensorData::Float64(matmul_typed(x, y, &shape))
            }
            _ => unreachable!("cast to one type"),
        },
    )
}

fn dot_shape(a: &[usize], b: &[usize]) -> TResult<Vec<usize>> {
    if a.len() != 1 || b.len() != 1 || a[0] != b[0] {
        return Err(TensorError::runtime(format!(
            "dot needs two 1-D tensors of the same length, got {} and {}",
            shape_str(a),
            shape_str(b)
        )));
    }
    Ok(vec![])
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "matmul",
            Arity::Exactly(2),
            |m: &[Meta], _| {
                Ok(Meta {
                    shape: matmul_shape(&m[0].shape, &m[1].shape)?,
                    dtype: DType::promote(m[0].dtype, m[1].dtype),
                })
            },
            |t: &[&TensorData], _| matmul(t[0], t[1]),
        ),
        OpDef::new(
            "dot",
            Arity::Exactly(2),
            |m: &[Meta], _| {
                Ok(Meta {
                    shape: dot_shape(&m[0].shape, &m[1].shape)?,
                    dtype: DType::promote(m[0].dtype, m[1].dtype),
                })
            },
            |t: &[&TensorData], _| {
                dot_shape(t[0].shape(), t[1].shape())?;
                matmul(t[0], t[1])
            },
        ),
        OpDef::new(
            "linear",
            Arity::AtLeast(2),
            |m: &[Meta], _| linear_meta(m),
            |t: &[&TensorData], _| linear(t),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::small_product_into;

    /// Each element by its definition: 0 + a[i,0]·b[0,j] + a[i,1]·b[1,j] + ..., in order of
    /// `p`, every product and sum rounded (`black_box` keeps the compiler from vectorizing or
    /// fusing anything).
    fn by_definition<T: ndarray::LinalgScalar>(
        a: &[T],
        b: &[T],
        m: usize,
        k: usize,
        n: usize,
    ) -> Vec<T> {
        let mut out = vec![T::zero(); m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = T::zero();
                for p in 0..k {
                    s = std::hint::black_box(s + std::hint::black_box(a[i * k + p] * b[p * n + j]));
                }
                out[i * n + j] = s;
            }
        }
        out
    }

    /// Blocks of rows and of columns (and the rows and columns left over from them) give each
    /// element the bits of its definition, in both float types.
    #[test]
    fn small_products_round_as_their_definition_whatever_the_blocks() {
        for (m, k, n) in [
            (1, 16, 16),
            (4, 16, 16),
            (5, 7, 21),
            (9, 3, 4),
            (3, 1, 1),
            (8, 33, 17),
            (6, 5, 29),
            (2, 0, 3),
        ] {
            let a: Vec<f64> = (0..m * k).map(|i| (i as f64 * 0.7).sin() * 1e3).collect();
            let b: Vec<f64> = (0..k * n).map(|i| (i as f64 * 1.3).cos() / 7.0).collect();
            assert_rounds_as_defined(&a, &b, (m, k, n), f64::to_bits);
            let narrow = |xs: &[f64]| xs.iter().map(|&x| x as f32).collect::<Vec<f32>>();
            assert_rounds_as_defined(&narrow(&a), &narrow(&b), (m, k, n), |x| x.to_bits().into());
        }
    }

    fn assert_rounds_as_defined<T: ndarray::LinalgScalar + std::fmt::Debug>(
        a: &[T],
        b: &[T],
        (m, k, n): (usize, usize, usize),
        bits: impl Fn(T) -> u64,
    ) {
        let mut out = vec![T::one(); m * n];
        small_product_into(a, b, k, n, &mut out);
        let want = by_definition(a, b, m, k, n);
        assert!(
            out.iter().zip(&want).all(|(&x, &y)| bits(x) == bits(y)),
            "{m}×{k}×{n}: {out:?} != {want:?}"
        );
    }
}
