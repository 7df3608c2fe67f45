//! Tensor methods and functions of `symtrace` that are compositions of the registry's ops
//! (`t`, `mm`, `rsqrt`, `any`, `logsumexp`, `new_zeros`...): Python source
//! (`tensor_methods.py`, `tensor_indexing.py` for writes at indices and selections whose
//! size is the data's, `tensor_compositions.py` for in-place spellings, splitting and
//! stacking by axis name and products, `serialization.py` for pickling, `save`, `load` and
//! the generator's state, `top_level_aliases.py` for torch's top-level spellings of
//! functional and in-place ops) built into the binary and run when `symtrace` is imported, each one's
//! `METHODS` set on `Tensor`, its `FUNCTIONS` and `MODULE_ONLY` on the module. Being Python, they are
//! simulated as the user's own code is, op by op.

use rustpython_vm::builtins::{PyDict, PyModule};
use rustpython_vm::{AsObject, Py, PyResult, VirtualMachine};

use rustpython_vm::PyPayload;

use crate::tensor::PyTensor;

/// The sources, in the order they run: a later one may use what an earlier one set.
const SOURCES: [(&str, &str); 5] = [
    (
        include_str!("tensor_methods.py"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/tensor_methods.py"),
    ),
    (
        include_str!("tensor_indexing.py"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/tensor_indexing.py"),
    ),
    (
        include_str!("tensor_compositions.py"),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/python/tensor_compositions.py"
        ),
    ),
    (
        include_str!("serialization.py"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/serialization.py"),
    ),
    (
        include_str!("top_level_aliases.py"),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/python/top_level_aliases.py"
        ),
    ),
];

pub(crate) fn install(symtrace: &Py<PyModule>, vm: &VirtualMachine) -> PyResult<()> {
    for (source, path) in SOURCES {
        install_source(symtrace, source, path, vm)?;
    }
    Ok(())
}

fn install_source(
    symtrace: &Py<PyModule>,
    source: &str,
    path: &str,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let namespace =
        super::run_builtin_source(source, path, &[("_st", symtrace.to_owned().into())], vm)?;
    let methods = namespace.get_item("METHODS", vm)?;
    let methods = methods
        .downcast_ref::<PyDict>()
        .ok_or_else(|| vm.new_runtime_error("METHODS is not a dict"))?;
    let tensor = PyTensor::class(&vm.ctx);
    for (name, method) in methods {
        tensor.as_object().set_attr(&name.str(vm)?, method, vm)?;
    }
    let functions = namespace.get_item("FUNCTIONS", vm)?;
    for name in vm.extract_elements_with(&functions, Ok)? {
        let function = methods.as_object().get_item(&*name, vm)?;
        symtrace
            .as_object()
            .set_attr(&name.str(vm)?, function, vm)?;
    }
    let module_only = namespace.get_item("MODULE_ONLY", vm)?;
    let module_only = module_only
        .downcast_ref::<PyDict>()
        .ok_or_else(|| vm.new_runtime_error("MODULE_ONLY is not a dict"))?;
    for (name, function) in module_only {
        symtrace
            .as_object()
            .set_attr(&name.str(vm)?, function, vm)?;
    }
    Ok(())
}
