//! Attributes a program keeps on its functions (`wrapper.calls += 1` in a decorator that
//! counts calls, `fn._hooked = True`, `f.__wrapped__`): entries of the function's `__dict__`
//! that no attribute of the function type shadows. Read from the dictionary where it is
//! (after the call's own stores of the name, what they stored: `caller_dict_read`); a store
//! is a change of the caller's function, replayed after the graph (`object.__setattr__`),
//! as TorchDynamo tracks attribute mutation on user functions.

use rustpython_vm::builtins::PyFunction;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;
use crate::translate::values::caller_dicts::CallerKey;

impl State<'_> {
    /// `f.name` of a function of the caller's, where `name` is the function's own: `None`
    /// where it is not.
    pub(super) fn function_attr(&mut self, owner: &Var, name: &str) -> SimResult<Option<Var>> {
        match self.function_entry(owner, name)? {
            None => Ok(None),
            Some(Some(v)) => Ok(Some(v)),
            Some(None) => unsupported(
                Kind::Raises,
                format!("'function' object has no attribute '{name}' (AttributeError)"),
            ),
        }
    }

    /// The entry `name` of a caller's function's `__dict__` (`Some(None)`: absent, which
    /// `hasattr` answers), where `name` is the function's own: `None` where it is not.
    pub(super) fn function_entry(
        &mut self,
        owner: &Var,
        name: &str,
    ) -> SimResult<Option<Option<Var>>> {
        let Some((dict, source)) = self.own_function_entry(owner, name) else {
            return Ok(None);
        };
        let key = CallerKey::Str(name.to_owned());
        self.caller_dict_read(&dict, &source, &key).map(Some)
    }

    /// `f.name = value` on a function of the caller's, where `name` is the function's own:
    /// `false` where it is not.
    pub(super) fn function_store(
        &mut self,
        owner: &Var,
        name: &str,
        value: Var,
    ) -> SimResult<bool> {
        let Some((_, _)) = self.own_function_entry(owner, name) else {
            return Ok(false);
        };
        let Var::Lazy(o, source) = owner else {
            return Ok(false);
        };
        let effect = Effect::SetAttr {
            target: source.clone(),
            name: name.to_owned(),
            value,
            on_class: false,
        };
        self.effects.mutate(o, effect);
        Ok(true)
    }

    /// The `__dict__` of the caller's function `owner` (exactly a function) and its source,
    /// where `name` is an entry of it: no attribute of the function type (`__name__`,
    /// `__defaults__`, `__code__`...) takes the name first.
    fn own_function_entry(&self, owner: &Var, name: &str) -> Option<(PyObjectRef, Source)> {
        let vm = self.vm;
        let Var::Lazy(o, source) = owner else {
            return None;
        };
        if o.downcast_ref::<PyFunction>().is_none()
            || !o.class().is(vm.ctx.types.function_type)
            || vm
                .ctx
                .types
                .function_type
                .get_attr(vm.ctx.intern_str(name))
                .is_some()
        {
            return None;
        }
        let dict = o.dict()?;
        Some((dict.into(), source.clone().instance_dict()))
    }
}
