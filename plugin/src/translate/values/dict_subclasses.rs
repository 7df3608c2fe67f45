//! Dicts that are not exactly dicts but read as dicts: the native `defaultdict` (a missing
//! key made by its factory and stored) and `OrderedDict` (read whole in its own order: its
//! links), and classes written in Python on them that define none of the ways entries are
//! read (`class AttrDict(dict)` with a `__getattr__`, a config node, an `EasyDict`, a
//! `Counter`, whose own `__missing__` is inlined). A caller's instance is read key by key,
//! iterated and measured as a caller's dict is (`caller_dicts`), and its attributes as an
//! instance's of the object model, so that a model that reads its configuration through one
//! (`cfg.hidden`, `cfg["dropout"]`, `cfg.get("bias", True)`) keeps its graph.

use rustpython_vm::builtins::{PyDict, PyType};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, Py, PyObjectRef, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::source::{Source, native_getter};
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::Var;
use crate::translate::values::objects::python_method;

/// A dict, or an instance of a plain subclass of dict (see `plain_dict_subclass`): its
/// entries are read as a dict's.
pub fn is_dict(o: &PyObjectRef, vm: &VirtualMachine) -> bool {
    o.downcast_ref::<PyDict>().is_some() && dict_like(o.class(), vm).is_some()
}

impl State<'_> {
    /// `d[key]` of the caller's dict-like `d` (the object `o`, read from `source`) that has
    /// no such key, as the VM's subscript goes on: a class's own `__missing__` written in
    /// Python inlined (a `Counter`'s 0); a `defaultdict`'s value made by its factory (read
    /// and guarded by identity) and stored, as a store of the call; otherwise `KeyError`.
    pub fn caller_dict_missing(
        &mut self,
        d: &Var,
        o: &PyObjectRef,
        source: &Source,
        key: &Var,
        shown: String,
    ) -> SimResult<Var> {
        let vm = self.vm;
        let class = o.class();
        if dict_like(class, vm) == Some(DictLike::Default) {
            // The native class's member, read by its getter (no `__getattribute__` of a
            // subclass runs).
            if class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
                || native_getter(o, "default_factory", vm).is_none()
            {
                return unsupported(Kind::Value, "a missing key of a subclass of defaultdict");
            }
            let at = Source::NativeAttr(Box::new(source.clone()), "default_factory".to_owned());
            let factory = o
                .get_attr("default_factory", vm)
                .map_err(|_| Unsupported::new(Kind::Internal, "defaultdict.default_factory"))?;
            self.rely_leaf(&factory, &at)?;
            if !vm.is_none(&factory) {
                let made = self.invoke(&Var::Obj(factory), Vec::new(), Vec::new())?;
                self.set_item(d, key, made.clone())?;
                return Ok(made);
            }
        } else if !dict_method_is_dicts(class, "__missing__", vm) {
            return match python_method(class, "__missing__", vm) {
                Some(f) => self.call_function(&f, vec![d.clone(), key.clone()], Vec::new()),
                None => unsupported(
                    Kind::Call,
                    format!("{}.__missing__ (not written in Python)", class.name()),
                ),
            };
        }
        self.raise_native(
            vm.ctx.exceptions.key_error,
            vec![key.clone()],
            format!("{source} has no key {shown} (KeyError)"),
        )
    }

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

/// dict's own ways of reading and writing entries that the simulation takes as dict's on a
/// caller's dict-like object (a key, `in`, `len`, truth, iteration, the views, `get`,
/// `setdefault`, a store): a subclass that defines one of them reads differently. Any other
/// name (`__missing__`, `update`, `__delitem__`, a `Counter`'s arithmetic) may be defined;
/// where the simulation would take it as dict's it checks first (`dict_method_is_dicts`).
const ENTRY_PROTOCOL: &[&str] = &[
    "__getitem__",
    "__setitem__",
    "__contains__",
    "__len__",
    "__bool__",
    "__iter__",
    "__reversed__",
    "keys",
    "values",
    "items",
    "get",
    "setdefault",
];

/// How a caller's dict-like object reads: as a dict in all (`dict`, a `defaultdict`, their
/// subclasses written in Python), or, read whole, in its own order (an `OrderedDict`, whose
/// iteration follows its own links: `move_to_end` reorders them and not its dict).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DictLike {
    Plain,
    /// A `defaultdict`'s native `__missing__` makes a missing key's value with
    /// `default_factory` and stores it.
    Default,
    Ordered,
}

impl DictLike {
    /// Whether its entries, read as a whole (iterated, viewed), come in the dict's order.
    pub fn in_dict_order(self) -> bool {
        self != DictLike::Ordered
    }
}

/// Whether the native class `c` is `_collections.name` (`defaultdict`, `OrderedDict`) as the
/// program loaded it.
fn is_native_collection(c: &Py<PyType>, name: &str, vm: &VirtualMachine) -> bool {
    crate::translate::loaded_modules::loaded_attr("_collections", name, vm).is_some_and(|n| n.is(c))
}

/// How instances of `class` read as dicts (see [`DictLike`]): exactly dict, `defaultdict` or
/// `OrderedDict`, or a class written in Python on one of them (`AttrDict`, a config node,
/// `Counter`) that defines none of the [`ENTRY_PROTOCOL`], its version tagged (guarded where
/// its identity is, `guard_dict_subclass`). `None`: not such a class.
pub fn dict_like(class: &Py<PyType>, vm: &VirtualMachine) -> Option<DictLike> {
    let t = &vm.ctx.types;
    if class.is(t.dict_type) {
        return Some(DictLike::Plain);
    }
    if !class.fast_issubclass(t.dict_type) {
        return None;
    }
    let mut kind = DictLike::Plain;
    for c in class.mro.read().iter() {
        if c.is(t.dict_type) || c.is(t.object_type) {
            continue;
        }
        if !c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) {
            kind = match &*c.name() {
                "defaultdict" if is_native_collection(c, "defaultdict", vm) => DictLike::Default,
                "OrderedDict" if is_native_collection(c, "OrderedDict", vm) => DictLike::Ordered,
                _ => return None,
            };
        } else if ENTRY_PROTOCOL
            .iter()
            .any(|n| c.attributes.contains(vm.ctx.intern_str(*n)))
        {
            return None;
        }
    }
    let heap = class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE);
    (!heap || class.version_for_specialization(vm) != 0).then_some(kind)
}

/// A class written in Python on dict (or on `defaultdict`, `OrderedDict`) whose instances
/// read as dicts ([`dict_like`]).
pub fn plain_dict_subclass(class: &Py<PyType>, vm: &VirtualMachine) -> bool {
    class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) && dict_like(class, vm).is_some()
}

/// Whether `name` of an instance of `class` (a [`dict_like`] class) is dict's own, or a
/// `defaultdict`'s (which takes dict's for all but `__missing__` and copies): no class
/// written in Python on it defines it, nor does an `OrderedDict` under it.
pub fn dict_method_is_dicts(class: &Py<PyType>, name: &str, vm: &VirtualMachine) -> bool {
    let t = &vm.ctx.types;
    let n = vm.ctx.intern_str(name);
    class.mro.read().iter().all(|c| {
        c.is(t.dict_type)
            || c.is(t.object_type)
            || !c.attributes.contains(n)
            || (is_native_collection(c, "defaultdict", vm)
                && !matches!(name, "__missing__" | "copy"))
            // Its views read it in its own order, as `lazy_dict_entries` does; its updates
            // are replayed by its own methods.
            || (is_native_collection(c, "OrderedDict", vm)
                && matches!(name, "keys" | "values" | "items" | "update" | "setdefault"))
    })
}
