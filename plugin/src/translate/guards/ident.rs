//! An object a cache entry compares by identity (a class in `type(x) is C`, a function or
//! module in `G['f'] is <function>`, a class read through a constant source), held weakly
//! once the entry is made.
//!
//! Held strongly, such an object could never be collected while its code object lives: a
//! class made per call (by `exec`, in a test, in a factory function) stayed alive with all it
//! reaches, its `__del__` never ran, and the entries of a shared code object such as
//! `Module.__call__` piled up to the recompile limit, one per dead class, until calls of the
//! next class ran as written. TorchDynamo's identity guards hold weak references too, and
//! invalidate an entry when one dies.
//!
//! While a translation runs its objects are held strongly (the translation reads them);
//! `weaken` is called on the copy an entry keeps. A weakly held object compares equal only
//! while it is alive: another object allocated at its address later is not it.

use std::fmt;

use rustpython_vm::builtins::{PyType, PyWeak};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyRef, VirtualMachine};

#[derive(Clone)]
pub struct Ident {
    /// The object's address: compared without touching the object.
    addr: usize,
    hold: Hold,
}

#[derive(Clone)]
enum Hold {
    Strong(PyObjectRef),
    /// Compares equal while the weak reference is alive.
    Weak(PyRef<PyWeak>),
}

impl Ident {
    pub fn new(object: PyObjectRef) -> Self {
        Ident {
            addr: &*object as *const PyObject as usize,
            hold: Hold::Strong(object),
        }
    }

    /// Hold the object weakly from now on, unless it lives for good anyway (a built-in class)
    /// or cannot be referred to weakly (an int, a str, a tuple: none of these can lead back
    /// to a code object's entries).
    pub fn weaken(&mut self, vm: &VirtualMachine) {
        let Hold::Strong(object) = &self.hold else {
            return;
        };
        let built_in_class = object
            .downcast_ref::<PyType>()
            .is_some_and(|t| !t.slots.flags.has_feature(PyTypeFlags::HEAPTYPE));
        if built_in_class
            || !object
                .class()
                .slots
                .flags
                .has_feature(PyTypeFlags::HAS_WEAKREF)
        {
            return;
        }
        if let Ok(weak) = object.downgrade(None, vm) {
            self.hold = Hold::Weak(weak);
        }
    }

    /// Whether the object is still alive (always, when held strongly).
    #[inline]
    pub fn alive(&self) -> bool {
        match &self.hold {
            Hold::Strong(_) => true,
            Hold::Weak(w) => !w.is_dead(),
        }
    }

    /// Whether `v` is this object.
    #[inline]
    pub fn is(&self, v: &PyObject) -> bool {
        std::ptr::eq(v, self.addr as *const PyObject) && self.alive()
    }

    /// The object, if it is alive.
    pub fn get(&self) -> Option<PyObjectRef> {
        match &self.hold {
            Hold::Strong(o) => Some(o.clone()),
            Hold::Weak(w) => w.upgrade(),
        }
    }

    /// The object's address, for hashing and for telling objects apart.
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// The object, borrowed while it is alive, without taking a reference (a guard read: no
    /// Python code runs while the guards are checked, so nothing lets it go meanwhile).
    #[inline]
    pub fn as_ptr_if_alive(&self) -> *const PyObject {
        if self.alive() {
            self.addr as *const PyObject
        } else {
            std::ptr::null()
        }
    }

    /// The name of the class this is, or what is left of it once collected.
    pub fn class_name(&self) -> String {
        match self.get() {
            Some(o) => match o.downcast_ref::<PyType>() {
                Some(c) => c.name().to_string(),
                None => format!("{self:?}"),
            },
            None => format!("{self:?}"),
        }
    }

    /// Whether it is held weakly (for tests and listings).
    pub fn is_weak(&self) -> bool {
        matches!(self.hold, Hold::Weak(_))
    }
}

impl From<PyObjectRef> for Ident {
    fn from(object: PyObjectRef) -> Self {
        Ident::new(object)
    }
}

impl From<rustpython_vm::builtins::PyTypeRef> for Ident {
    fn from(class: rustpython_vm::builtins::PyTypeRef) -> Self {
        Ident::new(class.into())
    }
}

impl fmt::Debug for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.get() {
            Some(o) => write!(f, "{}", shown_object(&o)),
            None => write!(f, "<collected object at {:#x}>", self.addr),
        }
    }
}

/// How a guard's text names an object it holds: an enum member by its class and name
/// (`Mode.TRAIN`), a function, class, str or int as such, anything else by its class and
/// address.
pub fn shown_object(o: &PyObject) -> String {
    use rustpython_vm::builtins::PyStr;
    let text = |v: &PyObject| {
        v.downcast_ref::<PyStr>()
            .and_then(|s| s.to_str().map(str::to_owned))
    };
    if crate::translate::values::identity::is_enum_member(&o.to_owned())
        && let Some(name) = o.dict().and_then(|d| {
            d.into_iter()
                .find(|(k, _)| text(k).as_deref() == Some("_name_"))
                .and_then(|(_, v)| text(&v))
        })
    {
        return format!("{}.{name}", o.class().name());
    }
    let ctx = rustpython_vm::Context::genesis();
    // A function's qualified name, read by its native getter where a VM is at hand.
    if o.downcast_ref::<rustpython_vm::builtins::PyFunction>()
        .is_some()
        && rustpython_vm::vm::thread::current_vm_is_set()
        && let Some(name) = rustpython_vm::vm::thread::with_current_vm(|vm| {
            o.get_attr("__qualname__", vm).ok().and_then(|n| text(&n))
        })
    {
        return format!("<function {name}>");
    }
    if let Some(class) = o.downcast_ref::<PyType>() {
        return format!("<class {}>", class.name());
    }
    if o.class().is(ctx.types.str_type)
        && let Some(s) = text(o)
    {
        return format!("{s:?}");
    }
    if o.class().is(ctx.types.int_type)
        && let Some(i) = o.downcast_ref::<rustpython_vm::builtins::PyInt>()
    {
        return i.as_bigint().to_string();
    }
    format!("<{} object at {:#x}>", o.class().name(), o.get_id())
}
