//! The modules the translator itself looks into (`functools.partial`, `itertools.islice`,
//! `math.sqrt`, a function's own module), read from `sys.modules`. An import would go
//! through `builtins.__import__`, which the program may have replaced (to count or redirect
//! its imports): the program would see imports it never made, and a module not loaded yet
//! would run its source at translation time.

use rustpython_vm::builtins::PyStr;
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

/// The module `name` if the program has loaded it; what it has not loaded, no value it
/// holds can come from.
pub fn loaded_module(name: &str, vm: &VirtualMachine) -> Option<PyObjectRef> {
    let modules = vm.sys_module.get_attr("modules", vm).ok()?;
    modules.get_item(&*vm.ctx.new_str(name), vm).ok()
}

/// `module.name` of a loaded module.
pub fn loaded_attr(module: &str, name: &str, vm: &VirtualMachine) -> Option<PyObjectRef> {
    loaded_module(module, vm)?
        .get_attr(&vm.ctx.new_str(name), vm)
        .ok()
}

/// `(module, name)` of a native function that is its loaded module's own attribute of that
/// name (`math.sqrt`, `_heapq.heappush`), not one of the same name found elsewhere.
pub fn module_function(f: &PyObjectRef, vm: &VirtualMachine) -> Option<(String, String)> {
    if !f.class().is(vm.ctx.types.builtin_function_or_method_type) {
        return None;
    }
    let text = |attr: &'static str| -> Option<String> {
        f.get_attr(attr, vm).ok().and_then(|n| {
            n.downcast_ref::<PyStr>()
                .map(|s| s.to_string_lossy().into_owned())
        })
    };
    let (module, name) = (text("__module__")?, text("__name__")?);
    loaded_attr(&module, &name, vm)
        .is_some_and(|g| g.is(f))
        .then_some((module, name))
}
