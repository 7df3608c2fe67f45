//! Side effects: mutations the simulated code makes to what existed before the call (a dict
//! of the caller: item stores and deletes, `dict.update`; a list of the caller; an attribute
//! of an object, stored or deleted; a global; a closure cell, the frame's or a caller's
//! function's). The simulation
//! does not make them; it records them, in program order, and the replacement code replays
//! them after the graph has run (and before the breaking instruction, when the frame breaks),
//! so that they happen exactly once, as written.
//!
//! A caller's list (exactly a list) that the call changes is followed instead. Appends,
//! and stores at an index that changes per call, alone are replayed as written
//! (`log.append(y)` and `ring[self.pos] = y` read nothing of the list, so no guard on its
//! length or on the index's value is needed). From its first other change or read on, the
//! simulation works on a shadow of its items (`ShadowList`: the items it had, then what was
//! appended and stored), and the
//! replacement writes the shadow's final items back into the same list (`list[:] = ...`)
//! at that point, which also stands for the appends replayed before it. Reads of the list
//! see the shadow, as they would see the list; the list keeps its identity, as it does when
//! the code runs.
//!
//! What the simulation may still read afterwards is limited so that it never sees a value
//! the replay would change. A key of a caller's dict stored or deleted by str key is
//! followed key by key (`SideEffects::read_key`: the stored value, or the dict's own for
//! another key, with the guards that keep two sources apart or together); otherwise the
//! items of a changed dict are not read again, nor a stored attribute (each also of any
//! object of the same exact class, which could be the same object on another call: the
//! guards do not pin identities), and, in the generated
//! code, any value loaded from under a mutated object or from a rebound name after that
//! mutation (see [`SideEffects::stale`]).

use std::cell::RefCell;
use std::rc::Rc;

use hashbrown::HashSet;
use rustpython_vm::builtins::PyDict;
use rustpython_vm::{AsObject, Context, PyObject, PyObjectRef, PyPayload};

use crate::translate::breaks::reason::Kind;
pub use crate::translate::effect::Effect;
use crate::translate::key_const::{StoreKey, store_key};
use crate::translate::source::{KeyConst, Source};
use crate::translate::state::{SimResult, unsupported};
use crate::translate::values::caller_cells::CallerCell;
use crate::translate::values::numbers::Num;
use crate::translate::values::{ListRef, Var};

mod globals;

/// Whether `obj` holds a dict's entries: a store or delete of one of its keys reaches here
/// only once the simulation read it as a dict (`is_dict`: dict, or a class whose entries are
/// dict's).
fn holds_entries(obj: &PyObject) -> bool {
    obj.downcast_ref::<PyDict>().is_some()
}

/// Two sources a read relied on being (`true`), or not being, one object: `(guarded, other,
/// same)`.
pub type Relation = (Source, Source, bool);

/// The effects of one translation, and what the simulation must not read because of them.
#[derive(Default)]
pub struct SideEffects {
    pub log: Vec<Effect>,
    /// Objects that existed before the call and whose items were changed, by identity, with
    /// the source each was changed through.
    mutated: Vec<PyObjectRef>,
    mutated_sources: Vec<(PyObjectRef, Source)>,
    /// Stores and deletes of one str key into a caller's dict (exactly a dict), newest
    /// last, an instance's attribute among them as a key of its `__dict__`. A read of one
    /// key follows them ([`SideEffects::read_key`]), and so does a read of the whole dict
    /// ([`SideEffects::keyed_stores_of`]).
    keyed: Vec<KeyedStore>,
    /// Globals written, newest last: (the globals dictionary, the name, the value or `None`
    /// for deleted).
    globals: Vec<(PyObjectRef, String, Option<Var>)>,
    /// The caller's lists the call changed, each followed by a shadow of its items.
    shadows: Vec<ShadowList>,
    /// Changes replayed as written to a caller's list not followed by a shadow, newest
    /// last, with the list and its source: what its shadow makes of its items, if one is
    /// made.
    replayed: Vec<(PyObjectRef, Source, ListChange)>,
    /// The caller's closure cells the call reached, by identity (see `caller_cells`).
    pub cells: Vec<CallerCell>,
}

/// A change to a caller's list that is replayed as written while the simulation does not
/// follow the list by a shadow.
#[derive(Clone)]
pub enum ListChange {
    /// An item appended (by `append` or `extend`).
    Append(Var),
    /// `list[index] = value` at an index that changes per call, in range by the guards
    /// (`values::indexed_stores`); a shadow made later fixes the index by its value.
    SetAt(Rc<Num>, Var),
}

/// A caller's list the call changed: the list, the source it was first changed through, and
/// its items as the simulation has made them (written back whole by the replacement).
struct ShadowList {
    list: PyObjectRef,
    target: Source,
    items: ListRef,
}

/// A store (`value`) or delete (`None`) of one str key of a caller's dict.
struct KeyedStore {
    dict: PyObjectRef,
    /// The source the dict was written through (`obj.__dict__` for an attribute).
    target: Source,
    key: StoreKey,
    value: Option<Var>,
    /// Made as `obj.key = value`: the object model follows it as an attribute, so an
    /// attribute read does not count it as a change of the dict.
    through_attr: bool,
}

/// How far the effects went, for a rollback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mark([usize; 8]);

impl SideEffects {
    pub fn mark(&self) -> Mark {
        Mark([
            self.log.len(),
            self.mutated.len(),
            self.globals.len(),
            self.mutated_sources.len(),
            self.keyed.len(),
            self.shadows.len(),
            self.replayed.len(),
            self.cells.len(),
        ])
    }

    /// Whether all that was recorded since `m` is cache lookups (see `values::cached_calls`).
    pub fn only_cache_lookups_since(&self, m: Mark) -> bool {
        let mut now = self.mark();
        now.0[0] = m.0[0];
        now == m
            && self.log[m.0[0]..].iter().all(|e| {
                matches!(
                    e,
                    Effect::Output {
                        call: crate::translate::effect::OutputCall::CacheLookup(_),
                        ..
                    }
                )
            })
    }

    pub fn rollback(&mut self, m: Mark) {
        let [
            log,
            mutated,
            globals,
            sources,
            keyed,
            shadows,
            replayed,
            cells,
        ] = m.0;
        self.cells.truncate(cells);
        self.replayed.truncate(replayed);
        self.shadows.truncate(shadows);
        self.keyed.truncate(keyed);
        self.log.truncate(log);
        self.mutated.truncate(mutated);
        self.mutated_sources.truncate(sources);
        self.globals.truncate(globals);
    }

    /// Record a mutation of `obj` (read from the frame as the effect's target).
    pub fn mutate(&mut self, obj: &PyObjectRef, effect: Effect) {
        match &effect {
            // Attributes are followed by the object model (`State::attr_writes`); what the
            // instance's `__dict__` shows of them, here.
            Effect::SetAttr { target, name, .. } | Effect::DelAttr { target, name } => {
                if let Some(dict) = obj.dict() {
                    let value = match &effect {
                        Effect::SetAttr { value, .. } => Some(value.clone()),
                        _ => None,
                    };
                    self.keyed.push(KeyedStore {
                        dict: dict.into(),
                        target: target.clone().instance_dict(),
                        key: StoreKey::Const(KeyConst::Str(name.clone())),
                        value,
                        through_attr: true,
                    });
                }
            }
            // One key of a caller's dict (a str, an int, a tuple of them): followed key by key.
            Effect::SetItem { target, key, .. } | Effect::DelItem { target, key }
                if holds_entries(obj)
                    && let Some(k) = store_key(key) =>
            {
                let value = match &effect {
                    Effect::SetItem { value, .. } => Some(value.clone()),
                    _ => None,
                };
                self.keyed.push(KeyedStore {
                    dict: obj.clone(),
                    target: target.clone(),
                    key: k,
                    value,
                    through_attr: false,
                });
            }
            _ => self.mutated.push(obj.clone()),
        }
        if let Some(target) = effect.target() {
            self.note_mutated(obj, target);
        }
        log::debug!(target: crate::log_targets::SIDE_EFFECTS, "recorded {effect:?}");
        self.log.push(effect);
    }

    /// Record the write-back of the caller's tensor read from `target`, whose fake is `value`
    /// (once per tensor: it copies the fake's final value).
    pub fn write_back(&mut self, target: Source, value: Var) {
        let effect = Effect::WriteBack { target, value };
        log::debug!(target: crate::log_targets::SIDE_EFFECTS, "recorded {effect:?}");
        self.log.push(effect);
    }

    /// Record an effect on the program's output (`Effect::Output`): it changes nothing the
    /// simulation reads, so only its place among the others matters.
    pub fn output(&mut self, effect: Effect) {
        log::debug!(target: crate::log_targets::SIDE_EFFECTS, "recorded {effect:?}");
        self.log.push(effect);
    }

    /// Whether the call changed `obj` itself (found by identity).
    pub fn changed(&self, obj: &PyObject) -> bool {
        self.mutated.iter().any(|m| m.is(obj))
            || self.keyed.iter().any(|w| !w.through_attr && w.dict.is(obj))
            || self.shadows.iter().any(|s| s.list.is(obj))
            || self.replayed.iter().any(|(l, _, _)| l.is(obj))
    }

    /// Record `target.method(list_arg)` (`append` or `extend`) on the caller's list `list`,
    /// not followed by a shadow yet: replayed as written, and `items` (what it appends)
    /// remembered for a shadow made later.
    pub fn append(
        &mut self,
        list: &PyObjectRef,
        target: &Source,
        method: &'static str,
        arg: Var,
        items: Vec<Var>,
    ) {
        for item in items {
            self.replayed
                .push((list.clone(), target.clone(), ListChange::Append(item)));
        }
        self.note_mutated(list, target);
        let effect = Effect::Method {
            target: target.clone(),
            method,
            args: vec![arg],
        };
        log::debug!(target: crate::log_targets::SIDE_EFFECTS, "recorded {effect:?}");
        self.log.push(effect);
    }

    /// Record `target[index] = value` on the caller's list `list`, not followed by a
    /// shadow, at an index that changes per call: replayed as written, the index computed
    /// per call, and remembered for a shadow made later.
    pub fn set_at(&mut self, list: &PyObjectRef, target: &Source, index: Rc<Num>, value: Var) {
        let change = ListChange::SetAt(index.clone(), value.clone());
        self.replayed.push((list.clone(), target.clone(), change));
        self.note_mutated(list, target);
        let effect = Effect::SetItem {
            target: target.clone(),
            key: Var::Num(index),
            value,
        };
        log::debug!(target: crate::log_targets::SIDE_EFFECTS, "recorded {effect:?}");
        self.log.push(effect);
    }

    /// What the call changed of the caller's list `list` without following it by a shadow
    /// (appends, stores at a changing index), oldest first, and the source it first did so
    /// through.
    pub fn replayed_changes(&self, list: &PyObject) -> Option<(Source, Vec<ListChange>)> {
        let mut found = self
            .replayed
            .iter()
            .filter(|(l, _, _)| l.is(list))
            .peekable();
        let source = found.peek()?.1.clone();
        Some((source, found.map(|(_, _, v)| v.clone()).collect()))
    }

    /// Whether the call changed `obj` at all: as [`SideEffects::changed`], and also an
    /// instance's `__dict__` through an attribute store (what an iterator over that dict
    /// must see: Python raises if it changed size).
    pub fn touched(&self, obj: &PyObject) -> bool {
        self.changed(obj) || self.keyed.iter().any(|w| w.dict.is(obj))
    }

    /// How many stores and deletes of its keys the call made into the caller's dict `dict`.
    pub fn keyed_count(&self, dict: &PyObject) -> usize {
        self.keyed.iter().filter(|w| w.dict.is(dict)).count()
    }

    /// The keys of the stores (`true`) and deletes into the caller's dict `dict`, from the
    /// `from`-th on (as `keyed_count` counts them).
    pub fn keyed_since(&self, dict: &PyObject, from: usize) -> Vec<(&StoreKey, bool)> {
        self.keyed
            .iter()
            .filter(|w| w.dict.is(dict))
            .skip(from)
            .map(|w| (&w.key, w.value.is_some()))
            .collect()
    }

    /// Whether the call changed `obj` otherwise than key by key (`update`, `clear`...).
    pub fn changed_whole(&self, obj: &PyObject) -> bool {
        self.mutated.iter().any(|m| m.is(obj))
    }

    /// The shadow of the caller's list `list`, if the call changed it: the source it was
    /// changed through, and its items now.
    pub fn shadow_of(&self, list: &PyObject) -> Option<(Source, ListRef)> {
        self.shadows
            .iter()
            .find(|s| s.list.is(list))
            .map(|s| (s.target.clone(), s.items.clone()))
    }

    /// Before a change to the shadow of `list`: if an effect was recorded after the shadow's
    /// write-back, that write-back keeps the items as they are now (a copy), and a new one,
    /// last, follows the shadow. Each effect is then replayed after the list is as the call
    /// left it at that point: one that raises when replayed (a delete of a missing key)
    /// leaves the later changes unmade, as Python leaves them.
    pub fn before_shadow_change(&mut self, list: &PyObject) {
        let Some(shadow) = self.shadows.iter().find(|s| s.list.is(list)) else {
            return;
        };
        let writes_back = |e: &Effect| matches!(e, Effect::SetItem { value: Var::List(l), .. } if Rc::ptr_eq(l, &shadow.items));
        let Some(at) = self.log.iter().rposition(writes_back) else {
            return;
        };
        if at + 1 == self.log.len() {
            return;
        }
        let now = Var::List(Rc::new(RefCell::new(shadow.items.borrow().clone())));
        let again = whole_list_store(&shadow.target, shadow.items.clone());
        if let Effect::SetItem { value, .. } = &mut self.log[at] {
            *value = now;
        }
        self.log.push(again);
    }

    /// Follow the caller's list `list` (read from `target`) by a shadow holding `items`, its
    /// items now (with what was appended to it): what the call does to the list from here on is done
    /// to the shadow, which the replacement writes back whole at this point among the effects.
    pub fn shadow(&mut self, list: &PyObjectRef, target: &Source, items: ListRef) {
        let effect = whole_list_store(target, items.clone());
        self.note_mutated(list, target);
        self.shadows.push(ShadowList {
            list: list.clone(),
            target: target.clone(),
            items,
        });
        log::debug!(target: crate::log_targets::SIDE_EFFECTS, "following {target} by a shadow of its items");
        self.log.push(effect);
    }

    /// A read of `obj[key]` (`obj` a caller's dict, read through `source`) after the
    /// call's keyed stores: what the store made it, if the call stored or deleted `key` of
    /// `obj` itself; otherwise nothing (the dict as it is). Refused after a change to the
    /// dict as a whole. A store of `key` into a dict of the same class is another object
    /// only as long as the guards say so, and a store by another object key (read from
    /// another source) another key: each such relation is returned, as `(guarded source,
    /// other source, same)`, for the caller to guard.
    pub fn read_key(
        &self,
        obj: &PyObject,
        source: &Source,
        key: &StoreKey,
    ) -> SimResult<(Option<Option<Var>>, Vec<Relation>)> {
        refuse_if_touched(&self.mutated, obj, "changed")?;
        self.refuse_if_changing_keys(obj)?;
        self.refuse_if_globals_stored(obj)?;
        // A loop that stores an attribute on every step (a parser's position) makes as many
        // stores as steps, each met by every later read: relations are told apart by
        // reference first, and cloned once.
        let mut seen = HashSet::new();
        let mut relations = Vec::new();
        let mut relate = |a, b, same| relate_once(&mut seen, &mut relations, a, b, same);
        let mut found = None;
        for w in &self.keyed {
            // Object keys may be one object on another call: related as constants are when
            // equal.
            let objects = matches!((&w.key, key), (StoreKey::Object(..), StoreKey::Object(..)));
            // A key that changes per call may be any key: a store into another dict by one
            // is kept apart (one into `obj` itself was refused above).
            let changing = matches!(w.key, StoreKey::Changing(_));
            if !(objects || changing || w.key.same(key)) || !w.dict.class().is(obj.class()) {
                continue;
            }
            let same = w.dict.is(obj);
            relate(source, &w.target, same);
            if !same {
                continue;
            }
            if let (StoreKey::Object(a, at), StoreKey::Object(b, bt)) = (&w.key, key) {
                relate(bt, at, a.is(b));
            }
            if w.key.same(key) {
                found = Some(w.value.clone());
            }
        }
        Ok((found, relations))
    }

    /// A read of the whole of `obj` (a caller's dict, exactly a dict, read through `source`)
    /// after the call's keyed stores: the stores and deletes of its keys, oldest first, for
    /// the reader to apply to its entries. Refused after a change to a dict as a whole. As
    /// in [`SideEffects::read_key`], each store into a dict of the same class through
    /// another source is a relation, `(other source, same)`, for the caller to guard.
    pub fn keyed_stores_of(
        &self,
        obj: &PyObject,
        source: &Source,
    ) -> SimResult<(Vec<(StoreKey, Option<Var>)>, Vec<Relation>)> {
        refuse_if_touched(&self.mutated, obj, "changed")?;
        self.refuse_if_changing_keys(obj)?;
        self.refuse_if_globals_stored(obj)?;
        let mut seen = HashSet::new();
        let mut relations = Vec::new();
        let mut stores = Vec::new();
        for w in &self.keyed {
            if !w.dict.class().is(obj.class()) {
                continue;
            }
            let same = w.dict.is(obj);
            relate_once(&mut seen, &mut relations, source, &w.target, same);
            if same {
                stores.push((w.key.clone(), w.value.clone()));
            }
        }
        Ok((stores, relations))
    }

    /// The stores by a key that changes per call into `obj` (found by identity): their
    /// positions, for `fix_key`, and their keys.
    pub fn changing_keys(&self, obj: &PyObject) -> Vec<(usize, Rc<Num>)> {
        self.keyed
            .iter()
            .enumerate()
            .filter(|(_, w)| w.dict.is(obj))
            .filter_map(|(i, w)| match &w.key {
                StoreKey::Changing(n) => Some((i, n.clone())),
                _ => None,
            })
            .collect()
    }

    /// The key of the store at `at` (a key that changes per call), now fixed by its value:
    /// reads follow it from here on, as they follow a constant's.
    pub fn fix_key(&mut self, at: usize, key: KeyConst) {
        self.keyed[at].key = StoreKey::Const(key);
    }

    /// A read of `obj` cannot tell whether a store into it by a key that changes per call
    /// stored the key it reads: refused, unless the reader fixed those keys first
    /// (`State::fix_changing_keys`). A store into another dict of its class by such a key
    /// is another dict as long as the guards say so (`read_key`, `keyed_stores_of`).
    fn refuse_if_changing_keys(&self, obj: &PyObject) -> SimResult<()> {
        if self.changing_keys(obj).is_empty() {
            return Ok(());
        }
        unsupported(
            Kind::SideEffect,
            format!(
                "a read of a {} after the call stored into it by a key that changes per call",
                obj.class().name()
            ),
        )
    }

    /// The sources the call changed `obj` through (by identity), first first.
    pub fn sources_of(&self, obj: &PyObject) -> Vec<Source> {
        let mut out: Vec<Source> = Vec::new();
        for (m, s) in &self.mutated_sources {
            if m.is(obj) && !out.contains(s) {
                out.push(s.clone());
            }
        }
        out
    }

    /// Note that `obj`, read from `target`, was changed: once per pair, so that a loop
    /// storing into one object on every step (a parser's position) keeps one entry, not one
    /// per step for every later read to go through.
    fn note_mutated(&mut self, obj: &PyObjectRef, target: &Source) {
        if !self
            .mutated_sources
            .iter()
            .any(|(m, s)| m.is(obj) && s == target)
        {
            self.mutated_sources.push((obj.clone(), target.clone()));
        }
    }

    /// The sources of the objects the call changed that are of `obj`'s exact class and are
    /// not `obj`: what a read of `obj` as unchanged relies on not being `obj` on a later call.
    pub fn others_changed_like(&self, obj: &PyObject) -> Vec<Source> {
        self.mutated_sources
            .iter()
            .filter(|(m, _)| !m.is(obj) && m.class().is(obj.class()))
            .map(|(_, s)| s.clone())
            .collect()
    }

    /// Record a store into a free variable of the translated frame.
    pub fn store_cell(&mut self, name: &str, value: Var) {
        let effect = Effect::StoreCell {
            name: name.to_owned(),
            value,
        };
        log::debug!(target: crate::log_targets::SIDE_EFFECTS, "recorded {effect:?}");
        self.log.push(effect);
    }

    /// Refuses a read of the items of `obj` (an object that existed before the call) once
    /// they, or those of an object of its exact class, have been changed.
    ///
    /// An instance's `__dict__` changed through an attribute is another object than `obj`
    /// as long as its source is not `obj`'s: those sources are returned, for the caller to
    /// guard apart (the dicts of instances are many; refusing all of them would refuse every
    /// read of a dict after a counter update).
    pub fn check_readable(&self, obj: &PyObject) -> SimResult<Vec<Source>> {
        self.refuse_if_globals_stored(obj)?;
        let shadowed = self
            .shadows
            .iter()
            .map(|s| &s.list)
            .chain(self.replayed.iter().map(|(l, _, _)| l))
            .filter(|l| l.is(obj));
        let keyed = self
            .keyed
            .iter()
            .filter(|w| !w.through_attr || w.dict.is(obj))
            .map(|w| &w.dict);
        refuse_if_touched(
            self.mutated.iter().chain(keyed).chain(shadowed),
            obj,
            "changed",
        )?;
        Ok(self.apart_from(obj))
    }

    /// The sources of the objects of `obj`'s class that the call changed and that the
    /// simulation follows (lists, instances' `__dict__`s), other than `obj`: what a read of
    /// `obj` as it is relies on not being `obj` on a later call.
    pub fn apart_from(&self, obj: &PyObject) -> Vec<Source> {
        let mut apart: Vec<Source> = Vec::new();
        // Another list the call changed is followed by its shadow: this one is read as it
        // is while the guards keep the two apart.
        let lists = self.shadows.iter().map(|s| (&s.list, &s.target));
        let replayed = self.replayed.iter().map(|(l, s, _)| (l, s));
        for (list, target) in lists.chain(replayed) {
            if !list.is(obj) && list.class().is(obj.class()) && !apart.contains(target) {
                apart.push(target.clone());
            }
        }
        for w in &self.keyed {
            if w.through_attr
                && !w.dict.is(obj)
                && w.dict.class().is(obj.class())
                && !apart.contains(&w.target)
            {
                apart.push(w.target.clone());
            }
        }
        apart
    }

    /// Whether an effect from `from` up to (not including) `to` changes `source`.
    pub fn changed_between(&self, from: usize, to: usize, source: &Source) -> bool {
        self.log[from..to].iter().any(|e| e.changes(source))
    }

    /// Whether loading `source` after the first `after` effects would read a value they changed.
    pub fn stale(&self, after: usize, source: &Source) -> bool {
        self.log[..after].iter().any(|e| e.changes(source))
    }
}

/// `target[:] = items`: a shadow written back into its list.
fn whole_list_store(target: &Source, items: ListRef) -> Effect {
    let ctx = Context::genesis();
    let whole = rustpython_vm::builtins::PySlice {
        start: None,
        stop: ctx.none(),
        step: None,
    }
    .into_ref(ctx);
    Effect::SetItem {
        target: target.clone(),
        key: Var::Obj(whole.into()),
        value: Var::List(items),
    }
}

fn refuse_if_touched<'a>(
    touched: impl IntoIterator<Item = &'a PyObjectRef>,
    obj: &PyObject,
    what: &str,
) -> SimResult<()> {
    match touched
        .into_iter()
        .find(|m| m.is(obj) || m.class().is(obj.class()))
    {
        Some(m) if m.is(obj) => unsupported(
            Kind::SideEffect,
            format!("a read of a {} the call {what} earlier", obj.class().name()),
        ),
        Some(_) => unsupported(
            Kind::SideEffect,
            format!(
                "a read of a {} after the call {what} another one (it may be this one)",
                obj.class().name()
            ),
        ),
        None => Ok(()),
    }
}

/// Add the relation of `a` to `b` to `out`, once (`seen` holds those added).
fn relate_once<'a>(
    seen: &mut HashSet<(&'a Source, &'a Source, bool)>,
    out: &mut Vec<Relation>,
    a: &'a Source,
    b: &'a Source,
    same: bool,
) {
    if a != b && seen.insert((a, b, same)) {
        out.push((a.clone(), b.clone(), same));
    }
}
