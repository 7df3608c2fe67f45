//! Instances of classes written in Python with `__slots__` and no `__dict__`
//! (`@dataclass(slots=True)`, a record class, `collections.abc`'s views): instances of the
//! object model whose attributes are the member descriptors of their class. A caller's
//! instance's slot is read where it is (`Source::NativeAttr`; an empty one raises the
//! AttributeError the VM raises, guarded to be empty), and a store into one is a side effect
//! replayed after the graph through `object.__setattr__`, which later reads in the call see
//! (`State::attr_writes`). An instance made in the call keeps its slots where a made
//! instance keeps its attributes (`NewObject::dict`). A name that is not a slot cannot be
//! stored: no dictionary takes it.

use rustpython_vm::builtins::{PyMemberDescriptor, PyType};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, Py, VirtualMachine};

use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::objects::{Inst, object_slot};

/// A class written in Python (on `object` and such classes only) whose instances have
/// slots and no dictionary, and whose attribute lookup is `object`'s with no `__getattr__`
/// (its metaclass plays no part in an instance's lookup; `instantiable_class` asks about its
/// call).
pub fn slots_only_class(class: &Py<PyType>, vm: &VirtualMachine) -> bool {
    let t = &vm.ctx.types;
    let heap = |c: &Py<PyType>| c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE);
    heap(class)
        && !class.slots.flags.has_feature(PyTypeFlags::HAS_DICT)
        && class
            .mro
            .read()
            .iter()
            .all(|c| c.is(t.object_type) || heap(c))
        && object_slot(class, "__getattribute__", vm)
        && class.get_attr(vm.ctx.intern_str("__getattr__")).is_none()
}

/// Whether `name` is a slot of `class`, a class with slots only.
pub fn is_slot(class: &Py<PyType>, name: &str, vm: &VirtualMachine) -> bool {
    slots_only_class(class, vm)
        && class
            .get_attr(vm.ctx.intern_str(name))
            .is_some_and(|d| d.downcast_ref::<PyMemberDescriptor>().is_some())
}

impl State<'_> {
    /// The slot `name` of `inst`: what the call stored into it, or (a caller's instance)
    /// its value now; `None` when it is empty, which a caller's instance is guarded to be.
    fn slot_value(&mut self, inst: &Inst, name: &str) -> SimResult<Option<Var>> {
        let Inst::Existing(i) = inst else {
            return self.dict_entry(inst, name);
        };
        if let Some(w) = self.written_attr(*i, name) {
            return Ok(w);
        }
        let t = self.objects[*i].clone();
        let read = Source::NativeAttr(Box::new(t.source), name.to_owned());
        Ok(match t.obj.get_attr(&self.vm.ctx.new_str(name), self.vm) {
            Ok(v) => Some(Var::Lazy(v, read)),
            Err(_) => {
                self.guard(&read, Check::Absent);
                None
            }
        })
    }

    /// `owner.name` for the slot `name` of `inst`; an empty slot raises AttributeError as the
    /// VM does (with its `name` and `obj`).
    pub(super) fn slot_read(&mut self, inst: &Inst, name: &str) -> SimResult<Var> {
        match self.slot_value(inst, name)? {
            Some(v) => Ok(v),
            None => self.raise_no_attribute(inst, name),
        }
    }

    /// Whether `del owner.name` of a slot finds it set (a caller's instance's value guarded
    /// to be there, by its type); the VM raises `AttributeError(name)` otherwise, which this
    /// raises.
    pub(super) fn slot_deletable(&mut self, inst: &Inst, name: &str) -> SimResult<()> {
        match self.slot_value(inst, name)? {
            Some(Var::Lazy(v, read)) => {
                self.guard(&read, Check::type_is(v.class().to_owned()));
                Ok(())
            }
            Some(_) => Ok(()),
            None => {
                let vm = self.vm;
                let none = || Var::Obj(vm.ctx.none());
                self.raise_native_with(
                    vm.ctx.exceptions.attribute_error,
                    vec![Var::Obj(vm.ctx.new_str(name).into())],
                    vec![("name", none()), ("obj", none())],
                    format!("del of the empty slot {name} (AttributeError)"),
                )
            }
        }
    }
}
