//! How the replacement remakes an instance of a class written in Python that the simulation
//! made (`Template::Object`): without running its `__init__` again (what it did is its
//! attributes).

use rustpython_vm::builtins::{PyDictRef, PyTypeRef};
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

/// The function the replacement calls to remake an instance: `object.__new__(class)`, then
/// its dictionary filled in, natively (no `__init__`, no `__setattr__` runs again).
pub fn object_maker(vm: &VirtualMachine) -> PyObjectRef {
    vm.new_function(
        "__symtrace_make_object",
        |class: PyTypeRef, attrs: PyDictRef, vm: &VirtualMachine| -> PyResult {
            let new = vm
                .ctx
                .types
                .object_type
                .get_attr(vm.ctx.intern_str("__new__"))
                .ok_or_else(|| vm.new_type_error("object.__new__ is missing".to_owned()))?;
            let obj = new.call((class,), vm)?;
            fill_attributes(&obj, &attrs, vm)?;
            Ok(obj)
        },
    )
    .into()
}

/// Fill a remade instance's dictionary with `attrs`, natively (no `__setattr__` runs).
pub fn fill_attributes(obj: &PyObjectRef, attrs: &PyDictRef, vm: &VirtualMachine) -> PyResult<()> {
    let dict = obj
        .dict()
        .ok_or_else(|| vm.new_type_error("an instance without a __dict__".to_owned()))?;
    for (k, v) in &**attrs {
        dict.set_item(&*k, v, vm)?;
    }
    Ok(())
}
