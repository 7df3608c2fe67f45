//! Embedding example: a Rust application builds an interpreter, installs an eval-frame hook of
//! its own, runs Python code, and prints what the hook saw.
//!
//!     cargo run --release --example embed
//!
//! The hook here counts frames per function and swaps one function's code for another's, by
//! name, which is the whole of what the VM offers a plugin: see, run as is, skip, or replace.
//! The application also adds the `symtrace` tensor module and registers a tensor op of its own
//! (`swish`), which Python then calls through `symtrace.call_op`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rustpython::InterpreterBuilderExt;
use rustpython_vm::builtins::PyCode;
use rustpython_vm::eval_hook::{EvalFrameHook, EvalHookMode, FrameDecision, FrameView};
use rustpython_vm::{PyRef, PyResult, VirtualMachine};

#[derive(Default)]
struct Watcher {
    calls: Mutex<BTreeMap<String, usize>>,
    /// When set, frames of `slow_square` run this code instead.
    fast_square: Mutex<Option<PyRef<PyCode>>>,
}

impl EvalFrameHook for Watcher {
    fn on_frame(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> PyResult<FrameDecision> {
        let name = frame.code().qualname.as_str().to_owned();
        if name == "slow_square" && self.calls.lock().unwrap().get(&name).is_none() {
            let x = frame
                .get("x")
                .map(|v| v.repr(vm).map(|r| r.to_string_lossy().into_owned()));
            println!(
                "  first call of slow_square sees x = {}",
                x.transpose()?.unwrap_or_default()
            );
        }
        *self.calls.lock().unwrap().entry(name.clone()).or_default() += 1;
        if name == "slow_square"
            && let Some(code) = self.fast_square.lock().unwrap().clone()
        {
            return Ok(FrameDecision::replace(code));
        }
        Ok(FrameDecision::run_default())
    }
}

/// `swish(x) = x * sigmoid(x)`, described once: shape and dtype inference, and the kernel
/// (built from symtrace's own ops).
fn register_swish() {
    use symtrace::tensor::{Arity, Attrs, Meta, OpDef, TensorData, registry};
    let op = OpDef::new(
        "swish",
        Arity::Exactly(1),
        |inputs: &[Meta], _: &Attrs| {
            Ok(Meta {
                shape: inputs[0].shape.clone(),
                dtype: inputs[0].dtype.to_float(),
            })
        },
        |inputs: &[&TensorData], _: &Attrs| {
            let s = registry().call("sigmoid", &[inputs[0]], &Attrs::new())?;
            registry().call("mul", &[inputs[0], &s], &Attrs::new())
        },
    );
    registry().register(op).expect("swish is registered once");
}

const PROGRAM: &str = r#"
def slow_square(x):
    total = 0
    for _ in range(x):
        total += x
    return total

def fast_square(x):
    return x * x

def work():
    return [slow_square(i) for i in range(5)]
"#;

fn main() {
    register_swish();
    let interp = symtrace::with_python_module(rustpython::InterpreterBuilder::new().init_stdlib())
        .interpreter();
    let exit = interp.enter(|vm| -> PyResult<()> {
        let scope = vm.new_scope_with_builtins();
        vm.run_string(
            scope.clone(),
            "import symtrace as st\nr = st.call_op('swish', st.tensor([-1.0, 0.0, 2.0]))\n",
            "<ops>",
        )?;
        let r = scope.globals.get_item("r", vm)?;
        println!(
            "the application's own op, from Python: swish([-1, 0, 2]) = {}",
            r.repr(vm)?.to_string_lossy()
        );
        vm.run_string(scope.clone(), PROGRAM, "embedded.py")?;

        let watcher = Arc::new(Watcher::default());
        vm.set_eval_frame_hook(Some(watcher.clone()));
        vm.set_eval_hook_mode(EvalHookMode::Active);

        println!("run 1, every frame runs as is:");
        let first = vm
            .run_string(scope.clone(), "result = work()", "<driver>")
            .and_then(|_| scope.globals.get_item("result", vm))?;
        println!("  work() = {}", first.repr(vm)?.to_string_lossy());

        let fast = scope
            .globals
            .get_item("fast_square", vm)?
            .get_attr("__code__", vm)?;
        *watcher.fast_square.lock().unwrap() = Some(fast.downcast().expect("a code object"));
        println!("run 2, slow_square's frames run fast_square's code:");
        let second = vm
            .run_string(scope.clone(), "result = work()", "<driver>")
            .and_then(|_| scope.globals.get_item("result", vm))?;
        println!("  work() = {}", second.repr(vm)?.to_string_lossy());
        vm.set_eval_hook_mode(EvalHookMode::Disabled);

        println!("frames the hook saw, per function:");
        for (name, n) in watcher.calls.lock().unwrap().iter() {
            println!("  {n:>3}  {name}");
        }
        Ok(())
    });
    if let Err(e) = exit {
        interp.enter(|vm| vm.print_exception(&e));
        std::process::exit(1);
    }
}
