//! The unary elementwise ops (`-x`, `abs`, `~`, `exp`, `relu`, ...): one result element per
//! operand element, float32 computed through f64 and rounded once.

use ndarray::ArrayD;

use super::parallel::by_lanes;
use super::vector_math::{
    erf_for_f32, exp_f64, exp_for_f32, map_through_f64, map_wide, sigmoid_f64, tanh_f64,
    tanh_for_f32,
};
use crate::tensor::data::TensorData;
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    Neg,
    Abs,
    Not,
    Exp,
    Log,
    Sqrt,
    Tanh,
    Sigmoid,
    Relu,
    Sin,
    Cos,
    Erf,
}

impl Unary {
    pub const ALL: [Unary; 12] = [
        Unary::Neg,
        Unary::Abs,
        Unary::Not,
        Unary::Exp,
        Unary::Log,
        Unary::Sqrt,
        Unary::Tanh,
        Unary::Sigmoid,
        Unary::Relu,
        Unary::Sin,
        Unary::Cos,
        Unary::Erf,
    ];

    /// The op registered under `name`.
    pub fn named(name: &str) -> Option<Unary> {
        Self::ALL.into_iter().find(|op| op.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Unary::Neg => "neg",
            Unary::Abs => "abs",
            Unary::Not => "invert",
            Unary::Exp => "exp",
            Unary::Log => "log",
            Unary::Sqrt => "sqrt",
            Unary::Tanh => "tanh",
            Unary::Sigmoid => "sigmoid",
            Unary::Relu => "relu",
            Unary::Sin => "sin",
            Unary::Cos => "cos",
            Unary::Erf => "erf",
        }
    }

    pub(super) fn result_dtype(self, t: DType) -> TResult<DType> {
        Ok(match self {
            Unary::Neg if t == DType::Bool => {
                return Err(TensorError::type_error(
                    "negating a bool tensor is not supported; use ~ instead",
                ));
            }
            Unary::Not if t.is_float() => {
                return Err(TensorError::type_error(format!(
                    "~ needs a bool or int64 tensor, not {}",
                    t.name()
                )));
            }
            Unary::Neg | Unary::Abs | Unary::Not | Unary::Relu => t,
            _ => t.to_float(),
        })
    }

    /// The op on a float32 element, as every float32 kernel computes it: through f64, with
    /// float32's own exp, erf and tanh (`vector_math`), rounded once.
    #[inline]
    pub fn float32(self, x: f32) -> f32 {
        let x = f64::from(x);
        (match self {
            Unary::Exp => exp_for_f32(x),
            Unary::Erf => erf_for_f32(x),
            Unary::Tanh => tanh_for_f32(x),
            Unary::Sigmoid => 1.0 / (1.0 + exp_for_f32(-x)),
            _ => self.float(x),
        }) as f32
    }

    /// The op on a float64 element, as every float64 kernel computes it. Exp, tanh and sigmoid
    /// take fused multiply-adds, which are library calls in code not compiled for FMA: loops
    /// over many elements run them in a wide pass (`vector_math::map_wide`).
    #[inline]
    pub fn float(self, x: f64) -> f64 {
        match self {
            Unary::Neg => -x,
            Unary::Abs => x.abs(),
            Unary::Exp => exp_f64(x),
            Unary::Log => x.ln(),
            Unary::Sqrt => x.sqrt(),
            Unary::Tanh => tanh_f64(x),
            Unary::Sigmoid => sigmoid_f64(x),
            Unary::Relu => {
                if x.is_nan() || x > 0.0 {
                    x
                } else {
                    0.0
                }
            }
            Unary::Sin => x.sin(),
            Unary::Cos => x.cos(),
            Unary::Erf => libm::erf(x),
            Unary::Not => unreachable!("checked by result_dtype"),
        }
    }
}

pub fn unary(op: Unary, t: &TensorData) -> TResult<TensorData> {
    let dt = op.result_dtype(t.dtype())?;
    let t = t.to_dtype(dt);
    Ok(match t.as_ref() {
        TensorData::Bool(a) => TensorData::Bool(a.mapv(|x| match op {
            Unary::Not => !x,
            _ => x, // abs and relu of a bool are the bool
        })),
        TensorData::Int64(a) => TensorData::Int64(a.mapv(|x| match op {
            Unary::Neg => x.wrapping_neg(),
            Unary::Abs => x.wrapping_abs(),
            Unary::Not => !x,
            Unary::Relu => x.max(0),
            _ => unreachable!("float ops were cast"),
        })),
        TensorData::Float32(a) => TensorData::Float32(match (op, a.as_slice()) {
            // Row-major data in one vectorized pass, with the float32 functions.
            (Unary::Erf, Some(xs)) => from_vec(a, map_through_f64(xs, erf_for_f32)),
            (Unary::Exp, Some(xs)) => from_vec(a, map_through_f64(xs, exp_for_f32)),
            (Unary::Tanh, Some(xs)) => from_vec(a, map_through_f64(xs, tanh_for_f32)),
            (Unary::Sigmoid, Some(xs)) => {
                from_vec(a, map_through_f64(xs, |x| 1.0 / (1.0 + exp_for_f32(-x))))
            }
            _ => float_unary(a, op, |op, x| op.float32(x)),
        }),
        TensorData::Float64(a) => TensorData::Float64(match (op, a.as_slice()) {
            (Unary::Exp, Some(xs)) => from_vec(a, map_wide(xs, exp_f64)),
            (Unary::Tanh, Some(xs)) => from_vec(a, map_wide(xs, tanh_f64)),
            (Unary::Sigmoid, Some(xs)) => from_vec(a, map_wide(xs, sigmoid_f64)),
            // Their fused multiply-adds are library calls outside a wide pass: row-major first.
            (Unary::Exp | Unary::Tanh | Unary::Sigmoid, None) => {
                return unary(
                    op,
                    &TensorData::Float64(a.as_standard_layout().into_owned()),
                );
            }
            _ => float_unary(a, op, |op, x| op.float(x)),
        }),
    })
}

/// `f(op, x)` over `a`, with `op` a constant in each loop: with the match on `op` inside the
/// loop, the loop was neither vectorized nor free of a branch per element (relu over float32
/// cost 6 ns an element, 40 times an add).
/// Row-major data is mapped by parts on rayon's threads when large ([`by_lanes`]), but for
/// the ops that cost less than memory traffic.
fn float_unary<T: Copy + Default + Send + Sync>(
    a: &ArrayD<T>,
    op: Unary,
    f: impl Fn(Unary, T) -> T + Sync,
) -> ArrayD<T> {
    macro_rules! arms {
        ($($v:ident),*) => {
            match (op, a.as_slice()) {
                $((Unary::$v, Some(xs)) => {
                    let mut out = vec![T::default(); xs.len()];
                    let run = |xs: &[T], out: &mut [T]| {
                        for (o, &x) in out.iter_mut().zip(xs) {
                            *o = f(Unary::$v, x);
                        }
                    };
                    if matches!(op, Unary::Neg | Unary::Abs | Unary::Relu) {
                        // Bound by memory, not arithmetic: a second thread only adds its
                        // hand-over (relu over 2^18 float64: 71 µs alone, 104 µs on two).
                        run(xs, &mut out);
                    } else {
                        by_lanes(xs, &mut out, 1, run);
                    }
                    from_vec(a, out)
                })*
                $((Unary::$v, None) => a.mapv(|x| f(Unary::$v, x)),)*
                (Unary::Not, _) => unreachable!("checked by result_dtype"),
            }
        };
    }
    arms!(Neg, Abs, Exp, Log, Sqrt, Tanh, Sigmoid, Relu, Sin, Cos, Erf)
}

/// `values` as an array of `like`'s shape (which is row-major).
fn from_vec<T>(like: &ArrayD<T>, values: Vec<T>) -> ArrayD<T> {
    ArrayD::from_shape_vec(like.raw_dim(), values).expect("one value per element")
}
