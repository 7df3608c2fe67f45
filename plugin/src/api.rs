//! What the `symtrace` Python module offers about tracing: run a function traced
//! (`compile`), untraced (`disable`), drop every translation (`reset`), see what a call
//! captures (`explain`), count (`stats`). Without `--plugin symtrace`, the first traced call
//! installs a translating hook on the interpreter, active only while traced functions run.

use std::sync::{Arc, Mutex};

use rustpython_vm::builtins::PyCode;
use rustpython_vm::eval_hook::{EvalFrameHook, EvalHookMode};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

use crate::symtrace_plugin::SymtraceHook;
use crate::translate::translator::{self, ExplainLog};
use crate::translate::{Options, Translator};

/// The hooks `compile` made for interpreters that run without the plugin, by VM address.
static OWN_HOOKS: Mutex<Vec<(usize, Arc<SymtraceHook>)>> = Mutex::new(Vec::new());

fn own_hook(vm: &VirtualMachine) -> Arc<SymtraceHook> {
    let key = vm as *const VirtualMachine as usize;
    let mut hooks = OWN_HOOKS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, h)) = hooks.iter().find(|(k, _)| *k == key) {
        return h.clone();
    }
    let h = SymtraceHook::translating(Options::default(), vm);
    hooks.push((key, h.clone()));
    h
}

/// The translator that traced calls use on `vm`.
pub fn translator(vm: &VirtualMachine) -> Arc<Translator> {
    let hook = SymtraceHook::installed(vm).unwrap_or_else(|| own_hook(vm));
    hook.translator().expect("a translating hook").clone()
}

/// Restores the hook and the thread's mode when a traced call ends.
struct Traced<'vm> {
    vm: &'vm VirtualMachine,
    previous_hook: Option<Option<Arc<dyn EvalFrameHook>>>,
    previous_mode: EvalHookMode,
    fullgraph: bool,
}

impl Drop for Traced<'_> {
    fn drop(&mut self) {
        self.vm.set_eval_hook_mode(self.previous_mode);
        if let Some(h) = self.previous_hook.take() {
            self.vm.set_eval_frame_hook(h);
        }
        if self.fullgraph {
            translator::pop_fullgraph();
        }
    }
}

/// Call `func` with tracing on (`fullgraph`: its own frame must translate whole).
pub fn call_traced(
    func: &PyObjectRef,
    args: FuncArgs,
    fullgraph: bool,
    vm: &VirtualMachine,
) -> PyResult {
    let previous_hook = if SymtraceHook::installed(vm).is_some() {
        None
    } else {
        let previous = vm.eval_frame_hook();
        let hook: Arc<dyn EvalFrameHook> = own_hook(vm);
        vm.set_eval_frame_hook(Some(hook));
        Some(previous)
    };
    if fullgraph {
        let code = func
            .get_attr("__code__", vm)?
            .downcast::<PyCode>()
            .map_err(|_| {
                vm.new_type_error("compile(fullgraph=True) takes a Python function".to_owned())
            })?;
        translator::push_fullgraph(&code);
    }
    let _restore = Traced {
        vm,
        previous_hook,
        previous_mode: vm.set_eval_hook_mode(EvalHookMode::Active),
        fullgraph,
    };
    func.call(args, vm)
}

/// Call `func` with tracing off.
pub fn call_untraced(func: &PyObjectRef, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    let previous = vm.set_eval_hook_mode(EvalHookMode::Disabled);
    let r = func.call(args, vm);
    vm.set_eval_hook_mode(previous);
    r
}

/// Run `func(*args)` traced from a clean cache and report what was captured.
pub fn explain(func: &PyObjectRef, args: FuncArgs, vm: &VirtualMachine) -> PyResult<ExplainLog> {
    translator(vm).reset();
    translator::explain_begin();
    let r = call_traced(func, args, false, vm);
    let log = translator::explain_end();
    r.map(|_| log)
}

/// The readable form of an explanation, after TorchDynamo's `ExplainOutput.__str__`.
pub fn explain_text(log: &ExplainLog) -> String {
    let mut s = format!(
        "Graph Count: {}\nGraph Break Count: {}\nOp Count: {}\n",
        log.graphs.len(),
        log.breaks.len(),
        log.graphs.iter().map(|g| g.ops.len()).sum::<usize>()
    );
    s.push_str("Break Reasons:\n");
    for (i, b) in log.breaks.iter().enumerate() {
        s.push_str(&format!(
            "  Break Reason {}:\n    Reason: [{}] {}\n    User Stack: {} in {}\n    Hint: {}\n",
            i + 1,
            b.id,
            b.reason,
            b.location,
            b.function,
            b.hint
        ));
    }
    s.push_str("Ops per Graph:\n");
    for (i, g) in log.graphs.iter().enumerate() {
        s.push_str(&format!("  Ops {} ({}):\n", i + 1, g.function));
        for op in &g.ops {
            s.push_str(&format!("    {op}\n"));
        }
    }
    s.push_str("Out Guards:\n");
    for g in &log.graphs {
        for guard in &g.guards {
            s.push_str(&format!("  {guard}\n"));
        }
    }
    s
}
