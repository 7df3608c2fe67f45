//! The `symtrace` plugin: installs symtrace's hook with a backend.
//!
//! Each code object is handed to the backend once; what it produces is verified and cached in
//! the code object's hook slot, so later calls only look the answer up. Code that runs as
//! written (no replacement, a backend's failure, a verifier rejection, logged) is skipped
//! through the VM's skip flag, so the hook is not even asked again for it.

use std::path::Path;
use std::sync::Arc;

use rustpython::{Plugin, PluginOption, PluginOptions};
use rustpython_vm::builtins::PyCode;
use rustpython_vm::eval_hook::{EvalFrameHook, FrameDecision, FrameEntry, FrameView, request_code_extra_index};
use rustpython_vm::{Py, PyRef, PyResult, VirtualMachine};

use crate::backend::{BACKEND_NAMES, Backend, Passthrough, backend_named};
use crate::bytecode::{dis::side_by_side, verify};
use crate::dump::DumpDir;

const LOG_BYTECODE: &str = "symtrace::bytecode";

/// The replacement cached in a code object's hook slot.
struct Replacement(PyRef<PyCode>);

/// symtrace's eval-frame hook.
pub struct SymtraceHook {
    backend: Box<dyn Backend>,
    dump: Option<DumpDir>,
    slot: usize,
}

impl Default for SymtraceHook {
    fn default() -> Self {
        Self::new(Box::new(Passthrough), None)
    }
}

impl SymtraceHook {
    pub fn new(backend: Box<dyn Backend>, dump: Option<DumpDir>) -> Self {
        Self { backend, dump, slot: request_code_extra_index() }
    }

    /// The verified replacement of `code`, or `None`: it runs as written.
    fn decide(&self, code: &Py<PyCode>, vm: &VirtualMachine) -> Option<PyRef<PyCode>> {
        let what = || {
            format!(
                "{} ({}:{})",
                code.code.qualname.as_str(),
                code.source_path().as_str(),
                code.code.first_line_number.map_or(0, |l| l.get())
            )
        };
        let candidate = match self.backend.rewrite(code, vm) {
            Ok(Some(candidate)) => candidate,
            Ok(None) => return None,
            Err(e) => {
                log::warn!(target: LOG_BYTECODE, "{}: {e}; it runs as written", what());
                return None;
            }
        };
        // The one gate for every backend: nothing unverified reaches the VM.
        if let Err(e) = verify(&candidate) {
            log::warn!(target: LOG_BYTECODE, "{}: rejected by the verifier: {e}; it runs as written", what());
            return None;
        }
        if log::log_enabled!(target: LOG_BYTECODE, log::Level::Debug) {
            log::debug!(target: LOG_BYTECODE, "{} backend={}\n{}", what(), self.backend.name(), side_by_side(code, &candidate));
        }
        if let Some(dump) = &self.dump
            && let Err(e) = dump.write(code, &candidate)
        {
            log::warn!(target: LOG_BYTECODE, "{}: cannot write the dump: {e}", what());
        }
        Some(candidate)
    }
}

impl EvalFrameHook for SymtraceHook {
    fn on_frame(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> PyResult<FrameDecision> {
        if frame.entry() != FrameEntry::Call {
            return Ok(FrameDecision::run_default());
        }
        let code = frame.code();
        if let Some(cached) = code.hook_extra(self.slot)
            && let Some(Replacement(new_code)) = cached.downcast_ref::<Replacement>()
        {
            return Ok(FrameDecision::replace(new_code.clone()));
        }
        Ok(match self.decide(code, vm) {
            Some(new_code) => {
                code.set_hook_extra(self.slot, Some(Arc::new(Replacement(new_code.clone()))));
                FrameDecision::replace(new_code)
            }
            None => FrameDecision::skip_code(),
        })
    }
}

/// `--plugin symtrace`.
pub struct SymtracePlugin;

const OPTIONS: &[PluginOption] = &[
    PluginOption { key: "backend", help: "what replaces each frame's code: none (default; run as written) or roundtrip (decode, re-assemble, verify)" },
    PluginOption { key: "dump", help: "write each code object and its replacement, side by side, into this directory" },
];

impl Plugin for SymtracePlugin {
    fn name(&self) -> &'static str {
        "symtrace"
    }
    fn summary(&self) -> &'static str {
        "the symbolic opcode translator (so far: backends none and roundtrip)"
    }
    fn options(&self) -> &'static [PluginOption] {
        OPTIONS
    }
    fn validate(&self, options: &PluginOptions) -> Result<(), String> {
        if let Some(name) = options.get("backend")
            && backend_named(name).is_none()
        {
            return Err(format!("unknown backend {name:?} (known: {BACKEND_NAMES})"));
        }
        if options.get("dump") == Some("") {
            return Err("option dump needs a directory".to_owned());
        }
        Ok(())
    }
    fn install(&self, vm: &VirtualMachine, options: &PluginOptions) -> PyResult<()> {
        let backend = backend_named(options.get("backend").unwrap_or("none")).expect("validated");
        let dump = match options.get("dump") {
            Some(dir) => Some(DumpDir::create(Path::new(dir)).map_err(|e| {
                vm.new_os_error(format!("symtrace plugin: cannot create the dump directory {dir}: {e}"))
            })?),
            None => None,
        };
        crate::activate(vm, Arc::new(SymtraceHook::new(backend, dump)));
        Ok(())
    }
}
