//! Row-major copies of strided views. ndarray's `as_standard_layout` walks a view element by
//! element through its general n-dimensional index; permutes, narrows and reshapes copy
//! whole runs of memory instead, lane by lane along the last axis.

use ndarray::{ArrayD, ArrayViewD, Axis};

/// An owned row-major copy of `v`, with `v`'s shape.
pub fn row_major<T: Copy>(v: ArrayViewD<'_, T>) -> ArrayD<T> {
    if let Some(s) = v.as_slice() {
        return ArrayD::from_shape_vec(v.raw_dim(), s.to_vec()).expect("one value per element");
    }
    if v.ndim() == 0 || v.is_empty() {
        return v.as_standard_layout().into_owned();
    }
    let mut out = Vec::with_capacity(v.len());
    // Lanes come in the row-major order of the other axes, so their concatenation is the
    // row-major order of the whole.
    for lane in v.lanes(Axis(v.ndim() - 1)) {
        match lane.as_slice() {
            Some(run) => out.extend_from_slice(run),
            // Indexing a 1-D view is a multiply by its stride, which the compiler keeps in
            // the loop; its iterator is a general one that it does not inline.
            None => out.extend((0..lane.len()).map(|k| lane[k])),
        }
    }
    ArrayD::from_shape_vec(v.raw_dim(), out).expect("one value per element")
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
        let sliced = a.slice(ndarray::s![.., 1.., ..;2]).into_dyn();
        assert_eq!(row_major(sliced.clone()), sliced.to_owned());
        let empty = ArrayD::<i64>::zeros(IxDyn(&[0, 3]));
        assert_eq!(row_major(empty.view().reversed_axes()).shape(), &[3, 0]);
    }
}
