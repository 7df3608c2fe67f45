//! A number read from the frame added to a size that changes from call to call: a module's
//! count of the samples it has seen (`self.seen += x.shape[0]`), a position advanced by a
//! sequence's length (`self.pos = self.pos + T`). Fixing the number by its value, as a
//! size's operand is, would translate the frame again at every call; instead the sum is a
//! deferred number over the size and the number's source, which the replacement computes
//! again (the size read from its tensor, `sized_numbers`), the number guarded by type only.
//! Where a size is needed (a slice, a view, a comparison), the number is fixed by value
//! there (`counted_size`), as it was before.

use std::rc::Rc;

use rustpython_vm::builtins::PyInt;
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::graph::sizes::{SizeExpr, SizeOp};
use crate::translate::guards::guard::Check;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::numbers::{Num, NumExpr};

/// The most operators in such a sum: a position advanced in an unrolled loop becomes a size
/// once it has this many.
const MAX_OPS: usize = 16;

impl State<'_> {
    /// `a op b` (`+`, `-`, `*`: they never raise on ints) of a size that may change and an
    /// int read from the frame that has not changed from call to call yet, or of such a sum
    /// (`None`: not such an operation; the size's arithmetic fixes the number).
    pub(super) fn size_counter_binary(
        &mut self,
        op: BinaryOperator,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<Var>> {
        use BinaryOperator as B;
        let op = match op {
            B::Add | B::InplaceAdd => B::Add,
            B::Subtract | B::InplaceSubtract => B::Subtract,
            B::Multiply | B::InplaceMultiply => B::Multiply,
            _ => return Ok(None),
        };
        let counted = |v: &Var| match v {
            Var::Lazy(o, s) => {
                exact_int(o, self) && !s.has_draw() && !self.spec.number_is_input(s, false)
            }
            Var::Num(n) => {
                !matches!(n.expr, NumExpr::Size(_))
                    && exact_int(&n.value, self)
                    && (n.has_size() || n.dynamic_int(&self.spec).is_none())
            }
            _ => false,
        };
        if !(counted(a) || counted(b)) {
            return Ok(None);
        }
        let (Some(x), Some(y)) = (self.counter_operand(a), self.counter_operand(b)) else {
            return Ok(None);
        };
        let ops = 1 + x.ops + y.ops;
        if ops > MAX_OPS {
            return Ok(None);
        }
        let Ok(value) = super::operators::binary_vm(op, &x.value, &y.value, self.vm) else {
            return Ok(None);
        };
        for n in [&x, &y] {
            if let NumExpr::Read(o, s) = &n.expr {
                self.guard(s, Check::type_is(o.class().to_owned()));
            }
        }
        Ok(Some(Var::Num(Rc::new(Num {
            value,
            expr: NumExpr::Op(op, x, y),
            ops,
        }))))
    }

    /// `v` as an operand of such a sum: a size, a sum, an int constant, an int read from
    /// the frame or deferred already.
    fn counter_operand(&self, v: &Var) -> Option<Rc<Num>> {
        match v {
            Var::Num(n) if exact_int(&n.value, self) => Some(n.clone()),
            Var::Lazy(o, s) if exact_int(o, self) && !s.has_draw() => Some(Rc::new(Num {
                value: o.clone(),
                expr: NumExpr::Read(o.clone(), s.clone()),
                ops: 0,
            })),
            Var::Obj(o) if exact_int(o, self) => Some(Rc::new(Num {
                value: o.clone(),
                expr: NumExpr::Const(o.clone()),
                ops: 0,
            })),
            _ => None,
        }
    }

    /// Such a sum where a size is needed: its sizes as they are, its numbers as a size's
    /// operands are (fixed by value, or inputs once they changed per call).
    pub(super) fn counted_size(&mut self, n: &Num) -> SimResult<Option<(SizeExpr, i64)>> {
        let part = |s: &mut Self, m: &Rc<Num>| -> SimResult<Option<(SizeExpr, i64)>> {
            let v = match &m.expr {
                NumExpr::Read(o, src) => Var::Lazy(o.clone(), src.clone()),
                NumExpr::Const(o) => Var::Obj(o.clone()),
                // A number computed from the frame's that sizes cannot take: its value.
                _ if !m.has_size() && m.dynamic_int(&s.spec).is_none() => {
                    Var::Obj(s.force_number(m)?)
                }
                _ => Var::Num(m.clone()),
            };
            s.size_operand(&v)
        };
        let NumExpr::Op(op, a, b) = &n.expr else {
            return Ok(None);
        };
        let op = match op {
            BinaryOperator::Add => SizeOp::Add,
            BinaryOperator::Subtract => SizeOp::Sub,
            BinaryOperator::Multiply => SizeOp::Mul,
            _ => return Ok(None),
        };
        let (Some((x, hx)), Some((y, hy))) = (part(self, a)?, part(self, b)?) else {
            return Ok(None);
        };
        Ok(op
            .apply(hx, hy)
            .map(|h| (SizeExpr::Bin(op, Box::new(x), Box::new(y)), h)))
    }
}

impl State<'_> {
    /// `v`, with such a sum made a size (its numbers fixed as a size's operands are) for a
    /// use that takes sizes only: a tensor's arithmetic, a float of it, a factory's size.
    pub(crate) fn sized(&mut self, v: &Var) -> SimResult<Var> {
        let Var::Num(n) = v else {
            return Ok(v.clone());
        };
        if !n.has_size() || matches!(n.expr, NumExpr::Size(_)) || !exact_int(&n.value, self) {
            return Ok(v.clone());
        }
        Ok(match self.counted_size(n)? {
            Some((expr, hint)) => Var::Num(Rc::new(Num {
                value: self.vm.ctx.new_int(hint).into(),
                expr: NumExpr::Size(expr),
                ops: 0,
            })),
            None => Var::Obj(self.force_number(n)?),
        })
    }
}

/// An int exactly (not a bool, not a subclass).
fn exact_int(o: &PyObjectRef, s: &State<'_>) -> bool {
    o.class().is(s.vm.ctx.types.int_type) && o.downcast_ref::<PyInt>().is_some()
}
