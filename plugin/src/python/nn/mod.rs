//! `symtrace.nn` and `symtrace.nn.functional`: Python source (`modules.py`, `functional.py`)
//! built into the binary, registered in `sys.modules` when `symtrace` is imported, and run
//! when first used. They are Python on purpose: a traced call simulates them like the user's own
//! code, so a model's whole forward pass, modules included, becomes one graph.

use rustpython_vm::builtins::{PyDictRef, PyModule, PyStrRef};
use rustpython_vm::compiler::Mode;
use rustpython_vm::scope::Scope;
use rustpython_vm::{AsObject, Py, PyRef, PyResult, VirtualMachine};

/// (module name, source, the path tracebacks name: where the source lives in this repository)
const SUBMODULES: [(&str, &str, &str); 5] = [
    (
        "symtrace.nn.functional",
        include_str!("functional.py"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/nn/functional.py"),
    ),
    (
        "symtrace.nn",
        include_str!("modules.py"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/nn/modules.py"),
    ),
    (
        "symtrace.nn.init",
        include_str!("init.py"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/nn/init.py"),
    ),
    (
        "symtrace.nn.utils",
        include_str!("utils.py"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/nn/utils.py"),
    ),
    (
        "symtrace.nn.utils.rnn",
        include_str!("utils_rnn.py"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/nn/utils_rnn.py"),
    ),
];

/// Make `symtrace.nn` (with `functional`) and attach it to `symtrace`. Their source runs when
/// one of their attributes is first read (a module `__getattr__`, PEP 562), or a traced call
/// reads one (`translate::lazy_modules`): importing `symtrace` alone does not pay for
/// compiling it (about 10 ms).
pub(crate) fn install(symtrace: &Py<PyModule>, vm: &VirtualMachine) -> PyResult<()> {
    let sys_modules = vm.sys_module.get_attr("modules", vm)?;
    let loaders = [
        vm.new_function("__getattr__", |name: PyStrRef, vm: &VirtualMachine| {
            loaded_attr(0, &name, vm)
        }),
        vm.new_function("__getattr__", |name: PyStrRef, vm: &VirtualMachine| {
            loaded_attr(1, &name, vm)
        }),
        vm.new_function("__getattr__", |name: PyStrRef, vm: &VirtualMachine| {
            loaded_attr(2, &name, vm)
        }),
        vm.new_function("__getattr__", |name: PyStrRef, vm: &VirtualMachine| {
            loaded_attr(3, &name, vm)
        }),
        vm.new_function("__getattr__", |name: PyStrRef, vm: &VirtualMachine| {
            loaded_attr(4, &name, vm)
        }),
    ];
    let made: Vec<PyRef<PyModule>> = SUBMODULES
        .iter()
        .zip(loaders)
        .map(|((name, _, path), loader)| {
            let module = vm.new_module(name, vm.ctx.new_dict(), None);
            let dict = module.dict();
            dict.set_item("__file__", vm.ctx.new_str(*path).into(), vm)?;
            dict.set_item("__getattr__", loader.into(), vm)?;
            sys_modules.set_item(*name, module.clone().into(), vm)?;
            Ok(module)
        })
        .collect::<PyResult<_>>()?;
    let (functional, nn, init, utils, rnn) = (&made[0], &made[1], &made[2], &made[3], &made[4]);
    utils.dict().set_item("rnn", rnn.clone().into(), vm)?;
    nn.dict().set_item("utils", utils.clone().into(), vm)?;
    nn.dict()
        .set_item("functional", functional.clone().into(), vm)?;
    nn.dict().set_item("init", init.clone().into(), vm)?;
    symtrace.as_object().set_attr("nn", nn.clone(), vm)?;
    install_aliases(nn, &sys_modules, vm)?;
    // A traced call reads a module's dictionary, not its `__getattr__`: it loads them first.
    crate::translate::lazy_modules::register("symtrace.nn", load_all);
    crate::translate::lazy_modules::register("symtrace.nn.", load_all);
    Ok(())
}

/// torch's deeper import paths of the same classes (`from torch.nn.parameter import
/// Parameter`, `from torch.nn.modules.module import Module`): modules whose attributes are
/// `symtrace.nn`'s.
const ALIASES: [&str; 14] = [
    "parameter",
    "modules",
    "modules.module",
    "modules.linear",
    "modules.conv",
    "modules.activation",
    "modules.normalization",
    "modules.batchnorm",
    "modules.container",
    "modules.dropout",
    "modules.loss",
    "modules.pooling",
    "modules.sparse",
    "modules.transformer",
];

fn install_aliases(
    nn: &Py<PyModule>,
    sys_modules: &rustpython_vm::PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let forward = vm.new_function("__getattr__", |name: PyStrRef, vm: &VirtualMachine| {
        loaded_attr(1, &name, vm)
    });
    let mut made: Vec<(&str, PyRef<PyModule>)> = Vec::new();
    for alias in ALIASES {
        let name = format!("symtrace.nn.{alias}");
        let module = vm.new_module(&name, vm.ctx.new_dict(), None);
        module
            .dict()
            .set_item("__getattr__", forward.clone().into(), vm)?;
        sys_modules.set_item(name.as_str(), module.clone().into(), vm)?;
        // Each is an attribute of its parent: `symtrace.nn.modules.module`.
        let (parent, leaf) = match alias.rsplit_once('.') {
            Some((parent, leaf)) => (
                made.iter().find(|(a, _)| *a == parent).map(|(_, m)| m),
                leaf,
            ),
            None => (None, alias),
        };
        match parent {
            Some(p) => p.dict().set_item(leaf, module.clone().into(), vm)?,
            None => nn.dict().set_item(leaf, module.clone().into(), vm)?,
        }
        made.push((alias, module));
    }
    Ok(())
}

/// Every submodule, its source run if it has not run yet.
fn load_all(vm: &VirtualMachine) -> PyResult<()> {
    (0..SUBMODULES.len()).try_for_each(|index| load(index, vm).map(drop))
}

/// The attribute `name` of submodule `index`, its source run first (once: the loader removes
/// itself before it runs the source). `symtrace.nn` uses `functional` throughout: loading
/// one loads `functional` first, so that no call of a module meets it still unloaded (a traced
/// frame would find the attribute missing).
fn loaded_attr(index: usize, name: &PyStrRef, vm: &VirtualMachine) -> PyResult {
    let dict = load(0, vm).and_then(|functional| match index {
        0 => Ok(functional),
        _ => load(index, vm),
    })?;
    let module_name = SUBMODULES[index].0;
    match dict.get_item_opt(&**name, vm)? {
        Some(v) => Ok(v),
        None => Err(vm.new_attribute_error(format!(
            "module '{module_name}' has no attribute '{}'",
            name.to_string_lossy()
        ))),
    }
}

/// The dictionary of submodule `index`, its source run if it has not run yet.
fn load(index: usize, vm: &VirtualMachine) -> PyResult<PyDictRef> {
    let (module_name, source, path) = SUBMODULES[index];
    let module = vm
        .sys_module
        .get_attr("modules", vm)?
        .get_item(module_name, vm)?;
    let dict = module
        .dict()
        .ok_or_else(|| vm.new_runtime_error(format!("{module_name} has no __dict__")))?;
    if dict.get_item_opt("__getattr__", vm)?.is_some() {
        dict.del_item("__getattr__", vm)?;
        let code = vm
            .compile(source, Mode::Exec, path)
            .map_err(|e| vm.new_runtime_error(format!("{path} does not compile: {e}")))?;
        vm.run_code_obj(code, Scope::with_builtins(None, dict.clone(), vm))?;
        if index == 1 {
            fill_aliases(&dict, vm)?;
        }
    }
    Ok(dict)
}

/// Each alias module gets `symtrace.nn`'s names in its own dictionary, once they exist: a
/// traced call reads a module's dictionary, not its `__getattr__`
/// (`torch.nn.modules.linear.Linear` in a forward pass).
fn fill_aliases(nn: &PyDictRef, vm: &VirtualMachine) -> PyResult<()> {
    let sys_modules = vm.sys_module.get_attr("modules", vm)?;
    for alias in ALIASES {
        let module = sys_modules.get_item(format!("symtrace.nn.{alias}").as_str(), vm)?;
        let Some(dict) = module.dict() else {
            continue;
        };
        for (k, v) in nn {
            let dunder = k
                .downcast_ref::<rustpython_vm::builtins::PyStr>()
                .and_then(|k| k.to_str())
                .is_none_or(|k| k.starts_with("__"));
            let submodule = v.downcast_ref::<PyModule>().is_some();
            if !dunder && !submodule && dict.get_item_opt(&*k, vm)?.is_none() {
                dict.set_item(&*k, v, vm)?;
            }
        }
    }
    Ok(())
}

/// What `symtrace.compile(module)` returns for an instance of `symtrace.nn.Module`: an
/// `OptimizedModule` around it whose calls run `compiled`, as torch's `compile` returns;
/// `None` for anything else. A module of `symtrace.nn` exists only once its source ran, so
/// an unloaded `symtrace.nn` answers `None` without loading it.
pub(crate) fn optimized_module(
    func: &rustpython_vm::PyObjectRef,
    compiled: rustpython_vm::PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<Option<rustpython_vm::PyObjectRef>> {
    let nn = vm
        .sys_module
        .get_attr("modules", vm)?
        .get_item(SUBMODULES[1].0, vm)?;
    let Some(dict) = nn.dict() else {
        return Ok(None);
    };
    if dict.get_item_opt("__getattr__", vm)?.is_some() {
        return Ok(None);
    }
    let (Some(module), Some(wrapper)) = (
        dict.get_item_opt("Module", vm)?,
        dict.get_item_opt("OptimizedModule", vm)?,
    ) else {
        return Ok(None);
    };
    if !func.is_instance(&module, vm)? {
        return Ok(None);
    }
    wrapper.call((func.clone(), compiled), vm).map(Some)
}
