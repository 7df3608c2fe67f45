//! `symtrace.nn` and `symtrace.nn.functional`: Python source (`modules.py`, `functional.py`)
//! built into the binary, run and registered in `sys.modules` when `symtrace` is imported. They are Python on purpose: a traced call simulates them like the user's own
//! code, so a model's whole forward pass, modules included, becomes one graph.

use rustpython_vm::builtins::PyModule;
use rustpython_vm::compiler::Mode;
use rustpython_vm::scope::Scope;
use rustpython_vm::{AsObject, Py, PyRef, PyResult, VirtualMachine};

/// (module name, source, the path tracebacks name: where the source lives in this repository)
const SUBMODULES: [(&str, &str, &str); 2] = [
    (
        "symtrace.nn.functional",
        include_str!("functional.py"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/nn/functional.py"),
    ),
    (
        "symtrace.nn",
        include_str!("modules.py"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/nn/modules.py"),
    ),
];

/// Make `symtrace.nn` (with `functional`), run their source and attach it to `symtrace`.
/// They are loaded with `symtrace` (about 2 ms) rather than on first use: a traced frame reads
/// a module's attributes from its dictionary, and a function whose first call reads
/// `F.gelu` before anything had loaded it would find it missing and run as written for good.
pub(crate) fn install(symtrace: &Py<PyModule>, vm: &VirtualMachine) -> PyResult<()> {
    let sys_modules = vm.sys_module.get_attr("modules", vm)?;
    let made: Vec<PyRef<PyModule>> = SUBMODULES
        .iter()
        .map(|(name, _, path)| {
            let module = vm.new_module(name, vm.ctx.new_dict(), None);
            module
                .dict()
                .set_item("__file__", vm.ctx.new_str(*path).into(), vm)?;
            sys_modules.set_item(*name, module.clone().into(), vm)?;
            Ok(module)
        })
        .collect::<PyResult<_>>()?;
    let (functional, nn) = (&made[0], &made[1]);
    nn.dict()
        .set_item("functional", functional.clone().into(), vm)?;
    symtrace.as_object().set_attr("nn", nn.clone(), vm)?;
    // `functional` first: `symtrace.nn` uses it throughout.
    for (module, (_, source, path)) in made.iter().zip(SUBMODULES) {
        let code = vm
            .compile(source, Mode::Exec, path)
            .map_err(|e| vm.new_runtime_error(format!("{path} does not compile: {e}")))?;
        vm.run_code_obj(code, Scope::with_builtins(None, module.dict(), vm))?;
    }
    Ok(())
}
