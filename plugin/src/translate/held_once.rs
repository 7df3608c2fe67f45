//! The check that what the replacement rebuilds is what the original would have had. A
//! container or object made during the call and reachable more than once from the frame's
//! state (or from what the side effects store) is one object: the replacement builds it once
//! and loads it again (`Template::Shared`). What cannot be made that way is turned away: a
//! value that holds itself (it would be loaded before it is built), and an iterator or a
//! view held beside what it iterates (rebuilt, the two would be apart), but for a list's
//! iterator and a dict's views and iterators, made again over the one built once.

use std::rc::Rc;

use rustpython_vm::AsObject;

use crate::translate::state::{Kind, SimResult, Unsupported};
use crate::translate::values::{CellRef, Var};

/// The values made during the simulation (by address: of a tuple's or list's items, a dict's
/// entries, an object, a set) that `values` (the frame's state, what side effects store)
/// reach more than once, which the replacement builds once. Fails for a value that holds
/// itself, and for an iterator or view held beside what it reads.
pub fn held_once<'a>(
    values: impl Iterator<Item = &'a Var>,
    frame_cells: &[(String, CellRef)],
) -> SimResult<Vec<usize>> {
    let mut walk = Walk {
        frame_cells: frame_cells.to_vec(),
        ..Walk::default()
    };
    values.into_iter().try_for_each(|v| walk.value(v))?;
    Ok(walk.shared)
}

/// The address by which `held_once` knows a value made during the simulation that the
/// replacement builds (and may build once for several holders); `None` for another value.
pub fn made_address(v: &Var) -> Option<usize> {
    match v {
        Var::Tuple(items) | Var::NamedTuple(_, items) if !items.is_empty() => {
            Some(Rc::as_ptr(items) as usize)
        }
        Var::List(l) => Some(Rc::as_ptr(l) as usize),
        Var::Deque(d) => Some(Rc::as_ptr(d) as usize),
        Var::Dict(d) => Some(Rc::as_ptr(d) as usize),
        Var::Object(o) => Some(Rc::as_ptr(o) as usize),
        Var::Set(s) => Some(s.get_id()),
        Var::Func(f) => Some(Rc::as_ptr(f) as usize),
        Var::Cell(c) => Some(Rc::as_ptr(c) as usize),
        Var::TStr(t) => Some(Rc::as_ptr(t) as usize),
        Var::Gen(g) => Some(Rc::as_ptr(g) as usize),
        _ => None,
    }
}

#[derive(Default)]
struct Walk {
    /// Values being walked (what they hold is under way), and those walked.
    open: Vec<usize>,
    done: Vec<usize>,
    /// Walked values reached again: built once.
    shared: Vec<usize>,
    /// What an iterator or a view reads, and an object's attribute dictionary: reachable
    /// only through that one holder.
    exclusive: Vec<usize>,
    /// The translated frame's cells: the replacement's own, not made again.
    frame_cells: Vec<(String, CellRef)>,
}

fn refused(what: &str) -> Unsupported {
    Unsupported::new(Kind::Rebuild, what)
}

impl Walk {
    /// Whether the value at `p` is met for the first time (then what it holds is walked,
    /// and `done` called after); met again after it was walked, it is shared.
    fn first_time(&mut self, p: usize) -> SimResult<bool> {
        if self.open.contains(&p) {
            return Err(refused("a value made during the call holds itself"));
        }
        if self.exclusive.contains(&p) {
            return Err(refused(
                "a list or dict made during the call is held beside a view or an iterator of it",
            ));
        }
        if self.done.contains(&p) {
            if !self.shared.contains(&p) {
                self.shared.push(p);
            }
            return Ok(false);
        }
        self.open.push(p);
        Ok(true)
    }

    fn done(&mut self, p: usize) {
        self.open.retain(|&q| q != p);
        self.done.push(p);
    }

    /// `p` read through one holder alone (an iterator's list, a view's dict).
    fn exclusive(&mut self, p: usize) -> SimResult<()> {
        if self.exclusive.contains(&p) || self.done.contains(&p) || self.open.contains(&p) {
            return Err(refused(
                "a list, dict or iterator made during the call is held twice",
            ));
        }
        self.exclusive.push(p);
        Ok(())
    }

    /// Walks what `p` holds, once: `items` when it is met for the first time.
    fn holder<'a>(&mut self, p: usize, items: impl Iterator<Item = &'a Var>) -> SimResult<()> {
        if self.first_time(p)? {
            items.into_iter().try_for_each(|x| self.value(x))?;
            self.done(p);
        }
        Ok(())
    }

    fn value(&mut self, v: &Var) -> SimResult<()> {
        match v {
            Var::Tuple(items) | Var::NamedTuple(_, items) if items.is_empty() => Ok(()),
            Var::Tuple(items) | Var::NamedTuple(_, items) => {
                self.holder(Rc::as_ptr(items) as usize, items.iter())
            }
            Var::List(l) => self.holder(Rc::as_ptr(l) as usize, l.borrow().iter()),
            Var::Deque(d) => self.holder(Rc::as_ptr(d) as usize, d.borrow().items.iter()),
            Var::Dict(d) => {
                let entries = d.borrow();
                self.holder(Rc::as_ptr(d) as usize, entries.iter().map(|(_, x)| x))
            }
            // An object made during the call, with its dictionary (which `__dict__` shares)
            // and the entries of a dict it is.
            Var::Object(o) => {
                let p = Rc::as_ptr(o) as usize;
                if !self.first_time(p)? {
                    return Ok(());
                }
                self.exclusive(Rc::as_ptr(&o.dict) as usize)?;
                if let Some(entries) = &o.entries {
                    self.exclusive(Rc::as_ptr(entries) as usize)?;
                    entries
                        .borrow()
                        .iter()
                        .try_for_each(|(_, x)| self.value(x))?;
                }
                o.dict
                    .borrow()
                    .iter()
                    .try_for_each(|(_, x)| self.value(x))?;
                self.done(p);
                Ok(())
            }
            Var::Set(s) => self.holder(s.get_id(), std::iter::empty()),
            Var::TStr(t) => self.holder(Rc::as_ptr(t) as usize, t.held().into_iter()),
            // A generator made again by the call that made it: its callable and arguments.
            Var::Gen(g) => {
                let g = g.borrow();
                let held: Vec<&Var> = match &g.made_by {
                    Some((f, args, kwargs)) => std::iter::once(f)
                        .chain(args)
                        .chain(kwargs.iter().map(|(_, v)| v))
                        .collect(),
                    None => Vec::new(),
                };
                self.holder(made_address(v).expect("a generator"), held.into_iter())
            }
            // A function made in the call: the frame's cells in its closure are the
            // replacement's own (`function_templates`); a cell an inlined call made is made
            // again with what it holds, once for every function holding it.
            Var::Func(f) => {
                let p = Rc::as_ptr(f) as usize;
                if !self.first_time(p)? {
                    return Ok(());
                }
                [&f.defaults, &f.kwdefaults]
                    .into_iter()
                    .flatten()
                    .chain(f.annotations.iter().map(|(_, v)| v))
                    .try_for_each(|x| self.value(x))?;
                for cell in &f.closure {
                    let c = cell.borrow();
                    if !c.existing && !self.frame_cells.iter().any(|(_, k)| Rc::ptr_eq(k, cell)) {
                        let held = c.value.iter();
                        self.holder(Rc::as_ptr(cell) as usize, held)?;
                    }
                }
                self.done(p);
                Ok(())
            }
            Var::Iter(items) => {
                self.exclusive(Rc::as_ptr(items) as usize)?;
                items.borrow().iter().try_for_each(|x| self.value(x))
            }
            // A view or an iterator of a dict: made again over the dict built once.
            Var::View(d, _) => self.value(&Var::Dict(d.clone())),
            Var::DictIter(it) => {
                let dict = it.borrow().dict.clone();
                self.value(&Var::Dict(dict))
            }
            Var::Method(owner, _) => self.value(owner),
            Var::Bound(b) => {
                self.value(&b.0)?;
                self.value(&b.1)
            }
            Var::Stepper(s) => {
                use crate::translate::values::iterators::Stepper;
                self.exclusive(Rc::as_ptr(s) as usize)?;
                match &*s.borrow() {
                    // Held elsewhere too (`for v in losses:`), the list is built once and
                    // the iterator made over it (`iterator_templates`).
                    Stepper::List { list, .. } => self.value(&Var::List(list.clone())),
                    Stepper::ListReversed { list, .. } => self.exclusive(Rc::as_ptr(list) as usize),
                    Stepper::Deque { deque, .. } => self.value(&Var::Deque(deque.clone())),
                    Stepper::Set { set, .. } => self.value(&Var::Set(set.clone())),
                    Stepper::Caller { items, .. } => items.iter().try_for_each(|x| self.value(x)),
                    Stepper::Enumerate { inner, .. } => self.value(inner),
                    Stepper::Zip { inners, .. } => inners.iter().try_for_each(|x| self.value(x)),
                    Stepper::Map { func, inners } => std::iter::once(func)
                        .chain(inners)
                        .try_for_each(|x| self.value(x)),
                    Stepper::Filter { func, inner } => {
                        self.value(func)?;
                        self.value(inner)
                    }
                    Stepper::Tool(t) => t.held().into_iter().try_for_each(|x| self.value(x)),
                }
            }
            _ => Ok(()),
        }
    }
}
