//! What a value read from the frame is fixed to when the simulation computes with it: its
//! value for plain values, its identity for functions, modules, classes and other objects
//! that never change.

use rustpython_vm::builtins::{PyFloat, PyFunction, PyInt, PyModule, PyNone, PyStr, PyType};
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{Kind, SimResult, State, unsupported};

impl State<'_> {
    /// Guard what an object read from `source` is, so that computing with it stays valid:
    /// its value for plain values, its identity for functions, modules, classes and other
    /// immutable callables.
    pub(crate) fn rely_leaf(&mut self, obj: &PyObjectRef, source: &Source) -> SimResult<()> {
        let vm = self.vm;
        let c = obj.class();
        let t = &vm.ctx.types;
        let check = if obj.downcast_ref::<PyNone>().is_some() {
            Check::IsNone
        } else if c.is(t.bool_type) {
            Check::EqBool(obj.is(&vm.ctx.true_value))
        } else if c.is(t.int_type) {
            match obj
                .downcast_ref::<PyInt>()
                .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
            {
                Some(i) => Check::EqInt(i),
                None => {
                    return unsupported(Kind::Limit, "an int argument too large to specialize on");
                }
            }
        } else if c.is(t.float_type) {
            Check::EqFloat(obj.downcast_ref::<PyFloat>().expect("float").to_f64())
        } else if c.is(t.str_type) {
            Check::EqStr(
                obj.downcast_ref::<PyStr>()
                    .expect("str")
                    .to_string_lossy()
                    .into_owned(),
            )
        } else if c.is(t.bytes_type) {
            // `os.environ`'s encoded values: compared natively once the type is checked.
            self.guard(source, Check::type_is(c.to_owned()));
            Check::Compare(PyComparisonOp::Eq, obj.clone(), true)
        } else if is_identity_stable(obj, vm) {
            Check::is(obj.clone())
        } else {
            return unsupported(
                Kind::Value,
                format!(
                    "cannot specialize on a value of type {} ({source})",
                    c.name()
                ),
            );
        };
        self.guard(source, check);
        // A builtin is found only while no global of the same name hides it.
        if let Source::Builtin(name) = source {
            self.guard(&Source::Global(name.clone()), Check::Absent);
        }
        Ok(())
    }
}

/// Objects whose identity says everything the simulation uses of them.
pub(crate) fn is_identity_stable(obj: &PyObjectRef, vm: &VirtualMachine) -> bool {
    obj.downcast_ref::<PyFunction>().is_some()
        || obj.downcast_ref::<PyModule>().is_some()
        || obj.downcast_ref::<PyType>().is_some()
        || obj.downcast_ref::<crate::tensor::PyDType>().is_some()
        || obj.class().is(vm.ctx.types.builtin_function_or_method_type)
        || obj.class().is(vm.ctx.types.method_descriptor_type)
        || obj.class().is(vm.ctx.types.wrapper_descriptor_type)
        // A slot wrapper bound to an object (`object.__setattr__.__get__`): both fixed.
        || obj.class().is(vm.ctx.types.method_wrapper_type)
        // A bare `object()` (a sentinel): it has no state of its own.
        || obj.class().is(vm.ctx.types.object_type)
        // `NotImplemented`, a singleton, compared by identity (`r is NotImplemented`), and
        // `...`, which a resume function receives on its stack when an index breaks midway.
        || obj.is(&vm.ctx.not_implemented())
        || obj.is(&vm.ctx.ellipsis)
        || crate::translate::values::identity::is_enum_member(obj)
        // What it wraps is fixed when it is made.
        || crate::translate::traced_wrappers::wrapped(obj).is_some()
        // A struct sequence (`sys.version_info`) never changes, nor do its plain items.
        || (obj.class().is_subtype(vm.ctx.types.tuple_type)
            && !obj.class().is(vm.ctx.types.tuple_type)
            && crate::translate::values::is_plain(obj, vm))
        // A frozenset never changes: of such members, neither do they.
        || obj.downcast_ref::<rustpython_vm::builtins::PyFrozenSet>().is_some_and(|s| {
            s.elements().iter().all(|m| crate::translate::values::is_plain(m, vm) || is_identity_stable(m, vm))
        }) && obj.class().is(vm.ctx.types.frozenset_type)
}
