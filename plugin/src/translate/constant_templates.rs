//! The values the replacement holds as constants rather than making again: objects that
//! existed before the call and cannot change (literals, dtypes, native functions), and tuples
//! of plain values, made again from such constants.

use rustpython_vm::builtins::{PyFunction, PySlice, PyTuple};
use rustpython_vm::{AsObject, PyObject, VirtualMachine};

use crate::tensor::{PyDType, PyDevice};
use crate::translate::templates::Template;
use crate::translate::values::{is_literal, is_plain};

/// `o` as a template that needs nothing of the call's, where it is such a value.
pub fn constant_template(o: &PyObject, vm: &VirtualMachine) -> Option<Template> {
    let t = &vm.ctx.types;
    let c = o.class();
    let constant = is_literal(o, vm)
        // A slice of plain values: immutable (STORE_SLICE's key).
        || (o.downcast_ref::<PySlice>().is_some() && is_plain(o, vm))
        // A dtype or the device: the module's one object for it, immutable.
        || o.downcast_ref::<PyDType>().is_some()
        || o.downcast_ref::<PyDevice>().is_some()
        // A bare `object()`: a sentinel with no state (the simulation never makes one).
        || c.is(t.object_type)
        // A method or function of a native type (`Tensor.item` taken for a call): immutable,
        // the same object on every call.
        || c.is(t.method_descriptor_type)
        || c.is(t.builtin_function_or_method_type)
        // A Python function found on a class (a method, `__exit__` on a `with` block's
        // stack): it existed before the call, and the constant is that object.
        || o.downcast_ref::<PyFunction>().is_some();
    if constant {
        return Some(Template::Const(o.to_owned()));
    }
    // A tuple of plain values that are not all literals (`(n, x.dtype)`, a cache's key): a
    // new tuple on each call, as the frame makes one.
    if c.is(t.tuple_type) && is_plain(o, vm) {
        let items = o.downcast_ref::<PyTuple>()?.as_slice().iter();
        return items
            .map(|i| constant_template(i, vm))
            .collect::<Option<_>>()
            .map(Template::Tuple);
    }
    None
}
