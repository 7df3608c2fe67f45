//! Reads of objects that run no Python code, shared by the simulation's sources, the guard
//! programs and the graph's input gathering: a closure's cell, the frame's builtins, an item
//! of a tuple, list or deque, a dict-like's storage, an attribute a native getter reads.

use rustpython_vm::builtins::{PyDict, PyDictRef, PyFunction, PyList, PyStr, PyTuple};
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::{AsObject, Py, PyObject, PyObjectRef, VirtualMachine};

use crate::translate::key_const::KeyConst;

/// `f.__closure__[index]`, of a Python function `f`.
pub fn closure_cell(f: &PyObject, index: usize, vm: &VirtualMachine) -> Option<PyObjectRef> {
    f.downcast_ref::<PyFunction>()?;
    let closure = f.get_attr("__closure__", vm).ok()?;
    Some(
        closure
            .downcast_ref::<PyTuple>()?
            .as_slice()
            .get(index)?
            .clone(),
    )
}

/// The frame's builtins as a dictionary (a module's, when builtins is the module).
pub fn builtins_dict(frame: &FrameView<'_>) -> Option<PyDictRef> {
    let b = frame.builtins();
    match b.downcast_ref::<PyDict>() {
        Some(_) => b.to_owned().downcast::<PyDict>().ok(),
        None => b.dict(),
    }
}

/// Element `index` of a tuple, a list or a `collections.deque` (by its native indexing).
pub fn item(obj: &PyObject, index: usize, vm: &VirtualMachine) -> Option<PyObjectRef> {
    if let Some(t) = obj.downcast_ref::<PyTuple>() {
        return t.as_slice().get(index).cloned();
    }
    if let Some(l) = obj.downcast_ref::<PyList>() {
        return l.borrow_vec().get(index).cloned();
    }
    crate::translate::values::deques::is_native_deque(obj)
        .then(|| obj.get_item(&index, vm).ok())
        .flatten()
}

/// The entries of `obj`, read without running Python code: a dict's, or those of an
/// instance of a class that reads as one (`dict_like`: `defaultdict`, `OrderedDict`, a class
/// written in Python on them that overrides none of the ways entries are read). Keys are
/// read this way only under a source that the simulation read as a dict, whose type (and
/// version) the guards check before these reads; a missing key is not made here
/// (`__missing__`), the guard or the read fails.
pub fn dict_storage<'a>(obj: &'a PyObject, vm: &VirtualMachine) -> Option<&'a Py<PyDict>> {
    crate::translate::values::dict_subclasses::dict_like(obj.class(), vm)
        .and_then(|_| obj.downcast_ref::<PyDict>())
}

/// Whether `key` is hashed by its identity and found by it in a dict: its class keeps
/// `object`'s `__hash__` (a tensor, a module, a plain instance), so that two keys with one
/// hash are one object and the dict never calls their `__eq__`. A class written in Python is
/// guarded by its version where its type is.
pub fn identity_key(key: &PyObject, ctx: &rustpython_vm::Context) -> Option<()> {
    let hash = ctx.intern_str("__hash__");
    match (
        key.class().get_attr(hash),
        ctx.types.object_type.get_attr(hash),
    ) {
        (Some(a), Some(b)) if a.is(&b) => Some(()),
        _ => None,
    }
}

/// Whether `o.name` is read by a native getter and nothing else can run: a function's names,
/// or a slot's member descriptor on a class that neither overrides attribute lookup nor has a
/// `__getattr__` (called when the slot is empty), or the parts of an exact bound method or
/// `functools.partial` (read-only native getters).
pub fn native_getter(o: &PyObject, name: &str, vm: &VirtualMachine) -> Option<()> {
    // What a wrapper that runs a function traced wraps (`traced_wrappers`): fixed.
    if name == "__wrapped__" && crate::translate::traced_wrappers::wrapped(o).is_some() {
        return Some(());
    }
    if o.downcast_ref::<PyFunction>().is_some() {
        return matches!(
            name,
            "__name__"
                | "__qualname__"
                | "__module__"
                | "__doc__"
                | "__defaults__"
                | "__kwdefaults__"
                | "__code__"
                | "__globals__"
        )
        .then_some(());
    }
    let class = o.class();
    // A native deque's bound, fixed when it is made.
    if name == "maxlen" && crate::translate::values::deques::is_native_deque(o) {
        return Some(());
    }
    if class.is(vm.ctx.types.bound_method_type) {
        return matches!(name, "__func__" | "__self__").then_some(());
    }
    if matches!(name, "func" | "args" | "keywords") && &*class.name() == "partial" {
        let partial = crate::translate::loaded_modules::loaded_attr("functools", "partial", vm);
        return partial.is_some_and(|p| class.is(&p)).then_some(());
    }
    let t = &vm.ctx.types;
    let plain_lookup = match (
        class.get_attr(vm.ctx.intern_str("__getattribute__")),
        t.object_type
            .get_attr(vm.ctx.intern_str("__getattribute__")),
    ) {
        (Some(a), Some(b)) => a.is(&b),
        _ => false,
    };
    let member = class.get_attr(vm.ctx.intern_str(name)).is_some_and(|d| {
        d.downcast_ref::<rustpython_vm::builtins::PyMemberDescriptor>()
            .is_some()
    });
    (plain_lookup && member && class.get_attr(vm.ctx.intern_str("__getattr__")).is_none())
        .then_some(())
}

/// Whether `key` is a member of an `Enum` class that hashes as `Enum` does (its name's hash,
/// `Enum.__hash__`, a function written in Python) and compares by identity (`object`'s
/// `__eq__`: no mixin such as `IntEnum`'s int, no `__eq__` of its own). A dict whose keys are
/// all such members finds one as the key that is it, so that a read needs no hashing
/// (which would run Python code): the caller guards the dict's keys to be those members.
pub fn member_key(key: &PyObjectRef, vm: &VirtualMachine) -> bool {
    if !crate::translate::values::identity::is_enum_member(key) {
        return false;
    }
    let class = key.class();
    let (hash, eq) = (vm.ctx.intern_str("__hash__"), vm.ctx.intern_str("__eq__"));
    let enum_base = class
        .mro
        .read()
        .iter()
        .find(|c| {
            &*c.name() == "Enum"
                && c.get_direct_attr(vm.ctx.intern_str("__module__"))
                    .is_some_and(|m| {
                        m.downcast_ref::<PyStr>().and_then(|s| s.to_str()) == Some("enum")
                    })
        })
        .cloned();
    let same = |a: Option<PyObjectRef>, b: Option<PyObjectRef>| match (a, b) {
        (Some(a), Some(b)) => a.is(&b),
        _ => false,
    };
    enum_base.is_some_and(|e| same(class.get_attr(hash), e.get_direct_attr(hash)))
        && same(class.get_attr(eq), vm.ctx.types.object_type.get_attr(eq))
}

/// `d[key]` of a dict whose keys are all members of enums (`member_key`): the value of the key
/// that is `key`, found without hashing it.
pub fn member_entry(d: &Py<PyDict>, key: &PyObjectRef) -> Option<PyObjectRef> {
    d.into_iter().find(|(k, _)| k.is(key)).map(|(_, v)| v)
}

/// The int or str an enum member `o` hashes and compares as, when its class takes `__hash__`
/// and `__eq__` from `int` or `str` unchanged (and the value fits a key constant).
pub fn member_value(o: &PyObject, vm: &VirtualMachine) -> Option<KeyConst> {
    use num_traits::ToPrimitive;
    if !crate::translate::values::identity::is_enum_member(&o.to_owned()) {
        return None;
    }
    let class = o.class();
    let (hash, eq) = (vm.ctx.intern_str("__hash__"), vm.ctx.intern_str("__eq__"));
    let native = |base: &Py<rustpython_vm::builtins::PyType>| {
        [hash, eq].iter().all(|name| {
            matches!((class.get_attr(name), base.get_attr(name)), (Some(a), Some(b)) if a.is(&b))
        })
    };
    if let Some(i) = o.downcast_ref::<rustpython_vm::builtins::PyInt>() {
        return native(vm.ctx.types.int_type)
            .then(|| i.as_bigint().to_i64().map(KeyConst::Int))
            .flatten();
    }
    let s = o.downcast_ref::<PyStr>()?;
    native(vm.ctx.types.str_type)
        .then(|| s.to_str().map(|s| KeyConst::Str(s.to_owned())))
        .flatten()
}
