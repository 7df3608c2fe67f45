//! Iterators as Python steps them: `iter(x)` (GET_ITER) and each step (FOR_ITER, `next`).
//! Python's iterators read what they iterate lazily, one step at a time, interleaved with the
//! loop's body; so do these, where a copy taken at once could differ:
//! - a list made during the simulation is iterated by position, read at each step (a list
//!   that grows while it is iterated gives its new items);
//! - containers of the caller's (a list, a dict, a dict's view) are read at once through their
//!   sources, and each step checks that the call has not changed them (it would have changed
//!   what Python reads, or made it raise);
//! - `enumerate` and `zip` step the iterators they wrap, so that a generator inside them runs
//!   item by item with the loop, as when run;
//! - immutable values (tuples, ranges, strings) and dicts made during the simulation (by
//!   position, see `DictIter`) need nothing more.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::key_const::{KeyConst, StoreKey};
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, is_dict, unsupported};
use crate::translate::values::itertools::Itertool;
use crate::translate::values::{DictIter, Var, ViewKind};

/// An iterator the simulation steps lazily.
#[derive(Debug)]
pub enum Stepper {
    /// Over a list made during the simulation: the position of the next item.
    List {
        list: Rc<RefCell<Vec<Var>>>,
        next: usize,
    },
    /// Over containers of the caller's, read at once: valid while none of `watch` (each with
    /// its source) changes. `origin`, when it iterates one container, remakes it at a graph
    /// break.
    Caller {
        items: VecDeque<Var>,
        watch: Vec<(PyObjectRef, Source)>,
        /// Per watched dict, the call's stores into its keys when the iterator was made: its
        /// items include them; one more is a change while it is iterated.
        stores: Vec<usize>,
        consumed: usize,
        origin: Option<CallerOrigin>,
    },
    /// Over a deque made during the simulation: the position of the next item, read at each
    /// step, and the deque's count of changes when the iterator was made (a change since
    /// makes the next step raise, as the interpreter's deque iterator does).
    Deque {
        deque: crate::translate::values::deques::DequeRef,
        next: usize,
        changes: u64,
        /// `reversed(d)`: the position counts from the end.
        reversed: bool,
    },
    /// Over a set made during the simulation: the interpreter's own iterator of it, stepped
    /// natively, so that a change of the set makes the next step raise as when run (any
    /// change, not only of its size), and the count of items it yielded. `hint`: its
    /// `__length_hint__` when it was made, which stays the same while the set does.
    Set {
        native: PyObjectRef,
        set: PyObjectRef,
        hint: usize,
        next: usize,
    },
    /// `reversed()` of a list made during the simulation: the position of the next item,
    /// counting down; read at each step, as Python's reverse list iterator reads it.
    ListReversed {
        list: Rc<RefCell<Vec<Var>>>,
        next: Option<usize>,
    },
    Enumerate {
        inner: Var,
        count: i64,
    },
    /// `zip(*inners, strict=...)`: a strict zip raises where one iterable ends before
    /// the others.
    Zip {
        inners: Vec<Var>,
        strict: bool,
    },
    /// `map(func, *iterables)`: `func` called (inlined) on each step's items, as Python's
    /// map calls it, lazily.
    Map {
        func: Var,
        inners: Vec<Var>,
    },
    /// `filter(func, iterable)` (`func` None: the items' truth), lazily.
    Filter {
        func: Var,
        inner: Var,
    },
    /// A lazy iterator of `itertools` (`values/itertools.rs`).
    Tool(Itertool),
}

/// What an iterator over a container of the caller's iterates, as the replacement makes it
/// again: the container itself (a list, a dict), one of a dict's views, or `reversed()` of it.
#[derive(Debug)]
pub enum CallerOrigin {
    Direct(Source),
    View(Source, ViewKind),
    Reversed(Source),
}

/// `keys()`, `values()` or `items()` of a dict of the caller's.
#[derive(Debug)]
pub struct CallerView {
    pub dict: PyObjectRef,
    pub source: Source,
    pub kind: ViewKind,
}

fn stepper(s: Stepper) -> Var {
    Var::Stepper(Rc::new(RefCell::new(s)))
}

impl State<'_> {
    /// `iter(v)`: the iterator a `for` loop over `v` steps.
    pub fn iterator_of(&mut self, v: &Var) -> SimResult<Var> {
        let vm = self.vm;
        let v = &self.followed(v)?;
        Ok(match v {
            Var::Iter(_) | Var::Gen(_) | Var::DictIter(_) | Var::Stepper(_) => v.clone(),
            Var::Dict(d) => Var::DictIter(Rc::new(RefCell::new(DictIter::new(
                d.clone(),
                ViewKind::Keys,
            )))),
            Var::View(d, kind) => {
                Var::DictIter(Rc::new(RefCell::new(DictIter::new(d.clone(), *kind))))
            }
            Var::List(l) => stepper(Stepper::List {
                list: l.clone(),
                next: 0,
            }),
            Var::Deque(d) => stepper(Stepper::Deque {
                deque: d.clone(),
                next: 0,
                changes: d.borrow().changes,
                reversed: false,
            }),
            Var::Set(set) => {
                if set.length(vm).unwrap_or(usize::MAX) > crate::translate::state::MAX_UNROLL {
                    return unsupported(
                        Kind::Limit,
                        format!(
                            "a loop of more than {} iterations",
                            crate::translate::state::MAX_UNROLL
                        ),
                    );
                }
                let native: PyObjectRef = set
                    .get_iter(vm)
                    .map_err(|_| Unsupported::new(Kind::Internal, "the iterator of a set"))?
                    .into();
                let hint = length_hint(&native, vm)
                    .ok_or_else(|| Unsupported::new(Kind::Internal, "a set iterator's hint"))?;
                stepper(Stepper::Set {
                    native,
                    set: set.clone(),
                    hint,
                    next: 0,
                })
            }
            Var::CallerView(view) => {
                let items = self.items(v)?;
                stepper(Stepper::Caller {
                    items: items.into(),
                    watch: vec![(view.dict.clone(), view.source.clone())],
                    stores: vec![self.effects.keyed_count(&view.dict)],
                    consumed: 0,
                    origin: Some(CallerOrigin::View(view.source.clone(), view.kind)),
                })
            }
            Var::Lazy(o, source)
                if is_dict(o, vm)
                    || o.class().is(vm.ctx.types.list_type)
                    || crate::translate::values::deques::is_native_deque(o) =>
            {
                let items = self.items(v)?;
                stepper(Stepper::Caller {
                    items: items.into(),
                    watch: vec![(o.clone(), source.clone())],
                    stores: vec![self.effects.keyed_count(o)],
                    consumed: 0,
                    origin: Some(CallerOrigin::Direct(source.clone())),
                })
            }
            other => match self.call_dunder(other, "__iter__", Vec::new())? {
                Some(it @ (Var::Iter(_) | Var::Gen(_) | Var::DictIter(_) | Var::Stepper(_))) => it,
                // An iterator of the user's: each step calls its `__next__`.
                Some(it) if self.instance(&it)?.is_some() => it,
                Some(it) => self.iterator_of(&it)?,
                None => Var::Iter(Rc::new(RefCell::new(VecDeque::from(self.items(other)?)))),
            },
        })
    }

    /// `enumerate(v, start)`, stepping `iter(v)`.
    pub fn enumerate_of(&mut self, v: &Var, start: i64) -> SimResult<Var> {
        let inner = self.iterator_of(v)?;
        Ok(stepper(Stepper::Enumerate {
            inner,
            count: start,
        }))
    }

    /// `zip(*vs, strict=strict)`, stepping each `iter(v)`.
    pub fn zip_of(&mut self, vs: &[Var], strict: bool) -> SimResult<Var> {
        let inners = vs
            .iter()
            .map(|v| self.iterator_of(v))
            .collect::<SimResult<Vec<_>>>()?;
        Ok(stepper(Stepper::Zip { inners, strict }))
    }

    /// `map(func, *iterables)` (at least one iterable).
    pub fn map_of(&mut self, func: &Var, vs: &[Var]) -> SimResult<Var> {
        if vs.is_empty() {
            return unsupported(
                Kind::Raises,
                "map() must have at least two arguments (TypeError)",
            );
        }
        let inners = vs
            .iter()
            .map(|v| self.iterator_of(v))
            .collect::<SimResult<Vec<_>>>()?;
        Ok(stepper(Stepper::Map {
            func: func.clone(),
            inners,
        }))
    }

    /// `filter(func, iterable)`.
    pub fn filter_of(&mut self, func: &Var, v: &Var) -> SimResult<Var> {
        let inner = self.iterator_of(v)?;
        Ok(stepper(Stepper::Filter {
            func: func.clone(),
            inner,
        }))
    }

    /// `reversed(v)`: a list made during the simulation read backwards at each step; a
    /// container of the caller's read at once (checked unchanged at each step); anything else
    /// (a tuple, a range, a string) at once.
    pub fn reversed_of(&mut self, v: &Var) -> SimResult<Var> {
        let vm = self.vm;
        let v = &self.followed(v)?;
        Ok(match v {
            Var::List(l) => {
                let n = l.borrow().len();
                stepper(Stepper::ListReversed {
                    list: l.clone(),
                    next: n.checked_sub(1),
                })
            }
            Var::Deque(d) => stepper(Stepper::Deque {
                deque: d.clone(),
                next: 0,
                changes: d.borrow().changes,
                reversed: true,
            }),
            Var::Lazy(o, source)
                if is_dict(o, vm)
                    || o.class().is(vm.ctx.types.list_type)
                    || crate::translate::values::deques::is_native_deque(o) =>
            {
                let mut items = self.items(v)?;
                items.reverse();
                stepper(Stepper::Caller {
                    items: items.into(),
                    watch: vec![(o.clone(), source.clone())],
                    stores: vec![self.effects.keyed_count(o)],
                    consumed: 0,
                    origin: Some(CallerOrigin::Reversed(source.clone())),
                })
            }
            _ => {
                let mut items = self.items(v)?;
                items.reverse();
                Var::Iter(Rc::new(RefCell::new(items.into())))
            }
        })
    }

    /// Whether the call changed the caller's container `o` since an iterator over it
    /// (`origin`, `consumed` items stepped) was made, when the call had stored `stored` keys
    /// into it (a dict), or at all (a list). A store of a key the dict held, into a dict the
    /// call had stored nothing into when the iterator was made, changes neither its size
    /// nor its order (`for k in params: params[k] = params[k] - g[k]`): nothing an
    /// iteration of its keys sees, nor one of its values or items whose entry it yielded,
    /// as long as dropping the value it replaces runs no code.
    pub fn changed_since(
        &self,
        o: &PyObjectRef,
        stored: usize,
        origin: Option<&CallerOrigin>,
        consumed: usize,
    ) -> bool {
        if !is_dict(o, self.vm) {
            return self.effects.touched(o);
        }
        if self.effects.changed_whole(o) {
            return true;
        }
        let since = self.effects.keyed_since(o, stored);
        if since.is_empty() || stored != 0 {
            return !since.is_empty();
        }
        // How many of the dict's first entries a store may reach unseen.
        let yielded = match origin {
            Some(CallerOrigin::Direct(_) | CallerOrigin::Reversed(_))
            | Some(CallerOrigin::View(_, ViewKind::Keys)) => usize::MAX,
            Some(CallerOrigin::View(..)) => consumed,
            None => 0,
        };
        let Some(dict) = o.downcast_ref::<rustpython_vm::builtins::PyDict>() else {
            return !since.is_empty();
        };
        let keys = dict.keys_vec();
        since.iter().enumerate().any(|(i, (key, store))| {
            let StoreKey::Const(key) = key else {
                return true;
            };
            // The value a store replaces is dropped when it is replayed: one whose drop runs
            // no code (a `__del__` may change the dict: Python raises then), the caller's
            // own, stored over once.
            let again = since[..i]
                .iter()
                .any(|(k, _)| k.same(&StoreKey::Const(key.clone())));
            let at = keys
                .iter()
                .position(|k| KeyConst::of(k, &self.vm.ctx).as_ref() == Some(key));
            !*store
                || again
                || at.is_none_or(|at| {
                    at >= yielded
                        || !drops_quietly(
                            &dict.inner_getitem_opt(&*keys[at], self.vm).ok().flatten(),
                            self.vm,
                        )
                })
        })
    }

    /// The next item of a stepper, `None` when it is exhausted.
    pub fn step_iterator(&mut self, s: &Rc<RefCell<Stepper>>) -> SimResult<Option<Var>> {
        let vm = self.vm;
        // What to step is taken out of the borrow: stepping an inner iterator may run code
        // that uses this one.
        enum Next {
            Done(Option<Var>),
            Enumerate(Var),
            Zip(Vec<Var>, bool),
            Map(Var, Vec<Var>),
            Filter(Var, Var),
        }
        if matches!(&*s.borrow(), Stepper::Tool(_)) {
            return self.step_itertool(s);
        }
        let next = match &mut *s.borrow_mut() {
            Stepper::Tool(_) => unreachable!("stepped above"),
            Stepper::List { list, next } => {
                let item = list.borrow().get(*next).cloned();
                *next += usize::from(item.is_some());
                Next::Done(item)
            }
            Stepper::Caller {
                items,
                watch,
                stores,
                consumed,
                origin,
            } => {
                // A list's iterator reads the list at its position at each step: once the
                // call changed the list, from the list's shadow.
                if let ([(list, _)], Some(CallerOrigin::Direct(source))) =
                    (watch.as_slice(), origin.as_ref())
                    && list.class().is(vm.ctx.types.list_type)
                    && let Some(shadow) = self.list_shadow(list, source)?
                {
                    let item = shadow.borrow().get(*consumed).cloned();
                    *consumed += usize::from(item.is_some());
                    return Ok(item);
                }
                for ((o, source), stored) in watch.iter().zip(stores.iter()) {
                    if self.changed_since(o, *stored, origin.as_ref(), *consumed) {
                        return unsupported(
                            Kind::SideEffect,
                            "a list or dict of the caller's changed while it was iterated",
                        );
                    }
                    // Read as it was: it is not one the call changed under another name (an
                    // instance's `__dict__` among them).
                    let others = self.effects.others_changed_like(o);
                    for other in others.into_iter().chain(self.effects.apart_from(o)) {
                        self.guard(source, Check::NotSameAs(other));
                    }
                }
                let item = items.pop_front();
                *consumed += usize::from(item.is_some());
                Next::Done(item)
            }
            Stepper::Deque {
                deque,
                next,
                changes,
                reversed,
            } => {
                let q = deque.borrow();
                if q.changes != *changes {
                    return unsupported(
                        Kind::Raises,
                        "deque mutated during iteration (RuntimeError)",
                    );
                }
                let at = match reversed {
                    true => q.items.len().checked_sub(*next + 1),
                    false => Some(*next),
                };
                let item = at.and_then(|i| q.items.get(i).cloned());
                *next += usize::from(item.is_some());
                Next::Done(item)
            }
            Stepper::Set { native, next, .. } => {
                use rustpython_vm::protocol::{PyIter, PyIterReturn};
                match PyIter::new(native.clone()).next(vm) {
                    Ok(PyIterReturn::Return(o)) => {
                        *next += 1;
                        Next::Done(Some(self.set_member(o)))
                    }
                    Ok(PyIterReturn::StopIteration(_)) => Next::Done(None),
                    Err(_) => {
                        return unsupported(
                            Kind::Raises,
                            "Set changed size during iteration (RuntimeError)",
                        );
                    }
                }
            }
            Stepper::ListReversed { list, next } => {
                let item = next.and_then(|i| list.borrow().get(i).cloned());
                *next = match (item.is_some(), *next) {
                    (true, Some(i)) => i.checked_sub(1),
                    _ => None,
                };
                Next::Done(item)
            }
            Stepper::Enumerate { inner, .. } => Next::Enumerate(inner.clone()),
            Stepper::Zip { inners, strict } => Next::Zip(inners.clone(), *strict),
            Stepper::Map { func, inners } => Next::Map(func.clone(), inners.clone()),
            Stepper::Filter { func, inner } => Next::Filter(func.clone(), inner.clone()),
        };
        match next {
            Next::Done(item) => Ok(item),
            Next::Enumerate(inner) => {
                let Some(item) = self.next_item(&inner)? else {
                    return Ok(None);
                };
                let Stepper::Enumerate { count, .. } = &mut *s.borrow_mut() else {
                    unreachable!("an enumerate stays one")
                };
                let i = Var::Obj(vm.ctx.new_int(*count).into());
                *count += 1;
                Ok(Some(Var::tuple(vec![i, item])))
            }
            Next::Map(func, inners) => {
                let mut items = Vec::with_capacity(inners.len());
                for inner in &inners {
                    match self.next_item(inner)? {
                        Some(item) => items.push(item),
                        None => return Ok(None),
                    }
                }
                self.invoke(&func, items, Vec::new()).map(Some)
            }
            Next::Filter(func, inner) => loop {
                let Some(item) = self.next_item(&inner)? else {
                    return Ok(None);
                };
                let keep = match &func {
                    Var::Obj(o) if vm.is_none(o) => item.clone(),
                    f => self.invoke(f, vec![item.clone()], Vec::new())?,
                };
                if self.truth(&keep)? {
                    return Ok(Some(item));
                }
            },
            Next::Zip(inners, _) if inners.is_empty() => Ok(None),
            Next::Zip(inners, strict) => {
                let mut items = Vec::with_capacity(inners.len());
                for (i, inner) in inners.iter().enumerate() {
                    match self.next_item(inner)? {
                        Some(item) => items.push(item),
                        None if strict => return self.strict_zip_end(&inners, i),
                        None => return Ok(None),
                    }
                }
                Ok(Some(Var::tuple(items)))
            }
        }
    }
}

impl State<'_> {
    /// A strict zip whose iterable `i` ended: the end of the zip if every iterable ends
    /// there (the ones after the first stepped once more to see it, as Python steps them),
    /// else the `ValueError` Python raises, which the frame raises when it runs as written.
    fn strict_zip_end(&mut self, inners: &[Var], i: usize) -> SimResult<Option<Var>> {
        let plural = |k: usize| {
            if k == 1 {
                " ".to_owned()
            } else {
                "s 1-".to_owned()
            }
        };
        if i > 0 {
            return unsupported(
                Kind::Raises,
                format!(
                    "zip() argument {} is shorter than argument{}{i} (ValueError)",
                    i + 1,
                    plural(i)
                ),
            );
        }
        for (j, inner) in inners.iter().enumerate().skip(1) {
            if self.next_item(inner)?.is_some() {
                return unsupported(
                    Kind::Raises,
                    format!(
                        "zip() argument {} is longer than argument{}{j} (ValueError)",
                        j + 1,
                        plural(j)
                    ),
                );
            }
        }
        Ok(None)
    }
}

/// `it.__length_hint__()` of a native iterator.
pub fn length_hint(it: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> Option<usize> {
    vm.call_method(it, "__length_hint__", ())
        .ok()?
        .try_into_value::<usize>(vm)
        .ok()
}

/// Whether dropping `v` runs no code: a number, a string, None, or a tensor of a class
/// without `__del__`.
fn drops_quietly(v: &Option<PyObjectRef>, vm: &rustpython_vm::VirtualMachine) -> bool {
    let Some(v) = v else {
        return false;
    };
    let types = &vm.ctx.types;
    let class = v.class();
    [
        types.int_type,
        types.float_type,
        types.bool_type,
        types.str_type,
        types.bytes_type,
        types.none_type,
    ]
    .iter()
    .any(|t| class.is(*t))
        || (v.downcast_ref::<crate::tensor::PyTensor>().is_some()
            && class
                .get_attr(rustpython_vm::identifier!(vm, __del__))
                .is_none())
}
