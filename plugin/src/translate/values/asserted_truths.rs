//! `assert cond, msg` where `cond` is a tensor of one element (`assert not x.isnan().any()`,
//! `assert (p >= 0).all()`), or `if not cond: raise ...`: the truth is a check in the graph
//! (`assert_truth`), as TorchDynamo rewrites such an assert into `torch._assert_async`, and
//! the simulation goes on past the raise as if the truth held. Where it does not hold at run time, the graph fails before
//! the replacement has done anything the program could see, and the frame runs as written:
//! the program's own `AssertionError`, message and line. Any other branch on a tensor's value
//! stays a graph break.

use rustpython_vm::PyObjectRef;
use rustpython_vm::bytecode::Opcode;

use crate::bytecode::decode::Instr;
use crate::tensor::PyTensor;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;

/// Whether the instructions from `pc` on are the rest of an assert whose condition the
/// instruction just run made into a bool: a conditional jump where one way raises, straight
/// through, and the other goes on. The raise is either passed over by the jump (`assert cond,
/// msg`; `if not cond: raise ValueError(...)`, as `torch._assert` is written) or is where the
/// jump lands (the same `if` in a loop, whose raise the compiler moves after the loop's back
/// jump). The truth that avoids the raise, if so. What the raising code does matters only
/// where the truth is the other one, and then the frame runs as written.
pub fn asserted(instrs: &[Instr], pc: usize) -> Option<bool> {
    let jump = instrs.get(pc)?;
    let jumps_if = match jump.op {
        Opcode::PopJumpIfTrue => true,
        Opcode::PopJumpIfFalse => false,
        _ => return None,
    };
    if raises(instrs.get(pc + 1..)?) {
        return Some(jumps_if);
    }
    let target = instrs.get(jump.target?..)?;
    raises(target).then_some(!jumps_if)
}

/// Whether the code from the first of `code` on raises before it jumps, returns or yields.
fn raises(code: &[Instr]) -> bool {
    for i in code.iter().take(RAISE_WITHIN) {
        match i.op {
            Opcode::RaiseVarargs => return true,
            Opcode::ReturnValue | Opcode::YieldValue | Opcode::Reraise => return false,
            _ if i.target.is_some() => return false,
            _ => {}
        }
    }
    false
}

/// How far the raise may be from the jump: the message built, the exception made.
const RAISE_WITHIN: usize = 48;

impl State<'_> {
    /// The truth of tensor `v`, asserted to be `expect`: checked by the graph (`false`: not
    /// a traced tensor of one element, and the caller takes the truth as usual).
    pub(crate) fn assert_truth(&mut self, v: &Var, expect: bool) -> SimResult<bool> {
        let vm = self.vm;
        // A fake, or a tensor of the frame's that becomes an input; not a constant.
        if !self.is_fake(v) {
            return Ok(false);
        }
        let one_element = |t: &PyObjectRef| {
            t.downcast_ref::<PyTensor>()
                .is_some_and(|p| p.read().unwatched_shape().iter().product::<usize>() == 1)
        };
        if let Var::Lazy(o, _) | Var::Obj(o) = v
            && !one_element(o)
        {
            return Ok(false);
        }
        let t = self.obj(v)?;
        if !one_element(&t) {
            return Ok(false);
        }
        let Some(call_op) =
            crate::translate::loaded_modules::loaded_attr("symtrace", "call_op", vm)
        else {
            return Ok(false);
        };
        let name: PyObjectRef = vm.ctx.new_str("assert_truth").into();
        let expect_obj: PyObjectRef = vm.ctx.new_bool(expect).into();
        self.native_call(
            &call_op,
            vec![Var::Obj(name), Var::Obj(t)],
            vec![("expect".to_owned(), Var::Obj(expect_obj))],
            "symtrace.call_op",
            false,
        )?;
        log::debug!(target: crate::log_targets::GRAPH, "an assert on a tensor's truth checked by the graph");
        Ok(true)
    }
}
