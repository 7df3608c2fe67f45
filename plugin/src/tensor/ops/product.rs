//! Matrix products above [`SMALL_PRODUCT`]: the `gemm` crate for float32 and float64 (packed,
//! vectorized for the CPU it runs on, threaded through rayon for large products), and
//! ndarray's generic product for int64, which no fast kernel covers.
//!
//! Why `gemm`: on this project's 2-core AVX2 machine, a 256×512×1024 float64 product runs at
//! 44 GFLOP/s on one thread and 88 on two (float32 95 and 185), where matrixmultiply (ndarray's
//! `dot`) reaches 35 and 61 (83 and 151) and faer 41 and 87 (90 and 180), at the level of
//! OpenBLAS under NumPy (43 and 84); it is pure Rust, with no system library to install, and
//! far smaller than faer. faer is faster on skinny products (256×1024×10: 55 GFLOP/s against
//! 27 on two threads), which take little of a model's time. `benches/gemm_choice` measures
//! the three. On an AVX-512 machine (gemm 0.19 with `x86-v4`, faer 0.24 with its AVX-512
//! kernels, one thread, 256×1024×1024): gemm 152 GFLOP/s in float32 and 73 in float64, faer
//! 146 and 70, matrixmultiply 136 and 56; gemm without its AVX-512 kernels 78 and 37.
//!
//! Rounding: `gemm` splits the work among threads by blocks of the output, never along the
//! shared dimension, so a product rounds alike on one thread or many; its kernel choice
//! depends on the shapes and the operands' strides, which eager execution and a graph's run
//! share (a graph runs the same ops on the same views).
//!
//! [`SMALL_PRODUCT`]: super::linalg::SMALL_PRODUCT

use std::mem::MaybeUninit;

use ndarray::{ArrayView2, LinalgScalar};
use rayon::prelude::*;

/// Products with at least this many multiply-adds use every thread of rayon's pool: below
/// it, starting the threads costs more than they save (a 64×128×128 float64 product takes
/// 52 µs on one thread and 42 µs on two; a 1×1024×1024 one gains nothing).
pub const PARALLEL_PRODUCT: usize = 1 << 20;

/// Whether a product of `multiply_adds` goes to rayon's threads: only when there are several
/// (with one, handing the work to it and waiting costs a thread switch and gains nothing: a
/// batch of eight 128×128×128 float32 products took 488 µs that way, 390 µs on the caller).
pub fn threaded(multiply_adds: usize) -> bool {
    multiply_adds >= PARALLEL_PRODUCT && super::parallel::threads() > 1
}

/// Products with fewer columns are split by bands of rows, one per thread, not by `gemm`:
/// it splits such a product badly (256×1024×10 in float64: 30 GFLOP/s on one thread, 27 on
/// two).
const PARALLEL_COLUMNS: usize = 16;

/// The fewest rows a band of such a split gets.
const ROWS_PER_PART: usize = 32;

/// The element types whose products have a kernel here.
pub trait Product: LinalgScalar + super::transpose::PlainBits + Send + Sync {
    /// `out = x @ y`, `out` row-major `m × n`, every element written whatever it held (so
    /// that a new output need not be zeroed first: see [`written`]); `threads`: whether the
    /// product may use rayon's threads (not when the caller already runs products in
    /// parallel).
    fn product_into(
        x: ArrayView2<'_, Self>,
        y: ArrayView2<'_, Self>,
        out: &mut [MaybeUninit<Self>],
        threads: bool,
    );
}

impl Product for f32 {
    fn product_into(
        x: ArrayView2<'_, f32>,
        y: ArrayView2<'_, f32>,
        out: &mut [MaybeUninit<f32>],
        threads: bool,
    ) {
        float_product(x, y, out, threads)
    }
}

impl Product for f64 {
    fn product_into(
        x: ArrayView2<'_, f64>,
        y: ArrayView2<'_, f64>,
        out: &mut [MaybeUninit<f64>],
        threads: bool,
    ) {
        float_product(x, y, out, threads)
    }
}

impl Product for i64 {
    fn product_into(
        x: ArrayView2<'_, i64>,
        y: ArrayView2<'_, i64>,
        out: &mut [MaybeUninit<i64>],
        _: bool,
    ) {
        let out = zeroed(out);
        let mut view = ndarray::ArrayViewMut2::from_shape((x.nrows(), y.ncols()), out)
            .expect("m × n elements");
        ndarray::linalg::general_mat_mul(1, &x, &y, 0, &mut view);
    }
}

/// `out`, whose elements are all initialized, as the memory [`Product::product_into`] writes.
pub fn as_uninit<T>(out: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and a product writes only values of `T`, so
    // `out` stays initialized.
    unsafe { &mut *(out as *mut [T] as *mut [MaybeUninit<T>]) }
}

/// `out` with every element set to zero, as the initialized slice it then is: for a kernel
/// that takes one (the plain loop of small products, ndarray's product).
pub fn zeroed<T: LinalgScalar>(out: &mut [MaybeUninit<T>]) -> &mut [T] {
    out.fill(MaybeUninit::new(T::zero()));
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and every element was just written.
    unsafe { &mut *(out as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// A new vector of `len` elements written by `write`, never zeroed first: for a large
/// product's output, zeroing memory the allocator recycles (what `vec![0; len]` does) took 5%
/// of a large attention pass.
///
/// # Safety
/// `write` writes every one of the `len` elements it is given.
pub unsafe fn written<T>(len: usize, write: impl FnOnce(&mut [MaybeUninit<T>])) -> Vec<T> {
    let mut v = Vec::with_capacity(len);
    write(&mut v.spare_capacity_mut()[..len]);
    // SAFETY: the caller's promise: all `len` elements are initialized.
    unsafe { v.set_len(len) };
    v
}

fn float_product<T: LinalgScalar + Send + Sync>(
    x: ArrayView2<'_, T>,
    y: ArrayView2<'_, T>,
    out: &mut [MaybeUninit<T>],
    threads: bool,
) {
    let ((m, k), n) = (x.dim(), y.ncols());
    debug_assert_eq!(out.len(), m * n);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        out.fill(MaybeUninit::new(T::zero()));
        return;
    }
    let (x, y) = (usable(x), usable(y));
    if threads && n < PARALLEL_COLUMNS && m >= 2 * ROWS_PER_PART && threaded(m * k * n) {
        // Few columns: a band of rows per thread, each a product of its own.
        let parts = super::parallel::threads().min(m / ROWS_PER_PART);
        let rows = m.div_ceil(parts);
        return out.par_chunks_mut(rows * n).enumerate().for_each(|(i, o)| {
            let band = x.slice(ndarray::s![i * rows..(i * rows + o.len() / n), ..]);
            float_product(band, y.view(), o, false)
        });
    }
    let (xs, ys) = (x.strides(), y.strides());
    let parallelism = if threads && threaded(m * k * n) {
        gemm::Parallelism::Rayon(super::parallel::threads())
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: the pointers and strides describe `x` (m × k), `y` (k × n) and `out` (m × n,
    // row-major), which live through the call; `out` does not overlap the operands (it is
    // borrowed mutably). With `read_dst` false, `gemm` writes every element of `out` without
    // reading it.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr().cast::<T>(),
            1,
            n as isize,
            false,
            x.as_ptr(),
            xs[1],
            xs[0],
            y.as_ptr(),
            ys[1],
            ys[0],
            T::zero(),
            T::one(),
            false,
            false,
            false,
            parallelism,
        )
    }
}

/// `m` itself when its strides are positive and one of them is 1 (row-major, or column-major
/// as a transposed matrix is), else a row-major copy: `gemm` reads any strides, but a
/// broadcast (stride 0) or a flipped view (negative) gains nothing from being read in place.
fn usable<T: LinalgScalar + Send + Sync>(
    m: ArrayView2<'_, T>,
) -> ndarray::CowArray<'_, T, ndarray::Ix2> {
    let s = m.strides();
    let fits = |d: usize| s[d] > 0 || m.shape()[d] == 1;
    if fits(0) && fits(1) && (s[0] == 1 || s[1] == 1) {
        m.into()
    } else {
        crate::tensor::layout::standard(m).into_owned().into()
    }
}

#[cfg(test)]
mod tests {
    use ndarray::{Array2, ArrayD, IxDyn, s};

    use super::*;
    use crate::tensor::TensorData;
    use crate::tensor::ops::linalg::matmul;

    fn filled(rows: usize, cols: usize, seed: f64) -> Array2<f64> {
        Array2::from_shape_fn((rows, cols), |(i, j)| ((i * cols + j) as f64 * seed).sin())
    }

    /// The product by its definition, summed in f64 (the reference the kernels must meet).
    fn reference(x: &Array2<f64>, y: &Array2<f64>) -> Array2<f64> {
        Array2::from_shape_fn((x.nrows(), y.ncols()), |(i, j)| {
            (0..x.ncols()).map(|p| x[[i, p]] * y[[p, j]]).sum()
        })
    }

    fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
    }

    #[test]
    fn large_products_meet_the_definition_whatever_the_operands_layout() {
        let x = filled(70, 90, 0.37);
        let y = filled(90, 110, 0.11);
        let want = reference(&x, &y);
        let yt = y.t().to_owned(); // y stored column by column
        let flipped = x.slice(s![..;-1, ..]).to_owned(); // read back flipped below
        let layouts: Vec<(ArrayView2<f64>, ArrayView2<f64>)> = vec![
            (x.view(), y.view()),
            (x.view(), yt.t()),
            (flipped.slice(s![..;-1, ..]), y.view()),
        ];
        let mut first: Option<Vec<f64>> = None;
        for (a, b) in layouts {
            for threads in [false, true] {
                // Whatever the output held is overwritten, never read.
                let mut out = vec![f64::NAN; 70 * 110];
                f64::product_into(a, b, as_uninit(&mut out), threads);
                assert!(close(&out, want.as_slice().unwrap(), 1e-12));
                // One thread or many: the same bits.
                if threads {
                    assert_eq!(Some(&out), first.as_ref());
                }
                first = Some(out);
            }
        }
        // float32 and int64 too.
        let (xf, yf) = (x.mapv(|v| v as f32), y.mapv(|v| v as f32));
        let mut out = vec![f32::NAN; 70 * 110];
        f32::product_into(xf.view(), yf.view(), as_uninit(&mut out), true);
        let out: Vec<f64> = out.iter().map(|&v| f64::from(v)).collect();
        assert!(close(&out, want.as_slice().unwrap(), 1e-4));
        let (xi, yi) = (x.mapv(|v| (v * 10.0) as i64), y.mapv(|v| (v * 10.0) as i64));
        let mut out = vec![-1i64; 70 * 110];
        i64::product_into(xi.view(), yi.view(), as_uninit(&mut out), true);
        let want_i = reference(&xi.mapv(|v| v as f64), &yi.mapv(|v| v as f64));
        assert!(out.iter().zip(want_i.iter()).all(|(&a, &b)| a as f64 == b));
    }

    /// A product with few columns is split by bands of rows (uneven ones too): each band
    /// rounds as the whole product on one thread does.
    #[test]
    fn a_narrow_product_split_by_rows_rounds_as_on_one_thread() {
        fn check<T: Product + PartialEq + std::fmt::Debug + From<f32>>(
            m: usize,
            k: usize,
            n: usize,
        ) {
            let x = Array2::from_shape_fn((m, k), |(i, j)| {
                T::from(((i * 7 + j * 3) % 23) as f32 * 0.37 - 4.0)
            });
            let y = Array2::from_shape_fn((k, n), |(i, j)| {
                T::from(((i * 5 + j) % 19) as f32 * 0.11 - 1.0)
            });
            let mut alone = vec![T::zero(); m * n];
            T::product_into(x.view(), y.view(), as_uninit(&mut alone), false);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(3)
                .build()
                .unwrap();
            let mut split = vec![T::zero(); m * n];
            pool.install(|| T::product_into(x.view(), y.view(), as_uninit(&mut split), true));
            assert_eq!(split, alone, "{m}x{k}x{n}");
        }
        for (m, k, n) in [(300, 1024, 10), (70, 4096, 4), (1000, 1024, 15)] {
            assert!(m * k * n >= PARALLEL_PRODUCT && n < PARALLEL_COLUMNS);
            check::<f32>(m, k, n);
            check::<f64>(m, k, n);
        }
    }

    /// A graph may hand a product a transposed operand where eager execution hands it a
    /// row-major copy (`graph::consume`): the bits must not depend on which.
    #[test]
    fn a_product_rounds_alike_whatever_the_operands_layout() {
        fn check<T: Product + PartialEq + std::fmt::Debug + From<f32>>() {
            let dims = [1, 2, 3, 7, 16, 33, 64, 100, 130];
            let mut seed = 0.0f32;
            for &m in &dims {
                for &k in &dims {
                    for &n in &dims {
                        seed += 0.37;
                        let x = Array2::from_shape_fn((m, k), |(i, j)| {
                            T::from(((i * k + j) as f32 * seed).sin())
                        });
                        let y = Array2::from_shape_fn((k, n), |(i, j)| {
                            T::from(((i * n + j) as f32 * 0.71).cos())
                        });
                        let (xt, yt) = (x.t().to_owned(), y.t().to_owned());
                        let mut first: Option<Vec<T>> = None;
                        for (a, b) in [
                            (x.view(), y.view()),
                            (xt.t(), y.view()),
                            (x.view(), yt.t()),
                            (xt.t(), yt.t()),
                        ] {
                            for threads in [false, true] {
                                let mut out = vec![T::zero(); m * n];
                                T::product_into(a, b, as_uninit(&mut out), threads);
                                match &first {
                                    None => first = Some(out),
                                    Some(f) => assert!(f == &out, "{m}×{k}×{n}"),
                                }
                            }
                        }
                    }
                }
            }
        }
        check::<f32>();
        check::<f64>();
    }

    #[test]
    fn a_batch_of_products_is_each_product_alone() {
        // (6, 64, 70) @ (6, 70, 60): the batch runs its products side by side (1.6M
        // multiply-adds, above PARALLEL_PRODUCT), each on one thread; each must be the 2-D
        // product of its matrices, bit for bit, and meet the definition.
        let a = ArrayD::from_shape_fn(IxDyn(&[6, 64, 70]), |i| {
            ((i[0] * 4480 + i[1] * 70 + i[2]) as f64 * 0.3).cos()
        });
        let b = ArrayD::from_shape_fn(IxDyn(&[6, 70, 60]), |i| {
            ((i[0] * 4200 + i[1] * 60 + i[2]) as f64 * 0.7).sin()
        });
        let TensorData::Float64(out) = matmul(&a.clone().into(), &b.clone().into()).unwrap() else {
            panic!("float64")
        };
        assert_eq!(out.shape(), &[6, 64, 60]);
        assert!(6 * 64 * 70 * 60 >= PARALLEL_PRODUCT);
        for i in 0..6 {
            let (x, y) = (a.slice(s![i, .., ..]), b.slice(s![i, .., ..]));
            let TensorData::Float64(alone) = matmul(
                &x.to_owned().into_dyn().into(),
                &y.to_owned().into_dyn().into(),
            )
            .unwrap() else {
                panic!("float64")
            };
            assert_eq!(out.slice(s![i, .., ..]).to_owned().into_dyn(), alone);
            let want = reference(&x.to_owned(), &y.to_owned());
            assert!(close(
                alone.as_slice().unwrap(),
                want.as_slice().unwrap(),
                1e-12
            ));
        }
    }
}
