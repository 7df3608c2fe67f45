//! Named tuples (`collections.namedtuple`, `typing.NamedTuple`): classes written in Python
//! on `tuple` with `_fields`. Made during the simulation they are `Var::NamedTuple` (a class
//! and items); the caller's are read by their items. A field is an item; a property written in
//! Python on the class is its getter inlined, a value of the class (`_fields`) read as the
//! class's attribute (its methods are found in `attrs::method_of`).

use rustpython_vm::builtins::{PyFunction, PyStr, PyTuple, PyType};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, Py, VirtualMachine};

use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::objects::{Descr, classify};

/// What tuple does with its items that a class on it may redefine (`in`, comparisons,
/// hashing, truth, `+`, `*`, `reversed`, `count`...), which the simulation computes over the
/// items as tuple does.
const TUPLE_PROTOCOLS: [&str; 21] = [
    "__iter__",
    "__len__",
    "__getitem__",
    "__contains__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__bool__",
    "__add__",
    "__radd__",
    "__iadd__",
    "__mul__",
    "__rmul__",
    "__imul__",
    "__reversed__",
    "count",
    "index",
];

/// A class written in Python on tuple that computes with its items as tuple does: every one
/// of tuple's protocols is tuple's own (or absent, as tuple's is). A class that defines its
/// own `__contains__` (a token type's prefix test) or `__eq__` is not read as a tuple.
pub fn tuple_protocols_kept(class: &Py<PyType>, vm: &VirtualMachine) -> bool {
    let tuple = vm.ctx.types.tuple_type;
    class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
        && TUPLE_PROTOCOLS.iter().all(|m| {
            let m = vm.ctx.intern_str(*m);
            match (class.get_attr(m), tuple.get_attr(m)) {
                (Some(a), Some(b)) => a.is(&b),
                (None, None) => true,
                _ => false,
            }
        })
}

impl State<'_> {
    /// A named tuple class (`collections.namedtuple`): a class written in Python on `tuple`
    /// with its `_fields`, each a str.
    pub fn namedtuple_fields(&self, class: &Py<PyType>) -> Option<Vec<String>> {
        let vm = self.vm;
        let mro = class.mro.read();
        let on_tuple = class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
            && mro.iter().all(|c| {
                c.is(vm.ctx.types.object_type)
                    || c.is(vm.ctx.types.tuple_type)
                    || c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
            })
            && mro.iter().any(|c| c.is(vm.ctx.types.tuple_type));
        if !on_tuple || !tuple_protocols_kept(class, vm) {
            return None;
        }
        let fields = class.get_attr(vm.ctx.intern_str("_fields"))?;
        fields
            .downcast_ref::<PyTuple>()?
            .as_slice()
            .iter()
            .map(|f| f.downcast_ref::<PyStr>()?.to_str().map(str::to_owned))
            .collect()
    }

    /// A named tuple's class, items and field names (its class guarded when it is the
    /// caller's); `None` for any other value.
    pub(super) fn namedtuple_parts(
        &mut self,
        owner: &Var,
    ) -> SimResult<Option<(rustpython_vm::builtins::PyTypeRef, Vec<Var>, Vec<String>)>> {
        let (class, items) = match owner {
            Var::NamedTuple(c, items) => (c.clone(), items.to_vec()),
            Var::Lazy(o, _) if self.namedtuple_fields(o.class()).is_some() => {
                (o.class().to_owned(), self.items(owner)?)
            }
            _ => return Ok(None),
        };
        let Some(fields) = self.namedtuple_fields(&class) else {
            return Ok(None);
        };
        if let Var::Lazy(_, source) = owner {
            self.guard_class(source.clone().type_of(), &class)?;
        }
        Ok(Some((class, items, fields)))
    }

    /// `p.field` of a named tuple: its item; `p.name` of a property written in Python on its
    /// class: its getter inlined.
    pub(super) fn namedtuple_attr(&mut self, owner: &Var, name: &str) -> SimResult<Option<Var>> {
        let Some((class, items, fields)) = self.namedtuple_parts(owner)? else {
            return Ok(None);
        };
        match fields.iter().position(|f| f == name) {
            Some(i) if i < items.len() => Ok(Some(items[i].clone())),
            _ => match class
                .get_attr(self.vm.ctx.intern_str(name))
                .map(|d| classify(&d, self.vm))
            {
                Some(Descr::Property {
                    fget: Some(fget), ..
                }) if fget.downcast_ref::<PyFunction>().is_some() => self
                    .call_function(&fget, vec![owner.clone()], Vec::new())
                    .map(Some),
                // A value of the class that is no descriptor (`_fields`, `_field_defaults`, a
                // constant of the body), where instances have no `__dict__` to shadow it: what
                // the class gives, read as the class's attribute.
                Some(_)
                    if !class.slots.flags.has_feature(PyTypeFlags::HAS_DICT)
                        && class
                            .get_attr(self.vm.ctx.intern_str(name))
                            .is_some_and(|d| d.class().slots.descr_get.load().is_none()) =>
                {
                    self.class_attr(&Var::Obj(class.clone().into()), name)
                        .map(Some)
                }
                _ => Ok(None),
            },
        }
    }
}
