//! Imports in a function body (`import math`, `import os.path`, `from math import sqrt`):
//! IMPORT_NAME of a module already in `sys.modules`, which the builtin `__import__`
//! (`import::import_module_level`) hands back without running code: an absolute name, the
//! interpreter's builtins and their `__import__`, the module finished initializing, and a
//! from-list that needs no submodule; and IMPORT_FROM, an attribute of the module. The module is read as
//! `sys.modules[name]` and guarded there, so a module imported anew is seen on the next call.
//! An import that would run code (a module not imported yet, a relative import, a package's
//! submodule named in a from-list and not loaded) breaks, as before.

use rustpython_vm::builtins::{PyDict, PyStr, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef};

use super::{Flow, Handler, SimFrame};
use crate::bytecode::decode::Instr;
use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{Kind, State, unsupported};
use crate::translate::values::Var;

impl State<'_> {
    pub(super) fn import_name(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let vm = self.vm;
        let name = f.name(x.arg);
        let fromlist = f.pop()?;
        let level = f.pop()?;
        let level = self.plain_obj(&level, "an import level")?;
        if !level.class().is(vm.ctx.types.int_type)
            || level
                .try_index(vm)
                .ok()
                .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
                != Some(0)
        {
            return unsupported(Kind::Opcode, format!("a relative import of {name:?}"));
        }
        let fromlist = self.plain_obj(&fromlist, "an import's names")?;
        let names: Vec<String> = if vm.is_none(&fromlist) {
            Vec::new()
        } else {
            let Some(t) = fromlist.downcast_ref::<PyTuple>() else {
                return unsupported(
                    Kind::Opcode,
                    "an import with a from-list that is not a tuple",
                );
            };
            let names = t
                .as_slice()
                .iter()
                .map(|n| {
                    n.downcast_ref::<PyStr>()
                        .and_then(|s| s.to_str().map(str::to_owned))
                })
                .collect::<Option<Vec<String>>>();
            match names {
                Some(names) if !names.is_empty() => names,
                _ => return unsupported(Kind::Opcode, "an import with an unusual from-list"),
            }
        };
        self.interpreter_import(&f.globals.dict)?;
        let modules = vm
            .sys_module
            .get_attr("modules", vm)
            .ok()
            .filter(|m| m.class().is(vm.ctx.types.dict_type));
        let Some(modules) = modules else {
            return unsupported(Kind::Opcode, "sys.modules is not a dict");
        };
        let modules_source = Source::object(vm.sys_module.clone().into()).attr("modules");
        // What the import reads: `sys.modules[name]`, and for `import a.b`, `sys.modules["a"]`.
        let top = name.split('.').next().unwrap_or_default().to_owned();
        let mut read = vec![name.clone()];
        if names.is_empty() && top != name {
            read.push(top);
        }
        let mut found: Vec<(PyObjectRef, Source)> = Vec::new();
        for key in read {
            let module = modules
                .downcast_ref::<PyDict>()
                .and_then(|d| d.get_item_opt(key.as_str(), vm).ok().flatten());
            let Some(module) = module.filter(|m| ready_module(m, vm)) else {
                return unsupported(
                    Kind::Opcode,
                    format!("an import of {key:?}, not loaded yet (it runs the module's code)"),
                );
            };
            let source = modules_source.clone().key(&key);
            self.guard(&source, Check::is(module.clone()));
            found.push((module, source));
        }
        // `import a.b` binds the package `a`; a from-list takes names from `a.b` itself.
        let (module, source) = found.pop().expect("a module");
        if !names.is_empty() {
            let held = |n: &str| {
                module
                    .dict()
                    .is_some_and(|d| d.get_item_opt(n, vm).ok().flatten().is_some())
            };
            // The import asks the module for `__path__`, through its `__getattr__` if it
            // has one and no `__path__`; a package's from-list imports the names it does
            // not hold yet as submodules.
            if !held("__path__") && held("__getattr__") {
                return unsupported(Kind::Opcode, "an import from a module with __getattr__");
            }
            if held("__path__")
                && let Some(missing) = names.iter().find(|n| !held(n))
            {
                return unsupported(
                    Kind::Opcode,
                    format!("an import of {name}.{missing}, not loaded yet"),
                );
            }
        }
        f.push(Var::Lazy(module, source));
        Ok(Flow::Next)
    }

    /// `from module import name`: the attribute, read as any attribute of the module is.
    pub(super) fn import_from(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let name = f.name(x.arg);
        let module = f.top(1)?.clone();
        let v = self.attr_of(&module, &name)?;
        f.push(v);
        Ok(Flow::Next)
    }

    /// The frame imports as the interpreter does: through its own builtins, whose
    /// `__import__` is the interpreter's (guarded), not a replacement of the program's.
    fn interpreter_import(
        &mut self,
        globals: &rustpython_vm::Py<PyDict>,
    ) -> Result<(), crate::translate::state::Unsupported> {
        let vm = self.vm;
        let builtins = globals.get_item_opt("__builtins__", vm).ok().flatten();
        let own = builtins
            .is_some_and(|b| b.is(vm.builtins.as_object()) || b.is(vm.builtins.dict().as_object()));
        let import = vm
            .builtins
            .dict()
            .get_item_opt("__import__", vm)
            .ok()
            .flatten()
            .filter(|i| {
                i.class().is(vm.ctx.types.builtin_function_or_method_type)
                    && i.get_attr("__self__", vm)
                        .is_ok_and(|m| m.is(vm.builtins.as_object()))
            });
        let (true, Some(import)) = (own, import) else {
            return Err(crate::translate::state::Unsupported::new(
                Kind::Opcode,
                "an import through builtins or an __import__ of the program's own",
            ));
        };
        self.guard(&Source::Builtin("__import__".to_owned()), Check::is(import));
        Ok(())
    }
}

/// A module (exactly) that has finished running its code: what the import hands back as is.
fn ready_module(m: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> bool {
    if !m.class().is(vm.ctx.types.module_type) {
        return false;
    }
    let spec = m
        .dict()
        .and_then(|d| d.get_item_opt("__spec__", vm).ok().flatten());
    let initializing = spec
        .and_then(|s| s.dict())
        .and_then(|d| d.get_item_opt("_initializing", vm).ok().flatten());
    !initializing.is_some_and(|i| !i.is(&vm.ctx.false_value))
}
