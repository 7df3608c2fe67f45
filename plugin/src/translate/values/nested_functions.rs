//! Functions that their enclosing function makes anew on every call (a nested `def`, a
//! lambda), met as values read from the frame: a resume function is given the one its
//! frame made before the break, a decorator's wrapper holds the function it wraps. Guarded
//! by identity, each call's new function would translate the frame again; they are guarded
//! by what the simulation reads of them instead: their code and globals (their defaults and
//! closure contents are read through them, each guarded where it is used). And a cell such a
//! function shares with the translated frame is the frame's own cell in the simulation.

use std::cell::RefCell;
use std::rc::Rc;

use rustpython_vm::builtins::{PyCode, PyFunction, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::guards::Check;
use crate::translate::source::Source;
use crate::translate::state::State;
use crate::translate::values::{CellRef, CellState, Var};

impl State<'_> {
    /// Guard what a function defined inside another one (its qualified name says
    /// `<locals>`) is made of, instead of its identity; `false` for another function.
    pub(super) fn rely_on_nested_function(&mut self, f: &PyObjectRef, source: &Source) -> bool {
        let vm = self.vm;
        let Some(func) = f.downcast_ref::<PyFunction>() else {
            return false;
        };
        let (Ok(code), Ok(globals)) = (f.get_attr("__code__", vm), f.get_attr("__globals__", vm))
        else {
            return false;
        };
        let nested = code
            .downcast_ref::<PyCode>()
            .is_some_and(|c| c.qualname.as_str().contains("<locals>"));
        if !nested {
            return false;
        }
        self.guard(source, Check::type_is(func.class().to_owned()));
        let part = |name: &str| Source::NativeAttr(Box::new(source.clone()), name.to_owned());
        self.guard(&part("__code__"), Check::is(code));
        self.guard(&part("__globals__"), Check::is(globals));
        true
    }

    /// Whether cell `i` of an inlined function's closure (read by `read`) is a free variable
    /// of the translated frame, which holds it under the same name where the two closures
    /// come from one scope: then it is the frame's cell, where a store is replayed and a load
    /// sees the frame's stores. Guarded either way (another call may pair other closures).
    fn frame_cell_shared(
        &mut self,
        code: &PyCode,
        i: usize,
        cell: &PyObjectRef,
        read: &Source,
    ) -> Option<CellRef> {
        let name = code.freevars.get(i)?.as_str();
        let (_, object, sim) = self.free_cells.iter().find(|(n, ..)| n == name)?.clone();
        let this = Source::CellOf(Box::new(read.clone()));
        let frame = Source::CellOf(Box::new(Source::Free(name.to_owned())));
        if object.is(cell) {
            self.guard(&this, Check::SameAs(frame));
            Some(sim)
        } else {
            self.guard(&this, Check::NotSameAs(frame));
            None
        }
    }

    /// The cells of an inlined function's closure (`closure`, its `__closure__`, read through
    /// `through`): each content read lazily, or the frame's own cell where they share it.
    pub(super) fn inlined_closure(
        &mut self,
        closure: &PyObjectRef,
        code: &PyCode,
        through: &Source,
    ) -> Vec<CellRef> {
        let Some(cells) = closure.downcast_ref::<PyTuple>() else {
            return Vec::new();
        };
        let mut made = Vec::with_capacity(cells.len());
        for (i, cell) in cells.as_slice().iter().enumerate() {
            let read = Source::Closure(Box::new(through.clone()), i);
            if let Some(shared) = self.frame_cell_shared(code, i, cell, &read) {
                made.push(shared);
                continue;
            }
            let value = cell
                .get_attr("cell_contents", self.vm)
                .ok()
                .map(|v| Var::Lazy(v, read));
            made.push(Rc::new(RefCell::new(CellState {
                value,
                existing: true,
                home: None,
            })));
        }
        made
    }
}
