//! Functions that their enclosing function makes anew on every call (a nested `def`, a
//! lambda), met as values read from the frame: a resume function is given the one its
//! frame made before the break, a decorator's wrapper holds the function it wraps. Guarded
//! by identity, each call's new function would translate the frame again; they are guarded
//! by what the simulation reads of them instead: their code and globals (their defaults and
//! closure contents are read through them, each guarded where it is used). And a cell such a
//! function shares with the translated frame is the frame's own cell in the simulation.

use rustpython_vm::builtins::{PyCode, PyFunction, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::guards::Check;
use crate::translate::source::Source;
use crate::translate::state::State;
use crate::translate::values::{CellRef, Var, is_plain};

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
        if !code.downcast_ref::<PyCode>().is_some_and(|c| is_nested(c)) {
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
            made.push(self.caller_cell(cell, through, i));
        }
        made
    }

    /// The positional defaults of an inlined function (`defaults`, its `__defaults__`, read
    /// through `through`). A tuple never changes: which one a function holds fixes its plain
    /// defaults, until `f.__defaults__ = ...` swaps it. A nested function gets a new tuple
    /// per call where a default is computed (`lambda y, s=scale: ...`): its length is
    /// guarded, and each default read where it is used.
    pub(super) fn inlined_defaults(
        &mut self,
        defaults: PyObjectRef,
        code: &PyCode,
        through: &Source,
    ) -> Vec<Var> {
        let vm = self.vm;
        let all = Source::NativeAttr(Box::new(through.clone()), "__defaults__".into());
        let Ok(t) = defaults.downcast::<PyTuple>() else {
            if is_nested(code) {
                self.guard(&all, Check::IsNone);
            }
            return Vec::new();
        };
        let item = |i| Source::Item(Box::new(all.clone()), i);
        let items = t.as_slice().iter().enumerate();
        if is_nested(code) {
            self.guard(&all, Check::type_is(vm.ctx.types.tuple_type.to_owned()));
            self.guard(&all, Check::Len(t.len()));
            return items.map(|(i, d)| Var::Lazy(d.clone(), item(i))).collect();
        }
        self.guard(&all, Check::is(t.clone().into()));
        let plain = |d: &PyObjectRef| is_plain(d, vm) || d.class().is(vm.ctx.types.object_type);
        items
            .map(|(i, d)| match plain(d) {
                true => Var::Obj(d.clone()),
                false => Var::Lazy(d.clone(), item(i)),
            })
            .collect()
    }
}

/// A function defined inside another one: its enclosing function makes it on every call.
fn is_nested(code: &PyCode) -> bool {
    code.qualname.as_str().contains("<locals>")
}
