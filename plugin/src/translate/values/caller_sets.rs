//! A set of the caller's (exactly a `set` or `frozenset`) whose elements are keys the
//! interpreter hashes and compares natively (`KeyConst`: ints, strs, bytes, `None`, dtypes,
//! tuples of them): `if name in self.frozen`, `if act not in VALID_ACTIVATIONS`,
//! `self.seen.add(n)`.
//!
//! Read, it is guarded to hold exactly its elements, in its order (`Check::SetItems`; the
//! interpreter iterates a set in the order its elements went in, which a copy keeps), and
//! the simulation computes on a copy: no native operation it runs can change the caller's
//! set. Changed (`add`, `discard`, `update`, `clear`), the change is replayed after the graph
//! on the same set, as written, as a deque's appends are; a read of a set after the call
//! changed one refuses (`SideEffects::check_readable`), and so does an in-place operator,
//! which would have to keep the set's identity (`sets::set_binary`).

use rustpython_vm::builtins::{PyFrozenSet, PySet};
use rustpython_vm::{AsObject, PyObject, PyObjectRef, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::guards::ident::Ident;
use crate::translate::key_const::KeyConst;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::Var;

/// The methods of a caller's set the simulation follows: changes replayed, reads of a copy.
pub const CALLER_SET_METHODS: &[&str] = &[
    "add",
    "discard",
    "update",
    "clear",
    "union",
    "intersection",
    "difference",
    "symmetric_difference",
    "issubset",
    "issuperset",
    "isdisjoint",
    "copy",
];

/// `name` among the methods of the caller's deque or set `o` that the simulation follows.
pub(super) fn caller_container_method(
    o: &PyObjectRef,
    name: &str,
    vm: &VirtualMachine,
) -> Option<&'static str> {
    let listed = if crate::translate::values::deques::is_native_deque(o) {
        crate::translate::values::deques::CALLER_DEQUE_CHANGES
    } else if set_elements(o, vm).is_some() {
        CALLER_SET_METHODS
    } else {
        return None;
    };
    listed.iter().find(|m| **m == name).copied()
}

/// Whether `o` is exactly a set or frozenset of keys compared natively, and holds `key` (a
/// key itself) or not: no Python code runs, as none of its elements has an `__eq__` of its
/// own.
pub fn set_has(o: &PyObject, key: &PyObject, vm: &VirtualMachine) -> Option<bool> {
    let elements = exact_set_elements(o, vm)?;
    if !elements.iter().all(|e| compared_natively(e, vm)) {
        return None;
    }
    vm._contains(o, key).ok()
}

/// Whether a set's element is compared natively with any key looked up: a key constant, or
/// a class whose metaclass is `type` (`{list, tuple}`, compared by identity).
fn compared_natively(e: &PyObject, vm: &VirtualMachine) -> bool {
    KeyConst::is_key(e, &vm.ctx) || crate::translate::values::is_plain_class(e, &vm.ctx)
}

/// The elements of `o` in its order, when it is exactly a set or frozenset of keys compared
/// natively.
pub fn set_elements(o: &PyObject, vm: &VirtualMachine) -> Option<Vec<KeyConst>> {
    exact_set_elements(o, vm)?
        .iter()
        .map(|e| KeyConst::of(e, &vm.ctx))
        .collect()
}

/// The elements of `o` in its order when it is exactly a set or frozenset (a subclass's
/// `__contains__` or `__iter__` could be Python code), read from its storage.
fn exact_set_elements(o: &PyObject, vm: &VirtualMachine) -> Option<Vec<PyObjectRef>> {
    if o.class().is(vm.ctx.types.set_type) {
        Some(o.downcast_ref::<PySet>()?.elements())
    } else if o.class().is(vm.ctx.types.frozenset_type) {
        Some(o.downcast_ref::<PyFrozenSet>()?.elements())
    } else {
        None
    }
}

impl State<'_> {
    /// The caller's set `o` read from `source` as a value to compute with: a copy of it (a
    /// frozenset, which cannot change, itself), its elements guarded. `None` for any other
    /// object.
    pub fn caller_set_value(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
    ) -> SimResult<Option<PyObjectRef>> {
        let vm = self.vm;
        let Some(elements) = set_elements(o, vm) else {
            return Ok(None);
        };
        self.check_readable(o, source)?;
        self.guard(source, Check::type_is(o.class().to_owned()));
        self.guard(source, Check::SetItems(elements));
        if o.class().is(vm.ctx.types.frozenset_type) {
            return Ok(Some(o.clone()));
        }
        let copy = vm
            .call_method(o, "copy", ())
            .map_err(|_| Unsupported::new(Kind::Internal, "a copy of a set"))?;
        Ok(Some(copy))
    }

    /// `owner.name(*args)` when `owner` is a caller's set read from the frame: a change
    /// recorded to be replayed, or a read of its copy. `None` for another owner.
    pub(super) fn caller_set_method(
        &mut self,
        owner: &Var,
        name: &'static str,
        args: &[Var],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Var::Lazy(o, source) = owner else {
            return Ok(None);
        };
        if set_elements(o, vm).is_none() {
            return Ok(None);
        }
        if matches!(name, "add" | "discard" | "update" | "clear")
            && !o.class().is(vm.ctx.types.set_type)
        {
            return unsupported(Kind::Raises, format!("frozenset.{name} (AttributeError)"));
        }
        let replayed = match (name, args) {
            ("add" | "discard", [x]) => match self.changing_int(x) {
                Some(n) => vec![n],
                None => vec![Var::Obj(self.set_key(x)?)],
            },
            ("update", [xs]) => {
                let mut keys = Vec::new();
                for x in self.items(xs)? {
                    keys.push(match self.changing_int(&x) {
                        Some(n) => n,
                        None => Var::Obj(self.set_key(&x)?),
                    });
                }
                vec![Var::tuple(keys)]
            }
            ("clear", []) => Vec::new(),
            _ => {
                let copy = self.obj(owner)?;
                return self
                    .set_method(&copy, name, args.to_vec(), Vec::new())
                    .map(Some);
            }
        };
        self.replayed_method(o, source, name, replayed);
        Ok(Some(Var::Obj(vm.ctx.none())))
    }

    /// `needle in haystack` when `haystack` is a caller's set and `needle` a key compared
    /// natively: the answer guarded, not the set's elements (a set that gains other elements
    /// from call to call keeps the translation). `None` otherwise.
    pub fn caller_set_contains(&mut self, haystack: &Var, needle: &Var) -> SimResult<Option<bool>> {
        let vm = self.vm;
        let Var::Lazy(o, source) = haystack else {
            return Ok(None);
        };
        if set_elements(o, vm).is_none() {
            return self.class_in_caller_set(o, source, needle);
        }
        if let Some(found) = self.number_in_caller_set(o, source, needle)? {
            return Ok(Some(found));
        }
        if let Some(found) = self.class_in_caller_set(o, source, needle)? {
            return Ok(Some(found));
        }
        let key = self.obj(needle)?;
        let Some(k) = KeyConst::of(&key, &vm.ctx) else {
            return Ok(None);
        };
        let found = self.guarded_membership(o, source, &key, |found| {
            Check::SetHas(k, key.clone(), found)
        })?;
        Ok(Some(found))
    }

    /// Whether the caller's set `o` (read from `source`) holds `key`, the answer guarded by
    /// the check `answer` makes of it.
    fn guarded_membership(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
        key: &PyObjectRef,
        answer: impl FnOnce(bool) -> Check,
    ) -> SimResult<bool> {
        self.check_readable(o, source)?;
        let found = self
            .vm
            ._contains(o, key)
            .map_err(|_| Unsupported::new(Kind::Internal, "a membership test of a set"))?;
        self.guard(source, Check::type_is(o.class().to_owned()));
        self.guard(source, answer(found));
        Ok(found)
    }

    /// `cls in s` of a class (`type(v) in SEQUENCE_TYPES`, copy's atomic types) in a set of
    /// keys and classes compared natively: its answer guarded, the class held as a guard
    /// holds one. `None` for any other needle or set.
    fn class_in_caller_set(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
        needle: &Var,
    ) -> SimResult<Option<bool>> {
        let vm = self.vm;
        let natively = exact_set_elements(o, vm)
            .is_some_and(|elements| elements.iter().all(|e| compared_natively(e, vm)));
        if !natively {
            return Ok(None);
        }
        let Some(class) = self.plain_class(needle) else {
            return Ok(None);
        };
        let found = self.guarded_membership(o, source, &class, |found| {
            Check::SetHasClass(Ident::new(class.clone()), found)
        })?;
        Ok(Some(found))
    }

    /// `number in s` for a number that changes per call (`if self.step in self.milestones`):
    /// the set's elements guarded, and the number's membership in them, as a branch on the
    /// number guards its outcome rather than its value. `None` where the number is a
    /// constant of the translation.
    fn number_in_caller_set(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
        needle: &Var,
    ) -> SimResult<Option<bool>> {
        let vm = self.vm;
        let t = &vm.ctx.types;
        let (value, number_source) = match needle {
            Var::Num(n) if !n.has_size() && self.varies_per_call(n) => {
                let Some(s) = n.as_source() else {
                    return Ok(None);
                };
                if s.has_draw() {
                    return Err(crate::translate::values::python_draws::drawn_value_needed());
                }
                self.guard_leaf_types(n);
                (n.value.clone(), s)
            }
            Var::Lazy(v, s)
                if (v.class().is(t.int_type) || v.class().is(t.float_type))
                    && self.spec.number_is_input(s, v.class().is(t.float_type)) =>
            {
                self.guard(s, Check::type_is(v.class().to_owned()));
                (v.clone(), s.clone())
            }
            _ => return Ok(None),
        };
        let elements = vm
            .ctx
            .types
            .frozenset_type
            .as_object()
            .call((o.clone(),), vm)
            .map_err(|_| Unsupported::new(Kind::Internal, "the elements of a set"))?;
        let found = vm
            ._contains(&elements, &value)
            .map_err(|_| Unsupported::new(Kind::Internal, "a membership test of a set"))?;
        self.caller_set_value(o, source)?;
        let keys = set_elements(&elements, vm).unwrap_or_default();
        self.guard(&number_source, Check::InSet(elements, keys, found));
        Ok(Some(found))
    }

    /// `len(v)` when `v` is a caller's set: its length guarded, not its elements.
    pub(super) fn caller_set_len(&mut self, v: &Var) -> SimResult<Option<usize>> {
        let vm = self.vm;
        let Var::Lazy(o, source) = v else {
            return Ok(None);
        };
        let Some(elements) = set_elements(o, vm) else {
            return Ok(None);
        };
        self.check_readable(o, source)?;
        self.guard(source, Check::type_is(o.class().to_owned()));
        self.guard(source, Check::Len(elements.len()));
        Ok(Some(elements.len()))
    }

    /// `x` when it is an int that changes per call: the replay computes it again (the
    /// numbers it comes from guarded to stay ints), rather than one translation per value.
    fn changing_int(&mut self, x: &Var) -> Option<Var> {
        let n = self.num_operand(x)?;
        n.dynamic_int(&self.spec)?;
        self.guard_leaf_types(&n);
        Some(Var::Num(n))
    }

    /// What a change of a caller's set adds or removes: a key compared natively (its value
    /// guarded, as the replay passes it as a constant).
    fn set_key(&mut self, x: &Var) -> SimResult<PyObjectRef> {
        let o = self.obj(x)?;
        match KeyConst::of(&o, &self.vm.ctx) {
            Some(_) => Ok(o),
            None => unsupported(
                Kind::Value,
                format!(
                    "a caller's set changed with a {} (an element not compared natively)",
                    o.class().name()
                ),
            ),
        }
    }
}
