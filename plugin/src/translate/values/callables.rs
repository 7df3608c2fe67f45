//! `callable(v)`: whether `v`'s type has a `__call__` (its native call slot), as the
//! interpreter answers it (`if callable(self.act): x = self.act(x)`, a `default(v, d)` helper's
//! `d() if callable(d) else d`). The answer follows from the type alone: the type is guarded,
//! and a class written in Python by its version too (it could gain a `__call__`).

use rustpython_vm::builtins::PyType;

use crate::translate::state::{Kind, SimResult, State, Unsupported};
use crate::translate::values::Var;

impl State<'_> {
    /// `callable(v)`.
    pub(super) fn callable_of(&mut self, v: &Var) -> SimResult<bool> {
        // Methods and functions made in the call are callable whatever they are bound to.
        if matches!(v, Var::Method(..) | Var::Func(_) | Var::Bound(_)) {
            return Ok(true);
        }
        let class = self.type_of(v)?;
        let class = class
            .downcast_ref::<PyType>()
            .ok_or_else(|| Unsupported::new(Kind::Internal, "a type that is no type"))?;
        if let Var::Lazy(_, source) = v
            && class
                .slots
                .flags
                .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE)
        {
            self.guard_class(source.clone().type_of(), class)?;
        }
        Ok(class.slots.call.load().is_some())
    }
}
