//! Running extremes and the running log-sum-exp along a dimension: `cummax` and `cummin`
//! (values and the index each came from, as two ops of one loop) and `logcumsumexp`, each
//! step as PyTorch's CPU kernel takes it, so that results match torch's bit for bit: a tie
//! takes the later index, a NaN is taken and then kept; log-sum-exp steps as
//! `log1p(exp(min - max)) + max` in float64 (float32 rounded once per element).

use ndarray::{ArrayD, Axis, Zip};

use crate::tensor::data::TensorData;
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError};
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};
use crate::tensor::shape::normalize_dim;

/// Which extreme, and which of its results.
#[derive(Clone, Copy)]
struct Running {
    max: bool,
    indices: bool,
}

pub fn ops() -> Vec<OpDef> {
    let mut ops: Vec<OpDef> = [
        ("cummax_values", true, false),
        ("cummax_indices", true, true),
        ("cummin_values", false, false),
        ("cummin_indices", false, true),
    ]
    .into_iter()
    .map(|(name, max, indices)| {
        let how = Running { max, indices };
        OpDef::new(
            name,
            Arity::Exactly(1),
            move |m: &[Meta], a: &Attrs| {
                normalize_dim(a.int("dim")?, m[0].shape.len().max(1))?;
                Ok(Meta {
                    shape: m[0].shape.clone(),
                    dtype: if how.indices {
                        DType::Int64
                    } else {
                        m[0].dtype
                    },
                })
            },
            move |t: &[&TensorData], a: &Attrs| extremes(how, t[0], a.int("dim")?),
        )
    })
    .collect();
    ops.push(OpDef::new(
        "logcumsumexp",
        Arity::Exactly(1),
        |m: &[Meta], a: &Attrs| {
            normalize_dim(a.int("dim")?, m[0].shape.len().max(1))?;
            if !m[0].dtype.is_float() {
                return Err(TensorError::runtime(format!(
                    "\"logcumsumexp_out_cpu\" not implemented for '{}'",
                    torch_name(m[0].dtype)
                )));
            }
            Ok(m[0].clone())
        },
        |t: &[&TensorData], a: &Attrs| log_sum_exps(t[0], a.int("dim")?),
    ));
    ops
}

/// What a running extreme compares: NaN (for floats) and order.
trait Ordered: Copy {
    fn is_nan(self) -> bool;
    fn at_least(self, other: Self) -> bool;
    fn at_most(self, other: Self) -> bool;
}

macro_rules! ordered {
    ($t:ty, $nan:expr) => {
        impl Ordered for $t {
            fn is_nan(self) -> bool {
                $nan(self)
            }
            fn at_least(self, other: Self) -> bool {
                self >= other
            }
            fn at_most(self, other: Self) -> bool {
                self <= other
            }
        }
    };
}
ordered!(f64, f64::is_nan);
ordered!(f32, f32::is_nan);
ordered!(i64, |_| false);
ordered!(bool, |_| false);

fn extremes(how: Running, t: &TensorData, dim: i64) -> TResult<TensorData> {
    let ndim = t.ndim();
    let axis = Axis(normalize_dim(dim, ndim.max(1))?);
    fn run<T: Ordered + Default>(
        x: &ArrayD<T>,
        axis: Axis,
        how: Running,
        wrap: fn(ArrayD<T>) -> TensorData,
    ) -> TensorData {
        if x.ndim() == 0 {
            return match how.indices {
                true => TensorData::Int64(ArrayD::zeros(x.raw_dim())),
                false => wrap(x.clone()),
            };
        }
        let mut values = ArrayD::<T>::default(x.raw_dim());
        let mut indices = ArrayD::<i64>::zeros(x.raw_dim());
        Zip::from(x.lanes(axis))
            .and(values.lanes_mut(axis))
            .and(indices.lanes_mut(axis))
            .for_each(|lane, mut v, mut k| {
                let Some(&first) = lane.iter().next() else {
                    return;
                };
                let (mut out, mut at) = (first, 0i64);
                for (i, &cur) in lane.iter().enumerate() {
                    let better = if how.max {
                        cur.at_least(out)
                    } else {
                        cur.at_most(out)
                    };
                    if cur.is_nan() || (!out.is_nan() && better) {
                        out = cur;
                        at = i as i64;
                    }
                    v[i] = out;
                    k[i] = at;
                }
            });
        match how.indices {
            true => TensorData::Int64(indices),
            false => wrap(values),
        }
    }
    Ok(match t {
        TensorData::Float64(x) => run(x, axis, how, TensorData::Float64),
        TensorData::Float32(x) => run(x, axis, how, TensorData::Float32),
        TensorData::Int64(x) => run(x, axis, how, TensorData::Int64),
        TensorData::Bool(x) => run(x, axis, how, TensorData::Bool),
    })
}

/// torch's `_log_add_exp_helper(x, acc)`: NaN propagates, and two equal infinities stay.
fn log_add_exp(x: f64, acc: f64) -> f64 {
    let (lo, hi) = if acc.is_nan() {
        (acc, acc)
    } else {
        (x.min(acc), x.max(acc))
    };
    // `f64::min`/`max` ignore a NaN `x`; torch's `std::min(x, acc)` returns `x` then.
    let (lo, hi) = if x.is_nan() { (x, x) } else { (lo, hi) };
    if lo != hi || lo.is_finite() {
        (lo - hi).exp().ln_1p() + hi
    } else {
        x
    }
}

fn log_sum_exps(t: &TensorData, dim: i64) -> TResult<TensorData> {
    let axis = Axis(normalize_dim(dim, t.ndim().max(1))?);
    fn run(x: ArrayD<f64>, axis: Axis) -> ArrayD<f64> {
        if x.ndim() == 0 {
            return x.mapv(|v| log_add_exp(v, f64::NEG_INFINITY));
        }
        let mut out = x;
        for mut lane in out.lanes_mut(axis) {
            let mut acc = f64::NEG_INFINITY;
            for v in lane.iter_mut() {
                acc = log_add_exp(*v, acc);
                *v = acc;
            }
        }
        out
    }
    match t {
        TensorData::Float64(x) => Ok(TensorData::Float64(run(x.to_owned(), axis))),
        TensorData::Float32(x) => Ok(TensorData::Float32(
            run(x.mapv(f64::from), axis).mapv(|v| v as f32),
        )),
        other => Err(TensorError::runtime(format!(
            "\"logcumsumexp_out_cpu\" not implemented for '{}'",
            torch_name(other.dtype())
        ))),
    }
}

/// The name torch's kernels give a dtype in their errors.
fn torch_name(d: DType) -> &'static str {
    match d {
        DType::Float64 => "Double",
        DType::Float32 => "Float",
        DType::Int64 => "Long",
        DType::Bool => "Bool",
    }
}
