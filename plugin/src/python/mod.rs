//! The `symtrace` Python module: the `Tensor` type and its methods, the dtypes, the tensor
//! functions, and tracing (`compile`, `disable`, `reset`, `explain`, `stats`). Importable with
//! or without `--plugin` (the `rustpython` binary and the embedding example register it). Each
//! concern is a sub-module of its own file, joined here.

mod args;
mod compile;
mod convert;
mod device;
mod distributions;
mod dtype;
mod explain;
mod functions;
mod grad_mode;
mod mixed_index;
mod namespaces;
mod nn;
mod select;
mod tensor;
mod tensor_methods;
mod tensor_protocols;

/// The type of a class defined outside the module (its payload lives in a lower layer),
/// made once and published with `__module__` set, as `#[pyattr] #[pyclass]` would.
fn published<T: rustpython_vm::class::PyClassImpl + rustpython_vm::class::StaticType>(
    vm: &rustpython_vm::VirtualMachine,
) -> rustpython_vm::builtins::PyTypeRef {
    let class = T::make_static_type();
    let key = vm.ctx.intern_str("__module__");
    if class.get_direct_attr(key).is_none() {
        class.set_attr(key, vm.new_pyobj("symtrace"));
    }
    class
}

/// Run Python source built into the binary (at `path` in this repository, which tracebacks
/// name) as a module body named `symtrace`, with `extra` set first: its namespace.
fn run_builtin_source(
    source: &str,
    path: &str,
    extra: &[(&str, rustpython_vm::PyObjectRef)],
    vm: &rustpython_vm::VirtualMachine,
) -> rustpython_vm::PyResult<rustpython_vm::builtins::PyDictRef> {
    let namespace = vm.ctx.new_dict();
    namespace.set_item("__name__", vm.ctx.new_str("symtrace").into(), vm)?;
    for (name, value) in extra {
        namespace.set_item(*name, value.clone(), vm)?;
    }
    run_builtin_source_in(&namespace, source, path, vm)?;
    Ok(namespace)
}

/// Run Python source built into the binary in `namespace` (sources that build one module
/// together, each seeing what the ones before it defined).
fn run_builtin_source_in(
    namespace: &rustpython_vm::builtins::PyDictRef,
    source: &str,
    path: &str,
    vm: &rustpython_vm::VirtualMachine,
) -> rustpython_vm::PyResult<()> {
    let code = vm
        .compile(source, rustpython_vm::compiler::Mode::Exec, path.to_owned())
        .map_err(|e| vm.new_runtime_error(format!("{path} does not compile: {e}")))?;
    let scope = rustpython_vm::scope::Scope::with_builtins(None, namespace.clone(), vm);
    vm.run_code_obj(code, scope)?;
    Ok(())
}

/// The module's definition, for `InterpreterBuilder::add_native_module`.
pub fn module_def(ctx: &rustpython_vm::Context) -> &'static rustpython_vm::builtins::PyModuleDef {
    symtrace::module_def(ctx)
}

#[rustpython_vm::pymodule(with(
    dtype::module,
    device::module,
    tensor::module,
    functions::module,
    compile::module
))]
mod symtrace {
    use rustpython_vm::builtins::{PyModule, PyTypeRef};
    use rustpython_vm::{AsObject, Py, PyResult, VirtualMachine};

    pub(crate) fn module_exec(vm: &VirtualMachine, module: &Py<PyModule>) -> PyResult<()> {
        __module_exec(vm, module);
        // torch's other names of the dtypes, the same objects (`torch.long is torch.int64`).
        for (alias, name) in [
            ("long", "int64"),
            ("float", "float32"),
            ("double", "float64"),
        ] {
            let dtype = module.as_object().get_attr(name, vm)?;
            module.as_object().set_attr(alias, dtype, vm)?;
        }
        super::grad_mode::install(module, vm)?;
        super::tensor_methods::install(module, vm)?;
        super::namespaces::install(module, vm)?;
        super::distributions::install(module, vm)?;
        crate::translate::traced_wrappers::register(
            "symtrace.CompiledFunction",
            super::compile::module::compiled_function_target,
        );
        super::nn::install(module, vm)
    }

    /// What the replacement code calls (see `translate::compiled_graph`).
    #[pyattr(name = "CompiledGraph")]
    fn compiled_graph_class(vm: &VirtualMachine) -> PyTypeRef {
        super::published::<crate::translate::CompiledGraph>(vm)
    }
}
