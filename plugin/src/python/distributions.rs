//! `symtrace.distributions` (with `constraints`, `transforms`, `kl` and `utils`, and torch's
//! deeper import paths such as `torch.distributions.normal`): torch's probability
//! distributions, Python built into the binary (`distributions/*.py`, run in one namespace in
//! order, each seeing what the ones before it defined). Like `symtrace.nn` they run when one
//! of their attributes is first read, or a traced call reads one (`translate::lazy_modules`),
//! and a traced call simulates them like the user's code: a policy's `Categorical(logits=...)`,
//! its sample, log-probability and entropy are one graph.

use rustpython_vm::builtins::{PyDict, PyModule, PyStrRef};
use rustpython_vm::{AsObject, Py, PyResult, VirtualMachine};

macro_rules! source {
    ($file:literal) => {
        (
            include_str!(concat!("distributions/", $file)),
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/src/python/distributions/",
                $file
            ),
        )
    };
}

/// The sources, in the order they run.
const SOURCES: [(&str, &str); 11] = [
    source!("constraints.py"),
    source!("distribution.py"),
    source!("continuous.py"),
    source!("discrete.py"),
    source!("multivariate.py"),
    source!("transforms.py"),
    source!("mixture.py"),
    source!("more_families.py"),
    source!("counts.py"),
    source!("kl.py"),
    source!("exports.py"),
];

/// Each module and the table of `exports.py` it holds.
const MODULES: [(&str, &str); 5] = [
    ("symtrace.distributions", "DISTRIBUTIONS"),
    ("symtrace.distributions.constraints", "CONSTRAINTS"),
    ("symtrace.distributions.transforms", "TRANSFORMS"),
    ("symtrace.distributions.kl", "KL"),
    ("symtrace.distributions.utils", "UTILS"),
];

/// torch's modules of single families (`from torch.distributions.normal import Normal`):
/// each holds every family.
const ALIASES: [&str; 30] = [
    "distribution",
    "exp_family",
    "normal",
    "uniform",
    "exponential",
    "laplace",
    "cauchy",
    "gamma",
    "beta",
    "bernoulli",
    "categorical",
    "one_hot_categorical",
    "poisson",
    "independent",
    "multivariate_normal",
    "dirichlet",
    "transformed_distribution",
    "log_normal",
    "half_normal",
    "kl_divergence",
    "mixture_same_family",
    "chi2",
    "studentT",
    "gumbel",
    "geometric",
    "binomial",
    "multinomial",
    "negative_binomial",
    "weibull",
    "pareto",
];

fn module_names() -> impl Iterator<Item = (String, &'static str)> {
    MODULES
        .iter()
        .map(|(name, table)| (name.to_string(), *table))
        .chain(
            ALIASES
                .iter()
                .map(|alias| (format!("symtrace.distributions.{alias}"), "DISTRIBUTIONS")),
        )
}

pub(crate) fn install(symtrace: &Py<PyModule>, vm: &VirtualMachine) -> PyResult<()> {
    let sys_modules = vm.sys_module.get_attr("modules", vm)?;
    let mut top: Option<rustpython_vm::PyRef<PyModule>> = None;
    for (index, (name, _)) in module_names().enumerate() {
        let module = vm.new_module(&name, vm.ctx.new_dict(), None);
        let loader = vm.new_function("__getattr__", move |attr: PyStrRef, vm: &VirtualMachine| {
            loaded_attr(index, attr, vm)
        });
        module.dict().set_item("__getattr__", loader.into(), vm)?;
        sys_modules.set_item(name.as_str(), module.clone().into(), vm)?;
        match (&top, name.strip_prefix("symtrace.distributions.")) {
            (Some(parent), Some(leaf)) => parent.dict().set_item(leaf, module.into(), vm)?,
            _ => top = Some(module),
        }
    }
    if let Some(top) = top {
        symtrace.as_object().set_attr("distributions", top, vm)?;
    }
    crate::translate::lazy_modules::register("symtrace.distributions", load_all);
    crate::translate::lazy_modules::register("symtrace.distributions.", load_all);
    Ok(())
}

/// The `__getattr__` of module `index` (of `module_names`): loads them all, then answers
/// from that module's filled dictionary.
fn loaded_attr(index: usize, attr: PyStrRef, vm: &VirtualMachine) -> PyResult {
    load_all(vm)?;
    let (name, _) = module_names()
        .nth(index)
        .expect("a loader is made for each module");
    let module = vm
        .sys_module
        .get_attr("modules", vm)?
        .get_item(name.as_str(), vm)?;
    module.get_attr(&attr, vm)
}

/// Run the sources once and fill each module from its table.
fn load_all(vm: &VirtualMachine) -> PyResult<()> {
    let sys_modules = vm.sys_module.get_attr("modules", vm)?;
    let top = sys_modules.get_item("symtrace.distributions", vm)?;
    let top_dict = top
        .dict()
        .ok_or_else(|| vm.new_runtime_error("symtrace.distributions has no __dict__"))?;
    if top_dict.get_item_opt("__getattr__", vm)?.is_none() {
        return Ok(());
    }
    let namespace = vm.ctx.new_dict();
    namespace.set_item(
        "__name__",
        vm.ctx.new_str("symtrace.distributions").into(),
        vm,
    )?;
    namespace.set_item("_st", sys_modules.get_item("symtrace", vm)?, vm)?;
    for (source, path) in SOURCES {
        super::run_builtin_source_in(&namespace, source, path, vm)?;
    }
    for (name, table) in module_names() {
        let module = sys_modules.get_item(name.as_str(), vm)?;
        let Some(dict) = module.dict() else {
            continue;
        };
        dict.del_item("__getattr__", vm)?;
        let entries = namespace.get_item(table, vm)?;
        let entries = entries
            .downcast_ref::<PyDict>()
            .ok_or_else(|| vm.new_runtime_error(format!("{table} is not a dict")))?;
        for (key, value) in entries {
            dict.set_item(&*key, value, vm)?;
        }
    }
    Ok(())
}
