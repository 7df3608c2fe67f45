//! Attributes: LOAD_ATTR (attribute and method form), STORE_ATTR, DELETE_ATTR, and
//! LOAD_SPECIAL (a context manager's `__enter__` and `__exit__`). What each kind of value
//! does is in `values::operators`.

use rustpython_vm::AsObject;

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

    /// `super().name` (LOAD_SUPER_ATTR): `super`, the method's class (its `__class__` cell)
    /// and `self` are on the stack.
    pub(super) fn load_super_attr(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let name = f.name(x.arg >> 2);
        // Zero-argument `super()` and `super(C, self)` alike find the class and `self` here
        // (the compiler pushes the `__class__` cell's content and the first argument).
        let method = x.arg & 1 == 1;
        let this = f.pop()?;
        let class = f.pop()?;
        let global_super = f.pop()?;
        let s = self.obj(&global_super)?;
        if !s.is(self.vm.ctx.types.super_type) {
            return unsupported(Kind::Call, "super, shadowed by another object");
        }
        let class = self.obj(&class)?;
        let Some(class) = class.downcast_ref::<rustpython_vm::builtins::PyType>() else {
            return unsupported(
                Kind::Raises,
                "super() argument 1 must be a type (TypeError)",
            );
        };
        let (v, this) = self.super_attr(&this, class, &name, method)?;
        f.push(v);
        if method {
            f.push(this);
        }
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
