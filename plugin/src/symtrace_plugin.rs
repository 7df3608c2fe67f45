//! The `symtrace` plugin: installs symtrace's hook.
//!
//! The translator is not built yet, so the hook runs every frame as is; it is installed all
//! the same, so that everything a user runs with `--plugin symtrace` already goes through the
//! hooked entry paths of the VM.

use std::sync::Arc;

use rustpython::{Plugin, PluginOptions};
use rustpython_vm::eval_hook::{EvalFrameHook, FrameDecision, FrameView};
use rustpython_vm::{PyResult, VirtualMachine};

/// symtrace's eval-frame hook.
#[derive(Default)]
pub struct SymtraceHook;

impl EvalFrameHook for SymtraceHook {
    fn on_frame(&self, _frame: &FrameView<'_>, _vm: &VirtualMachine) -> PyResult<FrameDecision> {
        Ok(FrameDecision::run_default())
    }
}

/// `--plugin symtrace`.
pub struct SymtracePlugin;

impl Plugin for SymtracePlugin {
    fn name(&self) -> &'static str {
        "symtrace"
    }
    fn summary(&self) -> &'static str {
        "the symbolic opcode translator (for now: every frame runs as is)"
    }
    fn install(&self, vm: &VirtualMachine, _options: &PluginOptions) -> PyResult<()> {
        crate::activate(vm, Arc::new(SymtraceHook));
        Ok(())
    }
}
