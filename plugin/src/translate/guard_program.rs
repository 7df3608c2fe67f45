//! A guard set compiled for the code object it guards, so that a cache hit costs little: each
//! distinct source is read at most once per check (`L['layers'][0]` is read once for the
//! guards of `L['layers'][0][0]` and `L['layers'][0][1]`), locals are read by slot index,
//! and dictionary reads use interned keys, whose hashes are cached.

use std::collections::HashMap;

use rustpython_vm::builtins::{PyCode, PyStrInterned};
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::{Py, PyObjectRef, VirtualMachine};
use smallvec::SmallVec;

use super::guard::Guard;
use super::source::{Source, builtins_dict, exact_dict, item};

/// How one source is read.
#[derive(Debug)]
enum Read {
    /// A local, by its slot (a cell's content read out).
    Slot(usize),
    /// A name the frame has no slot for: unbound.
    Unbound,
    Global(&'static PyStrInterned),
    Builtin(&'static PyStrInterned),
    Attr(&'static PyStrInterned),
    Item(usize),
    Key(&'static PyStrInterned),
    /// Rare reads (closures, other modules' globals) go through the source itself.
    General,
}

#[derive(Debug)]
struct Entry {
    source: Source,
    parent: Option<usize>,
    read: Read,
}

#[derive(Debug)]
pub struct GuardProgram {
    /// Distinct sources, each after its parent.
    entries: Vec<Entry>,
    /// Per guard, in order: the entry it checks.
    guard_entries: Vec<usize>,
}

impl GuardProgram {
    pub fn new(guards: &[Guard], code: &Py<PyCode>, vm: &VirtualMachine) -> Self {
        let mut program = GuardProgram { entries: Vec::new(), guard_entries: Vec::new() };
        let mut index = HashMap::new();
        for g in guards {
            let e = program.add(&g.source, code, vm, &mut index);
            program.guard_entries.push(e);
        }
        program
    }

    fn add(&mut self, source: &Source, code: &Py<PyCode>, vm: &VirtualMachine, index: &mut HashMap<Source, usize>) -> usize {
        if let Some(&i) = index.get(source) {
            return i;
        }
        let parent = source.parent().map(|p| self.add(p, code, vm, index));
        let read = match source {
            Source::Local(name) => match code.localsplus_names().iter().position(|n| n.as_str() == name) {
                Some(slot) => Read::Slot(slot),
                None => Read::Unbound,
            },
            Source::Global(name) => Read::Global(vm.ctx.intern_str(name.as_str())),
            Source::Builtin(name) => Read::Builtin(vm.ctx.intern_str(name.as_str())),
            Source::Attr(_, name) => Read::Attr(vm.ctx.intern_str(name.as_str())),
            Source::Item(_, i) => Read::Item(*i),
            Source::Key(_, key) => Read::Key(vm.ctx.intern_str(key.as_str())),
            Source::Free(_) | Source::FnGlobal(..) | Source::Closure(..) => Read::General,
        };
        self.entries.push(Entry { source: source.clone(), parent, read });
        index.insert(source.clone(), self.entries.len() - 1);
        self.entries.len() - 1
    }

    /// The index of the first guard that does not hold, if any.
    pub fn first_failing(&self, guards: &[Guard], frame: &FrameView<'_>, vm: &VirtualMachine) -> Option<usize> {
        // Every source is read, parents first: no read runs Python code or fails on a value of
        // an unexpected type (it gives nothing), so order and laziness do not matter, and each
        // value is held once, borrowed by its children and its checks.
        let mut values: SmallVec<[Option<PyObjectRef>; 24]> = SmallVec::with_capacity(self.entries.len());
        for entry in &self.entries {
            let v = {
                let parent = entry.parent.and_then(|p| values[p].as_ref());
                match (&entry.read, parent) {
                    (Read::Slot(i), _) => frame.local_value(*i),
                    (Read::Unbound, _) => None,
                    (Read::Global(k), _) => frame.globals().get_item_opt(*k, vm).ok().flatten(),
                    (Read::Builtin(k), _) => builtins_dict(frame).and_then(|d| d.get_item_opt(*k, vm).ok().flatten()),
                    (_, None) if entry.parent.is_some() => None,
                    (Read::Attr(k), Some(p)) => p.dict().and_then(|d| d.get_item_opt(*k, vm).ok().flatten()),
                    (Read::Item(i), Some(p)) => item(p, *i),
                    (Read::Key(k), Some(p)) => exact_dict(p, vm).and_then(|d| d.get_item_opt(*k, vm).ok().flatten()),
                    (Read::General, parent) => entry.source.read(parent, frame, vm),
                    (_, None) => None,
                }
            };
            values.push(v);
        }
        guards.iter().zip(&self.guard_entries).position(|(guard, &e)| !guard.check.holds(values[e].as_ref(), vm))
    }
}
