//! Stores into the caller's modules (`config.debug = True`, `sys.stdout = buffer`): a side
//! effect replayed after the graph (`object.__setattr__`, which for a module is a store into
//! its dict), followed by the simulation's later reads of the name, as `module.name` and as
//! a global of the module's functions (`SideEffects::global`). A print after a store into
//! `sys` breaks (`deferred_print`: the stream may have changed).

use rustpython_vm::AsObject;

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;

impl State<'_> {
    /// `owner.name = value` where `owner` is a module: recorded as a side effect (`true`), or
    /// not a module (`false`).
    pub(super) fn module_store(&mut self, owner: &Var, name: &str, value: Var) -> SimResult<bool> {
        let vm = self.vm;
        let Some((o, source)) = owner.object_and_source() else {
            return Ok(false);
        };
        // Exactly a module: a subclass may define `__setattr__` or properties.
        if !o.class().is(vm.ctx.types.module_type) {
            return Ok(false);
        }
        let Some(dict) = o.dict() else {
            return Ok(false);
        };
        if name.starts_with("__") && name.ends_with("__") {
            // `__class__` changes what the module is; `__dict__`, `__name__`... are read by
            // the interpreter itself.
            return unsupported(Kind::SideEffect, format!("a store of {name} into a module"));
        }
        self.obj(owner)?; // the module's identity
        self.effects
            .store_module_attr(&o, &dict, source, name, value);
        Ok(true)
    }
}
