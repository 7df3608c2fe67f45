//! symtrace: a symbolic opcode translator for RustPython, built on the fork's eval-frame hook.
//!
//! For now the crate ships two plugins for `rustpython --plugin NAME`:
//! * [`SymtracePlugin`] (`symtrace`): installs the hook with the translator (`translate`), which
//!   captures tensor work into guarded, cached graphs and runs the rest as written;
//! * [`FramesPlugin`] (`frames`): records every frame entry, the oracle of the hook's tests.

pub mod bytecode;
pub mod graph;
pub mod hook;
pub(crate) mod log_targets;
pub(crate) mod python;
pub mod tensor;
pub mod translate;

pub use hook::dump::DumpDir;
pub use hook::frames::{FrameRecorder, FramesPlugin};
pub use hook::{SymtraceHook, SymtracePlugin};

use rustpython::PluginRegistry;

/// Every plugin this crate provides, ready for [`rustpython::run_with_plugins`].
pub fn registry() -> PluginRegistry {
    PluginRegistry::new()
        .with(SymtracePlugin)
        .with(FramesPlugin)
}

/// Add the `symtrace` Python module (tensors, dtypes, ops) to an interpreter being built; the
/// `rustpython` binary does it always, with or without `--plugin`.
pub fn with_python_module(
    builder: rustpython_vm::vm::InterpreterBuilder,
) -> rustpython_vm::vm::InterpreterBuilder {
    let def = python::module_def(&builder.ctx);
    builder.add_native_module(def)
}

/// Install `hook` on the interpreter and make it active on this thread and on threads started
/// from now on.
pub fn activate(
    vm: &rustpython_vm::VirtualMachine,
    hook: std::sync::Arc<dyn rustpython_vm::eval_hook::EvalFrameHook>,
) {
    use rustpython_vm::eval_hook::EvalHookMode;
    vm.set_eval_frame_hook(Some(hook));
    vm.set_eval_hook_thread_default(EvalHookMode::Active);
    vm.set_eval_hook_mode(EvalHookMode::Active);
}
