//! Row-major copies of strided views. ndarray's `as_standard_layout` walks a view element by
//! element through its general n-dimensional index; permutes, narrows and reshapes copy
//! run by run along the last axis instead.

use ndarray::{ArrayD, ArrayView, ArrayViewD, CowArray, Dimension};

use super::ops::parallel::{PARALLEL_ELEMENTS, threads};

/// `v` itself when it is row-major, else a row-major copy made by [`row_major`]: what
/// ndarray's `as_standard_layout` gives, without its element-by-element walk (a transposed
/// operand of a small product, copied on every call, took a tenth of a small GPT's traced
/// forward pass that way).
pub fn standard<'a, T: Copy + Send + Sync, D: Dimension>(
    v: ArrayView<'a, T, D>,
) -> CowArray<'a, T, D> {
    if v.is_standard_layout() {
        return v.into();
    }
    row_major(v.into_dyn())
        .into_dimensionality::<D>()
        .expect("the same dimensionality")
        .into()
}

/// An owned row-major copy of `v`, with `v`'s shape.
pub fn row_major<T: Copy + Send + Sync>(v: ArrayViewD<'_, T>) -> ArrayD<T> {
    if let Some(s) = v.as_slice() {
        return ArrayD::from_shape_vec(v.raw_dim(), s.to_vec()).expect("one value per element");
    }
    if v.ndim() == 0 || v.is_empty() {
        return v.as_standard_layout().into_owned();
    }
    if let Some(out) = transposed_matrices(&v) {
        return out;
    }
    let (shape, strides) = (v.shape(), v.strides());
    let last = shape.len() - 1;
    let (run, step) = (shape[last], strides[last]);
    let mut out = Vec::with_capacity(v.len());
    // An odometer over the other axes, in row-major order, keeping the offset of the current
    // run's first element; ndarray's lane iterator builds a view per run, which costs more
    // than copying a short run.
    let mut index = vec![0usize; last];
    let mut offset: isize = 0;
    let base = v.as_ptr();
    loop {
        // SAFETY: `offset` is the offset of element (index, 0) of the view, and adding
        // `k * step` for k < run gives element (index, k): all inside the view's memory.
        unsafe {
            let first = base.offset(offset);
            if step == 1 {
                out.extend_from_slice(std::slice::from_raw_parts(first, run));
            } else {
                out.extend((0..run).map(|k| *first.offset(k as isize * step)));
            }
        }
        let mut d = last;
        loop {
            if d == 0 {
                return ArrayD::from_shape_vec(v.raw_dim(), out).expect("one value per element");
            }
            d -= 1;
            index[d] += 1;
            offset += strides[d];
            if index[d] < shape[d] {
                break;
            }
            offset -= strides[d] * shape[d] as isize;
            index[d] = 0;
        }
    }
}

/// Eight output rows at a time: each step reads eight adjacent elements of the source.
const BLOCK: usize = 8;

/// A row-major copy of a view whose last two axes are a transposed matrix (the second-last
/// contiguous: what `transpose(-2, -1)` of a row-major tensor gives), built by blocks: each
/// output row then gets its elements from reads of eight adjacent source elements instead of
/// one element per strided read (a (8, 128, 128) float64 transpose: 4x faster).
fn transposed_matrices<T: Copy + Send + Sync>(v: &ArrayViewD<'_, T>) -> Option<ArrayD<T>> {
    let (shape, strides) = (v.shape(), v.strides());
    let n = shape.len();
    if n < 2 || strides[n - 2] != 1 || strides[n - 1] < 1 || shape[n - 2] < BLOCK {
        return None;
    }
    let (rows, cols, row_step) = (shape[n - 2], shape[n - 1], strides[n - 1]);
    let mut out: Vec<T> = Vec::with_capacity(v.len());
    let spare = &mut out.spare_capacity_mut()[..v.len()];
    let batch = &shape[..n - 2];
    // The offset of matrix `k`'s first element: `k` spelled in the batch's axes, row-major.
    let first = |mut k: usize| -> isize {
        let mut offset = 0;
        for d in (0..batch.len()).rev() {
            offset += (k % batch[d]) as isize * strides[d];
            k /= batch[d];
        }
        offset
    };
    let one = |(k, matrix): (usize, &mut [std::mem::MaybeUninit<T>])| {
        let offset = first(k);
        let mut r = 0;
        while r < rows {
            let width = BLOCK.min(rows - r);
            for c in 0..cols {
                // SAFETY: element (.., r + i, c) of the view, i < width: inside its memory.
                unsafe {
                    let src = v
                        .as_ptr()
                        .offset(offset + c as isize * row_step + r as isize);
                    for i in 0..width {
                        matrix[(r + i) * cols + c].write(*src.add(i));
                    }
                }
            }
            r += width;
        }
    };
    if v.len() >= PARALLEL_ELEMENTS && batch.iter().product::<usize>() > 1 && threads() > 1 {
        // The matrices of a batch side by side on rayon's threads.
        use rayon::prelude::*;
        spare
            .par_chunks_exact_mut(rows * cols)
            .enumerate()
            .for_each(one);
    } else {
        spare
            .chunks_exact_mut(rows * cols)
            .enumerate()
            .for_each(one);
    }
    // SAFETY: every element of every matrix was written above.
    unsafe { out.set_len(v.len()) };
    Some(ArrayD::from_shape_vec(v.raw_dim(), out).expect("one value per element"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::IxDyn;

    #[test]
    fn copies_in_row_major_order() {
        let a = ArrayD::from_shape_vec(IxDyn(&[2, 3, 4]), (0..24).collect()).unwrap();
        for perm in [[0, 1, 2], [2, 1, 0], [1, 0, 2], [0, 2, 1]] {
            let v = a.view().permuted_axes(IxDyn(&perm));
            let got = row_major(v.clone());
            assert_eq!(got, v.as_standard_layout().into_owned());
            assert!(got.is_standard_layout());
        }
        for sliced in [
            a.slice(ndarray::s![.., 1.., ..;2]).into_dyn(),
            a.slice(ndarray::s![..;-1, .., 1..2]).into_dyn(),
            a.slice(ndarray::s![1, ..;-2, 3]).into_dyn(),
            a.slice(ndarray::s![.., 2, ..]).reversed_axes().into_dyn(),
        ] {
            let got = row_major(sliced.clone());
            assert_eq!(got, sliced.as_standard_layout().into_owned());
            assert!(got.is_standard_layout());
        }
        // Batches of transposed matrices, with rows past a whole block.
        let big = ArrayD::from_shape_vec(IxDyn(&[3, 21, 13]), (0..819).collect()).unwrap();
        for perm in [[0, 2, 1], [2, 0, 1], [1, 2, 0]] {
            let v = big.view().permuted_axes(IxDyn(&perm));
            assert_eq!(row_major(v.clone()), v.as_standard_layout().into_owned());
        }
        let sliced = big.slice(ndarray::s![..;2, .., 1..12]).into_dyn();
        let v = sliced.permuted_axes(IxDyn(&[0, 2, 1]));
        assert_eq!(row_major(v.clone()), v.as_standard_layout().into_owned());
        let empty = ArrayD::<i64>::zeros(IxDyn(&[0, 3]));
        assert_eq!(row_major(empty.view().reversed_axes()).shape(), &[3, 0]);
    }

    /// A large batch of transposed matrices is copied by matrices on rayon's threads, each
    /// matrix's first element worked out from its index: the copy ndarray makes, in a batch
    /// of two axes, one of them sliced.
    #[test]
    fn large_batches_of_transposed_matrices_copy_on_threads() {
        let a =
            ArrayD::from_shape_vec(IxDyn(&[5, 4, 64, 41]), (0..5 * 4 * 64 * 41).collect()).unwrap();
        let sliced = a.slice(ndarray::s![.., 1.., .., ..]).into_dyn();
        let three = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        for v in [a.view(), sliced] {
            let t = v.permuted_axes(IxDyn(&[0, 1, 3, 2]));
            assert!(t.len() >= PARALLEL_ELEMENTS);
            let got = three.install(|| row_major(t.clone()));
            assert_eq!(got, t.as_standard_layout().into_owned());
        }
    }
}
