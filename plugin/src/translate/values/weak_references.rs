//! A caller's `weakref.ref` called (a module that keeps its parent or a cache weakly): the
//! referent, read through the reference on every call (`Source::WeakTarget`), so that a
//! guard sees another referent, or None once it is collected.

use rustpython_vm::builtins::PyWeak;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;

impl State<'_> {
    /// `r()` of the caller's `r`, exactly a `weakref.ref` (a subclass may define `__call__`):
    /// what it refers to now, a value of the caller's read from its own source.
    pub fn weak_reference_call(
        &mut self,
        callable: &Var,
        o: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Var::Lazy(_, source) = callable else {
            return Ok(None);
        };
        if !o.class().is(vm.ctx.types.weakref_type) || !args.is_empty() || !kwargs.is_empty() {
            return Ok(None);
        }
        let Some(weak) = o.downcast_ref::<PyWeak>() else {
            return Ok(None);
        };
        self.guard(source, Check::type_is(o.class().to_owned()));
        let target = weak.upgrade().unwrap_or_else(|| vm.ctx.none());
        Ok(Some(Var::Lazy(
            target,
            Source::WeakTarget(Box::new(source.clone())),
        )))
    }
}
