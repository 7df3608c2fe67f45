//! `symtrace.jit`, `symtrace.compiler`, `symtrace._dynamo` (with `config`), `symtrace.cuda`
//! and `symtrace.backends` (a machine without CUDA, as torch answers there), `symtrace.testing`
//! (`assert_close`), `symtrace.special` (torch's special functions), `symtrace.func` (`vmap`, as a loop), `symtrace.amp` and `symtrace.cuda.amp` (`autocast`: off without CUDA,
//! as torch's), a few top-level
//! settings, `symtrace.utils`, `symtrace.utils.checkpoint` and `symtrace.utils.data`
//! (`data.py`: datasets and a single-process loader), `symtrace.linalg` (`linalg.py`: norms):
//! torch's small namespaces that model code asks around its tensor work, as symtrace answers
//! them (`namespaces.py`, Python built into the binary: functions only, run when `symtrace`
//! is imported), each registered in `sys.modules` so that `from torch.utils.checkpoint import
//! checkpoint` spelled with `symtrace` imports it.

use rustpython_vm::builtins::{PyDict, PyModule};
use rustpython_vm::{AsObject, Py, PyRef, PyResult, VirtualMachine};

const SOURCE: &str = include_str!("namespaces.py");
const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/namespaces.py");
const LINALG_SOURCE: &str = include_str!("linalg.py");
const LINALG_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/linalg.py");
const DATA_SOURCE: &str = include_str!("data.py");
const DATA_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/data.py");

pub(crate) fn install(symtrace: &Py<PyModule>, vm: &VirtualMachine) -> PyResult<()> {
    let namespace =
        super::run_builtin_source(SOURCE, PATH, &[("_st", symtrace.to_owned().into())], vm)?;
    let sys_modules = vm.sys_module.get_attr("modules", vm)?;
    let module = |name: &str, table: &str| module_of_table(name, &namespace, table, vm);
    let jit = module("symtrace.jit", "JIT")?;
    let compiler = module("symtrace.compiler", "COMPILER")?;
    let dynamo = module("symtrace._dynamo", "DYNAMO")?;
    let config = module("symtrace._dynamo.config", "DYNAMO_CONFIG")?;
    dynamo.dict().set_item("config", config.into(), vm)?;
    let checkpoint = module("symtrace.utils.checkpoint", "CHECKPOINT")?;
    let utils = vm.new_module("symtrace.utils", vm.ctx.new_dict(), None);
    utils.dict().set_item("checkpoint", checkpoint.into(), vm)?;
    let data = module_of_source(
        "symtrace.utils.data",
        (DATA_SOURCE, DATA_PATH, "DATA"),
        &[("_st", symtrace.to_owned().into())],
        vm,
    )?;
    utils.dict().set_item("data", data.into(), vm)?;
    sys_modules.set_item("symtrace.utils", utils.clone().into(), vm)?;
    let cuda = module("symtrace.cuda", "CUDA")?;
    let amp = module("symtrace.amp", "AMP")?;
    let cuda_amp = module("symtrace.cuda.amp", "CUDA_AMP")?;
    cuda.dict().set_item("amp", cuda_amp.into(), vm)?;
    let testing = module("symtrace.testing", "TESTING")?;
    let special = module("symtrace.special", "SPECIAL")?;
    let func = module("symtrace.func", "FUNC")?;
    let backends = vm.new_module("symtrace.backends", vm.ctx.new_dict(), None);
    let cudnn = module("symtrace.backends.cudnn", "BACKENDS_CUDNN")?;
    let mps = module("symtrace.backends.mps", "BACKENDS_MPS")?;
    let backends_cuda = vm.new_module("symtrace.backends.cuda", vm.ctx.new_dict(), None);
    let matmul = module("symtrace.backends.cuda.matmul", "BACKENDS_CUDA_MATMUL")?;
    backends_cuda.dict().set_item("matmul", matmul.into(), vm)?;
    sys_modules.set_item("symtrace.backends.cuda", backends_cuda.clone().into(), vm)?;
    for (name, m) in [("cudnn", cudnn), ("mps", mps), ("cuda", backends_cuda)] {
        backends.dict().set_item(name, m.into(), vm)?;
    }
    sys_modules.set_item("symtrace.backends", backends.clone().into(), vm)?;
    let linalg_namespace = super::run_builtin_source(
        LINALG_SOURCE,
        LINALG_PATH,
        &[("_st", symtrace.to_owned().into())],
        vm,
    )?;
    let linalg = module_of_table("symtrace.linalg", &linalg_namespace, "LINALG", vm)?;
    let top = namespace.get_item("TOP_LEVEL", vm)?;
    let top = top
        .downcast_ref::<PyDict>()
        .ok_or_else(|| vm.new_runtime_error("TOP_LEVEL is not a dict"))?;
    for (key, value) in top {
        symtrace.as_object().set_attr(&key.str(vm)?, value, vm)?;
    }
    let linalg_top = linalg_namespace.get_item("TOP_LEVEL", vm)?;
    let linalg_top = linalg_top
        .downcast_ref::<PyDict>()
        .ok_or_else(|| vm.new_runtime_error("linalg's TOP_LEVEL is not a dict"))?;
    for (key, value) in linalg_top {
        symtrace.as_object().set_attr(&key.str(vm)?, value, vm)?;
    }
    let symtrace = symtrace.as_object();
    symtrace.set_attr("cuda", cuda, vm)?;
    symtrace.set_attr("amp", amp, vm)?;
    symtrace.set_attr("testing", testing, vm)?;
    symtrace.set_attr("special", special, vm)?;
    symtrace.set_attr("func", func, vm)?;
    symtrace.set_attr("backends", backends, vm)?;
    symtrace.set_attr("linalg", linalg, vm)?;
    symtrace.set_attr("jit", jit, vm)?;
    symtrace.set_attr("compiler", compiler, vm)?;
    symtrace.set_attr("_dynamo", dynamo, vm)?;
    symtrace.set_attr("utils", utils, vm)
}

/// A module `name` made of the table `table` that the built-in Python `source` defines (run
/// with `injected` among its globals), registered in `sys.modules`.
fn module_of_source(
    name: &str,
    (source, path, table): (&str, &str, &str),
    injected: &[(&str, rustpython_vm::PyObjectRef)],
    vm: &VirtualMachine,
) -> PyResult<PyRef<PyModule>> {
    let namespace = super::run_builtin_source(source, path, injected, vm)?;
    module_of_table(name, &namespace, table, vm)
}

/// A module `name` made of the dict `table` of `namespace`, registered in `sys.modules`.
fn module_of_table(
    name: &str,
    namespace: &rustpython_vm::builtins::PyDictRef,
    table: &str,
    vm: &VirtualMachine,
) -> PyResult<PyRef<PyModule>> {
    let module = vm.new_module(name, vm.ctx.new_dict(), None);
    let entries = namespace.get_item(table, vm)?;
    let entries = entries
        .downcast_ref::<PyDict>()
        .ok_or_else(|| vm.new_runtime_error(format!("{table} is not a dict")))?;
    for (key, value) in entries {
        module.dict().set_item(&*key.str(vm)?, value, vm)?;
    }
    vm.sys_module
        .get_attr("modules", vm)?
        .set_item(name, module.clone().into(), vm)?;
    Ok(module)
}
