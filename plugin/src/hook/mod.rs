//! symtrace's eval-frame hook (the `SymtraceHook` that the VM calls for every frame), the
//! plugins that install hooks (`plugin`: `--plugin symtrace`; `frames`: the frame recorder),
//! and the code-rewriting backends of the hook's test modes (`backend`, `dump`).
//!
//! With a backend, each code object is handed to it once; what it produces is verified and
//! cached in the code object's hook slot, so later calls only look the answer up. Code that
//! runs as written (no replacement, a backend's failure, a verifier rejection, logged) is
//! skipped through the VM's skip flag, so the hook is not even asked again for it. With the
//! translator, the policy is the translator's (`translate::cache`).

use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

use rustpython_vm::builtins::PyCode;
use rustpython_vm::eval_hook::{
    EvalFrameHook, FrameDecision, FrameEntry, FrameView, request_code_extra_index,
};
use rustpython_vm::{Py, PyObject, PyRef, PyResult, VirtualMachine};

use self::backend::Backend;
use self::dump::DumpDir;
use crate::bytecode::{dis::side_by_side, verify};
use crate::translate::{Options, Translator};

pub mod backend;
pub(crate) mod dump;
pub(crate) mod frames;
pub(crate) mod plugin;

pub use plugin::SymtracePlugin;

/// The replacement cached in a code object's hook slot.
struct Replacement(PyRef<PyCode>);

/// symtrace's eval-frame hook.
pub struct SymtraceHook {
    mode: Mode,
    /// The hook's slot in code objects: the translator's cache, or a backend's replacement.
    slot: usize,
}

/// What the hook does with a frame.
enum Mode {
    /// The product: the translator decides (`translate::cache`).
    Translate(Arc<Translator>),
    /// A code-rewriting backend of the hook's test modes (`none`, `roundtrip`): each code
    /// object is rebuilt once, verified and cached; the dump, when asked for, shows each.
    Rewrite {
        backend: Box<dyn Backend>,
        dump: Option<DumpDir>,
    },
}

/// The hooks made so far, to find the translator behind the hook a VM has installed.
static HOOKS: Mutex<Vec<(usize, Weak<SymtraceHook>)>> = Mutex::new(Vec::new());

fn hook_address(hook: &Arc<dyn EvalFrameHook>) -> usize {
    Arc::as_ptr(hook) as *const () as usize
}

impl SymtraceHook {
    /// A hook that rewrites every frame's code with `backend`.
    pub fn new(backend: Box<dyn Backend>, dump: Option<DumpDir>) -> Self {
        Self {
            mode: Mode::Rewrite { backend, dump },
            slot: request_code_extra_index(),
        }
    }

    /// A hook that translates frames (the product's mode).
    pub fn translating(options: Options, vm: &VirtualMachine) -> Arc<Self> {
        let slot = request_code_extra_index();
        let stdlib = stdlib_dir(vm);
        let hook = Arc::new(Self {
            mode: Mode::Translate(Arc::new(Translator::new(options, slot, stdlib))),
            slot,
        });
        let dyn_hook: Arc<dyn EvalFrameHook> = hook.clone();
        let mut hooks = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
        hooks.retain(|(_, w)| w.strong_count() > 0);
        hooks.push((hook_address(&dyn_hook), Arc::downgrade(&hook)));
        hook
    }

    pub fn translator(&self) -> Option<&Arc<Translator>> {
        match &self.mode {
            Mode::Translate(t) => Some(t),
            Mode::Rewrite { .. } => None,
        }
    }

    /// The translating symtrace hook `vm` has installed, if any.
    pub fn installed(vm: &VirtualMachine) -> Option<Arc<SymtraceHook>> {
        let hook = vm.eval_frame_hook()?;
        let address = hook_address(&hook);
        let hooks = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
        hooks
            .iter()
            .find(|(a, _)| *a == address)
            .and_then(|(_, w)| w.upgrade())
    }

    /// The verified replacement of `code` that `backend` makes, or `None`: it runs as written.
    fn rewrite(
        backend: &dyn Backend,
        dump: Option<&DumpDir>,
        code: &Py<PyCode>,
        vm: &VirtualMachine,
    ) -> Option<PyRef<PyCode>> {
        let what = || {
            format!(
                "{} ({}:{})",
                code.code.qualname.as_str(),
                code.source_path().as_str(),
                code.code.first_line_number.map_or(0, |l| l.get())
            )
        };
        let candidate = match backend.rewrite(code, vm) {
            Ok(Some(candidate)) => candidate,
            Ok(None) => return None,
            Err(e) => {
                log::warn!(target: crate::log_targets::BYTECODE, "{}: {e}; it runs as written", what());
                return None;
            }
        };
        // The one gate for every backend: nothing unverified reaches the VM.
        if let Err(e) = verify(&candidate) {
            log::warn!(target: crate::log_targets::BYTECODE, "{}: rejected by the verifier: {e}; it runs as written", what());
            return None;
        }
        if log::log_enabled!(target: crate::log_targets::BYTECODE, log::Level::Debug) {
            log::debug!(target: crate::log_targets::BYTECODE, "{} backend={}\n{}", what(), backend.name(), side_by_side(code, &candidate));
        }
        if let Some(dump) = dump
            && let Err(e) = dump.write(code, &candidate)
        {
            log::warn!(target: crate::log_targets::BYTECODE, "{}: cannot write the dump: {e}", what());
        }
        Some(candidate)
    }
}

impl EvalFrameHook for SymtraceHook {
    /// The translator says when a generator function runs as written.
    fn wants_generator_events(&self) -> bool {
        matches!(self.mode, Mode::Translate(_))
    }

    /// A replacement whose graph raised at run time returns this, having done nothing else
    /// (`CompiledGraph::run`): the frame then runs as written.
    fn runs_as_written(&self, result: &PyObject, _vm: &VirtualMachine) -> bool {
        matches!(self.mode, Mode::Translate(_))
            && crate::translate::CompiledGraph::is_as_written(result)
    }

    fn on_frame(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> PyResult<FrameDecision> {
        let (backend, dump) = match &self.mode {
            Mode::Translate(t) if frame.entry() == FrameEntry::Call => {
                return t.on_frame(frame, vm);
            }
            Mode::Translate(t) => {
                t.generator_started(frame, vm);
                return Ok(FrameDecision::run_default());
            }
            Mode::Rewrite { .. } if frame.entry() != FrameEntry::Call => {
                return Ok(FrameDecision::run_default());
            }
            Mode::Rewrite { backend, dump } => (backend, dump),
        };
        let code = frame.code();
        if let Some(cached) = code.hook_extra(self.slot)
            && let Some(Replacement(new_code)) = cached.downcast_ref::<Replacement>()
        {
            return Ok(FrameDecision::replace(new_code.clone()));
        }
        Ok(
            match Self::rewrite(backend.as_ref(), dump.as_ref(), code, vm) {
                Some(new_code) => {
                    code.set_hook_extra(self.slot, Some(Arc::new(Replacement(new_code.clone()))));
                    FrameDecision::replace(new_code)
                }
                None => FrameDecision::skip_code(),
            },
        )
    }
}

/// The directory of the standard library the interpreter runs (that of `os`).
fn stdlib_dir(vm: &VirtualMachine) -> Option<String> {
    let os = vm.import("os", 0).ok()?;
    let file = os.get_attr("__file__", vm).ok()?;
    let file = file
        .downcast_ref::<rustpython_vm::builtins::PyStr>()?
        .to_string_lossy()
        .into_owned();
    Path::new(&file)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
}
