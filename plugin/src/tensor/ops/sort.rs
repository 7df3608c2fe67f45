//! `argsort` along a dimension: what `sort`, `argsort` and `topk` are built from (top-k
//! routing in a mixture of experts, top-k sampling). The sort is stable; NaN sorts above every
//! number, and `-0.0` equals `0.0`, as in torch's CPU kernel. The values are taken with
//! `gather`, so one kernel serves the three.

use std::cmp::Ordering;

use ndarray::{ArrayD, Axis, Zip};

use crate::tensor::data::TensorData;
use crate::tensor::dtype::DType;
use crate::tensor::error::TResult;
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};
use crate::tensor::shape::normalize_dim;

pub fn ops() -> Vec<OpDef> {
    vec![OpDef::new(
        "argsort",
        Arity::Exactly(1),
        |m: &[Meta], a: &Attrs| {
            normalize_dim(a.int("dim")?, m[0].shape.len().max(1))?;
            Ok(Meta {
                shape: m[0].shape.clone(),
                dtype: DType::Int64,
            })
        },
        |t: &[&TensorData], a: &Attrs| argsort(t[0], a.int("dim")?, a.flag("descending")),
    )]
}

fn argsort(t: &TensorData, dim: i64, descending: bool) -> TResult<TensorData> {
    if t.ndim() == 0 {
        normalize_dim(dim, 1)?;
        return Ok(TensorData::Int64(ArrayD::zeros(t.shape())));
    }
    let axis = Axis(normalize_dim(dim, t.ndim())?);
    Ok(TensorData::Int64(match t {
        TensorData::Float64(x) => lanes_sorted(x, axis, descending, float_order),
        TensorData::Float32(x) => lanes_sorted(x, axis, descending, float_order),
        TensorData::Int64(x) => lanes_sorted(x, axis, descending, Ord::cmp),
        TensorData::Bool(x) => lanes_sorted(x, axis, descending, Ord::cmp),
    }))
}

/// The order torch sorts floats in: NaN above every number (and equal to NaN), `-0.0 == 0.0`.
fn float_order<T: PartialOrd>(a: &T, b: &T) -> Ordering {
    #[allow(clippy::eq_op)]
    match (a != a, b != b) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
    }
}

fn lanes_sorted<T: Copy>(
    x: &ArrayD<T>,
    axis: Axis,
    descending: bool,
    order: impl Fn(&T, &T) -> Ordering,
) -> ArrayD<i64> {
    let mut out = ArrayD::<i64>::zeros(x.shape());
    let mut lane_index: Vec<usize> = Vec::with_capacity(x.len_of(axis));
    Zip::from(x.lanes(axis))
        .and(out.lanes_mut(axis))
        .for_each(|values, mut indices| {
            lane_index.clear();
            lane_index.extend(0..values.len());
            // A stable sort keeps equal values in their order, descending too.
            if descending {
                lane_index.sort_by(|&i, &j| order(&values[j], &values[i]));
            } else {
                lane_index.sort_by(|&i, &j| order(&values[i], &values[j]));
            }
            for (slot, &i) in indices.iter_mut().zip(&lane_index) {
                *slot = i as i64;
            }
        });
    out
}
