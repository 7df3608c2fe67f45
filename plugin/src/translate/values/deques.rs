//! `collections.deque` made during the simulation: a history of the last frames or states
//! (`deque(maxlen=k)`), a queue of a breadth-first walk. Its items are symbolic values in
//! order, with the deque's bound: an append past `maxlen` drops the item at the other end,
//! as the native deque does. What Python does with a deque and the simulation does not know
//! (comparisons, `in`, `index`, `remove`, slices, `+`) breaks there, since it is a value of
//! its own and never read as a list. The replacement makes it again as
//! `deque(items, maxlen)`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rustpython_vm::builtins::PyInt;
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::templates::Template;
use crate::translate::values::Var;

/// A deque made during the simulation.
#[derive(Debug)]
pub struct SimDeque {
    pub items: VecDeque<Var>,
    pub maxlen: Option<usize>,
    /// Counts the changes of its items: an iterator made before a change raises
    /// RuntimeError at its next step ("deque mutated during iteration").
    pub changes: u64,
}

pub type DequeRef = Rc<RefCell<SimDeque>>;

impl SimDeque {
    fn push_back(&mut self, v: Var) {
        self.items.push_back(v);
        while self.maxlen.is_some_and(|m| self.items.len() > m) {
            self.items.pop_front();
        }
        self.changes += 1;
    }

    fn push_front(&mut self, v: Var) {
        self.items.push_front(v);
        while self.maxlen.is_some_and(|m| self.items.len() > m) {
            self.items.pop_back();
        }
        self.changes += 1;
    }
}

/// The class `collections.deque`, once `collections` is loaded.
pub fn deque_class(vm: &VirtualMachine) -> Option<PyObjectRef> {
    crate::translate::loaded_modules::loaded_attr("collections", "deque", vm)
}

/// Whether `o` is exactly a `collections.deque`: the interpreter's own class (a class of the
/// same name written in Python is a heap type), whose indexing and iteration run no Python.
pub fn is_native_deque(o: &rustpython_vm::PyObject) -> bool {
    let c = o.class();
    c.heaptype_ext.is_none() && &*c.slot_name() == "collections.deque"
}

fn is_deque_class(f: &PyObjectRef, vm: &VirtualMachine) -> bool {
    deque_class(vm).is_some_and(|c| c.is(f))
}

impl State<'_> {
    /// `deque(iterable=(), maxlen=None)` made in the frame; `None` for another callable.
    pub(crate) fn deque_call(
        &mut self,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        if !is_deque_class(f, self.vm) {
            return Ok(None);
        }
        let mut iterable = args.first().cloned();
        let mut maxlen = args.get(1).cloned();
        for (k, v) in kwargs {
            match k.as_str() {
                "iterable" if iterable.is_none() => iterable = Some(v.clone()),
                "maxlen" if maxlen.is_none() => maxlen = Some(v.clone()),
                _ => return unsupported(Kind::Raises, format!("deque() with argument {k}")),
            }
        }
        if args.len() > 2 {
            return unsupported(Kind::Raises, "deque() with more than 2 arguments");
        }
        let maxlen = match maxlen {
            None => None,
            Some(m) => {
                let m = self.plain_obj(&m, "deque's maxlen")?;
                if self.vm.is_none(&m) {
                    None
                } else {
                    Some(self.non_negative(&m, "maxlen must be non-negative.")?)
                }
            }
        };
        let d = Rc::new(RefCell::new(SimDeque {
            items: VecDeque::new(),
            maxlen,
            changes: 0,
        }));
        if let Some(it) = iterable {
            for item in self.items(&it)? {
                d.borrow_mut().push_back(item);
            }
        }
        Ok(Some(Var::Deque(d)))
    }

    /// An exact int at least 0; a negative one raises ValueError with `message`.
    fn non_negative(&mut self, o: &PyObjectRef, message: &str) -> SimResult<usize> {
        let vm = self.vm;
        let Some(i) = o
            .downcast_ref::<PyInt>()
            .filter(|_| o.class().is(vm.ctx.types.int_type))
        else {
            return unsupported(Kind::Raises, "an integer is required (TypeError)");
        };
        match i.try_to_primitive::<i64>(vm) {
            Ok(n) if n >= 0 => Ok(n as usize),
            Ok(_) => self.raise_native(
                vm.ctx.exceptions.value_error,
                vec![Var::Obj(vm.ctx.new_str(message).into())],
                format!("{message} (ValueError)"),
            ),
            Err(_) => unsupported(Kind::Limit, "a deque's bound too large"),
        }
    }

    /// A method of a deque made here, called.
    pub(crate) fn deque_method(
        &mut self,
        d: &DequeRef,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        let vm = self.vm;
        if !kwargs.is_empty() {
            return unsupported(Kind::Call, format!("deque.{name}() with keyword arguments"));
        }
        let none = Var::Obj(vm.ctx.none());
        match (name, args.as_slice()) {
            ("append", [x]) => d.borrow_mut().push_back(x.clone()),
            ("appendleft", [x]) => d.borrow_mut().push_front(x.clone()),
            // Of an iterable that may be the deque itself: its items taken first.
            ("extend" | "extendleft", [x]) => {
                let items = self.items(x)?;
                let mut q = d.borrow_mut();
                // A deque bound to no items takes none: nothing changes.
                if q.maxlen != Some(0) {
                    for item in items {
                        match name {
                            "extend" => q.push_back(item),
                            _ => q.push_front(item),
                        }
                    }
                }
            }
            ("pop" | "popleft", []) => {
                let mut q = d.borrow_mut();
                // The interpreter counts a change before it finds the deque empty.
                q.changes += 1;
                let item = match name {
                    "pop" => q.items.pop_back(),
                    _ => q.items.pop_front(),
                };
                let Some(item) = item else {
                    drop(q);
                    let message = "pop from an empty deque";
                    return self.raise_native(
                        vm.ctx.exceptions.index_error,
                        vec![Var::Obj(vm.ctx.new_str(message).into())],
                        format!("{message} (IndexError)"),
                    );
                };
                return Ok(item);
            }
            ("clear", []) => {
                let mut q = d.borrow_mut();
                if !q.items.is_empty() {
                    q.items.clear();
                    q.changes += 1;
                }
            }
            // The interpreter's `reverse` counts no change: an iterator goes on over it.
            ("reverse", []) => d.borrow_mut().items.make_contiguous().reverse(),
            ("rotate", [] | [_]) => {
                let n = match args.first() {
                    Some(n) => {
                        let n = self.plain_obj(n, "deque.rotate's steps")?;
                        n.downcast_ref::<PyInt>()
                            .filter(|_| n.class().is(vm.ctx.types.int_type))
                            .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
                            .ok_or_else(|| {
                                Unsupported::new(Kind::Raises, "deque.rotate() of a non-int")
                            })?
                    }
                    None => 1,
                };
                let mut q = d.borrow_mut();
                let len = q.items.len() as i64;
                if len > 1 {
                    let k = n.rem_euclid(len) as usize;
                    q.items.rotate_right(k);
                }
                q.changes += 1;
            }
            ("copy", []) => {
                let q = d.borrow();
                return Ok(Var::Deque(Rc::new(RefCell::new(SimDeque {
                    items: q.items.clone(),
                    maxlen: q.maxlen,
                    changes: 0,
                }))));
            }
            _ => {
                return unsupported(
                    Kind::Call,
                    format!("deque.{name}() with {} arguments", args.len()),
                );
            }
        }
        Ok(none)
    }

    /// `q[i]` of a deque made here: an int index, as the native deque takes.
    pub(crate) fn deque_item(&mut self, d: &DequeRef, key: &Var) -> SimResult<Var> {
        let vm = self.vm;
        let key = self.plain_obj(key, "a deque's index")?;
        if key.downcast_ref::<PyInt>().is_none() {
            return unsupported(
                Kind::Raises,
                format!(
                    "sequence index must be integer, not '{}' (TypeError)",
                    key.class().name()
                ),
            );
        }
        let q = d.borrow();
        let i = key
            .downcast_ref::<PyInt>()
            .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
            .ok_or_else(|| Unsupported::new(Kind::Limit, "a deque's index too large"))?;
        let n = q.items.len() as i64;
        let j = if i < 0 { i + n } else { i };
        match usize::try_from(j).ok().and_then(|j| q.items.get(j)) {
            Some(v) => Ok(v.clone()),
            None => {
                drop(q);
                let message = "deque index out of range";
                self.raise_native(
                    vm.ctx.exceptions.index_error,
                    vec![Var::Obj(vm.ctx.new_str(message).into())],
                    format!("{message} (IndexError)"),
                )
            }
        }
    }

    /// A copy of a deque made here, as a list's: what native code reads.
    pub(crate) fn deque_obj(&mut self, d: &DequeRef) -> SimResult<PyObjectRef> {
        let vm = self.vm;
        let (items, maxlen) = {
            let q = d.borrow();
            (q.items.iter().cloned().collect::<Vec<_>>(), q.maxlen)
        };
        let objs = items
            .iter()
            .map(|i| self.obj(i))
            .collect::<SimResult<Vec<_>>>()?;
        let class =
            deque_class(vm).ok_or_else(|| Unsupported::new(Kind::Internal, "collections.deque"))?;
        class
            .call((vm.ctx.new_list(objs), maxlen), vm)
            .map_err(|_| Unsupported::new(Kind::Internal, "a deque made again"))
    }

    /// An attribute of a deque made here that is not a method: its bound.
    pub(crate) fn deque_attr(&self, d: &DequeRef, name: &str) -> Option<Var> {
        let vm = self.vm;
        (name == "maxlen").then(|| {
            Var::Obj(match d.borrow().maxlen {
                Some(m) => vm.ctx.new_int(m).into(),
                None => vm.ctx.none(),
            })
        })
    }
}

/// `deque(items, maxlen)`: the deque made again by the replacement, each item built by
/// `build`.
pub fn deque_template(
    d: &DequeRef,
    vm: &VirtualMachine,
    build: impl FnMut(&Var) -> SimResult<Template>,
) -> SimResult<Template> {
    let class =
        deque_class(vm).ok_or_else(|| Unsupported::new(Kind::Internal, "collections.deque"))?;
    let (items, maxlen) = {
        let q = d.borrow();
        (q.items.iter().cloned().collect::<Vec<_>>(), q.maxlen)
    };
    let items = items.iter().map(build).collect::<SimResult<Vec<_>>>()?;
    let maxlen = match maxlen {
        Some(m) => vm.ctx.new_int(m).into(),
        None => vm.ctx.none(),
    };
    Ok(Template::New(
        class,
        vec![Template::List(items), Template::Const(maxlen)],
    ))
}

impl State<'_> {
    /// `q.name(*args)` on a deque of the caller's (`self.history.append(x)`): recorded to be
    /// replayed after the graph, as written, on the same deque. A later read of it in the
    /// call applies the changes to the items it had on entry (`caller_deque_items`); one
    /// before reads it as it was, which the replay does not change. `None` for a method not
    /// replayed so.
    pub(crate) fn caller_deque_method(
        &mut self,
        owner: &Var,
        name: &'static str,
        args: &[Var],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Var::Lazy(o, source) = owner else {
            return Ok(None);
        };
        let replayed = match (name, args) {
            ("append" | "appendleft", [_]) | ("clear", []) => true,
            ("extend" | "extendleft", [Var::List(_) | Var::Tuple(_)]) => true,
            _ => false,
        };
        if !is_native_deque(o) || !replayed {
            return Ok(None);
        }
        self.replayed_method(o, source, name, args.to_vec());
        Ok(Some(Var::Obj(vm.ctx.none())))
    }

    /// The items of the caller's deque `o` read from `source`, as they are at this point of
    /// the call: as it was on entry (its length guarded, each item read from its index), and,
    /// once the call changed it (a history appended to, then stacked: `frames.append(obs);
    /// st.cat(list(frames))`), with the changes the replacement replays after the graph
    /// applied to them, its `maxlen` guarded and honoured. Read from another source than the
    /// one it was changed through, it is that deque only while the guards say so; otherwise
    /// it is none of the deques the call changed, on later calls too.
    pub(crate) fn caller_deque_items(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
    ) -> SimResult<Vec<Var>> {
        let vm = self.vm;
        let entry: Vec<PyObjectRef> = vm
            .extract_elements_with(o, Ok)
            .map_err(|_| Unsupported::new(Kind::Internal, "the items of a deque"))?;
        self.guard(source, Check::type_is(o.class().to_owned()));
        self.guard(source, Check::Len(entry.len()));
        let mut items: VecDeque<Var> = entry
            .into_iter()
            .enumerate()
            .map(|(i, x)| Var::Lazy(x, source.clone().item(i)))
            .collect();
        // Another deque the call changed is not this one, on later calls too.
        for other in self.effects.others_changed_like(o) {
            self.guard(source, Check::NotSameAs(other));
        }
        let targets = self.effects.sources_of(o);
        if targets.is_empty() {
            return Ok(items.into());
        }
        for target in &targets {
            if target != source {
                self.guard(source, Check::SameAs(target.clone()));
            }
        }
        let maxlen = o
            .get_attr("maxlen", vm)
            .map_err(|_| Unsupported::new(Kind::Internal, "a deque's maxlen"))?;
        let bound = Source::NativeAttr(Box::new(source.clone()), "maxlen".to_owned());
        self.rely_leaf(&maxlen, &bound)?;
        let maxlen = match maxlen.downcast_ref::<PyInt>() {
            Some(m) => Some(
                m.try_to_primitive::<usize>(vm)
                    .map_err(|_| Unsupported::new(Kind::Internal, "a deque's maxlen"))?,
            ),
            None => None,
        };
        let mut shadow = SimDeque {
            items: VecDeque::new(),
            maxlen,
            changes: 0,
        };
        // Entry items past the bound cannot be (a deque never holds more).
        shadow.items = std::mem::take(&mut items);
        let changes: Vec<(&'static str, Vec<Var>)> = self
            .effects
            .log
            .iter()
            .filter_map(|e| match e {
                Effect::Method {
                    target,
                    method,
                    args,
                } if targets.contains(target) => Some((*method, args.clone())),
                _ => None,
            })
            .collect();
        for (method, args) in changes {
            match (method, args.as_slice()) {
                ("append", [x]) => shadow.push_back(x.clone()),
                ("appendleft", [x]) => shadow.push_front(x.clone()),
                ("extend", [xs]) => {
                    for x in self.items(xs)? {
                        shadow.push_back(x);
                    }
                }
                ("extendleft", [xs]) => {
                    for x in self.items(xs)? {
                        shadow.push_front(x);
                    }
                }
                ("clear", []) => shadow.items.clear(),
                _ => {
                    return unsupported(
                        Kind::SideEffect,
                        format!("a deque of the caller's read after deque.{method}()"),
                    );
                }
            }
        }
        Ok(shadow.items.into())
    }
}

/// The methods of a deque of the caller's that the replacement replays (see
/// `State::caller_deque_method`).
pub const CALLER_DEQUE_CHANGES: &[&str] =
    &["append", "appendleft", "extend", "extendleft", "clear"];

/// The methods of a deque the simulation calls (see `State::deque_method`).
pub const DEQUE_METHODS: &[&str] = &[
    "append",
    "appendleft",
    "extend",
    "extendleft",
    "pop",
    "popleft",
    "clear",
    "reverse",
    "rotate",
    "copy",
];
