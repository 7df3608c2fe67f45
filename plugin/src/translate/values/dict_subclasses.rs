//! Subclasses of dict written in Python that read as dicts (`class AttrDict(dict)` with a
//! `__getattr__`, a config node, an `EasyDict`): a caller's instance is read key by key,
//! iterated and measured as a caller's dict is (`caller_dicts`), and its attributes as an
//! instance's of the object model, so that a model that reads its configuration through one
//! (`cfg.hidden`, `cfg["dropout"]`, `cfg.get("bias", True)`) keeps its graph.

use rustpython_vm::builtins::{PyDict, PyStr, PyType};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, Py, PyObjectRef, VirtualMachine};

use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::State;

/// A dict, or an instance of a plain subclass of dict (see `plain_dict_subclass`): its
/// entries are read as a dict's.
pub fn is_dict(o: &PyObjectRef, vm: &VirtualMachine) -> bool {
    o.downcast_ref::<PyDict>().is_some()
        && (o.class().is(vm.ctx.types.dict_type) || plain_dict_subclass(o.class(), vm))
}

impl State<'_> {
    /// Beside a guard `type(x) is C` for a plain subclass of dict `C`, its version: its
    /// methods stay dict's while it does (`plain_dict_subclass` made sure it has a tag).
    pub(crate) fn guard_dict_subclass(&mut self, source: &Source, check: &Check) {
        let class = match check {
            Check::TypeIs(t) => t.get().and_then(|c| c.downcast::<PyType>().ok()),
            _ => None,
        };
        if let Some(class) = class.filter(|c| plain_dict_subclass(c, self.vm)) {
            let _ = self.guard_class(source.clone().type_of(), &class);
        }
    }
}

/// Names a subclass of dict may define without changing how its entries read: construction,
/// and what the class statement puts in every class. Attribute access (`__getattr__`,
/// `__setattr__`: a config's `cfg.hidden`) is the object model's, not the entries'.
const DICT_SUBCLASS_NAMES: &[&str] = &[
    "__init__",
    "__new__",
    "__module__",
    "__qualname__",
    "__doc__",
    "__dict__",
    "__weakref__",
    "__firstlineno__",
    "__static_attributes__",
    "__annotations__",
    "__init_subclass__",
    "__class_getitem__",
    "__slots__",
    "__orig_bases__",
    "__parameters__",
    "__repr__",
    "__str__",
];

/// A class written in Python on `dict` (`class AttrDict(dict)`, a config node), directly or
/// through other such classes, that overrides none of dict's own methods but its
/// construction (the names above): its instances' entries read as a dict's (a key, `get`,
/// `in`, `len`, `keys()`, iteration), and `__missing__` is not defined. Its version is guarded
/// where its identity is (`guard_dict_subclass`): a class whose version tags ran out is not
/// one.
pub fn plain_dict_subclass(class: &Py<PyType>, vm: &VirtualMachine) -> bool {
    let t = &vm.ctx.types;
    if class.is(t.dict_type) || !class.fast_issubclass(t.dict_type) {
        return false;
    }
    let plain = class.mro.read().iter().all(|c| {
        if c.is(t.dict_type) || c.is(t.object_type) {
            return true;
        }
        c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
            && c.attributes.entries().iter().all(|(k, _)| {
                let Some(k) = k.downcast_ref::<PyStr>().and_then(|k| k.to_str()) else {
                    return false;
                };
                k != "__missing__"
                    && (DICT_SUBCLASS_NAMES.contains(&k)
                        || !t.dict_type.attributes.contains(vm.ctx.intern_str(k)))
            })
    });
    plain && class.version_for_specialization(vm) != 0
}
