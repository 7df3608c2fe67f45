//! Floats computed from sizes that may change from call to call (`x * d ** -0.5`,
//! `x / math.sqrt(d)`, `loss * (T / 2)`, `x * float(n)`, for a size `d`, `T` or `n` that
//! changes): the expression is kept over the sizes, and where it meets tensor arithmetic the
//! graph computes it per call as Python does, in float64 with the same IEEE operations
//! (`full` of the size, then `/`, `**`, `sqrt`...), converted to the tensor's type as eager
//! arithmetic converts a float. A float's value would otherwise fix the sizes: one
//! translation per size up to the recompile limit, then the frame as written. Numbers of the
//! frame's that change per call may be operands too (`self.rows / self.calls`, `T * lr`):
//! graph inputs the replacement computes on entry, as TorchDynamo makes them symbolic. Any
//! other use (a comparison, a call, a container) forces it: its sizes are checked equal to
//! this call's, its numbers guarded by value.
//!
//! What could raise in Python is checked instead of assumed: a divisor that is a size is
//! checked nonzero, a size raised to a float power is checked positive, per call, before
//! the graph runs; a divisor read from the frame is guarded nonzero; a divisor computed as a
//! float from sizes (`n / (H * W / 4)`) is deferred where products and quotients of sizes
//! checked nonzero and constants bound its magnitude far from zero, not otherwise (a sum may
//! cancel); a base computed as a float from sizes is not deferred.

use std::rc::Rc;

use rustpython_vm::builtins::{PyFloat, PyInt};
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload, VirtualMachine};

use crate::graph::sizes::{SizeCheck, SizeCmp, SizeExpr, SymAttr};
use crate::tensor::{Attr, Attrs, DType, PyTensor};
use crate::translate::guards::guard::Check;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::numbers::{Num, NumExpr};

/// A function of one number that a float computed from sizes may be made by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatFn {
    /// `float(n)`, exact for the ints a size may be.
    Float,
    /// `math.sqrt(x)`, correctly rounded as the tensor's `sqrt` is.
    Sqrt,
}

impl FloatFn {
    /// The function the replacement calls to compute it again.
    pub fn function(self, vm: &VirtualMachine) -> Option<PyObjectRef> {
        match self {
            FloatFn::Float => Some(vm.ctx.types.float_type.to_owned().into()),
            FloatFn::Sqrt => crate::translate::loaded_modules::loaded_attr("math", "sqrt", vm),
        }
    }
}

/// The most operators a float computed from sizes may be computed by (as a deferred
/// number's).
const MAX_OPS: usize = 16;

/// The largest int a float64 holds exactly, with every int between.
const EXACT_INT: i64 = 1 << 53;

/// The largest power a size is raised to: `d ** 4.0` of any size fits a float, where a
/// larger one could overflow, which raises.
const MAX_EXPONENT: f64 = 4.0;

impl State<'_> {
    /// `a op b` giving a float from a size that may change (`None`: not such an operation;
    /// the caller computes it as usual, forcing the size).
    pub(crate) fn size_float_binary(
        &mut self,
        op: BinaryOperator,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<Var>> {
        use BinaryOperator as B;
        let sized = |v: &Var| matches!(v, Var::Num(n) if n.has_size());
        if !sized(a) && !sized(b) {
            return Ok(None);
        }
        let op = match op {
            B::Add | B::InplaceAdd => B::Add,
            B::Subtract | B::InplaceSubtract => B::Subtract,
            B::Multiply | B::InplaceMultiply => B::Multiply,
            B::TrueDivide | B::InplaceTrueDivide => B::TrueDivide,
            B::Power | B::InplacePower => B::Power,
            _ => return Ok(None),
        };
        let (Some(x), Some(y)) = (self.float_operand(a)?, self.float_operand(b)?) else {
            return Ok(None);
        };
        let Ok(value) = super::operators::binary_vm(op, &x.value, &y.value, self.vm) else {
            return Ok(None);
        };
        // Only a float: an int computed from sizes is a size (`sizes`).
        if value.downcast_ref::<PyFloat>().is_none() {
            return Ok(None);
        }
        let ops = 1 + x.ops + y.ops;
        if ops > MAX_OPS {
            return Ok(None);
        }
        match op {
            B::TrueDivide if y.has_size() => {
                let Some(checks) = nonzero(&y) else {
                    return Ok(None);
                };
                checks.into_iter().try_for_each(|c| self.check_sizes(c))?;
            }
            // A divisor read from the frame that changes per call (`seen / self.calls`):
            // guarded nonzero, as the division raises at zero.
            B::TrueDivide if !matches!(y.expr, NumExpr::Const(_)) => {
                let Some(source) = y.as_source() else {
                    return Ok(None);
                };
                let zero = self.vm.ctx.new_int(0).into();
                self.guard(&source, Check::Compare(PyComparisonOp::Ne, zero, true));
            }
            B::Power => {
                // A size to a constant power: positive (no zero to a negative power, no
                // complex root of a negative number), the power small enough not to overflow.
                let (Some(base), NumExpr::Const(e)) = (size_of(&x), &y.expr) else {
                    return Ok(None);
                };
                let Some(e) = number(e) else {
                    return Ok(None);
                };
                if e.abs() > MAX_EXPONENT {
                    return Ok(None);
                }
                self.check_sizes(size_is(base, SizeCmp::Gt))?;
            }
            _ => {}
        }
        Ok(Some(Var::Num(Rc::new(Num {
            value,
            expr: NumExpr::Op(op, x, y),
            ops,
        }))))
    }

    /// `float(n)` or `math.sqrt(n)` of a number computed from sizes (`None`: not such a
    /// call).
    pub(crate) fn size_float_call(&mut self, f: FloatFn, args: &[Var]) -> SimResult<Option<Var>> {
        let [Var::Num(n)] = args else {
            return Ok(None);
        };
        if !n.has_size() || n.ops >= MAX_OPS {
            return Ok(None);
        }
        let Some(x) = number(&n.value) else {
            return Ok(None);
        };
        let value = match f {
            FloatFn::Float => x,
            FloatFn::Sqrt => {
                // Of a negative number it raises: checked not negative.
                let Some(checks) = not_negative(n).filter(|_| x >= 0.0) else {
                    return Ok(None);
                };
                checks.into_iter().try_for_each(|c| self.check_sizes(c))?;
                x.sqrt()
            }
        };
        Ok(Some(Var::Num(Rc::new(Num {
            value: self.vm.ctx.new_float(value).into(),
            expr: NumExpr::Apply(f, n.clone()),
            ops: n.ops + 1,
        }))))
    }

    /// `n op other` (or `other op n`) for a float computed from sizes and a traced float
    /// tensor: the float computed by the graph, converted to the tensor's type, as eager
    /// arithmetic converts a Python float (`None`: another tensor type; the float is forced).
    pub(crate) fn size_float_tensor_operand(
        &mut self,
        op: BinaryOperator,
        n: &Num,
        other: &Var,
        number_first: bool,
    ) -> SimResult<Option<Var>> {
        let Some(dtype) = self.tensor_dtype(other).filter(|d| d.is_float()) else {
            return Ok(None);
        };
        if n.value.downcast_ref::<PyFloat>().is_none() {
            return Ok(None);
        }
        let Some(computed) = self.computed(n)? else {
            return Ok(None);
        };
        let converted = self.tensor_method(&computed, "to", vec![dtype_object(dtype, self.vm)])?;
        let (x, y) = match number_first {
            true => (converted, other.clone()),
            false => (other.clone(), converted),
        };
        self.binary(op, &x, &y).map(Some)
    }

    /// The number `n` as a 0-d float64 tensor the graph computes per call (`None`: a part
    /// the graph cannot compute).
    fn computed(&mut self, n: &Num) -> SimResult<Option<Var>> {
        let vm = self.vm;
        if !n.has_size() && !matches!(n.expr, NumExpr::Const(_)) {
            return self.frame_number_input(n);
        }
        Ok(Some(match &n.expr {
            NumExpr::Size(e) => {
                let Some(hint) = n
                    .value
                    .downcast_ref::<PyInt>()
                    .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
                else {
                    return Ok(None);
                };
                let attrs = Attrs::new()
                    .with("shape", Attr::Ints(Vec::new()))
                    .with("value", Attr::Int(hint))
                    .with("dtype", Attr::DType(DType::Float64));
                self.factory_var("full", attrs, vec![SymAttr::Int("value".into(), e.clone())])?
            }
            NumExpr::Const(o) => Var::Obj(o.clone()),
            NumExpr::Op(op, a, b) => {
                let (Some(x), Some(y)) = (self.computed(a)?, self.computed(b)?) else {
                    return Ok(None);
                };
                self.binary(*op, &x, &y)?
            }
            NumExpr::Apply(FloatFn::Float, a) => match self.computed(a)? {
                Some(x) => x,
                None => return Ok(None),
            },
            NumExpr::Apply(FloatFn::Sqrt, a) => match self.computed(a)? {
                Some(x) => self.tensor_method(&x, "sqrt", Vec::new())?,
                None => return Ok(None),
            },
            NumExpr::Read(..) | NumExpr::Math(..) => return Ok(None),
        }))
    }

    /// A number computed from the frame's only (`self.calls`, `self.seen + 1`) as a 0-d
    /// float64 input the replacement computes from the same values on entry (`None`: one it
    /// cannot). An int is held to what float64 holds exactly, so that `size / n` is Python's
    /// correctly rounded quotient of the two ints.
    fn frame_number_input(&mut self, n: &Num) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some(source) = n.as_source().filter(|s| !s.has_draw()) else {
            return Ok(None);
        };
        if n.value.class().is(vm.ctx.types.int_type) {
            if number(&n.value).is_none() {
                return Ok(None);
            }
            for (op, bound) in [
                (PyComparisonOp::Ge, -EXACT_INT),
                (PyComparisonOp::Le, EXACT_INT),
            ] {
                let bound = vm.ctx.new_int(bound).into();
                self.guard(&source, Check::Compare(op, bound, true));
            }
        } else if !n.value.class().is(vm.ctx.types.float_type) {
            return Ok(None);
        }
        let input = self.number_input(&n.value, &source, DType::Float64)?;
        Ok(Some(Var::Tensor(input)))
    }

    /// `n` with the numbers of the frame's among its operands fixed by value (guarded), its
    /// sizes as they are: for a use that takes sizes only (`int(T * (1 - keep))`).
    pub(crate) fn settled_numbers(&mut self, n: &Rc<Num>) -> SimResult<Rc<Num>> {
        if !n.has_size() {
            if matches!(n.expr, NumExpr::Const(_)) {
                return Ok(n.clone());
            }
            let o = self.force_number(n)?;
            return Ok(Rc::new(Num {
                value: o.clone(),
                expr: NumExpr::Const(o),
                ops: 0,
            }));
        }
        let expr = match &n.expr {
            NumExpr::Op(op, a, b) => {
                NumExpr::Op(*op, self.settled_numbers(a)?, self.settled_numbers(b)?)
            }
            NumExpr::Apply(f, a) => NumExpr::Apply(*f, self.settled_numbers(a)?),
            NumExpr::Math(f, a) => NumExpr::Math(*f, self.settled_numbers(a)?),
            _ => return Ok(n.clone()),
        };
        Ok(Rc::new(Num {
            value: n.value.clone(),
            expr,
            ops: n.ops,
        }))
    }

    /// `t.<name>(*args)`, a method of the tensor class run on the fake.
    fn tensor_method(&mut self, t: &Var, name: &str, args: Vec<PyObjectRef>) -> SimResult<Var> {
        let method = PyTensor::class(&self.vm.ctx)
            .get_attr(self.vm.ctx.intern_str(name))
            .ok_or_else(|| {
                crate::translate::state::Unsupported::new(
                    crate::translate::breaks::reason::Kind::Internal,
                    format!("Tensor.{name} is missing"),
                )
            })?;
        let mut all = vec![t.clone()];
        all.extend(args.into_iter().map(Var::Obj));
        self.native_call_as_is(&method, all, Vec::new(), &format!("Tensor.{name}"), false)
    }

    /// `v` as an operand of a float computed from sizes: a number computed from sizes, an
    /// int or float (exactly), or a number read from the frame or computed from such
    /// numbers (then guarded by value).
    fn float_operand(&mut self, v: &Var) -> SimResult<Option<Rc<Num>>> {
        let v = &self.sized(v)?;
        let t = &self.vm.ctx.types;
        let plain = |o: &PyObjectRef| o.class().is(t.int_type) || o.class().is(t.float_type);
        Ok(match v {
            Var::Num(n) if n.has_size() => Some(n.clone()),
            // A number of the frame's that changes per call (a counter): computed again by
            // the replacement, an input of the graph (`frame_number_input`).
            Var::Num(n) if plain(&n.value) && self.varies_per_call(n) => Some(n.clone()),
            Var::Lazy(o, s)
                if plain(o)
                    && !s.has_draw()
                    && self.spec.number_is_input(s, o.class().is(t.float_type)) =>
            {
                Some(Rc::new(Num {
                    value: o.clone(),
                    expr: NumExpr::Read(o.clone(), s.clone()),
                    ops: 0,
                }))
            }
            // A number computed from the frame's that has not changed from call to call
            // (`1 - self.ratio`): fixed by its value.
            Var::Num(n) if plain(&n.value) && n.settled(&self.spec) => {
                let o = self.force_number(n)?;
                Some(Rc::new(Num {
                    value: o.clone(),
                    expr: NumExpr::Const(o),
                    ops: 0,
                }))
            }
            Var::Num(_) => None,
            Var::Obj(o) | Var::Lazy(o, _) if plain(o) => {
                let o = self.obj(v)?;
                Some(Rc::new(Num {
                    value: o.clone(),
                    expr: NumExpr::Const(o),
                    ops: 0,
                }))
            }
            _ => None,
        })
    }
}

/// The size `n` is, if it is one (not a float computed from sizes).
fn size_of(n: &Num) -> Option<SizeExpr> {
    match &n.expr {
        NumExpr::Size(e) => Some(e.clone()),
        _ => None,
    }
}

fn size_is(lhs: SizeExpr, cmp: SizeCmp) -> SizeCheck {
    SizeCheck {
        lhs,
        cmp,
        rhs: SizeExpr::Const(0),
        outcome: true,
    }
}

/// Checks of sizes under which the float `n` is not zero (`None`: none found that suffice;
/// the number is forced). A quotient or product of such floats (`n / (H * W / 4)`) is not
/// zero where its magnitude has a lower bound far above float64's underflow.
fn nonzero(n: &Num) -> Option<Vec<SizeCheck>> {
    let m = magnitude(n)?;
    (m.low >= SAFE_LOW).then_some(m.checks)
}

/// Bounds far from float64's underflow and overflow: a product or quotient of magnitudes
/// within them, rounded, keeps its lower bound above zero.
const SAFE_LOW: f64 = 1e-200;
const SAFE_HIGH: f64 = 1e200;

/// Bounds of a float's magnitude, and the checks of sizes they hold under.
struct Magnitude {
    low: f64,
    high: f64,
    checks: Vec<SizeCheck>,
}

/// The bounds of `|n|` for every call that passes the checks (`None`: none known, as for a
/// sum, whose terms may cancel).
fn magnitude(n: &Num) -> Option<Magnitude> {
    use BinaryOperator as B;
    let m = match &n.expr {
        // An int size that is not zero is at least 1; above 2**53 it has no exact float and
        // the expression no value.
        NumExpr::Size(e) => Magnitude {
            low: 1.0,
            high: EXACT_INT as f64,
            checks: vec![size_is(e.clone(), SizeCmp::Ne)],
        },
        NumExpr::Const(c) => {
            let c = number(c)?.abs();
            Magnitude {
                low: c,
                high: c,
                checks: Vec::new(),
            }
        }
        NumExpr::Apply(FloatFn::Float, a) => magnitude(a)?,
        NumExpr::Apply(FloatFn::Sqrt, a) => {
            let a = magnitude(a)?;
            Magnitude {
                low: a.low.sqrt(),
                high: a.high.sqrt(),
                checks: a.checks,
            }
        }
        // A size checked positive, to a constant power of at most `MAX_EXPONENT`.
        NumExpr::Op(B::Power, a, e) => {
            let (a, e) = (magnitude(a)?, number(&const_of(e)?)?);
            let (x, y) = (a.low.powf(e), a.high.powf(e));
            Magnitude {
                low: x.min(y),
                high: x.max(y),
                checks: a.checks,
            }
        }
        NumExpr::Op(op @ (B::Multiply | B::TrueDivide), a, b) => {
            let (mut a, b) = (magnitude(a)?, magnitude(b)?);
            let (low, high) = match op {
                B::Multiply => (a.low * b.low, a.high * b.high),
                _ => (a.low / b.high, a.high / b.low),
            };
            a.checks.extend(b.checks);
            Magnitude {
                low,
                high,
                checks: a.checks,
            }
        }
        _ => return None,
    };
    (m.low >= SAFE_LOW && m.high <= SAFE_HIGH).then_some(m)
}

/// The constant `n` is, if it is one.
fn const_of(n: &Num) -> Option<PyObjectRef> {
    match &n.expr {
        NumExpr::Const(c) => Some(c.clone()),
        _ => None,
    }
}

/// Checks of sizes under which the float `n` is not negative (`None`: none found).
fn not_negative(n: &Num) -> Option<Vec<SizeCheck>> {
    use BinaryOperator as B;
    let both = |a: &Num, b: &Num| {
        let mut checks = not_negative(a)?;
        checks.extend(not_negative(b)?);
        Some(checks)
    };
    match &n.expr {
        NumExpr::Size(e) => Some(vec![size_is(e.clone(), SizeCmp::Ge)]),
        NumExpr::Const(c) => (number(c)? >= 0.0).then(Vec::new),
        NumExpr::Apply(_, a) => not_negative(a),
        NumExpr::Op(B::Power, _, _) => Some(Vec::new()),
        NumExpr::Op(B::Add | B::Multiply | B::TrueDivide, a, b) => both(a, b),
        _ => None,
    }
}

/// An int or float's value as a float (an int that fits a float exactly).
fn number(o: &PyObjectRef) -> Option<f64> {
    if let Some(f) = o.downcast_ref::<PyFloat>() {
        return Some(f.to_f64());
    }
    let i = i64::try_from(o.downcast_ref::<PyInt>()?.as_bigint()).ok()?;
    (i.unsigned_abs() < 1 << 53).then_some(i as f64)
}

fn dtype_object(dtype: DType, vm: &VirtualMachine) -> PyObjectRef {
    crate::tensor::dtype_object(dtype, vm)
}
