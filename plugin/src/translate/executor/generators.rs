//! Generators simulated with their consumer: a user generator called during the simulation is
//! a suspended frame (`Var::Gen`), resumed item by item as its consumer asks (FOR_ITER, SEND
//! for `yield from`, consumers that take every item), so that the two interleave as they do
//! when run.

use std::cell::RefCell;
use std::rc::Rc;

use rustpython_vm::AsObject;

use super::{Flow, Handler, Returned, SimFrame};
use crate::bytecode::decode::Instr;
use crate::translate::state::{Kind, MAX_INLINE_DEPTH, SimResult, State, unsupported};
use crate::translate::values::{SimGen, Var};

/// What resuming a simulated generator gave.
pub enum Resumed {
    Yielded(Var),
    /// It returned (StopIteration) with this value.
    Returned(Var),
}

impl State<'_> {
    /// A generator's first instruction: what it "returns" was made by the call (`Var::Gen`);
    /// resumed, it goes on with the value sent, None.
    pub(super) fn return_generator(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        f.push(Var::Obj(self.vm.ctx.none()));
        Ok(Flow::Next)
    }

    pub(super) fn yield_value(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let value = f.pop()?;
        Ok(Flow::Return(Returned {
            value,
            position: x.position,
            yielded: true,
            raised: false,
        }))
    }

    /// `yield from`: [receiver, sent] -> [receiver, item], or, once the receiver is done,
    /// [receiver, its return value] and a jump to END_SEND.
    pub(super) fn send(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        f.pop()?;
        let receiver = f.top(1)?.clone();
        let done = match &receiver {
            Var::Gen(g) => match self.resume(g)? {
                Resumed::Yielded(item) => {
                    f.push(item);
                    None
                }
                Resumed::Returned(value) => Some(value),
            },
            other => match self.next_item(other)? {
                Some(item) => {
                    f.push(item);
                    None
                }
                None => Some(Var::Obj(self.vm.ctx.none())),
            },
        };
        if let Some(value) = done {
            f.push(value);
            f.jump(x.target)?;
        }
        Ok(Flow::Next)
    }

    pub(super) fn end_send(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let value = f.pop()?;
        f.pop()?;
        f.push(value);
        Ok(Flow::Next)
    }

    /// The next item of an iterator made during the simulation (`None`: exhausted).
    pub fn next_item(&mut self, iterator: &Var) -> SimResult<Option<Var>> {
        match iterator {
            Var::Iter(it) => Ok(it.borrow_mut().pop_front()),
            Var::Stepper(s) => self.step_iterator(s),
            Var::DictIter(it) => {
                let mut it = it.borrow_mut();
                let dict = it.dict.borrow();
                let keys: Vec<usize> = dict.iter().map(|(k, _)| k.get_id()).collect();
                if keys != it.keys {
                    let message = if keys.len() == it.keys.len() {
                        "dictionary keys changed during iteration (RuntimeError)"
                    } else {
                        "dictionary changed size during iteration (RuntimeError)"
                    };
                    return unsupported(Kind::Raises, message);
                }
                let item = dict.get(it.next).map(|e| it.kind.of(e));
                drop(dict);
                it.next += usize::from(item.is_some());
                Ok(item)
            }
            Var::Gen(g) => Ok(match self.resume(g)? {
                Resumed::Yielded(v) => Some(v),
                Resumed::Returned(_) => None,
            }),
            other => match self.instance_next(other)? {
                Some(item) => Ok(item),
                None => unsupported(Kind::Value, format!("next() of a {}", other.kind())),
            },
        }
    }

    /// Run a simulated generator to its next yield or its return.
    pub fn resume(&mut self, g: &Rc<RefCell<SimGen>>) -> SimResult<Resumed> {
        // The frame is taken out while it runs: a generator that resumes itself is refused.
        let (frame, started) = {
            let mut generator = g.borrow_mut();
            if generator.done {
                return Ok(Resumed::Returned(Var::Obj(self.vm.ctx.none())));
            }
            let started = std::mem::replace(&mut generator.started, true);
            (generator.frame.take(), started)
        };
        let Some(mut frame) = frame else {
            return unsupported(
                Kind::Raises,
                format!(
                    "generator {} already running (ValueError)",
                    g.borrow().qualname
                ),
            );
        };
        if started {
            // What the paused YIELD_VALUE evaluates to: the value sent, None for next().
            frame.push(Var::Obj(self.vm.ctx.none()));
        }
        if self.depth >= MAX_INLINE_DEPTH {
            return unsupported(Kind::Limit, "generators nested too deep");
        }
        self.depth += 1;
        // Resumed from its consumer's instruction: under a handler if that one is.
        frame.called_under_handler = self.under_handler;
        let outer = self.under_handler;
        let result = self.run(&mut frame);
        self.under_handler = outer;
        self.depth -= 1;
        let r = result?;
        let mut generator = g.borrow_mut();
        if r.yielded {
            generator.frame = Some(frame);
            Ok(Resumed::Yielded(r.value))
        } else {
            generator.done = true;
            Ok(Resumed::Returned(r.value))
        }
    }
}
