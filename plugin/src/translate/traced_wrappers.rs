//! Objects that wrap a function to run it traced (`symtrace.compile(fn)`, the module that
//! `symtrace.compile(module)` calls): called while a traced call is simulated, the simulation
//! inlines the function they wrap, as TorchDynamo inlines an already-compiled function met
//! inside a traced one, where it would otherwise break the caller's graph around a call it
//! cannot see into. The layer that makes the wrappers registers how to unwrap them.

use std::sync::Mutex;

use rustpython_vm::{PyObject, PyObjectRef};

/// The function an object wraps, or `None` when the object is not such a wrapper.
type Unwrap = fn(&PyObject) -> Option<PyObjectRef>;

/// The unwrappers, by the name of the wrapper's class (each interpreter registers them again).
static UNWRAPS: Mutex<Vec<(&'static str, Unwrap)>> = Mutex::new(Vec::new());

/// Let the simulation see through the wrappers of class `name` that `unwrap` recognizes. The
/// wrapped function must be fixed for the wrapper's life: the simulation guards the
/// wrapper's identity only.
pub fn register(name: &'static str, unwrap: Unwrap) {
    let mut unwraps = UNWRAPS.lock().unwrap_or_else(|p| p.into_inner());
    if !unwraps.iter().any(|(n, _)| *n == name) {
        unwraps.push((name, unwrap));
    }
}

/// The function `o` wraps to run traced, if it is such a wrapper.
pub fn wrapped(o: &PyObject) -> Option<PyObjectRef> {
    let unwraps = UNWRAPS.lock().unwrap_or_else(|p| p.into_inner());
    unwraps.iter().find_map(|(_, unwrap)| unwrap(o))
}
