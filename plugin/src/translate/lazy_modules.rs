//! Modules that run their source when one of their attributes is first read (a module
//! `__getattr__`, PEP 562), as `symtrace.nn` does so that importing `symtrace` does not pay
//! for it. The simulation reads a module's dictionary and never calls its `__getattr__` (it
//! may be the user's code), so a traced first call would find such a module's attributes
//! missing and its frame would run as written. The module's maker registers how to load it;
//! before the simulation calls an attribute missing from a module of that name, the module is
//! loaded: the library's own source runs, never the user's.

use std::sync::Mutex;

use rustpython_vm::builtins::PyStr;
use rustpython_vm::{PyObject, PyResult, VirtualMachine};

/// A loader: the modules it loads (by name, or by a name prefix ending in `.`), and how.
type Loader = (&'static str, fn(&VirtualMachine) -> PyResult<()>);

static LOADERS: Mutex<Vec<Loader>> = Mutex::new(Vec::new());

/// Load modules named `name` (or under it, when it ends in `.`) with `load` when an attribute
/// is missing from one of them; `load` must run only the modules' own source and be a no-op
/// once they have loaded.
pub fn register(name: &'static str, load: fn(&VirtualMachine) -> PyResult<()>) {
    let mut loaders = LOADERS.lock().unwrap_or_else(|p| p.into_inner());
    if !loaders.iter().any(|(n, _)| *n == name) {
        loaders.push((name, load));
    }
}

/// Whether `module` (a module whose dictionary lacks an attribute) was loaded now: it has a
/// `__getattr__` and a registered loader, which ran without an error.
pub fn load(module: &PyObject, vm: &VirtualMachine) -> bool {
    let Some(dict) = module.dict() else {
        return false;
    };
    if !matches!(dict.get_item_opt("__getattr__", vm), Ok(Some(_))) {
        return false;
    }
    let Ok(Some(name)) = dict.get_item_opt("__name__", vm) else {
        return false;
    };
    let Some(name) = name.downcast_ref::<PyStr>().and_then(|s| s.to_str()) else {
        return false;
    };
    let load = LOADERS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .find(|(n, _)| *n == name || (n.ends_with('.') && name.starts_with(n)))
        .map(|(_, load)| *load);
    load.is_some_and(|load| load(vm).is_ok())
}
