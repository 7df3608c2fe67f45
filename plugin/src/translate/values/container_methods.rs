//! Methods of containers called during the simulation: a list's (`list_methods`), a set's,
//! a named tuple's `_replace` and `_asdict`, a dict's made in the call (done on its entries)
//! and a caller's (read as its entries, or a side effect replayed as written), and a caller's
//! list's mutators (followed by its shadow, `caller_lists`).

use std::cell::RefCell;
use std::rc::Rc;

use rustpython_vm::AsObject;

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, is_dict, unsupported};
use crate::translate::values::dict_subclasses::{DictLike, dict_like};
use crate::translate::values::{DictRef, Var, ViewKind};

impl State<'_> {
    pub(super) fn container_method(
        &mut self,
        owner: &Var,
        name: &'static str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        let vm = self.vm;
        if let Var::List(l) = owner {
            return self.list_method(l, name, args, kwargs);
        }
        if let Var::Deque(d) = owner {
            return self.deque_method(d, name, args, kwargs);
        }
        if kwargs.is_empty()
            && let Some(r) = self.caller_deque_method(owner, name, &args)?
        {
            return Ok(r);
        }
        if matches!(name, "_replace" | "_asdict")
            && let Some((class, mut items, fields)) = self.namedtuple_parts(owner)?
        {
            return match (name, args.is_empty()) {
                ("_replace", true) => {
                    for (key, value) in kwargs {
                        let Some(i) = fields.iter().position(|f| *f == key) else {
                            return unsupported(
                                Kind::Raises,
                                format!("_replace() got unexpected field name {key:?} (TypeError)"),
                            );
                        };
                        items[i] = value;
                    }
                    Ok(Var::NamedTuple(class, Rc::new(items)))
                }
                ("_asdict", true) if kwargs.is_empty() => {
                    let entries = fields
                        .iter()
                        .zip(items)
                        .map(|(f, v)| (vm.ctx.new_str(f.as_str()).into(), v))
                        .collect();
                    Ok(Var::Dict(Rc::new(RefCell::new(entries))))
                }
                _ => unsupported(
                    Kind::Raises,
                    format!("{name}() with these arguments (TypeError)"),
                ),
            };
        }
        if kwargs.is_empty()
            && let Some(r) = self.caller_set_method(owner, name, &args)?
        {
            return Ok(r);
        }
        if let Some((o, source)) = self.caller_list(owner)
            && crate::translate::values::caller_lists::LIST_MUTATORS.contains(&name)
        {
            return self.caller_list_method(&o, &source, name, args, kwargs);
        }
        if let (Var::Dict(d), "move_to_end") = (owner, name) {
            return self.move_to_end(d, args, kwargs);
        }
        if name == "update" && !kwargs.is_empty() && args.len() <= 1 {
            // `d.update(m, k=v)`: the mapping's entries, then the keywords, as one mapping.
            let mut entries = match args.first() {
                Some(m) => self.dict_entries(m)?,
                None => Vec::new(),
            };
            for (k, v) in kwargs {
                crate::translate::values::dict_insert(
                    &mut entries,
                    vm.ctx.new_str(k).into(),
                    v,
                    vm,
                )?;
            }
            let merged = Var::Dict(Rc::new(RefCell::new(entries)));
            return self.container_method(owner, name, vec![merged], Vec::new());
        }
        if !kwargs.is_empty() {
            return unsupported(Kind::Call, format!("{name}() with keyword arguments"));
        }
        let none = || Var::Obj(vm.ctx.none());
        if let Var::Set(s) = owner {
            return self.set_method(s, name, args, kwargs);
        }
        match (owner, name, args.as_slice()) {
            (Var::Lazy(o, source), "count" | "index" | "copy", _)
                if o.class().is(vm.ctx.types.list_type) =>
            {
                let items = self.lazy_items(o, source)?.expect("a list has items");
                self.container_method(&Var::list(items), name, args, kwargs)
            }
            (Var::Dict(d), "update", [other]) => {
                for (k, v) in self.dict_entries(other)? {
                    crate::translate::values::dict_insert(&mut d.borrow_mut(), k, v, vm)?;
                }
                Ok(none())
            }
            // Of a caller's dict (or `OrderedDict`, whose own `update` orders keys as dict's).
            (Var::Lazy(o, _), "update", [other])
                if o.class().is(vm.ctx.types.dict_type)
                    || crate::translate::loaded_modules::loaded_attr(
                        "_collections",
                        "OrderedDict",
                        vm,
                    )
                    .is_some_and(|c| c.is(o.class())) =>
            {
                // What update reads, read now; keys of the caller's dict are strs. Each entry
                // is a store of its key (dict's `update` stores as `d[k] = v` would, and
                // `OrderedDict`'s calls `__setitem__`), which later reads follow.
                let entries = self.dict_entries(other)?;
                if entries
                    .iter()
                    .any(|(k, _)| !k.class().is(vm.ctx.types.str_type))
                {
                    return unsupported(
                        Kind::Value,
                        "an update of a dict of the caller with a key that is not a str",
                    );
                }
                for (k, v) in entries {
                    self.set_item(owner, &Var::Obj(k), v)?;
                }
                Ok(none())
            }
            // Live views: they read the dict when used.
            (Var::Dict(d), "items", []) => Ok(Var::View(d.clone(), ViewKind::Items)),
            (Var::Dict(d), "keys", []) => Ok(Var::View(d.clone(), ViewKind::Keys)),
            (Var::Dict(d), "values", []) => Ok(Var::View(d.clone(), ViewKind::Values)),
            (Var::Dict(d), "get", [k, rest @ ..]) if rest.len() <= 1 => {
                let k = self.key(k)?;
                let found = crate::translate::values::dict_entry(d, &k, vm);
                Ok(found.unwrap_or_else(|| rest.first().cloned().unwrap_or_else(none)))
            }
            (Var::Dict(d), "copy", []) => {
                let copy = Rc::new(RefCell::new(d.borrow().clone()));
                if let Some((class, factory)) = self.dict_kind(d) {
                    self.dict_kinds.push((copy.clone(), class, factory));
                }
                Ok(Var::Dict(copy))
            }
            (Var::Dict(d), "setdefault", [k, rest @ ..]) if rest.len() <= 1 => {
                let k = self.key(k)?;
                match crate::translate::values::dict_entry(d, &k, vm) {
                    Some(v) => Ok(v),
                    None => {
                        let v = rest.first().cloned().unwrap_or_else(none);
                        d.borrow_mut().push((k, v.clone()));
                        Ok(v)
                    }
                }
            }
            // A caller's dict read: its entries as they are (a change to it made during the
            // simulation is not read back: `lazy_dict_entries` refuses it).
            (Var::Lazy(o, source), "keys" | "values" | "items", []) if is_dict(o, vm) => {
                let kind = match name {
                    "keys" => ViewKind::Keys,
                    "values" => ViewKind::Values,
                    _ => ViewKind::Items,
                };
                Ok(Var::CallerView(Rc::new(
                    crate::translate::values::iterators::CallerView {
                        dict: o.clone(),
                        source: source.clone(),
                        kind,
                    },
                )))
            }
            // A copy of a caller's dict: a dict made here of its entries, as `dict(d)` is.
            (Var::Lazy(o, _), "copy", []) if is_dict(o, vm) => Ok(Var::Dict(Rc::new(
                std::cell::RefCell::new(self.dict_entries(owner)?),
            ))),
            (Var::Lazy(o, source), "setdefault", [k, rest @ ..])
                if is_dict(o, vm) && rest.len() <= 1 =>
            {
                // Present: read as `get` reads it; absent: a store, replayed as written.
                let key = self.caller_key(k, "dict.setdefault")?;
                if let Some(v) = self.caller_dict_read(o, source, &key)? {
                    return Ok(v);
                }
                let value = rest.first().cloned().unwrap_or_else(none);
                self.set_item(owner, k, value.clone())?;
                Ok(value)
            }
            (Var::Lazy(o, source), "get", [k, rest @ ..]) if is_dict(o, vm) && rest.len() <= 1 => {
                let k = self.caller_key(k, "dict.get")?;
                Ok(match self.caller_dict_read(o, source, &k)? {
                    Some(v) => v,
                    None => rest.first().cloned().unwrap_or_else(none),
                })
            }
            // `kwargs.pop("mask", None)`: the entry taken out, or the default.
            (Var::Dict(d), "pop", [k, rest @ ..]) if rest.len() <= 1 => {
                let key = self.key(k)?;
                let at = d
                    .borrow()
                    .iter()
                    .position(|(x, _)| vm.bool_eq(x, &key).unwrap_or(false));
                match (at, rest.first()) {
                    (Some(at), _) => Ok(d.borrow_mut().remove(at).1),
                    (None, Some(default)) => Ok(default.clone()),
                    (None, None) => self.missing_key(k, "dict.pop()"),
                }
            }
            (Var::Dict(d), "popitem", []) => {
                let last = d.borrow_mut().pop();
                match last {
                    Some((k, v)) => Ok(Var::tuple(vec![Var::Obj(k), v])),
                    None => unsupported(Kind::Raises, "popitem() of an empty dict (KeyError)"),
                }
            }
            (Var::Dict(d), "clear", []) => {
                d.borrow_mut().clear();
                Ok(none())
            }
            // Of a caller's dict: read as `get` reads it, then deleted (a side effect).
            (Var::Lazy(o, source), "pop", [k, rest @ ..]) if is_dict(o, vm) && rest.len() <= 1 => {
                let key = self.caller_key(k, "dict.pop")?;
                match (self.caller_dict_read(o, source, &key)?, rest.first()) {
                    (Some(v), _) => {
                        self.del_item(owner, k)?;
                        Ok(v)
                    }
                    (None, Some(default)) => Ok(default.clone()),
                    (None, None) => self.missing_key(k, "dict.pop()"),
                }
            }
            _ => unsupported(
                Kind::Call,
                format!("{}.{name}() with these arguments", owner.kind()),
            ),
        }
    }

    /// A `KeyError(key)` raised where the program would raise it.
    fn missing_key(&mut self, key: &Var, what: &str) -> SimResult<Var> {
        self.raise_native(
            self.vm.ctx.exceptions.key_error,
            vec![key.clone()],
            format!("{what} of a missing key (KeyError)"),
        )
    }

    /// `d.move_to_end(key, last=True)` of an `OrderedDict` made here, whose entries are in its
    /// order: the entry moved to the end, or to the front.
    fn move_to_end(
        &mut self,
        d: &DictRef,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        let vm = self.vm;
        let ordered = self
            .dict_kind(d)
            .is_some_and(|(class, _)| dict_like(&class, vm) == Some(DictLike::Ordered));
        let last = match (args.as_slice(), kwargs.as_slice()) {
            ([_], []) => None,
            ([_, last], []) => Some(last),
            ([_], [(name, last)]) if name == "last" => Some(last),
            _ => return unsupported(Kind::Call, "move_to_end() with these arguments"),
        };
        if !ordered {
            return unsupported(Kind::Call, "method move_to_end of a dict made here");
        }
        let last = match last {
            Some(v) => self.truth(v)?,
            None => true,
        };
        let key = self.key(&args[0])?;
        let at = d
            .borrow()
            .iter()
            .position(|(k, _)| vm.bool_eq(k, &key).unwrap_or(false));
        let Some(at) = at else {
            return self.missing_key(&args[0], "move_to_end()");
        };
        let mut entries = d.borrow_mut();
        let entry = entries.remove(at);
        match last {
            true => entries.push(entry),
            false => entries.insert(0, entry),
        }
        Ok(Var::Obj(vm.ctx.none()))
    }
}

impl State<'_> {
    /// `o.method(*args)` on an object of the caller's, read from `source`, recorded to be
    /// replayed as written after the graph (`Effect::Method`); `o`'s class is guarded, so
    /// that the method replayed is the one simulated.
    pub(crate) fn replayed_method(
        &mut self,
        o: &rustpython_vm::PyObjectRef,
        source: &crate::translate::source::Source,
        method: &'static str,
        args: Vec<Var>,
    ) {
        self.guard(
            source,
            crate::translate::guards::guard::Check::type_is(o.class().to_owned()),
        );
        let target = source.clone();
        let effect = crate::translate::side_effects::Effect::Method {
            target,
            method,
            args,
        };
        self.effects.mutate(o, effect);
    }
}
