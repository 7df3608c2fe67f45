//! How a compiled guard program reads one source: one step per source, planned once for the
//! code object it guards.

use rustpython_vm::builtins::{PyCode, PyStrInterned};
use rustpython_vm::bytecode::{CO_FAST_CELL, CO_FAST_FREE};
use rustpython_vm::{Py, VirtualMachine};

use super::Source;

/// How a compiled guard program reads one source, planned once for the code object it guards
/// (`Source::compiled_read`): the step from its parent's value, or from the frame.
#[derive(Debug)]
pub enum CompiledRead {
    /// A local's slot, borrowed.
    Slot(usize),
    /// A cell or free variable's slot: the cell's content.
    CellSlot(usize),
    /// A name the frame has no slot for: unbound.
    Unbound,
    Global(&'static PyStrInterned),
    Builtin(&'static PyStrInterned),
    Attr(&'static PyStrInterned),
    Item(usize),
    Key(&'static PyStrInterned),
    /// A name in the globals of the parent, a function (another module's, which an inlined
    /// call reads).
    FnGlobal(&'static PyStrInterned),
    /// The parent's class, borrowed (the parent keeps it alive).
    TypeOf,
    /// The parent's instance dictionary.
    InstanceDict,
    /// The source's own object, borrowed (the source keeps it alive).
    Object,
    /// Rare reads (closures, computed values) go through `Source::read`.
    General,
}

impl Source {
    /// This source's own step as a guard program of `code` reads it.
    pub fn compiled_read(&self, code: &Py<PyCode>, vm: &VirtualMachine) -> CompiledRead {
        let interned = |n: &str| vm.ctx.intern_str(n);
        match self {
            Source::Local(name) => match code
                .localsplus_names()
                .iter()
                .position(|n| n.as_str() == name)
            {
                Some(slot) if code.localspluskinds[slot] & (CO_FAST_CELL | CO_FAST_FREE) != 0 => {
                    CompiledRead::CellSlot(slot)
                }
                Some(slot) => CompiledRead::Slot(slot),
                None => CompiledRead::Unbound,
            },
            Source::Global(name) => CompiledRead::Global(interned(name)),
            Source::Builtin(name) => CompiledRead::Builtin(interned(name)),
            Source::Attr(_, name) => CompiledRead::Attr(interned(name)),
            Source::Item(_, i) => CompiledRead::Item(*i),
            Source::Key(_, key) => CompiledRead::Key(interned(key)),
            Source::FnGlobal(_, name) => CompiledRead::FnGlobal(interned(name)),
            Source::TypeOf(_) => CompiledRead::TypeOf,
            Source::InstanceDict(_) => CompiledRead::InstanceDict,
            Source::Object(_) => CompiledRead::Object,
            Source::Free(_)
            | Source::Closure(..)
            | Source::CellOf(_)
            | Source::ConstKey(..)
            | Source::IdKey(..)
            | Source::At(..)
            | Source::NativeAttr(..)
            | Source::WeakTarget(_)
            | Source::ClassAttr(..)
            | Source::DefaultDType
            | Source::Arith(..)
            | Source::Compare(..)
            | Source::Len(_)
            | Source::Math(..) => CompiledRead::General,
            Source::Draw(_) => CompiledRead::Unbound,
        }
    }
}
