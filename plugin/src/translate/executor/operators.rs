//! Operators: BINARY_OP (subscripts included), slices, item stores and deletes, unary
//! operators, truth, comparisons, identity and membership. What each kind of value does is in
//! `values::operators`.

use rustpython_vm::builtins::PySlice;
use rustpython_vm::bytecode::oparg::COMPARE_OP_BOOL_MASK;
use rustpython_vm::bytecode::{BinaryOperator, ComparisonOperator, IntrinsicFunction1, Opcode};
use rustpython_vm::{AsObject, PyPayload};

use super::{Flow, Handler, SimFrame};
use crate::bytecode::decode::Instr;
use crate::translate::state::{Kind, SimResult, State, Unsupported, unsupported};
use crate::translate::values::Var;
use crate::translate::values::asserted_truths::asserted;

impl State<'_> {
    pub(super) fn binary_op(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let op = BinaryOperator::try_from(x.arg)
            .map_err(|_| Unsupported::new(Kind::Internal, "bad binary operator"))?;
        let b = f.pop()?;
        let a = f.pop()?;
        let r = self.binary(op, &a, &b)?;
        f.push(r);
        Ok(Flow::Next)
    }

    pub(super) fn binary_slice(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let stop = f.pop()?;
        let start = f.pop()?;
        let container = f.pop()?;
        if let Some(key) = self.symbolic_slice(vec![start.clone(), stop.clone()]) {
            let r = self.binary(BinaryOperator::Subscr, &container, &key)?;
            f.push(r);
            return Ok(Flow::Next);
        }
        let (start, stop) = (self.obj(&start)?, self.obj(&stop)?);
        let slice = PySlice {
            start: Some(start),
            stop,
            step: None,
        }
        .into_pyobject(self.vm);
        let r = self.binary(BinaryOperator::Subscr, &container, &Var::Obj(slice))?;
        f.push(r);
        Ok(Flow::Next)
    }

    pub(super) fn store_subscr(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let key = f.pop()?;
        let container = f.pop()?;
        let value = f.pop()?;
        self.set_item(&container, &key, value)?;
        Ok(Flow::Next)
    }

    /// `container[start:stop] = value`: an item store with a slice for its key.
    pub(super) fn store_slice(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let stop = f.pop()?;
        let start = f.pop()?;
        let container = f.pop()?;
        let value = f.pop()?;
        let key = self.slice_of(&start, &stop)?;
        self.set_item(&container, &key, value)?;
        Ok(Flow::Next)
    }

    pub(super) fn delete_subscr(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let key = f.pop()?;
        let container = f.pop()?;
        self.del_item(&container, &key)?;
        Ok(Flow::Next)
    }

    pub(super) fn unary(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let vm = self.vm;
        let a = f.pop()?;
        if x.op == Opcode::UnaryNegative
            && let Some(r) = self.size_function("neg", std::slice::from_ref(&a))?
        {
            f.push(r);
            return Ok(Flow::Next);
        }
        // `-n` of an int that may change from call to call (`x[:, -n:]`): `0 - n`, kept
        // symbolic as that is (an int has no negative zero); of a float computed from sizes
        // (`-(T / 2)`) or drawn (`-random.random()`), `y * -1.0`, which is `-y` to the sign
        // of a zero; so is a float read from the frame that is a graph input (`-lr`, `-t`).
        let float_input = matches!(&a, Var::Lazy(o, s)
            if o.class().is(vm.ctx.types.float_type) && self.spec.number_is_input(s, true));
        if x.op == Opcode::UnaryNegative
            && (self.is_symbolic(&a) || matches!(a, Var::Num(_)) || float_input)
        {
            let float = float_input
                || matches!(&a, Var::Num(n) if n.value.class().is(vm.ctx.types.float_type));
            let r = match float {
                true => {
                    let minus_one = Var::Obj(vm.ctx.new_float(-1.0).into());
                    self.binary(BinaryOperator::Multiply, &a, &minus_one)?
                }
                false => {
                    let zero = Var::Obj(vm.ctx.new_int(0).into());
                    self.binary(BinaryOperator::Subtract, &zero, &a)?
                }
            };
            f.push(r);
            return Ok(Flow::Next);
        }
        // `~n` of an int that may change per call is `n ^ -1`, deferred as that is.
        let int = |o: &rustpython_vm::PyObjectRef| o.class().is(vm.ctx.types.int_type);
        if x.op == Opcode::UnaryInvert
            && match &a {
                Var::Num(n) => int(&n.value) && !n.has_size(),
                Var::Lazy(o, s) => int(o) && self.spec.number_is_input(s, false),
                _ => false,
            }
        {
            let minus_one = Var::Obj(vm.ctx.new_int(-1).into());
            let r = self.binary(BinaryOperator::Xor, &a, &minus_one)?;
            f.push(r);
            return Ok(Flow::Next);
        }
        let name = match x.op {
            Opcode::UnaryNegative => "__neg__",
            _ => "__invert__",
        };
        if let Some(r) = self.user_unary(name, &a)? {
            f.push(r);
            return Ok(Flow::Next);
        }
        let o = self.obj(&a)?;
        let r = if x.op == Opcode::UnaryNegative {
            vm._neg(&o)
        } else {
            vm._invert(&o)
        };
        let r = self.native_result(r, self.is_fake(&a), "a unary operator")?;
        f.push(r);
        Ok(Flow::Next)
    }

    pub(super) fn unary_not(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let a = f.pop()?;
        let t = self.truth(&a)?;
        f.push(Var::Obj(self.vm.ctx.new_bool(!t).into()));
        Ok(Flow::Next)
    }

    /// The truth of `v` that the jump after this instruction takes: of a tensor asserted
    /// (`assert cond`), the truth asserted, checked by the graph (`asserted_truths`).
    fn branch_truth(&mut self, f: &SimFrame, v: &Var) -> SimResult<bool> {
        if let Some(expect) = asserted(&f.instrs, f.pc)
            && self.assert_truth(v, expect)?
        {
            return Ok(expect);
        }
        self.truth(v)
    }

    pub(super) fn to_bool(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let a = f.pop()?;
        let t = self.branch_truth(f, &a)?;
        f.push(Var::Obj(self.vm.ctx.new_bool(t).into()));
        Ok(Flow::Next)
    }

    pub(super) fn compare_op(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let b = f.pop()?;
        let a = f.pop()?;
        let op = ComparisonOperator::try_from(x.arg)
            .map_err(|_| Unsupported::new(Kind::Internal, "bad comparison"))?;
        let r = self.compare(op, &a, &b)?;
        // The compiler asks for a bool where the comparison feeds a jump: of a tensor, a
        // branch on its value. It breaks here (the comparison, run as written, gives the
        // bool), not at the jump, which cannot be a break point.
        let r = if x.arg & COMPARE_OP_BOOL_MASK != 0 {
            Var::Obj(self.vm.ctx.new_bool(self.branch_truth(f, &r)?).into())
        } else {
            r
        };
        f.push(r);
        Ok(Flow::Next)
    }

    pub(super) fn is_op(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let b = f.pop()?;
        let a = f.pop()?;
        let same = self.is(&a, &b)?;
        f.push(Var::Obj(self.vm.ctx.new_bool(same != (x.arg == 1)).into()));
        Ok(Flow::Next)
    }

    pub(super) fn contains_op(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let haystack = f.pop()?;
        let needle = f.pop()?;
        let found = self.contains(&haystack, &needle)?;
        f.push(Var::Obj(self.vm.ctx.new_bool(found != (x.arg == 1)).into()));
        Ok(Flow::Next)
    }

    pub(super) fn call_intrinsic_1(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = f.pop()?;
        let func = IntrinsicFunction1::try_from(x.arg)
            .map_err(|_| Unsupported::new(Kind::Internal, "bad intrinsic"))?;
        let r = match func {
            IntrinsicFunction1::ListToTuple => Var::tuple(self.items(&v)?),
            IntrinsicFunction1::UnaryPositive => {
                if let Some(r) = self.user_unary("__pos__", &v)? {
                    f.push(r);
                    return Ok(Flow::Next);
                }
                let o = self.obj(&v)?;
                self.native_result(self.vm._pos(&o), self.is_fake(&v), "unary +")?
            }
            other => return unsupported(Kind::Opcode, format!("intrinsic {other:?}")),
        };
        f.push(r);
        Ok(Flow::Next)
    }
}
