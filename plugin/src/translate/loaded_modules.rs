//! The modules the translator itself looks into (`functools.partial`, `itertools.islice`,
//! `math.sqrt`, a function's own module), read from `sys.modules`. An import would go
//! through `builtins.__import__`, which the program may have replaced (to count or redirect
//! its imports): the program would see imports it never made, and a module not loaded yet
//! would run its source at translation time.

use rustpython_vm::{PyObjectRef, VirtualMachine};

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
