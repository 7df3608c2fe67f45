//! The element types a graph lowers for, float64 and float32, each with the arithmetic its
//! eager kernels use, so that a lowered graph rounds as eager execution does.

use std::cell::Cell;
use std::thread::LocalKey;

use ndarray::{ArrayD, LinalgScalar};

use crate::tensor::TensorData;
use crate::tensor::ops::elementwise::{Binary, Unary, float_op};
use crate::tensor::ops::f32_math::softmax_rows_f32;
use crate::tensor::ops::reduce::softmax_lane;

pub trait Real: LinalgScalar + Default + std::fmt::Debug {
    /// The array of this type a tensor holds, if it holds this type.
    fn array(t: &TensorData) -> Option<&ArrayD<Self>>;
    fn wrap(a: ArrayD<Self>) -> TensorData;
    /// `p op q`, as the eager kernel computes it.
    fn binary(op: Binary, p: Self, q: Self) -> Self;
    /// `op(x)`, as the eager kernel computes it.
    fn unary(op: Unary, x: Self) -> Self;
    /// softmax (or log_softmax) of each run of `lane` elements of `buf`, in place.
    fn softmax(buf: &mut [Self], lane: usize, log: bool);
    /// This thread's scratch buffer for lowered runs of this type, kept between calls.
    fn scratch() -> &'static LocalKey<Cell<Vec<Self>>>;
}

thread_local! {
    static SCRATCH_F64: Cell<Vec<f64>> = const { Cell::new(Vec::new()) };
    static SCRATCH_F32: Cell<Vec<f32>> = const { Cell::new(Vec::new()) };
}

impl Real for f64 {
    fn array(t: &TensorData) -> Option<&ArrayD<f64>> {
        match t {
            TensorData::Float64(a) => Some(a),
            _ => None,
        }
    }
    fn wrap(a: ArrayD<f64>) -> TensorData {
        TensorData::Float64(a)
    }
    #[inline(always)]
    fn binary(op: Binary, p: f64, q: f64) -> f64 {
        float_op(op, p, q)
    }
    #[inline(always)]
    fn unary(op: Unary, x: f64) -> f64 {
        op.float(x)
    }
    fn softmax(buf: &mut [f64], lane: usize, log: bool) {
        buf.chunks_exact_mut(lane)
            .for_each(|l| softmax_lane(l, log));
    }
    fn scratch() -> &'static LocalKey<Cell<Vec<f64>>> {
        &SCRATCH_F64
    }
}

impl Real for f32 {
    fn array(t: &TensorData) -> Option<&ArrayD<f32>> {
        match t {
            TensorData::Float32(a) => Some(a),
            _ => None,
        }
    }
    fn wrap(a: ArrayD<f32>) -> TensorData {
        TensorData::Float32(a)
    }
    /// Through f64 and rounded once: for `+ - * /` the correctly rounded float32 result,
    /// which eager's float32 loops compute directly.
    #[inline(always)]
    fn binary(op: Binary, p: f32, q: f32) -> f32 {
        float_op(op, f64::from(p), f64::from(q)) as f32
    }
    #[inline(always)]
    fn unary(op: Unary, x: f32) -> f32 {
        op.float32(x)
    }
    fn softmax(buf: &mut [f32], lane: usize, log: bool) {
        softmax_rows_f32(buf, lane, log)
    }
    fn scratch() -> &'static LocalKey<Cell<Vec<f32>>> {
        &SCRATCH_F32
    }
}
