//! A caller's dict keyed by enum members (`{Mode.TRAIN: 0.1, Mode.EVAL: 0.0}`, a table of
//! activations by an `Act` enum): read whole, or by a member. A member hashes by
//! `Enum.__hash__`, Python code the simulation does not run, and compares by identity
//! (`native_reads::member_key`); so the dict's keys are guarded to be the members they were,
//! in order, and an entry is the value of the key that is the member, read again per call
//! through the member (`Source::IdKey`). Stores by a member break.

use rustpython_vm::builtins::{PyDict, PyType};
use rustpython_vm::{AsObject, Py, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::guards::ident::Ident;
use crate::translate::native_reads::member_key;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;

impl State<'_> {
    /// `key` as an enum member a dict is read by: a caller's guarded to be that member.
    pub fn member_of(&mut self, key: &Var) -> Option<PyObjectRef> {
        match key {
            Var::Lazy(o, source) if member_key(o, self.vm) => {
                self.guard(source, Check::is(o.clone()));
                Some(o.clone())
            }
            Var::Obj(o) if member_key(o, self.vm) => Some(o.clone()),
            _ => None,
        }
    }

    /// The entries of the caller's dict `d` (read from `source`) when its keys are all enum
    /// members: each value read through its member; the keys, their order and the members'
    /// classes (which could gain an `__eq__`) guarded. `None` for any other dict.
    pub fn enum_keyed_entries(
        &mut self,
        d: &Py<PyDict>,
        source: &Source,
    ) -> SimResult<Option<Vec<(PyObjectRef, Var)>>> {
        let vm = self.vm;
        let entries: Vec<(PyObjectRef, PyObjectRef)> = d.into_iter().collect();
        if entries.is_empty() || !entries.iter().all(|(k, _)| member_key(k, vm)) {
            return Ok(None);
        }
        let o: PyObjectRef = d.to_owned().into();
        self.guard(source, Check::type_is(o.class().to_owned()));
        let mut classes: Vec<&Py<PyType>> = Vec::new();
        for (k, _) in &entries {
            if !classes.iter().any(|c| c.is(k.class())) {
                classes.push(k.class());
            }
        }
        for c in classes {
            self.guard_class(Source::object(c.to_owned().into()), c)?;
        }
        let idents = entries.iter().map(|(k, _)| Ident::new(k.clone())).collect();
        self.guard(source, Check::KeyObjects(idents));
        Ok(Some(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let at = source.clone().id_key(Source::object(k.clone()));
                    (k, Var::Lazy(v, at))
                })
                .collect(),
        ))
    }

    /// `o[member]` of the caller's dict `o` (read from `source`), or `None` where it has no
    /// such key: read from its entries as `enum_keyed_entries` reads them.
    pub fn enum_keyed_read(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
        member: &PyObjectRef,
    ) -> SimResult<Option<Var>> {
        if !self.dict_stores(o, source)?.is_empty() {
            return unsupported(
                Kind::Value,
                "a read by an enum member of a dict the call changed",
            );
        }
        let d = o.downcast_ref::<PyDict>().expect("a dict");
        match self.enum_keyed_entries(d, source)? {
            Some(entries) => Ok(entries
                .into_iter()
                .find(|(k, _)| k.is(member))
                .map(|(_, v)| v)),
            None => unsupported(
                Kind::Value,
                "a dict read by an enum member, its keys not all members of enums",
            ),
        }
    }
}
