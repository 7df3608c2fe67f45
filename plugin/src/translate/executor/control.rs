//! Control flow: jumps (conditional ones on values known at trace time), `for` loops over
//! iterators the simulation made, and RETURN_VALUE.

use rustpython_vm::bytecode::Opcode;

use super::{Flow, Handler, Returned, SimFrame};
use crate::bytecode::decode::Instr;
use crate::translate::state::State;

impl State<'_> {
    pub(super) fn jump(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        f.jump(x.target)?;
        Ok(Flow::Next)
    }

    pub(super) fn pop_jump_if(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = f.pop()?;
        let jump = match x.op {
            Opcode::PopJumpIfTrue => self.truth(&v)?,
            Opcode::PopJumpIfFalse => !self.truth(&v)?,
            Opcode::PopJumpIfNone => self.is_none(&v)?,
            _ => !self.is_none(&v)?,
        };
        if jump {
            f.jump(x.target)?;
        }
        Ok(Flow::Next)
    }

    /// GET_ITER and GET_YIELD_FROM_ITER: an iterator over the items, made now.
    pub(super) fn get_iter(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let v = f.pop()?;
        let it = self.iterator_of(&v)?;
        f.push(it);
        Ok(Flow::Next)
    }

    pub(super) fn for_iter(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let iterator = f.top(1)?.clone();
        match self.next_item(&iterator)? {
            Some(v) => f.push(v),
            None => {
                // Exhausted: past the END_FOR at the target, as the VM goes.
                f.jump(x.target)?;
                if f.instrs.get(f.pc).is_some_and(|i| i.op == Opcode::EndFor) {
                    f.pc += 1;
                }
            }
        }
        Ok(Flow::Next)
    }

    pub(super) fn return_value(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let value = f.pop()?;
        Ok(Flow::Return(Returned {
            value,
            position: x.position,
            yielded: false,
            raised: false,
        }))
    }
}
