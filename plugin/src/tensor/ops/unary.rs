//! The unary elementwise ops (`-x`, `abs`, `~`, `exp`, `relu`, `floor`, `sign`, `asin`, `log1p`, `erfc`, `lgamma`, ...): one result element per
//! operand element, float32 computed through f64 and rounded once.

use ndarray::ArrayD;

use super::float64_math::{erf_f64, log_f64, sigmoid_f64, tanh_f64};
use super::parallel::by_lanes;
use super::special_functions::{digamma, erfinv};
use super::vector_math::{
    erf_for_f32, exp_f64, exp_for_f32, map_in_place, map_into, map_wide, tanh_for_f32,
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
    Floor,
    Ceil,
    /// Half to even, as torch rounds.
    Round,
    Trunc,
    /// -1, 0 or 1 (0 for NaN, and for -0.0 a +0.0, as torch gives).
    Sign,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Asinh,
    Acosh,
    Atanh,
    /// `log(1 + x)`, exact for small `x` where the sum would round.
    Log1p,
    /// `exp(x) - 1`, exact for small `x` where the difference would cancel.
    Expm1,
    Log2,
    Log10,
    Exp2,
    /// The complementary error function, `1 - erf(x)` without the cancellation.
    Erfc,
    Erfinv,
    /// `log |Γ(x)|`.
    Lgamma,
    Digamma,
}

impl Unary {
    pub const ALL: [Unary; 35] = [
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
        Unary::Floor,
        Unary::Ceil,
        Unary::Round,
        Unary::Trunc,
        Unary::Sign,
        Unary::Tan,
        Unary::Asin,
        Unary::Acos,
        Unary::Atan,
        Unary::Sinh,
        Unary::Cosh,
        Unary::Asinh,
        Unary::Acosh,
        Unary::Atanh,
        Unary::Log1p,
        Unary::Expm1,
        Unary::Log2,
        Unary::Log10,
        Unary::Exp2,
        Unary::Erfc,
        Unary::Erfinv,
        Unary::Lgamma,
        Unary::Digamma,
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
            Unary::Floor => "floor",
            Unary::Ceil => "ceil",
            Unary::Round => "round",
            Unary::Trunc => "trunc",
            Unary::Sign => "sign",
            Unary::Tan => "tan",
            Unary::Asin => "asin",
            Unary::Acos => "acos",
            Unary::Atan => "atan",
            Unary::Sinh => "sinh",
            Unary::Cosh => "cosh",
            Unary::Asinh => "asinh",
            Unary::Acosh => "acosh",
            Unary::Atanh => "atanh",
            Unary::Log1p => "log1p",
            Unary::Expm1 => "expm1",
            Unary::Log2 => "log2",
            Unary::Log10 => "log10",
            Unary::Exp2 => "exp2",
            Unary::Erfc => "erfc",
            Unary::Erfinv => "erfinv",
            Unary::Lgamma => "lgamma",
            Unary::Digamma => "digamma",
        }
    }

    pub(super) fn result_dtype(self, t: DType) -> TResult<DType> {
        Ok(match self {
            Unary::Neg if t == DType::Bool => {
                return Err(TensorError::not_implemented(
                    "negating a bool tensor is not supported; use ~ instead",
                ));
            }
            Unary::Not if t.is_float() => {
                return Err(TensorError::type_error(format!(
                    "~ needs a bool or int64 tensor, not {}",
                    t.name()
                )));
            }
            Unary::Floor | Unary::Ceil | Unary::Round | Unary::Trunc if t == DType::Bool => {
                return Err(TensorError::not_implemented(format!(
                    "{} is not implemented for bool tensors",
                    self.name()
                )));
            }
            Unary::Neg
            | Unary::Abs
            | Unary::Not
            | Unary::Relu
            | Unary::Floor
            | Unary::Ceil
            | Unary::Round
            | Unary::Trunc
            | Unary::Sign => t,
            _ => t.to_float(),
        })
    }

    /// The op on a float32 element, as every float32 kernel computes it: through f64, with
    /// float32's own exp, erf and tanh (`vector_math`), rounded once.
    #[inline(always)]
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

    /// The op on a float64 element, as every float64 kernel computes it. Exp, tanh, sigmoid and
    /// erf take fused multiply-adds, which are library calls in code not compiled for FMA: loops
    /// over many elements run them in a wide pass (`vector_math::map_wide`).
    #[inline(always)]
    pub fn float(self, x: f64) -> f64 {
        match self {
            Unary::Neg => -x,
            Unary::Abs => x.abs(),
            Unary::Exp => exp_f64(x),
            Unary::Log => log_f64(x),
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
            Unary::Erf => erf_f64(x),
            Unary::Floor => x.floor(),
            Unary::Ceil => x.ceil(),
            Unary::Round => x.round_ties_even(),
            Unary::Trunc => x.trunc(),
            Unary::Sign => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            Unary::Tan => x.tan(),
            Unary::Asin => x.asin(),
            Unary::Acos => x.acos(),
            Unary::Atan => x.atan(),
            Unary::Sinh => x.sinh(),
            Unary::Cosh => x.cosh(),
            Unary::Asinh => x.asinh(),
            Unary::Acosh => x.acosh(),
            Unary::Atanh => x.atanh(),
            Unary::Log1p => x.ln_1p(),
            Unary::Expm1 => x.exp_m1(),
            Unary::Log2 => x.log2(),
            Unary::Log10 => x.log10(),
            Unary::Exp2 => x.exp2(),
            Unary::Erfc => libm::erfc(x),
            Unary::Erfinv => erfinv(x),
            Unary::Lgamma => libm::lgamma(x),
            Unary::Digamma => digamma(x),
            Unary::Not => unreachable!("checked by result_dtype"),
        }
    }
}

/// `$body` with `$c` a constant equal to `$op`, one arm per op: a loop in `$body` is compiled
/// for one op, with no branch on it per element. The element function belongs in the loop's
/// own body (a `for` loop, or an `#[inline(always)]` closure): a call that the compiler leaves
/// out of line is code compiled without the wide pass's FMA.
macro_rules! with_const_op {
    ($op:expr, $c:ident => $body:expr) => {
        with_const_op!(@arms $op, $c, $body,
            Neg, Abs, Not, Exp, Log, Sqrt, Tanh, Sigmoid, Relu, Sin, Cos, Erf,
            Floor, Ceil, Round, Trunc, Sign, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh,
            Atanh, Log1p, Expm1, Log2, Log10, Exp2, Erfc, Erfinv, Lgamma, Digamma)
    };
    (@arms $op:expr, $c:ident, $body:expr, $($v:ident),*) => {
        match $op {
            $($crate::tensor::ops::unary::Unary::$v => {
                const $c: $crate::tensor::ops::unary::Unary = $crate::tensor::ops::unary::Unary::$v;
                $body
            })*
        }
    };
}
pub(crate) use with_const_op;

/// Slice kernels for the lowered graphs, computing as `unary` does. Each element function is
/// an `#[inline(always)]` closure given in place, so that the wide pass inlines it whatever its
/// size: a call left out of line is code compiled without FMA, whose fused multiply-adds are
/// library calls (float64 `erf` ran eight times slower so).
impl Unary {
    /// Whether the op's arithmetic gains from a wide pass: the others are an instruction or
    /// two an element, or a library call, and over a tiny graph's few elements the pass's
    /// feature checks cost more than they save.
    const fn wide(self) -> bool {
        matches!(
            self,
            Unary::Exp | Unary::Tanh | Unary::Sigmoid | Unary::Erf | Unary::Log
        )
    }

    /// The op of each float64 of `xs` into `out` (of the same length).
    pub fn float_into(self, xs: &[f64], out: &mut [f64]) {
        with_const_op!(self, OP => match OP.wide() {
            true => map_into(xs, out, #[inline(always)] |x| OP.float(x)),
            false => out.iter_mut().zip(xs).for_each(|(o, &x)| *o = OP.float(x)),
        })
    }

    /// The op of each float32 of `xs` into `out` (of the same length).
    pub fn float32_into(self, xs: &[f32], out: &mut [f32]) {
        with_const_op!(self, OP => match OP.wide() {
            true => map_into(xs, out, #[inline(always)] |x| OP.float32(x)),
            false => out.iter_mut().zip(xs).for_each(|(o, &x)| *o = OP.float32(x)),
        })
    }

    /// The op of each float64 of `buf`, in place.
    pub fn float_in_place(self, buf: &mut [f64]) {
        with_const_op!(self, OP => match OP.wide() {
            true => map_in_place(buf, #[inline(always)] |x| OP.float(x)),
            false => buf.iter_mut().for_each(|x| *x = OP.float(*x)),
        })
    }

    /// The op of each float32 of `buf`, in place.
    pub fn float32_in_place(self, buf: &mut [f32]) {
        with_const_op!(self, OP => match OP.wide() {
            true => map_in_place(buf, #[inline(always)] |x| OP.float32(x)),
            false => buf.iter_mut().for_each(|x| *x = OP.float32(*x)),
        })
    }
}

pub fn unary(op: Unary, t: &TensorData) -> TResult<TensorData> {
    let dt = op.result_dtype(t.dtype())?;
    let t = t.to_dtype(dt);
    Ok(match t.as_ref() {
        TensorData::Bool(a) => TensorData::Bool(a.mapv(|x| match op {
            Unary::Not => !x,
            _ => x, // abs, relu and sign of a bool are the bool
        })),
        TensorData::Int64(a) => TensorData::Int64(a.mapv(|x| match op {
            Unary::Neg => x.wrapping_neg(),
            Unary::Abs => x.wrapping_abs(),
            Unary::Not => !x,
            Unary::Relu => x.max(0),
            Unary::Floor | Unary::Ceil | Unary::Round | Unary::Trunc => x,
            Unary::Sign => x.signum(),
            _ => unreachable!("float ops were cast"),
        })),
        TensorData::Float32(a) => TensorData::Float32(match a.as_slice() {
            // Row-major data in one vectorized pass, with the float32 functions.
            Some(xs) if op.wide() => from_vec(a, wide_map!(op, xs, float32)),
            _ => float_unary(a, op, |op, x| op.float32(x)),
        }),
        TensorData::Float64(a) => TensorData::Float64(match a.as_slice() {
            Some(xs) if op.wide() => from_vec(a, wide_map!(op, xs, float)),
            // Their fused multiply-adds are library calls outside a wide pass: row-major first.
            None if op.wide() => {
                let a = a.as_standard_layout().into_owned();
                return unary(op, &TensorData::Float64(a));
            }
            _ => float_unary(a, op, |op, x| op.float(x)),
        }),
    })
}

/// `Unary::$f` of `op` (one that takes the wide pass) over `xs`, into a new vector.
macro_rules! wide_map {
    ($op:expr, $xs:expr, $f:ident) => {
        wide_map!(@arms $op, $xs, $f, Exp, Tanh, Sigmoid, Erf, Log)
    };
    (@arms $op:expr, $xs:expr, $f:ident, $($v:ident),*) => {
        match $op {
            $(Unary::$v => map_wide($xs, #[inline(always)] |x| Unary::$v.$f(x)),)*
            _ => unreachable!("{} takes no wide pass", $op.name()),
        }
    };
}
use wide_map;

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
                    if matches!(
                        op,
                        Unary::Neg
                            | Unary::Abs
                            | Unary::Relu
                            | Unary::Floor
                            | Unary::Ceil
                            | Unary::Round
                            | Unary::Trunc
                            | Unary::Sign
                    ) {
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
    arms!(
        Neg, Abs, Exp, Log, Sqrt, Tanh, Sigmoid, Relu, Sin, Cos, Erf, Floor, Ceil, Round, Trunc,
        Sign, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Log1p, Expm1, Log2, Log10,
        Exp2, Erfc, Erfinv, Lgamma, Digamma
    )
}

/// `values` as an array of `like`'s shape (which is row-major).
fn from_vec<T>(like: &ArrayD<T>, values: Vec<T>) -> ArrayD<T> {
    ArrayD::from_shape_vec(like.raw_dim(), values).expect("one value per element")
}
