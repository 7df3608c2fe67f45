//! Attributes: LOAD_ATTR (attribute and method form), STORE_ATTR, DELETE_ATTR, and
//! LOAD_SPECIAL (a context manager's `__enter__` and `__exit__`). What each kind of value
//! does is in `values::operators`.

use super::{Flow, Handler, SimFrame};
use crate::bytecode::decode::Instr;
use crate::translate::state::{Kind, State, unsupported};

impl State<'_> {
    pub(super) fn load_attr(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let name = f.name(x.arg >> 1);
        let owner = f.pop()?;
        if x.arg & 1 != 0 {
            let (callable, this) = self.method_of(&owner, &name)?;
            f.push(callable);
            f.push(this);
        } else {
            let v = self.attr_of(&owner, &name)?;
            f.push(v);
        }
        Ok(Flow::Next)
    }

    pub(super) fn store_attr(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let owner = f.pop()?;
        let value = f.pop()?;
        let name = f.name(x.arg);
        self.set_attr(&owner, &name, value)?;
        Ok(Flow::Next)
    }

    pub(super) fn delete_attr(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let owner = f.pop()?;
        let name = f.name(x.arg);
        self.del_attr(&owner, &name)?;
        Ok(Flow::Next)
    }

    pub(super) fn load_special(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let name = match x.arg {
            0 => "__enter__",
            1 => "__exit__",
            _ => return unsupported(Kind::Opcode, "an async context manager"),
        };
        let owner = f.pop()?;
        let (callable, this) = self.special_method_of(&owner, name)?;
        f.push(callable);
        f.push(this);
        Ok(Flow::Next)
    }
}
