//! A module's namespace as the side effects see it: the call's stores into globals (the
//! frame's own, or a module's through its attributes), followed by name, and why a read
//! through the namespace as a dict does not mix with them.

use rustpython_vm::builtins::PyDict;
use rustpython_vm::{AsObject, Py, PyObject, PyObjectRef};

use super::SideEffects;
use crate::translate::breaks::reason::Kind;
use crate::translate::effect::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, unsupported};
use crate::translate::values::Var;

impl SideEffects {
    /// Record a store into (or, with `None`, a delete from) the frame's own globals.
    pub fn store_global(
        &mut self,
        dict: &Py<PyDict>,
        owner: Option<Source>,
        name: &str,
        value: Option<Var>,
    ) {
        self.globals
            .push((dict.to_owned().into(), name.to_owned(), value.clone()));
        let effect = Effect::StoreGlobal {
            owner,
            name: name.to_owned(),
            value,
        };
        log::debug!(target: crate::log_targets::SIDE_EFFECTS, "recorded {effect:?}");
        self.log.push(effect);
    }

    /// Record `module.name = value` on a module of the caller's (`target`): replayed as an
    /// attribute store, and seen as the global `name` of the module's functions.
    pub fn store_module_attr(
        &mut self,
        module: &PyObjectRef,
        dict: &Py<PyDict>,
        target: Source,
        name: &str,
        value: Var,
    ) {
        self.globals
            .push((dict.to_owned().into(), name.to_owned(), Some(value.clone())));
        let effect = Effect::SetAttr {
            target,
            name: name.to_owned(),
            value,
            on_class: false,
        };
        self.mutate(module, effect);
    }

    /// A module's namespace is changed by name (`STORE_GLOBAL`, `module.x = v`) or as a
    /// dict (`globals()["x"] = v` of a dict handed in); the simulation follows each channel
    /// on its own, so a read through one after a change through the other is refused:
    /// a read of `obj` as a dict after a store of one of its globals.
    pub(super) fn refuse_if_globals_stored(&self, obj: &PyObject) -> SimResult<()> {
        match self.globals.iter().any(|(d, _, _)| d.is(obj)) {
            true => unsupported(
                Kind::SideEffect,
                "a read of a module's namespace as a dict after the call stored one of its globals",
            ),
            false => Ok(()),
        }
    }

    /// A global of the namespace `dict` written earlier in the simulation (`Some(None)` when
    /// deleted); refused where the call changed the namespace as a dict (see
    /// `refuse_if_globals_stored`), whose stores the globals do not see.
    pub fn global(&self, dict: &Py<PyDict>, name: &str) -> SimResult<Option<Option<Var>>> {
        if self.changed(dict.as_object()) {
            return unsupported(
                Kind::SideEffect,
                format!(
                    "global {name:?} read after the call changed its module's namespace as a dict"
                ),
            );
        }
        Ok(self.global_written(dict, name))
    }

    fn global_written(&self, dict: &Py<PyDict>, name: &str) -> Option<Option<Var>> {
        self.globals
            .iter()
            .rev()
            .find(|(d, n, _)| d.is(dict.as_object()) && n == name)
            .map(|(_, _, v)| v.clone())
    }
}
