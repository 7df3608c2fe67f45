//! How the replacement remakes an instance of a class written in Python that the simulation
//! made (`Template::Object`): without running its `__init__` again (what it did is its
//! attributes).

use rustpython_vm::builtins::{PyDictRef, PyTypeRef};
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

use crate::translate::state::{Kind, SimResult, Unsupported};
use crate::translate::templates::Template;
use crate::translate::values::{NewObject, Var, made_dicts};

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

/// Fill a remade instance's dictionary with `attrs`, natively (no `__setattr__` runs); an
/// instance with slots only, its slots (`object.__setattr__` stores through their member
/// descriptors).
pub fn fill_attributes(obj: &PyObjectRef, attrs: &PyDictRef, vm: &VirtualMachine) -> PyResult<()> {
    let Some(dict) = obj.dict() else {
        let set = vm
            .ctx
            .types
            .object_type
            .get_attr(vm.ctx.intern_str("__setattr__"))
            .ok_or_else(|| vm.new_type_error("object.__setattr__ is missing".to_owned()))?;
        for (k, v) in &**attrs {
            set.call((obj.clone(), k, v), vm)?;
        }
        return Ok(());
    };
    for (k, v) in &**attrs {
        dict.set_item(&*k, v, vm)?;
    }
    Ok(())
}

/// The template of an instance made during the simulation: its attributes, and for a class
/// written on dict its entries beside them (`made_dicts`).
pub fn instance_template(
    o: &NewObject,
    vm: &VirtualMachine,
    mut build: impl FnMut(&Var) -> SimResult<Template>,
) -> SimResult<Template> {
    let entries = o.dict.borrow().clone();
    let mut t = Vec::with_capacity(entries.len());
    for (k, val) in &entries {
        t.push((k.clone(), build(val)?));
    }
    let Some(items) = &o.entries else {
        return Ok(Template::Object(o.class.clone().into(), t));
    };
    let items = items.borrow().clone();
    let mut pairs = Vec::with_capacity(items.len());
    for (k, val) in &items {
        let v = build(val)?;
        pairs.push(Template::Tuple(vec![Template::Const(k.clone()), v]));
    }
    let base = made_dicts::native_dict_base(&o.class, vm)
        .ok_or_else(|| Unsupported::new(Kind::Internal, "a dict's class"))?;
    Ok(Template::New(
        made_dicts::dict_object_maker(vm),
        vec![
            Template::Const(o.class.clone().into()),
            Template::Const(base.into()),
            Template::Tuple(pairs),
            Template::Dict(t),
        ],
    ))
}
