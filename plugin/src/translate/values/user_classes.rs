//! Which classes and instances the object model (`objects`) handles: classes written in
//! Python whose attribute lookup is `object`'s (their instances with a dictionary, or with
//! slots only: `slot_objects`), a metaclass that leaves lookup or the call alone, and the
//! classes whose call makes an instance as `type`'s does.

use rustpython_vm::builtins::PyType;
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, Py, PyObject, VirtualMachine};

use crate::translate::values::slot_objects;

/// A class the simulation models the instances of: written in Python (its bases too, up to
/// `object`), made by `type` itself, its instances with a dictionary, their attribute lookup
/// `object`'s own.
pub fn is_user_class(class: &Py<PyType>, vm: &VirtualMachine) -> bool {
    class.class().is(vm.ctx.types.type_type) && is_user_class_body(class, vm)
}

/// A class written in Python whose attribute lookup is the one the object model follows,
/// whatever its metaclass.
fn is_user_class_body(class: &Py<PyType>, vm: &VirtualMachine) -> bool {
    let object = vm.ctx.types.object_type;
    if !class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
        || !class.slots.flags.has_feature(PyTypeFlags::HAS_DICT)
    {
        return false;
    }
    // A plain subclass of dict too: its instances' attributes are the object model's, their
    // entries a dict's (`is_dict`).
    let plain_bases = class
        .mro
        .read()
        .iter()
        .all(|c| c.is(object) || c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE))
        || crate::translate::values::dict_subclasses::plain_dict_subclass(class, vm)
        || crate::translate::values::made_dicts::native_dict_base(class, vm).is_some();
    let own_lookup = match (
        class.get_attr(vm.ctx.intern_str("__getattribute__")),
        object.get_attr(vm.ctx.intern_str("__getattribute__")),
    ) {
        (Some(a), Some(b)) => a.is(&b),
        _ => false,
    };
    plain_bases && own_lookup
}

/// Whether `class.name` is found as `type` finds it although `class` has a metaclass of its
/// own (an `Enum`'s `EnumType`): the metaclass, written in Python on `type`, changes neither
/// lookup (`__getattribute__`, `__getattr__`) and has no attribute `name` that would come
/// first (a data descriptor, or any `name` the class lacks). The class's own bases do not matter here (an `IntEnum`'s `int`): `type` looks
/// `name` up in their dictionaries as in any class's. The caller guards the metaclass's
/// version.
pub fn plain_metaclass_lookup(class: &Py<PyType>, name: &str, vm: &VirtualMachine) -> bool {
    let meta = class.class();
    let t = &vm.ctx.types;
    let plain_mro = meta.mro.read().iter().all(|c| {
        c.is(t.type_type) || c.is(t.object_type) || c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
    });
    let same = |attr: &str, of: &Py<PyType>| match (
        meta.get_attr(vm.ctx.intern_str(attr)),
        of.get_attr(vm.ctx.intern_str(attr)),
    ) {
        (Some(a), Some(b)) => a.is(&b),
        (None, None) => true,
        _ => false,
    };
    meta.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
        && meta.fast_issubclass(t.type_type)
        && plain_mro
        && same("__getattribute__", t.type_type)
        && meta.get_attr(vm.ctx.intern_str("__getattr__")).is_none()
        && match meta.get_attr(vm.ctx.intern_str(name)) {
            None => true,
            // The metaclass's own `name` (an `ABCMeta`'s docstring) comes first only when it
            // is a data descriptor, or when the class has no `name` of its own.
            Some(m) => {
                m.class().slots.descr_set.load().is_none()
                    && class.get_attr(vm.ctx.intern_str(name)).is_some()
            }
        }
        && class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
}

/// A class whose call makes an instance as `type`'s call does: one the object model
/// handles, made by `type`, or by a metaclass written in Python on `type` that leaves the
/// call alone (an `ABCMeta` class, such as `contextlib`'s context managers). The caller
/// guards the metaclass's version.
pub fn instantiable_class(class: &Py<PyType>, vm: &VirtualMachine) -> bool {
    // A subclass of dict: when its entries can be modelled beside its attributes.
    if class.fast_issubclass(vm.ctx.types.dict_type)
        && crate::translate::values::made_dicts::native_dict_base(class, vm).is_none()
    {
        return false;
    }
    let slots_only = slot_objects::slots_only_class(class, vm);
    if is_user_class(class, vm) || (slots_only && class.class().is(vm.ctx.types.type_type)) {
        return true;
    }
    let meta = class.class();
    let t = &vm.ctx.types;
    let types_call = match (
        meta.get_attr(vm.ctx.intern_str("__call__")),
        t.type_type.get_attr(vm.ctx.intern_str("__call__")),
    ) {
        (Some(a), Some(b)) => a.is(&b),
        _ => false,
    };
    (is_user_class_body(class, vm) || slots_only)
        && meta.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
        && meta.fast_issubclass(t.type_type)
        && types_call
}

/// An instance of a class the object model handles.
///
/// Its class's metaclass plays no part in an instance's attribute lookup: an enum's members
/// are such instances.
pub fn is_user_instance(o: &PyObject, vm: &VirtualMachine) -> bool {
    match o.dict() {
        Some(_) => is_user_class_body(o.class(), vm) || namespace_class(o.class(), vm),
        None => slot_objects::slots_only_class(o.class(), vm),
    }
}

/// `types.SimpleNamespace`, or a class written in Python on it: its instances' attributes
/// are their dictionary's, looked up as `object` looks them up (the namespace's own methods
/// are its repr, comparisons and pickling). A caller's instance is one of the object
/// model's; one is not made in the call (its `__init__` is native).
fn namespace_class(class: &Py<PyType>, vm: &VirtualMachine) -> bool {
    let t = &vm.ctx.types;
    let object_lookup = match (
        class.get_attr(vm.ctx.intern_str("__getattribute__")),
        t.object_type
            .get_attr(vm.ctx.intern_str("__getattribute__")),
    ) {
        (Some(a), Some(b)) => a.is(&b),
        _ => false,
    };
    class.fast_issubclass(t.namespace_type)
        && class.mro.read().iter().all(|c| {
            c.is(t.object_type)
                || c.is(t.namespace_type)
                || c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
        })
        && object_lookup
}
