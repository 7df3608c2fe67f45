//! What an attribute found on a class is, as a read through an instance uses it: a function,
//! a property (or a Python subclass of property that keeps its access), a static or class
//! method, a descriptor written in Python, a plain value, or a native descriptor.

use rustpython_vm::builtins::{PyFunction, PyType};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, Py, PyObjectRef, VirtualMachine};

use super::objects::{is_user_class, python_method};

/// What a class attribute is, as an attribute read through an instance uses it.
pub(crate) enum Descr {
    Function(PyObjectRef),
    Property {
        fget: Option<PyObjectRef>,
        fset: Option<PyObjectRef>,
        fdel: Option<PyObjectRef>,
    },
    Static(PyObjectRef),
    ClassMethod(PyObjectRef),
    /// An object of a class written in Python with `__get__` (and `__set__` or `__delete__`
    /// for a data descriptor): `functools.cached_property`, a user's own descriptor.
    Python {
        get: Option<PyObjectRef>,
        set: Option<PyObjectRef>,
        delete: Option<PyObjectRef>,
    },
    /// A value without `__get__`: the attribute is the value itself.
    Plain,
    /// A descriptor of a native type (`__dict__`, `__class__`, a slot wrapper...).
    Native {
        data: bool,
    },
}

impl Descr {
    pub(crate) fn is_data(&self) -> bool {
        match self {
            Descr::Property { .. } => true,
            Descr::Python { set, delete, .. } => set.is_some() || delete.is_some(),
            Descr::Native { data } => *data,
            _ => false,
        }
    }
}

pub(crate) fn classify(d: &PyObjectRef, vm: &VirtualMachine) -> Descr {
    // An `lru_cache` wrapper binds as a function does (`cached_calls` follows its calls).
    if d.downcast_ref::<PyFunction>().is_some()
        || crate::translate::values::cached_calls::is_cache_wrapper(d, vm)
    {
        return Descr::Function(d.clone());
    }
    let c = d.class();
    let t = &vm.ctx.types;
    let member = |name: &'static str| d.get_attr(name, vm).ok().filter(|f| !vm.is_none(f));
    if c.is(t.property_type) || is_plain_property_subclass(c, vm) {
        return Descr::Property {
            fget: member("fget"),
            fset: member("fset"),
            fdel: member("fdel"),
        };
    }
    if c.is(t.staticmethod_type) {
        return member("__func__").map_or(Descr::Native { data: false }, Descr::Static);
    }
    if c.is(t.classmethod_type) {
        return member("__func__").map_or(Descr::Native { data: false }, Descr::ClassMethod);
    }
    if is_user_class(c, vm) {
        let (get, set, delete) = (
            python_method(c, "__get__", vm),
            python_method(c, "__set__", vm),
            python_method(c, "__delete__", vm),
        );
        return if get.is_some() || set.is_some() || delete.is_some() {
            Descr::Python { get, set, delete }
        } else {
            Descr::Plain
        };
    }
    let (get, set) = (c.slots.descr_get.load(), c.slots.descr_set.load());
    if get.is_none() && set.is_none() {
        Descr::Plain
    } else {
        Descr::Native {
            data: set.is_some(),
        }
    }
}

/// A class written in Python on `property` that leaves its access alone (no `__get__`,
/// `__set__` or `__delete__` of its own): its instances read as properties do, as torch's
/// `constraints.dependent_property` (a distribution's `support`) is made.
pub(crate) fn is_plain_property_subclass(c: &Py<PyType>, vm: &VirtualMachine) -> bool {
    let property = vm.ctx.types.property_type;
    c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
        && c.fast_issubclass(property)
        && ["__get__", "__set__", "__delete__"].iter().all(|m| {
            let m = vm.ctx.intern_str(*m);
            match (c.get_attr(m), property.get_attr(m)) {
                (Some(a), Some(b)) => a.is(&b),
                _ => false,
            }
        })
}
