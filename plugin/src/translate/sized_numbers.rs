//! Numbers computed from the sizes of a dynamic graph, as the replacement computes them again
//! after the graph has run (a size returned, or stored into an attribute): each dimension read
//! from its tensor at run time (`t.shape[d]`), the arithmetic redone. A size the replacement
//! could only have as a constant would fix the graph's sizes.

use std::collections::HashMap;

use crate::graph::Value;
use crate::graph::size_floats::{FloatOp, Rounding, SizeFloat};
use crate::graph::sizes::{SizeExpr, SizeOp};
use crate::translate::loaded_modules::loaded_attr;
use crate::translate::state::State;
use crate::translate::templates::Template;
use crate::translate::values::numbers::{Num, NumExpr};

/// A number computed from sizes of the graph, as the replacement computes it again: each
/// dimension read from its tensor (an input as the frame holds it, or a node's value, which
/// the graph then also returns), the arithmetic redone. `None` for an
/// int the graph computed, a dimension of a constant.
pub(super) fn sized_number(
    state: &State<'_>,
    n: &Num,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> Option<Template> {
    Some(match &n.expr {
        NumExpr::Read(_, s) => Template::Load(s.clone()),
        NumExpr::Const(o) => Template::Const(o.clone()),
        NumExpr::Op(op, a, b) => Template::BinOp(
            *op,
            Box::new(sized_number(state, a, outputs, index)?),
            Box::new(sized_number(state, b, outputs, index)?),
        ),
        NumExpr::Size(e) => size_template(state, e, outputs, index)?,
        NumExpr::Apply(f, a) => Template::New(
            f.function(state.vm)?,
            vec![sized_number(state, a, outputs, index)?],
        ),
        NumExpr::Math(f, a) => f.template(sized_number(state, a, outputs, index)?, state.vm)?,
    })
}

fn size_template(
    state: &State<'_>,
    e: &SizeExpr,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> Option<Template> {
    use rustpython_vm::bytecode::BinaryOperator as B;
    Some(match e {
        SizeExpr::Const(c) => Template::Const(state.vm.ctx.new_int(*c).into()),
        SizeExpr::Dim(v, d) => {
            let tensor = match v {
                Value::Input(i) => Template::Load(state.inputs.get(*i)?.clone()),
                Value::Node(_) => Template::Out(*index.entry(*v).or_insert_with(|| {
                    outputs.push(*v);
                    outputs.len() - 1
                })),
                Value::Const(_) => return None,
            };
            Template::Dim(Box::new(tensor), *d)
        }
        SizeExpr::Item(Value::Input(i)) => Template::Load(state.inputs.get(*i)?.clone()),
        SizeExpr::Item(_) => return None,
        SizeExpr::Round(r, x) => {
            let vm = state.vm;
            let f = match r {
                Rounding::Trunc => vm.ctx.types.int_type.to_owned().into(),
                Rounding::HalfEven => vm.builtins.get_attr("round", vm).ok()?,
                Rounding::Floor => loaded_attr("math", "floor", vm)?,
                Rounding::Ceil => loaded_attr("math", "ceil", vm)?,
            };
            Template::New(f, vec![float_template(state, x, outputs, index)?])
        }
        // The builtin itself, held as a constant (a global `max` of the module's own does
        // not change it).
        SizeExpr::Bin(op @ (SizeOp::Min | SizeOp::Max), a, b) => {
            let name = if *op == SizeOp::Min { "min" } else { "max" };
            Template::New(
                state.vm.builtins.get_attr(name, state.vm).ok()?,
                vec![
                    size_template(state, a, outputs, index)?,
                    size_template(state, b, outputs, index)?,
                ],
            )
        }
        SizeExpr::Bin(op, a, b) => {
            let op = match op {
                SizeOp::Add => B::Add,
                SizeOp::Sub => B::Subtract,
                SizeOp::Mul => B::Multiply,
                SizeOp::FloorDiv => B::FloorDivide,
                SizeOp::Mod => B::Remainder,
                SizeOp::Min | SizeOp::Max => return None,
            };
            Template::BinOp(
                op,
                Box::new(size_template(state, a, outputs, index)?),
                Box::new(size_template(state, b, outputs, index)?),
            )
        }
    })
}

/// A float computed from sizes, as the replacement computes it again: the same Python
/// operations on the sizes read again (an int beside a float converts as it did).
fn float_template(
    state: &State<'_>,
    x: &SizeFloat,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> Option<Template> {
    use rustpython_vm::bytecode::BinaryOperator as B;
    let vm = state.vm;
    Some(match x {
        SizeFloat::Int(e) => size_template(state, e, outputs, index)?,
        SizeFloat::Const(c) => Template::Const(vm.ctx.new_float(*c).into()),
        SizeFloat::Bin(op, a, b) => Template::BinOp(
            match op {
                FloatOp::Add => B::Add,
                FloatOp::Sub => B::Subtract,
                FloatOp::Mul => B::Multiply,
                FloatOp::Div => B::TrueDivide,
            },
            Box::new(float_template(state, a, outputs, index)?),
            Box::new(float_template(state, b, outputs, index)?),
        ),
        SizeFloat::Sqrt(a) => Template::New(
            loaded_attr("math", "sqrt", vm)?,
            vec![float_template(state, a, outputs, index)?],
        ),
        SizeFloat::Pow(a, e) => Template::BinOp(
            B::Power,
            Box::new(float_template(state, a, outputs, index)?),
            Box::new(Template::Const(vm.ctx.new_float(*e).into())),
        ),
    })
}
