//! Stack shuffling: NOP and its kin, POP_TOP, PUSH_NULL, COPY, SWAP.

use super::{Flow, Handler, SimFrame};
use crate::bytecode::decode::Instr;
use crate::translate::state::{Kind, State, unsupported};
use crate::translate::values::Var;

impl State<'_> {
    pub(super) fn nop(&mut self, _f: &mut SimFrame, _x: &Instr) -> Handler {
        Ok(Flow::Next)
    }

    pub(super) fn pop_top(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        f.pop()?;
        Ok(Flow::Next)
    }

    pub(super) fn push_null(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        f.push(Var::Null);
        Ok(Flow::Next)
    }

    pub(super) fn copy(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = f.top(x.arg as usize)?.clone();
        f.push(v);
        Ok(Flow::Next)
    }

    pub(super) fn swap(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let n = f.stack.len();
        let i = x.arg as usize;
        if i > n || i < 1 {
            return unsupported(Kind::Internal, "stack underflow");
        }
        f.stack.swap(n - 1, n - i);
        Ok(Flow::Next)
    }
}
