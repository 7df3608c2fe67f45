//! Ints made of floats computed from sizes that may change from call to call
//! (`int(T * 0.5)`, `round(T / 3)`, `math.ceil(n / k)`, `math.floor(d ** 0.5)`): a size
//! kept as an expression and worked out per call, where its value would otherwise fix the
//! sizes it comes from (one translation per size up to the recompile limit).
//!
//! A quotient of sizes rounded down or up is the int division it is (`a // b`), under checks
//! that make it exact. Any other float computed from sizes is kept as the float operations
//! Python made (`graph::size_floats`), rounded as Python rounds; that those operations give
//! the float Python gave is checked on this call's sizes before the expression is kept.

use rustpython_vm::builtins::{PyFloat, PyInt};
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::{AsObject, VirtualMachine};

use crate::graph::size_floats::{self, FloatOp, Rounding, SizeFloat};
use crate::graph::sizes::{SizeCheck, SizeCmp, SizeExpr, SizeOp};
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::numbers::{Num, NumExpr};
use crate::translate::values::size_floats::FloatFn;

/// Below it, a quotient of two ints rounded as a float is on the same side of every int as
/// the exact one: `floor(a / b)` is `a // b` (the rounding error, under `a / b * 2**-53`, is
/// less than `1 / b`, the least distance of `a / b` from an int it is not).
const EXACT_QUOTIENT: i64 = 1 << 31;

impl State<'_> {
    /// `math.sqrt`, `math.floor`, `math.ceil` or `math.trunc` of a number computed from
    /// sizes (`None`: not such a call).
    pub(crate) fn size_math(&mut self, name: &str, args: &[Var]) -> SimResult<Option<Var>> {
        match name {
            "sqrt" => self.size_float_call(FloatFn::Sqrt, args),
            "floor" => self.size_rounded(Rounding::Floor, args),
            "ceil" => self.size_rounded(Rounding::Ceil, args),
            "trunc" => self.size_rounded(Rounding::Trunc, args),
            // `math.prod(x.shape[1:])`: `1 * a * b ...`, as Python multiplies.
            "prod" => {
                let items = match args {
                    [Var::Tuple(items)] => items.to_vec(),
                    [Var::List(items)] => items.borrow().clone(),
                    _ => return Ok(None),
                };
                let one = self.int_var(1);
                self.size_fold(SizeOp::Mul, Some(one), &items)
            }
            _ => Ok(None),
        }
    }

    /// `int(x)`, `round(x)`, `math.floor(x)`... of a size, or of a float computed from sizes
    /// that may change: a size worked out per call. `None`: not such a call; the number is
    /// forced.
    pub(crate) fn size_rounded(&mut self, r: Rounding, args: &[Var]) -> SimResult<Option<Var>> {
        let [arg @ Var::Num(_)] = args else {
            return Ok(None);
        };
        let Var::Num(n) = &self.sized(arg)? else {
            return Ok(None);
        };
        // Of a size, an int already (`int(x.shape[0])`): the size itself.
        if matches!(n.expr, NumExpr::Size(_)) && n.value.class().is(self.vm.ctx.types.int_type) {
            return Ok(Some(Var::Num(n.clone())));
        }
        if !n.has_size() || n.value.downcast_ref::<PyFloat>().is_none() {
            return Ok(None);
        }
        let n = &self.settled_numbers(n)?;
        if let Some(v) = self.quotient_rounded(r, n)? {
            return Ok(Some(v));
        }
        let Some((x, value)) = size_float(n, self.vm) else {
            return Ok(None);
        };
        match r.apply(value) {
            Some(i) if i >= 0 => {
                let expr = SizeExpr::Round(r, Box::new(x));
                Ok(Some(self.size_var(Some(expr), i as usize)))
            }
            _ => Ok(None),
        }
    }

    /// `a / b` of sizes (or of a size and an int) rounded down (`int` of it too) or up: the
    /// int division it is (`a // b`, `(a + b - 1) // b`), worked out per call, under checks
    /// that make it exact (`a` not negative and below `EXACT_QUOTIENT`, `b` positive).
    fn quotient_rounded(&mut self, r: Rounding, n: &Num) -> SimResult<Option<Var>> {
        let NumExpr::Op(BinaryOperator::TrueDivide, a, b) = &n.expr else {
            return Ok(None);
        };
        let (Some((a, x)), Some((b, y))) = (int_size(a, self.vm), int_size(b, self.vm)) else {
            return Ok(None);
        };
        if !(0..EXACT_QUOTIENT).contains(&x) || y <= 0 {
            return Ok(None);
        }
        let bin = |op, l, r| SizeExpr::Bin(op, Box::new(l), Box::new(r));
        let (expr, value) = match r {
            // Of a quotient that is not negative, truncating is rounding down.
            Rounding::Floor | Rounding::Trunc => {
                (bin(SizeOp::FloorDiv, a.clone(), b.clone()), x / y)
            }
            Rounding::Ceil => {
                let up = bin(
                    SizeOp::Add,
                    a.clone(),
                    bin(SizeOp::Sub, b.clone(), SizeExpr::Const(1)),
                );
                (bin(SizeOp::FloorDiv, up, b.clone()), (x + y - 1) / y)
            }
            Rounding::HalfEven => return Ok(None),
        };
        for (lhs, cmp, rhs) in [
            (a.clone(), SizeCmp::Ge, 0),
            (a, SizeCmp::Lt, EXACT_QUOTIENT),
            (b, SizeCmp::Gt, 0),
        ] {
            let rhs = SizeExpr::Const(rhs);
            let outcome = true;
            self.check_sizes(SizeCheck {
                lhs,
                cmp,
                rhs,
                outcome,
            })?;
        }
        Ok(Some(self.size_var(Some(expr), value as usize)))
    }
}

/// `n` as the float operations over sizes that made it, with the value those operations
/// give on this call's sizes (`None`: a part that is not such an operation, or whose value
/// is not the one Python computed).
fn size_float(n: &Num, vm: &VirtualMachine) -> Option<(SizeFloat, f64)> {
    let (x, value) = match &n.expr {
        NumExpr::Size(e) => {
            let i = exact_int(&n.value, vm)?;
            (SizeFloat::Int(e.clone()), size_floats::exact_float(i)?)
        }
        NumExpr::Const(o) if o.class().is(vm.ctx.types.int_type) => {
            let i = exact_int(o, vm)?;
            (
                SizeFloat::Int(SizeExpr::Const(i)),
                size_floats::exact_float(i)?,
            )
        }
        NumExpr::Const(o) if o.class().is(vm.ctx.types.float_type) => {
            let f = o.downcast_ref::<PyFloat>()?.to_f64();
            (SizeFloat::Const(f), f)
        }
        NumExpr::Op(op, a, b) => {
            let (x, xv) = size_float(a, vm)?;
            let (y, yv) = size_float(b, vm)?;
            let op = match op {
                BinaryOperator::Add => FloatOp::Add,
                BinaryOperator::Subtract => FloatOp::Sub,
                BinaryOperator::Multiply => FloatOp::Mul,
                BinaryOperator::TrueDivide => FloatOp::Div,
                // A float power only: an int's negative int power is computed otherwise.
                BinaryOperator::Power => {
                    let SizeFloat::Const(e) = y else {
                        return None;
                    };
                    let v = size_floats::pow(xv, e)?;
                    return checked(n, SizeFloat::Pow(Box::new(x), e), v);
                }
                _ => return None,
            };
            let v = op.apply(xv, yv)?;
            (SizeFloat::Bin(op, Box::new(x), Box::new(y)), v)
        }
        NumExpr::Apply(FloatFn::Float, a) => size_float(a, vm)?,
        NumExpr::Apply(FloatFn::Sqrt, a) => {
            let (x, xv) = size_float(a, vm)?;
            (SizeFloat::Sqrt(Box::new(x)), size_floats::sqrt(xv)?)
        }
        NumExpr::Const(_) | NumExpr::Read(..) | NumExpr::Math(..) => return None,
    };
    checked(n, x, value)
}

/// `x` with its value, if the value is the one Python gave `n`.
fn checked(n: &Num, x: SizeFloat, value: f64) -> Option<(SizeFloat, f64)> {
    let python = match n.value.downcast_ref::<PyFloat>() {
        Some(f) => f.to_f64(),
        None => i64::try_from(n.value.downcast_ref::<PyInt>()?.as_bigint()).ok()? as f64,
    };
    (python.to_bits() == value.to_bits()).then_some((x, value))
}

/// The value of an int (exactly an int, in i64).
fn exact_int(o: &rustpython_vm::PyObjectRef, vm: &VirtualMachine) -> Option<i64> {
    o.downcast_ref::<PyInt>()?.try_to_primitive::<i64>(vm).ok()
}

/// A size, or an int constant, as a size expression with its value.
fn int_size(n: &Num, vm: &VirtualMachine) -> Option<(SizeExpr, i64)> {
    let value = n
        .value
        .downcast_ref::<PyInt>()?
        .try_to_primitive::<i64>(vm)
        .ok()?;
    match &n.expr {
        NumExpr::Size(e) => Some((e.clone(), value)),
        NumExpr::Const(_) if n.value.class().is(vm.ctx.types.int_type) => {
            Some((SizeExpr::Const(value), value))
        }
        _ => None,
    }
}
