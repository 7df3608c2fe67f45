//! The element types a graph lowers for, float64 and float32, each with the arithmetic its
//! eager kernels use, so that a lowered graph rounds as eager execution does.

use std::cell::Cell;
use std::thread::LocalKey;

use ndarray::LinalgScalar;

use crate::tensor::data::FloatData;
use crate::tensor::ops::elementwise::{Binary, Unary, float_op};
use crate::tensor::ops::product::Product;
use crate::tensor::ops::softmax::{softmax_rows_f32, softmax_rows_f64};

pub trait Real:
    FloatData + LinalgScalar + Product + Default + std::fmt::Debug + Send + Sync
{
    /// `p op q`, as the eager kernel computes it.
    fn binary(op: Binary, p: Self, q: Self) -> Self;
    /// `op(x)`, as the eager kernel computes it.
    fn unary(op: Unary, x: Self) -> Self;
    /// `op` of each element of `xs` into `out`, as the eager kernel computes it.
    fn unary_into(op: Unary, xs: &[Self], out: &mut [Self]);
    /// `op` of each element of `buf`, in place, as the eager kernel computes it.
    fn unary_in_place(op: Unary, buf: &mut [Self]);
    /// softmax (or log_softmax) of each run of `lane` elements of `buf`, in place.
    fn softmax(buf: &mut [Self], lane: usize, log: bool);
    /// This thread's scratch buffer for lowered runs and fused groups of this type, kept
    /// between calls.
    fn scratch() -> &'static LocalKey<Cell<Vec<Self>>>;
    /// This type's value nearest to `x` (a reduction's result, computed in f64).
    fn from_f64(x: f64) -> Self;
    /// `run`'s elements as f64, exactly (`wide` holds them when they are not f64 already).
    fn widen<'a>(run: &'a [Self], wide: &'a mut Vec<f64>) -> &'a [f64];
    /// This thread's buffer for what a step needs besides its result (a linear layer's
    /// transposed weight), kept between calls.
    fn temp() -> &'static LocalKey<Cell<Vec<Self>>>;
}

thread_local! {
    static SCRATCH_F64: Cell<Vec<f64>> = const { Cell::new(Vec::new()) };
    static SCRATCH_F32: Cell<Vec<f32>> = const { Cell::new(Vec::new()) };
    static TEMP_F64: Cell<Vec<f64>> = const { Cell::new(Vec::new()) };
    static TEMP_F32: Cell<Vec<f32>> = const { Cell::new(Vec::new()) };
}

impl Real for f64 {
    #[inline(always)]
    fn binary(op: Binary, p: f64, q: f64) -> f64 {
        float_op(op, p, q)
    }
    #[inline(always)]
    fn unary(op: Unary, x: f64) -> f64 {
        op.float(x)
    }
    fn unary_into(op: Unary, xs: &[f64], out: &mut [f64]) {
        op.float_into(xs, out)
    }
    fn unary_in_place(op: Unary, buf: &mut [f64]) {
        op.float_in_place(buf)
    }
    fn softmax(buf: &mut [f64], lane: usize, log: bool) {
        softmax_rows_f64(buf, lane, log)
    }
    fn scratch() -> &'static LocalKey<Cell<Vec<f64>>> {
        &SCRATCH_F64
    }
    fn temp() -> &'static LocalKey<Cell<Vec<f64>>> {
        &TEMP_F64
    }
    fn from_f64(x: f64) -> f64 {
        x
    }
    fn widen<'a>(run: &'a [f64], _: &'a mut Vec<f64>) -> &'a [f64] {
        run
    }
}

impl Real for f32 {
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
    fn unary_into(op: Unary, xs: &[f32], out: &mut [f32]) {
        op.float32_into(xs, out)
    }
    fn unary_in_place(op: Unary, buf: &mut [f32]) {
        op.float32_in_place(buf)
    }
    fn softmax(buf: &mut [f32], lane: usize, log: bool) {
        softmax_rows_f32(buf, lane, log)
    }
    fn scratch() -> &'static LocalKey<Cell<Vec<f32>>> {
        &SCRATCH_F32
    }
    fn temp() -> &'static LocalKey<Cell<Vec<f32>>> {
        &TEMP_F32
    }
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
    fn widen<'a>(run: &'a [f32], wide: &'a mut Vec<f64>) -> &'a [f64] {
        wide.clear();
        wide.extend(run.iter().map(|&v| f64::from(v)));
        wide
    }
}

/// `$body` with `$f` bound to `|p, q| T::binary(op, p, q)` for the arithmetic op `op` made
/// a constant, so that each op gets its own loop instead of a dispatch per element.
macro_rules! with_binary {
    ($op:expr, $f:ident => $body:expr) => {
        match $op {
            Binary::Add => {
                let $f = |p: T, q: T| T::binary(Binary::Add, p, q);
                $body
            }
            Binary::Sub => {
                let $f = |p: T, q: T| T::binary(Binary::Sub, p, q);
                $body
            }
            Binary::Mul => {
                let $f = |p: T, q: T| T::binary(Binary::Mul, p, q);
                $body
            }
            Binary::Div => {
                let $f = |p: T, q: T| T::binary(Binary::Div, p, q);
                $body
            }
            Binary::Maximum => {
                let $f = |p: T, q: T| T::binary(Binary::Maximum, p, q);
                $body
            }
            Binary::Minimum => {
                let $f = |p: T, q: T| T::binary(Binary::Minimum, p, q);
                $body
            }
            other => {
                let $f = |p: T, q: T| T::binary(other, p, q);
                $body
            }
        }
    };
}

pub(crate) use with_binary;
