//! A caller's list that the call changes (exactly a list: `self.history.append(y)`,
//! `buffer.pop(0)`, `items[i] = x`, `log += [x]`), followed by a shadow of its items (see
//! `side_effects`): the change is made to the shadow, and every later read of the list, by
//! any name for it, reads the shadow. The replacement writes the shadow's items back into
//! the same list, so the list keeps its identity, as it does when the code runs. Appends
//! that nothing reads back are replayed as written instead: they need no guard on the
//! list's length, which a log that grows by one item per call would fail on every call.

use std::cell::RefCell;
use std::rc::Rc;

use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::side_effects::ListChange;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::list_methods::list_position;
use crate::translate::values::{ListRef, Var};

/// The methods of a list that change it, done to a caller's list's shadow.
pub const LIST_MUTATORS: &[&str] = &[
    "append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort",
];

impl State<'_> {
    /// The caller's list `v` stands for (exactly a list, read from the frame), with its source.
    pub fn caller_list(&self, v: &Var) -> Option<(PyObjectRef, Source)> {
        match v {
            Var::Lazy(o, source) if o.class().is(self.vm.ctx.types.list_type) => {
                Some((o.clone(), source.clone()))
            }
            _ => None,
        }
    }

    /// The shadow of the caller's list `o`, read from `source`, if the call changed it (made
    /// now if the call only appended to it, or stored at a changing index, so far). Read from another source than the one
    /// it was changed through, it is the same list only as long as the guards say so.
    pub fn list_shadow(&mut self, o: &PyObjectRef, source: &Source) -> SimResult<Option<ListRef>> {
        if let Some((target, items)) = self.effects.shadow_of(o) {
            self.same_list(source, target);
            return Ok(Some(items));
        }
        let Some((target, changes)) = self.effects.replayed_changes(o) else {
            return Ok(None);
        };
        self.same_list(source, target.clone());
        let mut items = self.items_at_entry(o, &target)?;
        for change in changes {
            match change {
                ListChange::Append(item) => items.push(item),
                // Read back, the list's items are known one by one: the index is fixed by
                // its value from here on (the store stays replayed as written).
                ListChange::SetAt(index, item) => {
                    let i = self.force_number(&index)?;
                    let j = list_position(&i, items.len(), self.vm)?;
                    items[j] = item;
                }
            }
        }
        let items = Rc::new(RefCell::new(items));
        self.effects.shadow(o, &target, items.clone());
        Ok(Some(items))
    }

    /// The shadow a change of the caller's list `o` is made to: on the first change, made
    /// from its items as they are (its type and length guarded, as a read of them is).
    pub fn shadow_list(&mut self, o: &PyObjectRef, source: &Source) -> SimResult<ListRef> {
        if let Some(items) = self.list_shadow(o, source)? {
            self.effects.before_shadow_change(o);
            return Ok(items);
        }
        let items = Rc::new(RefCell::new(self.items_at_entry(o, source)?));
        self.effects.shadow(o, source, items.clone());
        Ok(items)
    }

    /// `v` as the simulation reads it: a caller's list the call changed is its shadow.
    pub fn followed(&mut self, v: &Var) -> SimResult<Var> {
        if let Some((o, source)) = self.caller_list(v)
            && let Some(items) = self.list_shadow(&o, &source)?
        {
            return Ok(Var::List(items));
        }
        Ok(v.clone())
    }

    /// `o.name(*args)` on the caller's list `o` read from `source`: an append or extend of a
    /// list not followed yet is recorded to be replayed; any other change is made to its
    /// shadow. `None` is the method's result.
    pub fn caller_list_method(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
        name: &'static str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        // What `extend` reads is read before the list changes (`l.extend(l)`).
        let (args, added) = match (name, args.as_slice()) {
            ("extend", [x]) => {
                let items = self.items(x)?;
                (vec![Var::list(items.clone())], items)
            }
            ("append", [x]) => (args.clone(), vec![x.clone()]),
            _ => (args, Vec::new()),
        };
        if matches!(name, "append" | "extend")
            && kwargs.is_empty()
            && self.effects.shadow_of(o).is_none()
        {
            let [arg] = <[Var; 1]>::try_from(args).map_err(|_| {
                crate::translate::state::Unsupported::new(
                    Kind::Call,
                    format!("list.{name}() with these arguments"),
                )
            })?;
            if let Some((first, _)) = self.effects.replayed_changes(o) {
                self.same_list(source, first);
            }
            self.guard(source, Check::type_is(o.class().to_owned()));
            self.effects.append(o, source, name, arg, added);
            return Ok(Var::Obj(self.vm.ctx.none()));
        }
        if !LIST_MUTATORS.contains(&name) {
            return unsupported(Kind::Call, format!("list.{name}() of a caller's list"));
        }
        let items = self.shadow_list(o, source)?;
        self.list_method(&items, name, args, kwargs)
    }

    /// The items of the caller's list `o`, read from `source`, as they were when the call
    /// began: its type and length guarded, and the lists the call changed guarded apart.
    fn items_at_entry(&mut self, o: &PyObjectRef, source: &Source) -> SimResult<Vec<Var>> {
        for other in self.effects.apart_from(o) {
            if other != *source {
                self.guard(source, Check::NotSameAs(other));
            }
        }
        let items: Vec<PyObjectRef> = o
            .downcast_ref::<rustpython_vm::builtins::PyList>()
            .expect("a list")
            .borrow_vec()
            .to_vec();
        self.guard(source, Check::type_is(o.class().to_owned()));
        self.guard(source, Check::Len(items.len()));
        Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, x)| Var::Lazy(x, source.clone().item(i)))
            .collect())
    }

    /// Guards that `source` names the list the call changed through `target`.
    fn same_list(&mut self, source: &Source, target: Source) {
        if target != *source {
            self.guard(source, Check::SameAs(target));
        }
    }
}
