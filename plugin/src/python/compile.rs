//! What the `symtrace` module offers about tracing: run a function traced (`compile`),
//! untraced (`disable`), drop every translation (`reset`), see what a call captures
//! (`explain`), count (`stats`). Without `--plugin symtrace`, the first traced call installs a
//! translating hook on the interpreter, active only while traced functions run.

use std::sync::{Arc, Mutex, Weak};

use rustpython_vm::builtins::PyCode;
use rustpython_vm::eval_hook::{EvalFrameHook, EvalHookMode};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::vm::PyGlobalState;
use rustpython_vm::{PyObjectRef, PyRef, PyResult, VirtualMachine};

use crate::hook::SymtraceHook;
use crate::translate::explain::{self, ExplainLog};
use crate::translate::{Options, Translator};

/// The hooks `compile` made for interpreters that run without the plugin: one per
/// interpreter (its threads share it, as they share the code objects its caches live on),
/// forgotten when the interpreter is gone.
static OWN_HOOKS: Mutex<Vec<(Weak<PyGlobalState>, Arc<SymtraceHook>)>> = Mutex::new(Vec::new());

fn own_hook(vm: &VirtualMachine) -> Arc<SymtraceHook> {
    let mut hooks = OWN_HOOKS.lock().unwrap_or_else(|e| e.into_inner());
    hooks.retain(|(interpreter, _)| interpreter.strong_count() > 0);
    let this = Arc::downgrade(&vm.state);
    if let Some((_, h)) = hooks.iter().find(|(k, _)| k.ptr_eq(&this)) {
        return h.clone();
    }
    let h = SymtraceHook::translating(Options::default(), vm);
    hooks.push((this, h.clone()));
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
            explain::pop_fullgraph();
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
        let code = entry_code(func, vm).ok_or_else(|| {
            vm.new_type_error(
                "compile(fullgraph=True) takes a Python function, a bound method, or an \
                 instance of a class whose __call__ is a Python function"
                    .to_owned(),
            )
        })?;
        explain::push_fullgraph(&code);
    }
    let _restore = Traced {
        vm,
        previous_hook,
        previous_mode: vm.set_eval_hook_mode(EvalHookMode::Active),
        fullgraph,
    };
    func.call(args, vm)
}

/// The code of the frame that a call of `func` enters first: a function's own, a bound
/// method's function's, or, for an instance (a module), its class's `__call__`. Found through
/// the types, never through the object's attributes (a `__getattr__` of the user's would run).
fn entry_code(func: &PyObjectRef, vm: &VirtualMachine) -> Option<PyRef<PyCode>> {
    use rustpython_vm::builtins::{PyBoundMethod, PyFunction};
    // The attributes read here are the native ones of functions and bound methods.
    let function = |f: &PyObjectRef| -> Option<PyRef<PyCode>> {
        f.downcast_ref::<PyFunction>()?;
        f.get_attr("__code__", vm).ok()?.downcast::<PyCode>().ok()
    };
    if let Some(code) = function(func) {
        return Some(code);
    }
    if func.downcast_ref::<PyBoundMethod>().is_some() {
        return function(&func.get_attr("__func__", vm).ok()?);
    }
    let call = func.class().get_attr(vm.ctx.intern_str("__call__"))?;
    function(&call)
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
    explain::explain_begin();
    let r = call_traced(func, args, false, vm);
    let log = explain::explain_end();
    r.map(|_| log)
}

#[rustpython_vm::pymodule(sub, name = "symtrace")]
pub(super) mod module {
    use rustpython_vm::builtins::PyBoundMethod;
    use rustpython_vm::builtins::PyStrRef;
    use rustpython_vm::function::FuncArgs;
    use rustpython_vm::types::{Callable, GetDescriptor, Representable};
    use rustpython_vm::{
        FromArgs, Py, PyObject, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, pyclass,
    };

    /// A wrapper read as an attribute of an instance binds to it, as the function it wraps
    /// would (`@symtrace.compile` on a method, as `@torch.compile` is used).
    fn bound(zelf: &PyObject, obj: Option<&PyObject>, vm: &VirtualMachine) -> PyResult {
        Ok(match obj {
            Some(obj) if !vm.is_none(obj) => PyBoundMethod::new(obj.to_owned(), zelf.to_owned())
                .into_ref(&vm.ctx)
                .into(),
            _ => zelf.to_owned(),
        })
    }

    use rustpython_vm::builtins::PyTypeRef;

    use super::super::explain::PyExplainOutput;

    #[pyattr(name = "ExplainOutput")]
    fn explain_output_class(vm: &VirtualMachine) -> PyTypeRef {
        crate::python::published::<PyExplainOutput>(vm)
    }

    #[pyattr]
    #[pyclass(module = "symtrace", name = "CompiledFunction")]
    #[derive(Debug, PyPayload)]
    pub struct PyCompiledFunction {
        func: PyObjectRef,
        fullgraph: bool,
    }

    // Weakly referable: a cache entry guards it by identity without keeping what it wraps
    // (a model, its class) alive.
    #[pyclass(with(Callable, GetDescriptor, Representable), flags(HAS_WEAKREF))]
    impl PyCompiledFunction {
        #[pygetset]
        fn __wrapped__(zelf: &Py<Self>) -> PyObjectRef {
            zelf.func.clone()
        }
        #[pygetset]
        fn __name__(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult {
            wrapped_name(&zelf.func, "__name__", vm)
        }
        #[pygetset]
        fn __qualname__(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult {
            wrapped_name(&zelf.func, "__qualname__", vm)
        }
        #[pygetset]
        fn __module__(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult {
            zelf.func.get_attr("__module__", vm)
        }
        #[pygetset]
        fn __doc__(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult {
            zelf.func.get_attr("__doc__", vm)
        }
    }

    /// The wrapped function's `__name__` or `__qualname__`, as `functools.wraps` copies them
    /// (torch's compiled functions have them); of a module, its class's `__call__`'s. The
    /// interpreter reads `__qualname__` at each call with `**kwargs` to name the callee in
    /// errors: without one, it would make the repr of the whole model.
    fn wrapped_name(func: &PyObject, name: &'static str, vm: &VirtualMachine) -> PyResult {
        use rustpython_vm::AsObject;
        use rustpython_vm::builtins::{PyFunction, PyType};
        let named = func.downcast_ref::<PyFunction>().is_some()
            || func.downcast_ref::<PyBoundMethod>().is_some()
            || func.downcast_ref::<PyType>().is_some()
            || func
                .class()
                .is(vm.ctx.types.builtin_function_or_method_type);
        if named {
            return func.get_attr(name, vm);
        }
        // An instance (a module): not read through it, where a `__getattr__` of the user's
        // would run and raise.
        let class = func.class().as_object().get_attr(name, vm)?;
        let class = class.str(vm)?;
        Ok(vm
            .ctx
            .new_str(format!("{}.__call__", class.to_string_lossy()))
            .into())
    }

    /// The function a `CompiledFunction` runs traced: what a traced call that calls one
    /// inlines (`translate::traced_wrappers`).
    pub(crate) fn compiled_function_target(o: &PyObject) -> Option<PyObjectRef> {
        o.downcast_ref::<PyCompiledFunction>()
            .map(|c| c.func.clone())
    }

    impl Callable for PyCompiledFunction {
        type Args = FuncArgs;
        fn call(zelf: &Py<Self>, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
            super::call_traced(&zelf.func, args, zelf.fullgraph, vm)
        }
    }

    impl GetDescriptor for PyCompiledFunction {
        fn descr_get(
            zelf: &PyObject,
            obj: Option<&PyObject>,
            _cls: Option<&PyObject>,
            vm: &VirtualMachine,
        ) -> PyResult {
            bound(zelf, obj, vm)
        }
    }

    impl Representable for PyCompiledFunction {
        fn repr_str(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<String> {
            Ok(format!(
                "<symtrace.compile({}, fullgraph={})>",
                zelf.func.repr(vm)?.to_string_lossy(),
                if zelf.fullgraph { "True" } else { "False" }
            ))
        }
    }

    #[pyattr]
    #[pyclass(module = "symtrace", name = "Compiler")]
    #[derive(Debug, PyPayload)]
    pub struct PyCompiler {
        fullgraph: bool,
        disable: bool,
    }

    #[pyclass(with(Callable))]
    impl PyCompiler {}

    impl Callable for PyCompiler {
        type Args = (PyObjectRef,);
        fn call(zelf: &Py<Self>, (func,): Self::Args, vm: &VirtualMachine) -> PyResult {
            if zelf.disable {
                return Ok(func);
            }
            compiled(func, zelf.fullgraph, vm)
        }
    }

    #[derive(FromArgs)]
    struct CompileArgs {
        #[pyarg(positional, default)]
        func: Option<PyObjectRef>,
        #[pyarg(named, default = false)]
        fullgraph: bool,
        /// torch's keywords, taken so that a program written for `torch.compile` runs:
        /// `dynamic` (symtrace makes a dimension dynamic once it changes, as torch's default
        /// does; `True` and `False` change only how many translations a program makes, not
        /// its results), `backend` and `mode` (names of torch's compilers: symtrace has its
        /// own), `options` (their settings).
        #[pyarg(named, default)]
        dynamic: Option<PyObjectRef>,
        #[pyarg(named, default)]
        backend: Option<PyObjectRef>,
        #[pyarg(named, default)]
        mode: Option<PyObjectRef>,
        #[pyarg(named, default)]
        options: Option<PyObjectRef>,
        /// `compile(fn, disable=True)` is `fn` itself, as torch's.
        #[pyarg(named, default = false)]
        disable: bool,
    }

    impl CompileArgs {
        fn check(&self, vm: &VirtualMachine) -> PyResult<()> {
            let given = |o: &Option<PyObjectRef>| o.as_ref().filter(|o| !vm.is_none(o)).cloned();
            if let Some(b) = given(&self.backend)
                && b.downcast_ref::<rustpython_vm::builtins::PyStr>().is_none()
            {
                return Err(vm.new_not_implemented_error(
                    "symtrace.compile: a backend function is not supported (symtrace compiles \
                     with its own backend; a backend may be named, as torch's are)",
                ));
            }
            if let Some(m) = given(&self.mode)
                && m.downcast_ref::<rustpython_vm::builtins::PyStr>().is_none()
            {
                return Err(vm.new_type_error("compile(): mode must be a str or None"));
            }
            if let Some(d) = given(&self.dynamic)
                && !rustpython_vm::AsObject::is(d.class(), vm.ctx.types.bool_type)
            {
                return Err(vm.new_type_error("compile(): dynamic must be True, False or None"));
            }
            if given(&self.mode).is_some() && given(&self.options).is_some() {
                return Err(vm.new_runtime_error(
                    "Either mode or options can be specified, but both can't be specified at \
                     the same time.",
                ));
            }
            Ok(())
        }
    }

    /// `func` traced: a `CompiledFunction`, or for a module of `symtrace.nn` an
    /// `OptimizedModule` around it that calls one.
    fn compiled(func: PyObjectRef, fullgraph: bool, vm: &VirtualMachine) -> PyResult {
        let call = PyCompiledFunction {
            func: func.clone(),
            fullgraph,
        }
        .into_pyobject(vm);
        Ok(crate::python::nn::optimized_module(&func, call.clone(), vm)?.unwrap_or(call))
    }

    /// `compile(fn)`, `@compile`, `@compile(fullgraph=True)`: `fn` runs traced.
    #[pyfunction]
    fn compile(args: CompileArgs, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
        args.check(vm)?;
        Ok(match args.func {
            Some(func) if !vm.is_none(&func) && args.disable => func,
            Some(func) if !vm.is_none(&func) => compiled(func, args.fullgraph, vm)?,
            _ => PyCompiler {
                fullgraph: args.fullgraph,
                disable: args.disable,
            }
            .into_pyobject(vm),
        })
    }

    #[pyattr]
    #[pyclass(module = "symtrace", name = "DisabledFunction")]
    #[derive(Debug, PyPayload)]
    pub struct PyDisabledFunction {
        func: PyObjectRef,
    }

    #[pyclass(with(Callable, GetDescriptor), flags(HAS_WEAKREF))]
    impl PyDisabledFunction {
        #[pygetset]
        fn __wrapped__(zelf: &Py<Self>) -> PyObjectRef {
            zelf.func.clone()
        }
    }

    impl Callable for PyDisabledFunction {
        type Args = FuncArgs;
        fn call(zelf: &Py<Self>, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
            super::call_untraced(&zelf.func, args, vm)
        }
    }

    impl GetDescriptor for PyDisabledFunction {
        fn descr_get(
            zelf: &PyObject,
            obj: Option<&PyObject>,
            _cls: Option<&PyObject>,
            vm: &VirtualMachine,
        ) -> PyResult {
            bound(zelf, obj, vm)
        }
    }

    #[derive(FromArgs)]
    struct DisableArgs {
        #[pyarg(any, default)]
        r#fn: Option<PyObjectRef>,
        #[pyarg(named, default = true)]
        recursive: bool,
    }

    /// `disable(fn)`: `fn` and what it calls run untraced. `disable(fn, recursive=False)`
    /// (torch's `torch._dynamo.disable(fn, recursive=False)`): `fn`'s own frames run as
    /// written, what it calls is traced as usual; its code object is skipped by the hook and a
    /// traced caller breaks at its call instead of inlining it. `disable(recursive=False)`
    /// without `fn` is the decorator.
    #[pyfunction]
    fn disable(args: DisableArgs, vm: &VirtualMachine) -> PyResult {
        let Some(func) = args.r#fn else {
            let partial = vm.import("functools", 0)?.get_attr("partial", vm)?;
            let disable = vm.import("symtrace", 0)?.get_attr("disable", vm)?;
            let kwargs = FuncArgs::new(
                vec![disable],
                rustpython_vm::function::KwArgs::new(
                    [("recursive".into(), vm.ctx.new_bool(args.recursive).into())]
                        .into_iter()
                        .collect(),
                ),
            );
            return partial.call(kwargs, vm);
        };
        if args.recursive {
            return Ok(PyDisabledFunction { func }.into_pyobject(vm));
        }
        crate::translate::frame_disabled::disable_frames_of(&func, vm)?;
        Ok(func)
    }

    /// What `set_stance` returns: the stance is set already; used as a context manager, the
    /// one it replaced comes back on exit.
    #[pyattr]
    #[pyclass(module = "symtrace", name = "StanceContext")]
    #[derive(Debug, PyPayload)]
    pub struct PyStanceContext {
        previous: &'static str,
    }

    #[pyclass]
    impl PyStanceContext {
        #[pymethod]
        fn __enter__(zelf: PyRef<Self>) -> PyRef<Self> {
            zelf
        }
        #[pymethod]
        fn __exit__(zelf: &Py<Self>, _args: FuncArgs, vm: &VirtualMachine) -> bool {
            if let Some(s) = crate::translate::Stance::named(zelf.previous) {
                super::translator(vm).stance.set(s);
            }
            false
        }
    }

    /// torch.compiler.set_stance: "default", "fail_on_recompile" (a recompile raises, with
    /// the guard that failed), "eager_on_recompile" (a call no entry fits runs as written),
    /// "force_eager" (every frame runs as written). Set at once, for the interpreter; as a
    /// context manager, until its block ends.
    #[pyfunction]
    fn set_stance(stance: PyStrRef, vm: &VirtualMachine) -> PyResult<PyStanceContext> {
        let name = stance.to_string_lossy();
        let s = crate::translate::Stance::named(&name).ok_or_else(|| {
            vm.new_value_error(format!(
                "unknown stance {name:?} (default, fail_on_recompile, eager_on_recompile, force_eager)"
            ))
        })?;
        let previous = super::translator(vm).stance.set(s).name();
        Ok(PyStanceContext { previous })
    }

    /// torch._dynamo.mark_dynamic: dimension(s) `dim` of `t` are dynamic from the first
    /// translation that reads `t` (a size of 0 or 1 stays specialized; where the program
    /// bakes the size into its graph, it stays static, with the reason logged).
    #[pyfunction]
    fn mark_dynamic(
        t: rustpython_vm::PyRef<crate::tensor::PyTensor>,
        dim: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        for d in marked_dims(&t, Some(dim), vm)? {
            t.mark_dim(d, true);
        }
        Ok(())
    }

    /// torch._dynamo.mark_static: dimension(s) `dim` of `t` (all when omitted) stay
    /// specialized whatever the dynamic policy.
    #[pyfunction]
    fn mark_static(
        t: rustpython_vm::PyRef<crate::tensor::PyTensor>,
        dim: rustpython_vm::function::OptionalArg<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        for d in marked_dims(&t, dim.into_option(), vm)? {
            t.mark_dim(d, false);
        }
        Ok(())
    }

    /// The dimensions `dim` names (an int, or a list or tuple of them; `None`: all),
    /// normalized against `t`'s rank.
    fn marked_dims(
        t: &crate::tensor::PyTensor,
        dim: Option<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<Vec<usize>> {
        let ndim = t.read().ndim();
        let raw: Vec<i64> = match dim {
            None => (0..ndim as i64).collect(),
            Some(d) if vm.is_none(&d) => (0..ndim as i64).collect(),
            Some(d) => match d.try_index(vm) {
                Ok(i) => vec![i.try_to_primitive::<i64>(vm)?],
                Err(_) => {
                    vm.extract_elements_with(&d, |x| x.try_index(vm)?.try_to_primitive::<i64>(vm))?
                }
            },
        };
        raw.into_iter()
            .map(|d| {
                crate::tensor::shape::normalize_dim(d, ndim)
                    .map_err(|e| e.into_exception(vm))
                    .and_then(|d| {
                        if d < 64 {
                            Ok(d)
                        } else {
                            Err(vm.new_value_error("only the first 64 dimensions can be marked"))
                        }
                    })
            })
            .collect()
    }

    /// torch._dynamo.graph_break: run as written, nothing happens; traced, the graph ends
    /// here and the rest of the frame is translated on its own (a resume function).
    #[pyfunction]
    fn graph_break() {}

    /// Drop every translation (and every skip); the counters start again from zero.
    #[pyfunction]
    fn reset(vm: &VirtualMachine) {
        super::translator(vm).reset();
    }

    #[pyfunction]
    fn stats(vm: &VirtualMachine) -> PyObjectRef {
        let d = vm.ctx.new_dict();
        for (k, v) in super::translator(vm).stats() {
            d.set_item(k, vm.ctx.new_int(v).into(), vm)
                .expect("str keys");
        }
        d.into()
    }

    /// `explain(fn, *args, **kwargs)`: run `fn` traced from a clean cache; what was captured.
    #[pyfunction]
    fn explain(mut args: FuncArgs, vm: &VirtualMachine) -> PyResult<PyExplainOutput> {
        if args.args.is_empty() {
            return Err(vm.new_type_error("explain() takes the function to run".to_owned()));
        }
        let func = args.args.remove(0);
        let log = super::explain(&func, args, vm)?;
        Ok(PyExplainOutput { log })
    }
}
