//! `symtrace.disable(fn, recursive=False)`, torch's `torch._dynamo.disable(fn,
//! recursive=False)`: the frames of `fn` run as written, what it calls is traced as usual
//! (a checker, a logging helper, a function whose own bytecode should not be touched). Its
//! code object is skipped by the hook (every function made from that code is); a traced
//! caller does not inline it, it breaks at the call, where the hook then skips the frame.

use std::sync::Mutex;

use rustpython_vm::builtins::PyCode;
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyRef, PyResult, VirtualMachine};

/// The mark `disable(fn, recursive=False)` leaves in the function's `__dict__`.
const MARK: &str = "__symtrace_disable_frames__";

/// Skip the frames of the Python function `func` for good.
pub fn disable_frames_of(func: &PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
    let code = func
        .get_attr("__code__", vm)
        .ok()
        .and_then(|c| c.downcast::<PyCode>().ok())
        .ok_or_else(|| {
            vm.new_type_error("symtrace.disable(recursive=False) takes a Python function")
        })?;
    code.set_eval_hook_skipped(true);
    let mut codes = DISABLED.lock().unwrap_or_else(|e| e.into_inner());
    if !codes.iter().any(|c| c.is(&code)) {
        codes.push(code);
    }
    drop(codes);
    func.set_attr(MARK, vm.ctx.new_bool(true), vm)
}

/// Code objects of functions given to `disable(..., recursive=False)`: `symtrace.reset()`
/// keeps them skipped (it lets the hook see again every other code it skipped).
static DISABLED: Mutex<Vec<PyRef<PyCode>>> = Mutex::new(Vec::new());

/// Whether `code` is the code of a function given to `disable(..., recursive=False)`.
pub fn frames_of_code_disabled(code: &rustpython_vm::Py<PyCode>) -> bool {
    let codes = DISABLED.lock().unwrap_or_else(|e| e.into_inner());
    codes.iter().any(|c| c.as_object().is(code.as_object()))
}

/// Whether `func` was given to `disable(..., recursive=False)`.
pub fn frames_disabled(func: &PyObject, vm: &VirtualMachine) -> bool {
    func.dict()
        .and_then(|d| d.get_item_opt(MARK, vm).ok().flatten())
        .is_some()
}
