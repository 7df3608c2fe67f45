//! Locals, cells, free variables, constants and globals: the LOAD_*/STORE_*/DELETE_* of
//! names. A store into a cell of the translated frame's caller, or into a global, is a side
//! effect recorded for the replacement to replay.

use std::cell::RefCell;
use std::rc::Rc;

use rustpython_vm::AsObject;

use super::{Flow, Handler, SimFrame, Slot};
use crate::bytecode::decode::Instr;
use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{Kind, SimResult, State, Unsupported, unsupported};
use crate::translate::values::{CellRef, CellState, Globals, Var};

impl State<'_> {
    pub(super) fn make_cell(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let i = x.arg as usize;
        let value = match f.slots.get(i) {
            Some(Slot::Val(v)) => Some(v.clone()),
            _ => None,
        };
        f.slots[i] = Slot::Cell(Rc::new(RefCell::new(CellState {
            value,
            existing: false,
            home: None,
        })));
        Ok(Flow::Next)
    }

    pub(super) fn copy_free_vars(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let n = x.arg as usize;
        let first = f.slots.len() - n;
        for k in 0..n {
            let cell = f
                .closure
                .get(k)
                .cloned()
                .ok_or_else(|| Unsupported::new(Kind::Internal, "closure too short"))?;
            f.slots[first + k] = Slot::Cell(cell);
        }
        Ok(Flow::Next)
    }

    pub(super) fn load_fast(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = load_slot(f, x.arg as usize)?;
        f.push(v);
        Ok(Flow::Next)
    }

    pub(super) fn load_fast_and_clear(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = match f.slots.get(x.arg as usize) {
            Some(Slot::Val(v)) => v.clone(),
            _ => Var::Null,
        };
        f.slots[x.arg as usize] = Slot::Empty;
        f.push(v);
        Ok(Flow::Next)
    }

    pub(super) fn load_fast_load_fast(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let a = load_slot(f, (x.arg >> 4) as usize)?;
        let b = load_slot(f, (x.arg & 15) as usize)?;
        f.push(a);
        f.push(b);
        Ok(Flow::Next)
    }

    pub(super) fn store_fast(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = f.pop()?;
        store_slot(f, x.arg as usize, v)?;
        Ok(Flow::Next)
    }

    pub(super) fn store_fast_load_fast(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = f.pop()?;
        store_slot(f, (x.arg >> 4) as usize, v)?;
        let w = load_slot(f, (x.arg & 15) as usize)?;
        f.push(w);
        Ok(Flow::Next)
    }

    pub(super) fn store_fast_store_fast(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let a = f.pop()?;
        store_slot(f, (x.arg >> 4) as usize, a)?;
        let b = f.pop()?;
        store_slot(f, (x.arg & 15) as usize, b)?;
        Ok(Flow::Next)
    }

    pub(super) fn delete_fast(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        load_slot(f, x.arg as usize)?; // `del x` of an unbound x raises, as a read does
        f.slots[x.arg as usize] = Slot::Empty;
        Ok(Flow::Next)
    }

    pub(super) fn load_deref(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let c = cell(f, x.arg as usize)?;
        let v = c.borrow().value.clone();
        match v {
            Some(v) => f.push(v),
            None => {
                return unsupported(Kind::Raises, "free variable referenced before assignment");
            }
        }
        Ok(Flow::Next)
    }

    pub(super) fn store_deref(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = f.pop()?;
        let c = cell(f, x.arg as usize)?;
        let (existing, home) = (c.borrow().existing, c.borrow().home.clone());
        match (existing, home) {
            (false, _) => {}
            (true, Some(name)) => self.effects.store_cell(&name, v.clone()),
            (true, None) if self.store_caller_cell(&c, &v)? => {}
            (true, None) => {
                return unsupported(
                    Kind::SideEffect,
                    "a store into a closure cell of an inlined function's caller (a side effect \
                     that is not replayed)",
                );
            }
        }
        c.borrow_mut().value = Some(v);
        Ok(Flow::Next)
    }

    pub(super) fn delete_deref(&mut self, _f: &mut SimFrame, _x: &Instr) -> Handler {
        unsupported(Kind::SideEffect, "DELETE_DEREF (a side effect)")
    }

    pub(super) fn load_const(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let c = f
            .code
            .constants
            .get(x.arg as usize)
            .cloned()
            .ok_or_else(|| Unsupported::new(Kind::Internal, "constant out of range"))?;
        f.push(Var::Obj(c.into()));
        Ok(Flow::Next)
    }

    /// LOAD_COMMON_CONSTANT: an exception class or builtin the VM keeps aside (the compiler
    /// uses it for `assert` and for `any`/`all` over a generator): fixed objects.
    pub(super) fn load_common_constant(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let vm = self.vm;
        let builtin = |name: &str| {
            // The builtins module's own function of that name (the one the VM kept aside at
            // its start: a builtin function bound to the builtins module, named so).
            vm.builtins
                .dict()
                .get_item_opt(name, vm)
                .ok()
                .flatten()
                .filter(|f| {
                    f.class().is(vm.ctx.types.builtin_function_or_method_type)
                        && f.get_attr("__self__", vm)
                            .is_ok_and(|m| m.is(vm.builtins.as_object()))
                })
        };
        let v: Option<rustpython_vm::PyObjectRef> = match x.arg {
            0 => Some(vm.ctx.exceptions.assertion_error.to_owned().into()),
            1 => Some(vm.ctx.exceptions.not_implemented_error.to_owned().into()),
            2 => Some(vm.ctx.types.tuple_type.to_owned().into()),
            3 => builtin("all"),
            4 => builtin("any"),
            5 => Some(vm.ctx.types.list_type.to_owned().into()),
            6 => Some(vm.ctx.types.set_type.to_owned().into()),
            _ => None,
        };
        match v {
            Some(v) => {
                f.push(Var::Obj(v));
                Ok(Flow::Next)
            }
            None => unsupported(Kind::Opcode, "LOAD_COMMON_CONSTANT of an unknown constant"),
        }
    }

    pub(super) fn load_small_int(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        f.push(Var::Obj(self.vm.ctx.new_int(x.arg).into()));
        Ok(Flow::Next)
    }

    pub(super) fn load_global(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let name = f.name(x.arg >> 1);
        let v = self.global_value(&f.globals, &name)?;
        f.push(v);
        if x.arg & 1 != 0 {
            f.push(Var::Null);
        }
        Ok(Flow::Next)
    }

    /// STORE_GLOBAL and DELETE_GLOBAL: side effects, on the translated frame's own globals
    /// or on an inlined function's of another module.
    pub(super) fn store_global(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let name = f.name(x.arg);
        let value = if x.op == rustpython_vm::bytecode::Opcode::StoreGlobal {
            Some(f.pop()?)
        } else {
            None
        };
        if value.is_none() && matches!(self.global_binding(&f.globals, &name)?, None | Some(None)) {
            return unsupported(
                Kind::Raises,
                format!("del of global {name:?}, which is not defined (NameError)"),
            );
        }
        self.effects
            .store_global(&f.globals.dict, f.globals.owner.clone(), &name, value);
        Ok(Flow::Next)
    }

    /// The global `name` of the module `module` as the simulation wrote it (`Some(None)`:
    /// deleted), when a function of the module stored it during the call.
    pub(crate) fn module_global_written(
        &self,
        module: &rustpython_vm::PyObjectRef,
        name: &str,
    ) -> SimResult<Option<Option<Var>>> {
        let Some(dict) = module.dict() else {
            return Ok(None);
        };
        self.effects.global(&dict, name)
    }

    /// The global `name` as the simulation sees it: `Some(Some(v))` bound (written earlier
    /// in the simulation, or read from the dictionary), `Some(None)` deleted by the
    /// simulation, `None` not in the dictionary.
    fn global_binding(&mut self, globals: &Globals, name: &str) -> SimResult<Option<Option<Var>>> {
        if let Some(written) = self.effects.global(&globals.dict, name)? {
            return Ok(Some(written));
        }
        let v = globals.dict.get_item_opt(name, self.vm).ok().flatten();
        Ok(v.map(|v| Some(Var::Lazy(v, globals.source(name)))))
    }

    /// The value of the global (or, failing that, the builtin) `name`.
    fn global_value(&mut self, globals: &Globals, name: &str) -> SimResult<Var> {
        let vm = self.vm;
        match self.global_binding(globals, name)? {
            Some(Some(v)) => return Ok(v),
            Some(None) => {
                return unsupported(
                    Kind::Value,
                    format!("global {name:?} read after the call deleted it"),
                );
            }
            None => {}
        }
        if globals.owner.is_some() {
            return self.other_module_builtin(globals, name);
        }
        if let Some(replaced) = self.builtin_written(&vm.builtins.dict(), name)? {
            return Ok(replaced);
        }
        match vm.builtins.dict().get_item_opt(name, vm).ok().flatten() {
            Some(v) => Ok(Var::Lazy(v, Source::Builtin(name.to_owned()))),
            None => unsupported(
                Kind::Raises,
                format!("name {name:?} is not defined (NameError)"),
            ),
        }
    }
}

impl State<'_> {
    /// The builtin `name` as the call replaced it (`builtins.abs = f`, a store into the
    /// builtins module's namespace): `None` where it did not.
    fn builtin_written(
        &mut self,
        builtins: &rustpython_vm::Py<rustpython_vm::builtins::PyDict>,
        name: &str,
    ) -> SimResult<Option<Var>> {
        match self.effects.global(builtins, name)? {
            Some(Some(v)) => Ok(Some(v)),
            Some(None) => unsupported(
                Kind::Raises,
                format!("builtin {name:?} read after the call deleted it (NameError)"),
            ),
            None => Ok(None),
        }
    }

    /// A builtin read by an inlined function of another module: from that module's
    /// `__builtins__` (the builtins module for the main module, its dict for one that was
    /// imported), read through it; the module's own globals not holding the name is guarded,
    /// as the lookup relied on it.
    fn other_module_builtin(&mut self, globals: &Globals, name: &str) -> SimResult<Var> {
        let vm = self.vm;
        let builtins = globals.dict.get_item_opt("__builtins__", vm).ok().flatten();
        if let Some(dict) =
            builtins
                .as_ref()
                .and_then(|b| match b.class().is(vm.ctx.types.module_type) {
                    true => b.dict(),
                    false => b.clone().downcast::<rustpython_vm::builtins::PyDict>().ok(),
                })
            && let Some(replaced) = self.builtin_written(&dict, name)?
        {
            self.guard(&globals.source(name), Check::Absent);
            return Ok(replaced);
        }
        let found = match &builtins {
            Some(b) if b.class().is(vm.ctx.types.module_type) => b
                .dict()
                .and_then(|d| d.get_item_opt(name, vm).ok().flatten())
                .map(|v| (v, globals.source("__builtins__").attr(name))),
            Some(b) if crate::translate::state::is_dict(b, vm) => {
                crate::translate::source::dict_storage(b, vm)
                    .and_then(|d| d.inner_getitem_opt(name, vm).ok().flatten())
                    .map(|v| (v, globals.source("__builtins__").key(name)))
            }
            _ => {
                return unsupported(
                    Kind::Value,
                    format!("builtin {name} of a module without __builtins__"),
                );
            }
        };
        let Some((v, source)) = found else {
            return unsupported(
                Kind::Raises,
                format!("name {name:?} is not defined (NameError)"),
            );
        };
        self.guard(&globals.source(name), Check::Absent);
        Ok(Var::Lazy(v, source))
    }
}

fn load_slot(f: &SimFrame, i: usize) -> SimResult<Var> {
    match f.slots.get(i) {
        Some(Slot::Val(v)) => Ok(v.clone()),
        Some(Slot::Cell(c)) => Ok(Var::Cell(c.clone())),
        _ => unsupported(
            Kind::Raises,
            format!(
                "local {:?} is unbound (UnboundLocalError)",
                f.names.get(i).map_or("?", |s| s.as_str())
            ),
        ),
    }
}

fn store_slot(f: &mut SimFrame, i: usize, v: Var) -> SimResult<()> {
    match f.slots.get_mut(i) {
        Some(s) => {
            *s = if matches!(v, Var::Null) {
                Slot::Empty
            } else {
                Slot::Val(v)
            };
            Ok(())
        }
        None => unsupported(Kind::Internal, "local slot out of range"),
    }
}

fn cell(f: &SimFrame, i: usize) -> SimResult<CellRef> {
    match f.slots.get(i) {
        Some(Slot::Cell(c)) => Ok(c.clone()),
        _ => unsupported(Kind::Internal, "not a cell"),
    }
}
