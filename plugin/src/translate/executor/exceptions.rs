//! Exceptions in the simulated frame: RAISE_VARARGS and RERAISE go where the exception table
//! sends them (`throw`); PUSH_EXC_INFO, CHECK_EXC_MATCH and POP_EXCEPT run the handlers. Only
//! exceptions the simulation made itself are raised (`values::exceptions`).

use super::{Flow, Handler, Returned, SimFrame};
use crate::bytecode::decode::Instr;
use crate::translate::state::{Kind, State, Unsupported, unsupported};
use crate::translate::values::Var;

impl State<'_> {
    pub(super) fn raise_varargs(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let exc = match x.arg {
            0 => f.handling.last().cloned().ok_or_else(|| {
                Unsupported::new(
                    Kind::Raises,
                    "a bare raise with no exception being handled (RuntimeError)",
                )
            })?,
            1 => {
                let e = f.pop()?;
                self.exception_to_raise(&e)?
            }
            // `raise e from cause`: the cause matters only to an exception kept or raised out
            // of the frame, which is then not made again (`exception_template`).
            _ => {
                let cause = f.pop()?;
                let e = f.pop()?;
                let none = matches!(&cause, Var::Obj(c) if self.vm.is_none(c));
                let exception = |o: &rustpython_vm::PyObjectRef| {
                    o.class()
                        .fast_issubclass(self.vm.ctx.exceptions.base_exception_type)
                        || o.downcast_ref::<rustpython_vm::builtins::PyType>()
                            .is_some_and(|t| {
                                t.fast_issubclass(self.vm.ctx.exceptions.base_exception_type)
                            })
                };
                if !none && !matches!(&cause, Var::Obj(c) | Var::Lazy(c, _) if exception(c)) {
                    return unsupported(
                        Kind::Raises,
                        "raise ... from a cause that is no exception",
                    );
                }
                let exc = self.exception_to_raise(&e)?;
                self.note_caused(&exc);
                exc
            }
        };
        self.note_raised(&exc, f.handling.last());
        Ok(self.throw(f, exc, x))
    }

    pub(super) fn reraise(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        // The raising offset under it (oparg 1) only names a line for the traceback.
        let exc = f.pop()?;
        Ok(self.throw(f, exc, x))
    }

    pub(super) fn push_exc_info(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let exc = f.pop()?;
        // What POP_EXCEPT would restore: not read by the simulation.
        f.push(Var::Obj(self.vm.ctx.none()));
        f.push(exc.clone());
        f.handling.push(exc);
        Ok(Flow::Next)
    }

    pub(super) fn pop_except(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        f.pop()?;
        f.handling.pop().ok_or_else(|| {
            Unsupported::new(Kind::Internal, "POP_EXCEPT with no exception being handled")
        })?;
        Ok(Flow::Next)
    }

    pub(super) fn check_exc_match(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let class = f.pop()?;
        let exc = f.top(1)?.clone();
        let matched = self.exception_matches(&exc, &class)?;
        f.push(Var::Obj(self.vm.ctx.new_bool(matched).into()));
        Ok(Flow::Next)
    }

    /// Raise `exc` at `x`, the instruction just started: to its handler (the stack cut to the
    /// handler's depth, the raising offset pushed if it wants it, then the exception), or out
    /// of the frame.
    pub(super) fn throw(&mut self, f: &mut SimFrame, exc: Var, x: &Instr) -> Flow {
        let at = f.pc - 1;
        match f.instrs[at].handler {
            Some(h) => {
                f.stack.truncate(h.depth as usize);
                if h.push_lasti {
                    let offset = at.saturating_sub(f.body) as u32;
                    f.push(Var::Obj(self.vm.ctx.new_int(offset).into()));
                }
                f.push(exc);
                f.pc = f.body + h.target;
                Flow::Next
            }
            None => Flow::Return(Returned {
                value: exc,
                position: x.position,
                yielded: false,
                raised: true,
            }),
        }
    }
}
