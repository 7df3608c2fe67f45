//! The check that what the replacement rebuilds is what the original would have had: a list,
//! dict, iterator or object made during the call and reachable twice from the frame's state
//! (or from what the side effects store) would be rebuilt as two objects.

use std::rc::Rc;

use rustpython_vm::AsObject;

use crate::translate::state::{Kind, SimResult, Unsupported};
use crate::translate::values::Var;

/// Fails when a list or dict made during the simulation is reachable twice from `values` (the
/// frame's state, what side effects store): rebuilt from templates, the two would become two
/// objects.
pub fn held_once<'a>(values: impl Iterator<Item = &'a Var>) -> SimResult<()> {
    let mut seen = Vec::new();
    values
        .into_iter()
        .try_for_each(|v| mutable_containers(v, &mut seen))
}

/// Fails when a list or dict made during the simulation is reachable twice from the frame's
/// state: rebuilt from templates, the two would become two objects.
fn mutable_containers(v: &Var, seen: &mut Vec<usize>) -> SimResult<()> {
    let mut note = |p: usize| {
        if seen.contains(&p) {
            return Err(Unsupported::new(
                Kind::Rebuild,
                "a list, dict or iterator made during the call is held twice",
            ));
        }
        seen.push(p);
        Ok(())
    };
    match v {
        Var::List(l) => {
            note(Rc::as_ptr(l) as usize)?;
            l.borrow()
                .iter()
                .try_for_each(|x| mutable_containers(x, seen))
        }
        Var::Dict(d) => {
            note(Rc::as_ptr(d) as usize)?;
            d.borrow()
                .iter()
                .try_for_each(|(_, x)| mutable_containers(x, seen))
        }
        Var::Tuple(items) => items.iter().try_for_each(|x| mutable_containers(x, seen)),
        Var::Iter(items) => {
            note(Rc::as_ptr(items) as usize)?;
            items
                .borrow()
                .iter()
                .try_for_each(|x| mutable_containers(x, seen))
        }
        // A view or an iterator is of its dict: held with it, it is held twice.
        Var::View(d, _) => note(Rc::as_ptr(d) as usize),
        // An object made during the call, with its dictionary (which `__dict__` shares).
        Var::Object(o) => {
            note(Rc::as_ptr(o) as usize)?;
            note(Rc::as_ptr(&o.dict) as usize)?;
            o.dict
                .borrow()
                .iter()
                .try_for_each(|(_, x)| mutable_containers(x, seen))
        }
        Var::Bound(b) => {
            mutable_containers(&b.0, seen)?;
            mutable_containers(&b.1, seen)
        }
        Var::NamedTuple(_, items) => items.iter().try_for_each(|x| mutable_containers(x, seen)),
        Var::Set(s) => note(s.get_id()),
        Var::Stepper(s) => {
            use crate::translate::values::iterators::Stepper;
            note(Rc::as_ptr(s) as usize)?;
            match &*s.borrow() {
                Stepper::List { list, .. } | Stepper::ListReversed { list, .. } => {
                    note(Rc::as_ptr(list) as usize)
                }
                Stepper::Caller { items, .. } => {
                    items.iter().try_for_each(|x| mutable_containers(x, seen))
                }
                Stepper::Enumerate { inner, .. } => mutable_containers(inner, seen),
                Stepper::Zip { inners } => {
                    inners.iter().try_for_each(|x| mutable_containers(x, seen))
                }
                Stepper::Map { func, inners } => std::iter::once(func)
                    .chain(inners)
                    .try_for_each(|x| mutable_containers(x, seen)),
                Stepper::Filter { func, inner } => {
                    mutable_containers(func, seen)?;
                    mutable_containers(inner, seen)
                }
                Stepper::Tool(t) => t
                    .held()
                    .into_iter()
                    .try_for_each(|x| mutable_containers(x, seen)),
            }
        }
        Var::DictIter(it) => note(Rc::as_ptr(&it.borrow().dict) as usize),
        _ => Ok(()),
    }
}
