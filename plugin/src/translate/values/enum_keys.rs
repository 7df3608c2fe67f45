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
use crate::translate::key_const::KeyConst;
use crate::translate::native_reads::{member_key, member_value};
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

    /// `key` as the value it is equal to when it is a member of an enum that mixes in `int`
    /// or `str` and keeps their `__hash__` and `__eq__` (`IntEnum`, `IntFlag`, `StrEnum`):
    /// a dict finds it as it finds that int or str, natively. A caller's member is guarded to
    /// be that member, and its class to stay as it is (a later `__eq__` would run first).
    pub fn value_member_of(&mut self, key: &Var) -> SimResult<Option<KeyConst>> {
        let (o, source) = match key {
            Var::Lazy(o, source) => (o, Some(source)),
            Var::Obj(o) => (o, None),
            _ => return Ok(None),
        };
        let Some(value) = member_value(o, self.vm) else {
            return Ok(None);
        };
        let class = o.class().to_owned();
        self.guard_class(Source::object(class.clone().into()), &class)?;
        if let Some(source) = source {
            self.guard(source, Check::is(o.clone()));
        }
        Ok(Some(value))
    }

    /// The entries of the caller's dict `d` (read from `source`) when its keys are enum
    /// members, or members and plain constants: each value read through its key; the keys,
    /// their order and the members' classes (which could gain an `__eq__`) guarded. `None`
    /// for any other dict.
    pub fn enum_keyed_entries(
        &mut self,
        d: &Py<PyDict>,
        source: &Source,
    ) -> SimResult<Option<Vec<(PyObjectRef, Var)>>> {
        let vm = self.vm;
        let entries: Vec<(PyObjectRef, PyObjectRef)> = d.into_iter().collect();
        let member = |k: &PyObjectRef| member_key(k, vm) || member_value(k, vm).is_some();
        // Members of enums that mix in int or str beside plain keys (`{Norm.LAYER: 1.0,
        // "batch": -1.0}`): every key is guarded by identity all the same.
        if !entries.iter().any(|(k, _)| member(k))
            || !entries
                .iter()
                .all(|(k, _)| member(k) || KeyConst::is_key(k, &vm.ctx))
        {
            return Ok(None);
        }
        let o: PyObjectRef = d.to_owned().into();
        self.guard(source, Check::type_is(o.class().to_owned()));
        let mut classes: Vec<&Py<PyType>> = Vec::new();
        for (k, _) in entries.iter().filter(|(k, _)| member(k)) {
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
                    let at = match KeyConst::of(&k, &vm.ctx) {
                        Some(KeyConst::Str(text)) => source.clone().key(&text),
                        Some(plain) => source.clone().const_key(plain),
                        None => source.clone().id_key(Source::object(k.clone())),
                    };
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
