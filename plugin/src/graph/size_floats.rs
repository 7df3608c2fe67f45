//! Floats computed from sizes and rounded back to an int: `int(T * 0.5)`, `round(T / 3)`,
//! `math.floor(n * ratio)`, `math.ceil(math.sqrt(d))`. Kept as an expression, a size made
//! this way is worked out again for every call instead of fixing the sizes it comes from.
//!
//! The expression is evaluated as Python evaluates it: an int converted to a float exactly
//! (below 2**53), then the same IEEE operations in f64 (`+ - * /` and `sqrt` correctly
//! rounded on both sides, `**` through the same `pow`), then Python's rounding of a float to
//! an int. Where Python would raise (a division by zero, the root of a negative number, an
//! infinite or NaN result given to `int`), or an int leaves the exact range, the expression
//! has no value: a check that reads it fails and the call does not take the entry.

use std::fmt;

use super::ir::Value;
use super::sizes::{Read, SizeExpr};

/// A float computed from sizes.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeFloat {
    /// An int computed from sizes, converted to a float (exact below 2**53).
    Int(SizeExpr),
    Const(f64),
    Bin(FloatOp, Box<SizeFloat>, Box<SizeFloat>),
    /// `math.sqrt(x)`.
    Sqrt(Box<SizeFloat>),
    /// `x ** e` for a constant float `e`.
    Pow(Box<SizeFloat>, f64),
}

/// Python's float operators that a float computed from sizes may be made by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// How a float becomes an int.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// `int(x)` and `math.trunc(x)`: toward zero.
    Trunc,
    /// `math.floor(x)`.
    Floor,
    /// `math.ceil(x)`.
    Ceil,
    /// `round(x)`: to the nearest int, halves to the even one (as this interpreter's
    /// `float.__round__` decides what a half is).
    HalfEven,
}

/// The largest int a float holds exactly, with all those below it.
const EXACT_INT: u64 = 1 << 53;

impl FloatOp {
    /// `a op b` as Python computes it on floats (`None` where Python raises).
    pub fn apply(self, a: f64, b: f64) -> Option<f64> {
        Some(match self {
            FloatOp::Add => a + b,
            FloatOp::Sub => a - b,
            FloatOp::Mul => a * b,
            FloatOp::Div if b == 0.0 => return None,
            FloatOp::Div => a / b,
        })
    }

    fn symbol(self) -> &'static str {
        match self {
            FloatOp::Add => "+",
            FloatOp::Sub => "-",
            FloatOp::Mul => "*",
            FloatOp::Div => "/",
        }
    }
}

/// The float `int` converts to, when it converts exactly.
pub fn exact_float(i: i64) -> Option<f64> {
    (i.unsigned_abs() < EXACT_INT).then_some(i as f64)
}

/// `math.sqrt(x)` as Python computes it (`None`: it raises).
pub fn sqrt(x: f64) -> Option<f64> {
    (x >= 0.0).then(|| x.sqrt())
}

/// `x ** e` of floats as Python computes it (`None`: it raises, or gives a complex number).
pub fn pow(x: f64, e: f64) -> Option<f64> {
    if x < 0.0 || (x == 0.0 && e < 0.0) || x.is_nan() {
        return None;
    }
    Some(x.powf(e)).filter(|r| r.is_finite())
}

impl Rounding {
    /// The int Python makes of `x` (`None`: it raises, or the int leaves i64).
    pub fn apply(self, x: f64) -> Option<i64> {
        if !x.is_finite() {
            return None;
        }
        let r = match self {
            Rounding::Trunc => x.trunc(),
            Rounding::Floor => x.floor(),
            Rounding::Ceil => x.ceil(),
            Rounding::HalfEven => {
                let fract = x.fract();
                if (fract.abs() - 0.5).abs() < f64::EPSILON {
                    if x.trunc() % 2.0 == 0.0 {
                        x - fract
                    } else {
                        x + fract
                    }
                } else {
                    x.round()
                }
            }
        };
        // Every float of this magnitude is an int, exactly converted.
        (r.abs() < 9.2e18).then_some(r as i64)
    }

    fn name(self) -> &'static str {
        match self {
            Rounding::Trunc => "int",
            Rounding::Floor => "floor",
            Rounding::Ceil => "ceil",
            Rounding::HalfEven => "round",
        }
    }
}

impl SizeFloat {
    /// Its value (`None` where Python would raise).
    pub fn eval(&self, read: &impl Fn(Value, Read) -> Option<i64>) -> Option<f64> {
        match self {
            SizeFloat::Int(e) => exact_float(e.eval(read)?),
            SizeFloat::Const(c) => Some(*c),
            SizeFloat::Bin(op, a, b) => op.apply(a.eval(read)?, b.eval(read)?),
            SizeFloat::Sqrt(a) => sqrt(a.eval(read)?),
            SizeFloat::Pow(a, e) => pow(a.eval(read)?, *e),
        }
    }

    pub fn values(&self, out: &mut Vec<Value>) {
        match self {
            SizeFloat::Int(e) => e.values(out),
            SizeFloat::Const(_) => {}
            SizeFloat::Bin(_, a, b) => {
                a.values(out);
                b.values(out);
            }
            SizeFloat::Sqrt(a) | SizeFloat::Pow(a, _) => a.values(out),
        }
    }

    pub fn remap(&mut self, f: &impl Fn(Value) -> Value) {
        match self {
            SizeFloat::Int(e) => e.remap(f),
            SizeFloat::Const(_) => {}
            SizeFloat::Bin(_, a, b) => {
                a.remap(f);
                b.remap(f);
            }
            SizeFloat::Sqrt(a) | SizeFloat::Pow(a, _) => a.remap(f),
        }
    }
}

/// `rounding(x)`: an int of a float computed from sizes.
pub fn eval_rounded(
    rounding: Rounding,
    x: &SizeFloat,
    read: &impl Fn(Value, Read) -> Option<i64>,
) -> Option<i64> {
    rounding.apply(x.eval(read)?)
}

/// Writes `rounding(x)`.
pub fn fmt_rounded(f: &mut fmt::Formatter<'_>, rounding: Rounding, x: &SizeFloat) -> fmt::Result {
    write!(f, "{}({x})", rounding.name())
}

impl fmt::Display for SizeFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeFloat::Int(e) => write!(f, "{e}"),
            SizeFloat::Const(c) => write!(f, "{c:?}"),
            SizeFloat::Bin(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
            SizeFloat::Sqrt(a) => write!(f, "sqrt({a})"),
            SizeFloat::Pow(a, e) => write!(f, "({a} ** {e:?})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_follows_python() {
        assert_eq!(Rounding::HalfEven.apply(2.5), Some(2));
        assert_eq!(Rounding::HalfEven.apply(3.5), Some(4));
        assert_eq!(Rounding::Trunc.apply(-2.7), Some(-2));
        assert_eq!(Rounding::Floor.apply(-2.2), Some(-3));
        assert_eq!(Rounding::Ceil.apply(2.2), Some(3));
        assert_eq!(Rounding::Trunc.apply(f64::INFINITY), None);
        assert_eq!(Rounding::Trunc.apply(f64::NAN), None);
    }

    #[test]
    fn an_expression_over_a_size_is_worked_out_per_call() {
        // int(T * 0.5) and round(T / 3) of dimension 0 of input 0.
        let t = || SizeFloat::Int(SizeExpr::Dim(Value::Input(0), 0));
        let half = SizeFloat::Bin(FloatOp::Mul, Box::new(t()), Box::new(SizeFloat::Const(0.5)));
        let third = SizeFloat::Bin(FloatOp::Div, Box::new(t()), Box::new(SizeFloat::Const(3.0)));
        for n in [0i64, 1, 5, 7, 10, 11] {
            let read = |_: Value, _: Read| Some(n);
            assert_eq!(eval_rounded(Rounding::Trunc, &half, &read), Some(n / 2));
            let r = eval_rounded(Rounding::HalfEven, &third, &read).unwrap();
            assert_eq!(r, ((n as f64) / 3.0).round_ties_even() as i64);
        }
        let by_zero = SizeFloat::Bin(FloatOp::Div, Box::new(SizeFloat::Const(1.0)), Box::new(t()));
        assert_eq!(by_zero.eval(&|_, _| Some(0)), None);
        assert_eq!(
            SizeFloat::Int(SizeExpr::Const(1 << 53)).eval(&|_, _| None),
            None
        );
    }
}
