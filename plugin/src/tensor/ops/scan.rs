//! Scans along a dimension: `cumsum` (position ids from a padding mask,
//! `mask.cumsum(-1) - 1`). Each element is the sum of those before it and itself, added in
//! order; float32 is summed in float64 and rounded once per element, as PyTorch's CPU
//! kernel does.

use ndarray::{ArrayD, Axis};

use crate::tensor::data::TensorData;
use crate::tensor::dtype::DType;
use crate::tensor::error::TResult;
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};
use crate::tensor::shape::normalize_dim;

pub fn ops() -> Vec<OpDef> {
    vec![OpDef::new(
        "cumsum",
        Arity::Exactly(1),
        |m: &[Meta], a: &Attrs| {
            normalize_dim(a.int("dim")?, m[0].shape.len().max(1))?;
            Ok(Meta {
                shape: m[0].shape.clone(),
                dtype: summed(m[0].dtype),
            })
        },
        |t: &[&TensorData], a: &Attrs| cumsum(t[0], a.int("dim")?),
    )]
}

/// A bool is summed as an int64, as torch's `cumsum` does.
fn summed(d: DType) -> DType {
    if d == DType::Bool { DType::Int64 } else { d }
}

fn cumsum(t: &TensorData, dim: i64) -> TResult<TensorData> {
    if t.ndim() == 0 {
        normalize_dim(dim, 1)?;
        return Ok(match t {
            TensorData::Bool(x) => TensorData::Int64(x.mapv(i64::from)),
            other => other.clone(),
        });
    }
    let axis = Axis(normalize_dim(dim, t.ndim())?);
    Ok(match t {
        TensorData::Float64(x) => TensorData::Float64(scan(x.to_owned(), axis)),
        TensorData::Float32(x) => {
            let wide = scan(x.mapv(f64::from), axis);
            TensorData::Float32(wide.mapv(|v| v as f32))
        }
        TensorData::Int64(x) => TensorData::Int64(scan_wrapping(x.to_owned(), axis)),
        TensorData::Bool(x) => TensorData::Int64(scan_wrapping(x.mapv(i64::from), axis)),
    })
}

fn scan(mut x: ArrayD<f64>, axis: Axis) -> ArrayD<f64> {
    x.accumulate_axis_inplace(axis, |prev, cur| *cur += *prev);
    x
}

/// Int64 sums wrap on overflow, as torch's do.
fn scan_wrapping(mut x: ArrayD<i64>, axis: Axis) -> ArrayD<i64> {
    x.accumulate_axis_inplace(axis, |prev, cur| *cur = cur.wrapping_add(*prev));
    x
}
