//! Scans along a dimension: `cumsum` (position ids from a padding mask,
//! `mask.cumsum(-1) - 1`) and `cumprod` (a diffusion schedule's `alphas.cumprod(0)`). Each
//! element is the sum (product) of those before it and itself, taken in order; float32 is
//! accumulated in float64 and rounded once per element, as PyTorch's CPU kernel does.

use ndarray::{ArrayD, Axis};

use crate::tensor::data::TensorData;
use crate::tensor::dtype::DType;
use crate::tensor::error::TResult;
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};
use crate::tensor::shape::normalize_dim;

/// What a scan accumulates.
#[derive(Clone, Copy)]
enum Scan {
    Sum,
    Prod,
}

impl Scan {
    fn float(self, prev: f64, cur: f64) -> f64 {
        match self {
            Scan::Sum => prev + cur,
            Scan::Prod => prev * cur,
        }
    }

    /// Int64 sums and products wrap on overflow, as torch's do.
    fn int(self, prev: i64, cur: i64) -> i64 {
        match self {
            Scan::Sum => prev.wrapping_add(cur),
            Scan::Prod => prev.wrapping_mul(cur),
        }
    }
}

pub fn ops() -> Vec<OpDef> {
    [("cumsum", Scan::Sum), ("cumprod", Scan::Prod)]
        .into_iter()
        .map(|(name, op)| {
            OpDef::new(
                name,
                Arity::Exactly(1),
                |m: &[Meta], a: &Attrs| {
                    normalize_dim(a.int("dim")?, m[0].shape.len().max(1))?;
                    Ok(Meta {
                        shape: m[0].shape.clone(),
                        dtype: summed(m[0].dtype),
                    })
                },
                move |t: &[&TensorData], a: &Attrs| scanned(op, t[0], a.int("dim")?),
            )
        })
        .collect()
}

/// A bool is accumulated as an int64, as torch's `cumsum` and `cumprod` do.
fn summed(d: DType) -> DType {
    if d == DType::Bool { DType::Int64 } else { d }
}

fn scanned(op: Scan, t: &TensorData, dim: i64) -> TResult<TensorData> {
    if t.ndim() == 0 {
        normalize_dim(dim, 1)?;
        return Ok(match t {
            TensorData::Bool(x) => TensorData::Int64(x.mapv(i64::from)),
            other => other.clone(),
        });
    }
    let axis = Axis(normalize_dim(dim, t.ndim())?);
    Ok(match t {
        TensorData::Float64(x) => TensorData::Float64(scan(op, x.to_owned(), axis)),
        TensorData::Float32(x) => {
            let wide = scan(op, x.mapv(f64::from), axis);
            TensorData::Float32(wide.mapv(|v| v as f32))
        }
        TensorData::Int64(x) => TensorData::Int64(scan_ints(op, x.to_owned(), axis)),
        TensorData::Bool(x) => TensorData::Int64(scan_ints(op, x.mapv(i64::from), axis)),
    })
}

fn scan(op: Scan, mut x: ArrayD<f64>, axis: Axis) -> ArrayD<f64> {
    x.accumulate_axis_inplace(axis, |prev, cur| *cur = op.float(*prev, *cur));
    x
}

fn scan_ints(op: Scan, mut x: ArrayD<i64>, axis: Axis) -> ArrayD<i64> {
    x.accumulate_axis_inplace(axis, |prev, cur| *cur = op.int(*prev, *cur));
    x
}
