//! Row-major copies of strided views. ndarray's `as_standard_layout` walks a view element by
//! element through its general n-dimensional index; permutes, narrows and reshapes copy
//! run by run along the last axis instead.

use ndarray::{ArrayD, ArrayViewD};

/// An owned row-major copy of `v`, with `v`'s shape.
pub fn row_major<T: Copy>(v: ArrayViewD<'_, T>) -> ArrayD<T> {
    if let Some(s) = v.as_slice() {
        return ArrayD::from_shape_vec(v.raw_dim(), s.to_vec()).expect("one value per element");
    }
    if v.ndim() == 0 || v.is_empty() {
        return v.as_standard_layout().into_owned();
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
        let empty = ArrayD::<i64>::zeros(IxDyn(&[0, 3]));
        assert_eq!(row_major(empty.view().reversed_axes()).shape(), &[3, 0]);
    }
}
