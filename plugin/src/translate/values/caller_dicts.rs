//! A caller's dict read key by key: what a subscript, `get`, `setdefault` or `in` sees of
//! a dict that existed before the call, after the call's own stores into it (which are
//! replayed later, so the simulation follows them itself; see `SideEffects::read_key`).

use rustpython_vm::builtins::{PyDict, PyStr};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::key_const::StoreKey;
use crate::translate::side_effects::Relation;
use crate::translate::source::{KeyConst, Source, identity_key};
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::{Var, ViewKind};

/// A key a caller's dict is read by: a str, followed through the call's own stores into the
/// dict; or an int, read only from a dict the call has not changed.
pub enum CallerKey {
    Str(String),
    /// An int, or a tuple of ints and strs (a cache keyed by a shape).
    Const(KeyConst),
    /// A caller's object hashed by identity (a parameter tensor keying an optimizer's
    /// state), read from its source.
    Object(PyObjectRef, Source),
    /// A member of an enum, of a dict keyed by members (`enum_keys`).
    Member(PyObjectRef),
}

/// The methods of a caller's dict followed by key (`update` recorded as a side effect when
/// called, `copy` made here of its entries, the others read it).
pub const CALLER_DICT_METHODS: &[&str] = &[
    "update",
    "keys",
    "values",
    "items",
    "get",
    "setdefault",
    "pop",
    "copy",
];

impl CallerKey {
    /// The key as a message shows it.
    pub fn shown(&self) -> String {
        match self {
            CallerKey::Str(k) => format!("{k:?}"),
            CallerKey::Const(k) => k.to_string(),
            CallerKey::Object(_, source) => source.to_string(),
            CallerKey::Member(m) => m.class().name().to_string(),
        }
    }
}

impl State<'_> {
    /// A key that is exactly a str, an int (64 bits), or a tuple of ints and strs; or a
    /// caller's object hashed by identity.
    pub fn caller_key(&mut self, key: &Var, what: &str) -> SimResult<CallerKey> {
        if let Some(m) = self.member_of(key) {
            return Ok(CallerKey::Member(m));
        }
        match self.value_member_of(key)? {
            Some(KeyConst::Str(k)) => return Ok(CallerKey::Str(k)),
            Some(k) => return Ok(CallerKey::Const(k)),
            None => {}
        }
        if let Some((o, source)) = self.identity_key(key)? {
            return Ok(CallerKey::Object(o, source));
        }
        let o = self.plain_obj(key, "a key")?;
        match KeyConst::of(&o, &self.vm.ctx) {
            Some(KeyConst::Str(_)) | None => self.str_key(key, what).map(CallerKey::Str),
            Some(k) => Ok(CallerKey::Const(k)),
        }
    }

    /// `key` as an object of the caller's that a dict finds by identity (`identity_key`):
    /// its class guarded (and its version, for a class written in Python, whose `__hash__`
    /// could be set later).
    pub fn identity_key(&mut self, key: &Var) -> SimResult<Option<(PyObjectRef, Source)>> {
        let vm = self.vm;
        let (o, source) = match key {
            Var::Lazy(o, source) => (o, source),
            // A class the call computed (`v.__class__`, `type(v)`), fixed by the guards on
            // what it is the type of; its metaclass, `type`, hashes and compares by identity.
            Var::Obj(o)
                if o.downcast_ref::<rustpython_vm::builtins::PyType>()
                    .is_some()
                    && o.class().is(vm.ctx.types.type_type) =>
            {
                return Ok(Some((o.clone(), Source::object(o.clone()))));
            }
            _ => return Ok(None),
        };
        if identity_key(o, &self.vm.ctx).is_none() {
            return Ok(None);
        }
        let class = o.class().to_owned();
        self.guard(source, Check::type_is(class.clone()));
        if class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) {
            self.guard_class(source.clone().type_of(), &class)?;
        }
        Ok(Some((o.clone(), source.clone())))
    }

    /// `o[key]` of a caller's dict (`None`: absent), by a str key as `caller_dict_key` reads
    /// it; by an int key (or a tuple of ints and strs), or an object found by identity, after
    /// the call's own stores by that key, or from the dict, its entry read again by the
    /// replacement, its type or its absence guarded.
    pub fn caller_dict_read(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
        key: &CallerKey,
    ) -> SimResult<Option<Var>> {
        self.fix_changing_keys(o)?;
        let (k, at, object) = match key {
            CallerKey::Str(k) => return self.caller_dict_key(o, source, k),
            CallerKey::Member(m) => return self.enum_keyed_read(o, source, m),
            CallerKey::Const(k) => (
                StoreKey::Const(k.clone()),
                source.clone().const_key(k.clone()),
                k.object(self.vm),
            ),
            CallerKey::Object(k, key_source) => (
                StoreKey::Object(k.clone(), key_source.clone()),
                source.clone().id_key(key_source.clone()),
                k.clone(),
            ),
        };
        let (written, relations) = self.effects.read_key(o, source, &k)?;
        self.guard_relations(relations);
        self.guard(source, Check::type_is(o.class().to_owned()));
        if let Some(w) = written {
            return Ok(w);
        }
        Ok(self.caller_dict_entry(o, at, object.as_object()))
    }

    /// The caller's dict `o`'s entry under `key`, read from `at` by the replacement: its
    /// type guarded, or its absence.
    fn caller_dict_entry(&mut self, o: &PyObjectRef, at: Source, key: &PyObject) -> Option<Var> {
        let entry = o
            .downcast_ref::<PyDict>()
            .expect("dict")
            .inner_getitem_opt(key, self.vm)
            .ok()
            .flatten();
        match entry {
            Some(v) => {
                self.guard(&at, Check::type_is(v.class().to_owned()));
                Some(Var::Lazy(v, at))
            }
            None => {
                self.guard(&at, Check::Absent);
                None
            }
        }
    }

    /// A key that is exactly a str (how a caller's dict is read key by key).
    pub fn str_key(&mut self, key: &Var, what: &str) -> SimResult<String> {
        let key = self.plain_obj(key, "a key")?;
        match key.downcast_ref::<PyStr>().and_then(|s| s.to_str()) {
            Some(k) if key.class().is(self.vm.ctx.types.str_type) => Ok(k.to_owned()),
            _ => unsupported(Kind::Value, format!("{what} with a key that is not a str")),
        }
    }

    /// Whether the caller's `o`, read from `source`, may be read as a whole (its items,
    /// its length): refused after the call changed it, or an object of its class that may
    /// be it; an instance's `__dict__` changed through attributes is guarded to be another.
    pub fn check_readable(&mut self, o: &PyObjectRef, source: &Source) -> SimResult<()> {
        self.fix_changing_keys(o)?;
        for other in self.effects.check_readable(o)? {
            if other != *source {
                self.guard(source, Check::NotSameAs(other));
            }
        }
        Ok(())
    }

    /// What a read of the whole of the caller's `o` (read from `source`) must apply to its
    /// entries: the call's stores and deletes of its keys, oldest first; for any other
    /// object, nothing, once `check_readable` allows the read. A dict of the same class that
    /// the call wrote is guarded to be, or not to be, this one.
    pub fn dict_stores(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
    ) -> SimResult<Vec<(StoreKey, Option<Var>)>> {
        self.fix_changing_keys(o)?;
        if !crate::translate::state::is_dict(o, self.vm) {
            self.check_readable(o, source)?;
            return Ok(Vec::new());
        }
        let (stores, relations) = self.effects.keyed_stores_of(o, source)?;
        self.guard_relations(relations);
        Ok(stores)
    }

    /// The truth of the caller's dict `o` (`if kwargs:`, `if self.cache:`): whether it has
    /// entries once the call's own stores and deletes are applied. Untouched by the call,
    /// its length is guarded (an entry added later is a miss), not its keys.
    pub fn caller_dict_truth(&mut self, o: &PyObjectRef, source: &Source) -> SimResult<bool> {
        Ok(self.caller_dict_len(o, source)? > 0)
    }

    /// The length of the caller's dict `o` (`len(self.cache)`) once the call's own stores
    /// and deletes are applied: its length before the call guarded, and for each key the
    /// call stored or deleted, whether the dict had it (its entry's type, or its absence).
    pub fn caller_dict_len(&mut self, o: &PyObjectRef, source: &Source) -> SimResult<usize> {
        let stores = self.dict_stores(o, source)?;
        let d = o.downcast_ref::<PyDict>().expect("a dict");
        let mut n = d.__len__();
        self.guard(source, Check::type_is(o.class().to_owned()));
        self.guard(source, Check::Len(n));
        // Each key the call touched, and whether the dict holds it now.
        let mut holds: Vec<(StoreKey, bool)> = Vec::new();
        for (key, value) in stores {
            let had = match holds.iter().position(|(k, _)| k.same(&key)) {
                Some(i) => holds.remove(i).1,
                None => {
                    let (at, object) = match &key {
                        StoreKey::Const(k) => {
                            (source.clone().const_key(k.clone()), k.object(self.vm))
                        }
                        StoreKey::Object(k, at) => (source.clone().id_key(at.clone()), k.clone()),
                        // Fixed by `dict_stores`.
                        StoreKey::Changing(_) => {
                            return unsupported(Kind::Internal, "a key that changes per call");
                        }
                    };
                    self.caller_dict_entry(o, at, &object).is_some()
                }
            };
            let has = value.is_some();
            n = n + usize::from(has) - usize::from(had);
            holds.push((key, has));
        }
        Ok(n)
    }

    /// Guard each source to be (`true`), or not to be, the object its other source gives.
    fn guard_relations(&mut self, relations: Vec<Relation>) {
        for (source, other, same) in relations {
            let check = if same {
                Check::SameAs(other)
            } else {
                Check::NotSameAs(other)
            };
            self.guard(&source, check);
        }
    }

    /// `o[k]` of a caller's dict as the simulation sees it now (`None`: absent). After the
    /// call's own store or delete of that key, what it made it; otherwise the dict's entry
    /// (read again by the replacement, its type or its absence guarded). A dict of the same
    /// class that the call wrote the key of is guarded to be, or not to be, this one.
    pub fn caller_dict_key(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
        k: &str,
    ) -> SimResult<Option<Var>> {
        self.fix_changing_keys(o)?;
        let key = StoreKey::Const(KeyConst::Str(k.to_owned()));
        let (written, relations) = self.effects.read_key(o, source, &key)?;
        self.guard_relations(relations);
        self.guard(source, Check::type_is(o.class().to_owned()));
        if let Some(w) = written {
            return Ok(w);
        }
        let key = self.vm.ctx.new_str(k);
        Ok(self.caller_dict_entry(o, source.clone().key(k), key.as_object()))
    }

    /// `sorted(d)`, `sorted(d.keys())` or `sorted(d.items())` of a caller's dict (with
    /// `reverse=`): its entries ordered by key. The keys are distinct strs, which decide
    /// every comparison (an item's value is never compared); they are guarded, as any read
    /// of the whole dict guards them. `None`: not such a call.
    pub fn sorted_entries(
        &mut self,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some(reverse) = self.sort_reverse(kwargs)? else {
            return Ok(None);
        };
        let (mut entries, kind) = match args {
            [Var::CallerView(view)] if view.kind != ViewKind::Values => {
                (self.lazy_dict_entries(&view.dict, &view.source)?, view.kind)
            }
            [Var::Lazy(o, source)] if crate::translate::state::is_dict(o, vm) => {
                (self.lazy_dict_entries(o, source)?, ViewKind::Keys)
            }
            _ => return Ok(None),
        };
        let key = |o: &PyObjectRef| {
            o.downcast_ref::<PyStr>()
                .and_then(|s| s.to_str())
                .map(str::to_owned)
        };
        if entries.iter().any(|(k, _)| key(k).is_none()) {
            return Ok(None);
        }
        // UTF-8 orders as code points do, as Python compares strs.
        entries.sort_by_key(|(k, _)| key(k));
        if reverse {
            entries.reverse();
        }
        Ok(Some(Var::list(
            entries.iter().map(|e| kind.of(e)).collect(),
        )))
    }
}
