//! `symtrace.no_grad`, `enable_grad`, `inference_mode`, `set_grad_enabled` and
//! `is_grad_enabled`: Python source (`grad_mode.py`)
//! built into the binary, run when one of them is first read (the module's `__getattr__`,
//! PEP 562, or a traced frame's read: `translate::lazy_modules`), so that importing
//! `symtrace` does not pay for compiling it.

use rustpython_vm::builtins::{PyModule, PyStrRef};
use rustpython_vm::{Py, PyResult, VirtualMachine};

const SOURCE: &str = include_str!("grad_mode.py");
const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/grad_mode.py");
const NAMES: [&str; 6] = [
    "no_grad",
    "enable_grad",
    "inference_mode",
    "set_grad_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
];

/// Give `symtrace` a `__getattr__` that makes the grad modes when one is first read.
pub(crate) fn install(symtrace: &Py<PyModule>, vm: &VirtualMachine) -> PyResult<()> {
    let getattr = vm.new_function("__getattr__", |name: PyStrRef, vm: &VirtualMachine| {
        let text = name.to_string_lossy().into_owned();
        if NAMES.contains(&text.as_str()) {
            load(vm)?;
            let symtrace = vm
                .sys_module
                .get_attr("modules", vm)?
                .get_item("symtrace", vm)?;
            return symtrace.get_attr(&name, vm);
        }
        Err(vm.new_attribute_error(format!("module 'symtrace' has no attribute '{text}'")))
    });
    symtrace
        .dict()
        .set_item("__getattr__", getattr.into(), vm)?;
    crate::translate::lazy_modules::register("symtrace", load);
    Ok(())
}

/// Run the source (once: the `__getattr__` goes first) and put its names on `symtrace`.
fn load(vm: &VirtualMachine) -> PyResult<()> {
    let symtrace = vm
        .sys_module
        .get_attr("modules", vm)?
        .get_item("symtrace", vm)?;
    let Some(dict) = symtrace.dict() else {
        return Err(vm.new_runtime_error("symtrace has no __dict__"));
    };
    if dict.get_item_opt("__getattr__", vm)?.is_none() {
        return Ok(());
    }
    dict.del_item("__getattr__", vm)?;
    let namespace = super::run_builtin_source(SOURCE, PATH, &[], vm)?;
    for name in NAMES {
        dict.set_item(name, namespace.get_item(name, vm)?, vm)?;
    }
    Ok(())
}
