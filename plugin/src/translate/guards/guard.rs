//! Guards: what must still hold of a frame's inputs for a translation to be reused. Each is a
//! source and a check, evaluated natively (no Python code runs) before anything else on every
//! call; each has a readable form, and a failing set names its first failing guard.

use std::fmt;
use std::sync::OnceLock;

use rustpython_vm::builtins::{PyDict, PyFloat, PyInt, PyList, PyStr, PyTuple, PyType, PyTypeRef};
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::protocol::PyIterReturn;
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{AsObject, PyObject, PyObjectRef, VirtualMachine};

use crate::tensor::Meta;
use crate::tensor::PyTensor;
use crate::translate::guards::class_entries::ClassEntries;
use crate::translate::guards::ident::Ident;
use crate::translate::guards::program::{GuardProgram, GuardReads};
use crate::translate::source::Source;

#[derive(Clone, Debug)]
pub enum Check {
    /// `type(v) is T` (exactly; a subclass fails).
    TypeIs(Ident),
    /// `v is obj`: the same object (a global function, a module, a class).
    Is(Ident),
    IsNone,
    EqBool(bool),
    EqInt(i64),
    /// Compared by bits, so that a NaN constant matches itself.
    EqFloat(f64),
    EqStr(String),
    /// `len(v) == n` for a tuple, list, dict, deque or set.
    Len(usize),
    /// A tensor of this dtype and shape (and the meta's number, `meta_id::intern`).
    Tensor(Meta, u32),
    /// A tensor whose `requires_grad` mark is this (what `isinstance(t, nn.Parameter)` reads).
    RequiresGrad(bool),
    /// `abc.get_cache_token()` is this: no class was registered with an abstract base class
    /// since (an answer of `isinstance` against one computed at translation stands). The
    /// source is `_abc.get_cache_token` itself, a native function called with no arguments.
    AbcCacheToken(i64),
    /// The source resolves to nothing (an absent global, an unset attribute).
    Absent,
    /// A class whose version tag is this (nonzero): nothing of the class, nor of its bases,
    /// was set or deleted since (CPython's `tp_version_tag`, which the VM resets to 0 when a
    /// class changes). One load.
    Version(u32),
    /// A class compared entry by entry where its version cannot serve (a class the call
    /// stores into; see `class_entries`).
    Entries(std::sync::Arc<ClassEntries>),
    /// A dict with exactly these keys (str), in this order: an instance's attribute names,
    /// the keys a loop over a caller's dict went through. The dict's key-set stamp makes a
    /// repeated check one load.
    Keys(Vec<String>),
    /// An `OrderedDict` with exactly these keys (str) in its own order: its links, which
    /// `move_to_end` reorders and its dict's stamp does not see, walked natively.
    OrderedKeys(Vec<String>),
    /// A dict with exactly these keys, in this order, each an int, a tuple, a dtype, bytes or
    /// `None` (`KeyConst`): a table keyed by ints or dtypes read as a whole.
    ConstKeys(Vec<crate::translate::key_const::KeyConst>),
    /// A dict whose keys are exactly these objects, in this order, each by identity: an
    /// optimizer's state keyed by its parameter tensors, read as a whole.
    KeyObjects(Vec<Ident>),
    /// The same object as another source gives (the simulation saw one object through two
    /// paths, and relied on their being one).
    SameAs(Source),
    /// Not the same object as another source gives (the simulation changed one of two objects
    /// of a class and read the other as unchanged); of two tensors, neither a view of the
    /// other's elements nor both views of one tensor's (`tensor::object::shares_elements`).
    NotSameAs(Source),
    /// This source and these others give pairwise distinct objects: the objects of the
    /// caller that a set held by identity (one check for all of them, where relations would
    /// be one per pair).
    Distinct(Vec<Source>),
    /// A tensor of this dtype whose sizes are these, where a `None` (a dynamic dimension)
    /// takes any size of 2 or more.
    TensorDims(crate::tensor::DType, Vec<Option<usize>>),
    /// `v op rhs` is `expected`, for an int or float `v` (exactly) and a constant int or float
    /// `rhs`: a branch on a number that changes per call relies on its condition, not its
    /// value.
    Compare(PyComparisonOp, PyObjectRef, bool),
    /// A set or frozenset with exactly these elements, in this order (see `caller_sets`).
    SetItems(Vec<crate::translate::key_const::KeyConst>),
    /// A set or frozenset whose elements are all keys compared natively, holding this key
    /// (`true`) or not: a membership test's answer. The key, and the object looked up.
    SetHas(crate::translate::key_const::KeyConst, PyObjectRef, bool),
    /// The same of a class (`type(v) in {list, tuple}`), held as a guard holds a class.
    SetHasClass(Ident, bool),
    /// An int or float (exactly) in this frozenset of keys compared natively (`true`) or
    /// not: a membership test of a number that changes per call. The frozenset, its keys.
    InSet(
        PyObjectRef,
        Vec<crate::translate::key_const::KeyConst>,
        bool,
    ),
}

#[derive(Clone, Debug)]
pub struct Guard {
    pub source: Source,
    pub check: Check,
}

impl Guard {
    pub fn new(source: Source, check: Check) -> Self {
        Self { source, check }
    }

    /// Every object this guard compares by identity, in its check and its sources.
    pub fn idents_mut(&mut self, f: &mut impl FnMut(&mut Ident)) {
        self.source.idents_mut(f);
        match &mut self.check {
            Check::TypeIs(i) | Check::Is(i) | Check::SetHasClass(i, _) => f(i),
            Check::KeyObjects(keys) => keys.iter_mut().for_each(f),
            Check::Entries(e) => std::sync::Arc::make_mut(e).idents_mut(f),
            Check::SameAs(s) | Check::NotSameAs(s) => s.idents_mut(f),
            Check::Distinct(sources) => sources.iter_mut().for_each(|s| s.idents_mut(f)),
            _ => {}
        }
    }

    /// This guard as a reason for a miss: what it expects, and what the frame gave.
    pub fn failure(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> String {
        let seen = match self.source.resolve(frame, vm) {
            None => "nothing there".to_owned(),
            Some(v) => seen(&v, &self.check, vm),
        };
        format!("guard failed: {self} (saw {seen})")
    }

    pub fn holds(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> bool {
        let value = self.source.resolve(frame, vm);
        match &self.check {
            Check::SameAs(other) | Check::NotSameAs(other) => {
                let same = matches!(self.check, Check::SameAs(_));
                match (value, other.resolve(frame, vm)) {
                    (Some(a), Some(b)) if !same => !crate::tensor::object::shares_elements(&a, &b),
                    (Some(a), Some(b)) => a.is(&b),
                    _ => false,
                }
            }
            Check::Distinct(others) => {
                let mut seen = vec![value];
                for o in others {
                    seen.push(o.resolve(frame, vm));
                }
                let objects: Option<Vec<_>> = seen.into_iter().collect();
                objects.is_some_and(|objects| {
                    let pointers: Vec<*const PyObject> =
                        objects.iter().map(|o| &**o as *const PyObject).collect();
                    pairwise_distinct(pointers)
                })
            }
            check => check.holds(value.as_deref(), vm),
        }
    }
}

/// The keys of an `OrderedDict` (or of a class written in Python on it that leaves its
/// iteration alone), all str, in its own order, read by its native iterator: no Python code
/// runs. `None` for another object.
pub fn ordered_keys(v: &PyObject, vm: &VirtualMachine) -> Option<Vec<String>> {
    let ordered = crate::translate::loaded_modules::loaded_attr("_collections", "OrderedDict", vm)?;
    let iter = vm.ctx.intern_str("__iter__");
    let class = v.class();
    let native = class.fast_issubclass(ordered.downcast_ref::<PyType>()?)
        && class
            .get_attr(iter)?
            .is(&ordered.downcast_ref::<PyType>()?.get_attr(iter)?);
    if !native {
        return None;
    }
    let it = v.to_owned().get_iter(vm).ok()?;
    let mut keys = Vec::new();
    while let PyIterReturn::Return(k) = it.next(vm).ok()? {
        keys.push(exact_str(&k, vm)?.to_owned());
    }
    Some(keys)
}

/// Whether no two of `pointers` are equal.
pub fn pairwise_distinct(mut pointers: Vec<*const PyObject>) -> bool {
    pointers.sort_unstable();
    pointers.windows(2).all(|w| w[0] != w[1])
}

impl Check {
    pub fn type_is(class: PyTypeRef) -> Check {
        Check::TypeIs(class.into())
    }

    pub fn is(object: PyObjectRef) -> Check {
        Check::Is(object.into())
    }

    pub fn tensor(meta: Meta) -> Check {
        let id = crate::tensor::meta_id::intern(&meta);
        Check::Tensor(meta, id)
    }

    /// The length of a tuple, list or dict (what `Len` checks).
    #[inline]
    pub fn len_of(v: &PyObject, vm: &VirtualMachine) -> Option<usize> {
        if let Some(t) = v.downcast_ref::<PyTuple>() {
            Some(t.len())
        } else if let Some(l) = v.downcast_ref::<PyList>() {
            Some(l.borrow_vec().len())
        } else if let Some(d) = v.downcast_ref::<PyDict>() {
            Some(d.__len__())
        } else if let Some(s) = v.downcast_ref::<rustpython_vm::builtins::PySet>() {
            Some(s.elements().len())
        } else if let Some(s) = v.downcast_ref::<rustpython_vm::builtins::PyFrozenSet>() {
            Some(s.elements().len())
        } else {
            // The interpreter's own deque: its length is native.
            crate::translate::values::deques::is_native_deque(v)
                .then(|| v.length(vm).ok())
                .flatten()
        }
    }

    /// Whether `value` (`None`: the source resolves to nothing) passes.
    pub fn holds(&self, value: Option<&PyObject>, vm: &VirtualMachine) -> bool {
        let Some(v) = value else {
            return matches!(self, Check::Absent);
        };
        match self {
            Check::Absent => false,
            Check::Version(tag) => v
                .downcast_ref::<rustpython_vm::builtins::PyType>()
                .is_some_and(|t| {
                    t.tp_version_tag.load(std::sync::atomic::Ordering::Acquire) == *tag
                }),
            Check::Entries(e) => e.holds(v, vm),
            Check::TypeIs(t) => t.is(v.class().as_object()),
            Check::Is(obj) => obj.is(v),
            Check::IsNone => vm.is_none(v),
            Check::EqBool(b) => v.is(if *b {
                &vm.ctx.true_value
            } else {
                &vm.ctx.false_value
            }),
            Check::EqInt(i) => {
                v.class().is(vm.ctx.types.int_type)
                    && v.downcast_ref::<PyInt>()
                        .and_then(|x| x.try_to_primitive::<i64>(vm).ok())
                        == Some(*i)
            }
            // Exactly a float or str, as `EqInt` is exactly an int: a subclass's instance with
            // the same value (markupsafe's `Markup("a") == "a"`) has methods of its own.
            Check::EqFloat(f) => {
                v.class().is(vm.ctx.types.float_type)
                    && v.downcast_ref::<PyFloat>()
                        .is_some_and(|x| x.to_f64().to_bits() == f.to_bits())
            }
            Check::EqStr(s) => {
                v.class().is(vm.ctx.types.str_type)
                    && v.downcast_ref::<PyStr>()
                        .is_some_and(|x| x.to_string_lossy() == s.as_str())
            }
            Check::Len(n) => Check::len_of(v, vm) == Some(*n),
            Check::Tensor(meta, id) => v
                .downcast_ref_if_exact::<PyTensor>(vm)
                .is_some_and(|t| t.has_meta(*id, meta)),
            Check::AbcCacheToken(token) => abc_cache_token(v, vm) == Some(*token),
            Check::RequiresGrad(b) => v
                .downcast_ref::<PyTensor>()
                .is_some_and(|t| t.requires_grad_flag() == *b),
            Check::Keys(keys) => v
                .downcast_ref::<PyDict>()
                .is_some_and(|d| dict_has_keys(d, keys, vm)),
            Check::OrderedKeys(keys) => ordered_keys(v, vm).as_ref() == Some(keys),
            Check::ConstKeys(keys) => v.downcast_ref::<PyDict>().is_some_and(|d| {
                let now = d.keys_vec();
                now.len() == keys.len()
                    && now.iter().zip(keys).all(|(k, want)| {
                        crate::translate::key_const::KeyConst::of(k, &vm.ctx).as_ref() == Some(want)
                    })
            }),
            Check::KeyObjects(keys) => v.downcast_ref::<PyDict>().is_some_and(|d| {
                let now = d.keys_vec();
                now.len() == keys.len() && now.iter().zip(keys).all(|(k, i)| i.is(k))
            }),
            Check::TensorDims(dtype, dims) => {
                v.downcast_ref_if_exact::<PyTensor>(vm).is_some_and(|t| {
                    let d = t.read();
                    d.dtype() == *dtype && {
                        let shape = d.shape();
                        shape.len() == dims.len()
                            && shape.iter().zip(dims).all(|(n, want)| match want {
                                Some(w) => n == w,
                                None => *n >= 2,
                            })
                    }
                })
            }
            Check::Compare(op, rhs, expected) => {
                // Only Python's own numbers (and bytes, `os.environ`'s values) are compared:
                // no user `__lt__` runs in a guard.
                let t = &vm.ctx.types;
                (v.class().is(t.int_type)
                    || v.class().is(t.float_type)
                    || v.class().is(t.bytes_type))
                    && compare_values(v, rhs, *op, vm) == Some(*expected)
            }
            Check::SetItems(keys) => {
                crate::translate::values::caller_sets::set_elements(v, vm).as_ref() == Some(keys)
            }
            Check::SetHas(_, key, expected) => {
                crate::translate::values::caller_sets::set_has(v, key, vm) == Some(*expected)
            }
            Check::SetHasClass(class, expected) => class.get().is_some_and(|c| {
                crate::translate::values::caller_sets::set_has(v, &c, vm) == Some(*expected)
            }),
            Check::InSet(elements, _, expected) => {
                let t = &vm.ctx.types;
                (v.class().is(t.int_type) || v.class().is(t.float_type))
                    && vm._contains(elements, v).ok() == Some(*expected)
            }
            // Relations between two sources are checked by `Guard::holds` and the program.
            Check::SameAs(_) | Check::NotSameAs(_) | Check::Distinct(_) => false,
        }
    }
}

fn number_text(v: &PyObject) -> String {
    if let Some(i) = v.downcast_ref::<PyInt>() {
        i.as_bigint().to_string()
    } else if let Some(x) = v.downcast_ref::<PyFloat>() {
        format!("{:?}", x.to_f64())
    } else if let Some(b) = v.downcast_ref::<rustpython_vm::builtins::PyBytes>() {
        format!("b{:?}", String::from_utf8_lossy(b.as_bytes()))
    } else {
        format!("<{}>", v.class().name())
    }
}

/// A value as a failing guard reports it: what the check looks at, read without running
/// Python code.
fn seen(v: &PyObject, check: &Check, vm: &VirtualMachine) -> String {
    if let (Check::RequiresGrad(_), Some(t)) = (check, v.downcast_ref::<PyTensor>()) {
        return if t.requires_grad_flag() {
            "True"
        } else {
            "False"
        }
        .to_owned();
    }
    if let Some(t) = v.downcast_ref::<PyTensor>() {
        let m = Meta::of(&t.read());
        return format!("a {} tensor of shape {:?}", m.dtype.name(), m.shape);
    }
    match check {
        // Two classes of one name (made by one factory, one per call): which is which.
        Check::TypeIs(t) if t.class_name() == *v.class().name() => format!(
            "a {} (another class of that name, at {:#x})",
            v.class().name(),
            v.class().get_id()
        ),
        Check::TypeIs(_) => format!("a {}", v.class().name()),
        Check::Compare(..)
            if v.downcast_ref::<PyInt>().is_some() || v.downcast_ref::<PyFloat>().is_some() =>
        {
            number_text(v)
        }
        Check::Version(_) => match v.downcast_ref::<rustpython_vm::builtins::PyType>() {
            Some(t) => format!(
                "{} at version {}",
                t.name(),
                t.tp_version_tag.load(std::sync::atomic::Ordering::Acquire)
            ),
            None => format!("a {}", v.class().name()),
        },
        Check::Entries(e) => e.difference(v, vm),
        Check::OrderedKeys(_) => format!("the keys {:?}", ordered_keys(v, vm).unwrap_or_default()),
        Check::SetItems(_) | Check::SetHas(..) | Check::SetHasClass(..) => v
            .repr(vm)
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("a {}", v.class().name())),
        Check::Keys(_) => match v.downcast_ref::<PyDict>() {
            Some(d) => format!(
                "the keys {:?}",
                d.keys_vec()
                    .iter()
                    .map(|k| k
                        .downcast_ref::<PyStr>()
                        .map_or_else(|| "?".to_owned(), |s| s.to_string_lossy().into_owned()))
                    .collect::<Vec<_>>()
            ),
            None => format!("a {}", v.class().name()),
        },
        Check::Len(_) => match Check::len_of(v, vm) {
            Some(n) => format!("length {n}"),
            None => format!("a {}", v.class().name()),
        },
        _ if v.downcast_ref::<PyInt>().is_some()
            || v.downcast_ref::<PyFloat>().is_some()
            || v.downcast_ref::<PyStr>().is_some() =>
        {
            v.repr(vm)
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_else(|_| format!("a {}", v.class().name()))
        }
        _ if vm.is_none(v) => "None".to_owned(),
        _ => match enum_member_name(v, vm) {
            Some(name) => format!("{}.{name}", v.class().name()),
            None => format!("a {} object", v.class().name()),
        },
    }
}

/// An enum member's name, read from its `__dict__` (`_name_`, as `enum` stores it) without
/// running its `__repr__`, which may be the program's.
fn enum_member_name(v: &PyObject, vm: &VirtualMachine) -> Option<String> {
    let meta = v.class().class().name().to_string();
    if meta != "EnumType" && meta != "EnumMeta" {
        return None;
    }
    let name = v.dict()?.get_item_opt("_name_", vm).ok()??;
    let name = name.downcast_ref::<PyStr>()?;
    Some(name.to_string_lossy().into_owned())
}

/// Whether `d`'s keys are exactly `keys`, in order (strings, compared by value).
pub fn dict_has_keys(d: &PyDict, keys: &[String], vm: &VirtualMachine) -> bool {
    if d.__len__() != keys.len() {
        return false;
    }
    d.keys_vec()
        .iter()
        .zip(keys)
        .all(|(k, want)| exact_str(k, vm) == Some(want.as_str()))
}

/// `a op b` as the comparison operators compute it, for numbers (and bytes) compared
/// natively: not `rich_compare_bool`, whose identity shortcut (a container's) makes a NaN
/// equal to itself where `val != val` is True.
pub fn compare_values(
    a: &PyObject,
    b: &PyObject,
    op: PyComparisonOp,
    vm: &VirtualMachine,
) -> Option<bool> {
    a.rich_compare(b, op, vm).ok()?.try_to_bool(vm).ok()
}

/// `k`'s text when `k` is exactly a str: a key of a str subclass (a `StrEnum` member) with the
/// same text is another key to a loop over the dict, which hands the key itself out.
pub fn exact_str<'a>(k: &'a PyObject, vm: &VirtualMachine) -> Option<&'a str> {
    if !k.class().is(vm.ctx.types.str_type) {
        return None;
    }
    k.downcast_ref::<PyStr>()?.to_str()
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.source;
        match &self.check {
            Check::TypeIs(t) => write!(f, "type({s}) is {}", t.class_name()),
            Check::Is(obj) => write!(f, "{s} is {obj:?}"),
            Check::IsNone => write!(f, "{s} is None"),
            Check::EqBool(b) => write!(f, "{s} is {}", if *b { "True" } else { "False" }),
            Check::EqInt(i) => write!(f, "{s} == {i}"),
            Check::EqFloat(x) => write!(f, "{s} == {x:?}"),
            Check::EqStr(x) => write!(f, "{s} == {x:?}"),
            Check::Len(n) => write!(f, "len({s}) == {n}"),
            Check::Tensor(m, _) => write!(
                f,
                "{s} is a {} tensor of shape {:?}",
                m.dtype.name(),
                m.shape
            ),
            Check::AbcCacheToken(token) => write!(f, "abc.get_cache_token() == {token}"),
            Check::RequiresGrad(b) => write!(
                f,
                "{s}.requires_grad is {}",
                if *b { "True" } else { "False" }
            ),
            Check::Absent => write!(f, "{s} is absent"),
            Check::Version(tag) => write!(f, "{s} unchanged (version {tag})"),
            Check::Entries(e) => write!(f, "{s} unchanged ({e})"),
            Check::Keys(keys) => write!(f, "{s} has exactly the keys {keys:?}"),
            Check::OrderedKeys(keys) => {
                write!(f, "{s} has exactly the keys {keys:?}, in its order")
            }
            Check::ConstKeys(keys) => {
                let shown: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
                write!(f, "{s} has exactly the keys [{}]", shown.join(", "))
            }
            Check::KeyObjects(keys) => {
                let shown: Vec<String> = keys
                    .iter()
                    .map(|k| match k.get() {
                        Some(o) => crate::translate::guards::ident::shown_object(&o),
                        None => format!("<collected at {:#x}>", k.addr()),
                    })
                    .collect();
                write!(f, "{s} has exactly the keys [{}]", shown.join(", "))
            }
            Check::SameAs(other) => write!(f, "{s} is {other}"),
            Check::NotSameAs(other) => write!(f, "{s} is not {other}"),
            Check::Distinct(others) => {
                let others: Vec<String> = others.iter().map(|o| o.to_string()).collect();
                write!(f, "{s}, {} are distinct objects", others.join(", "))
            }
            Check::TensorDims(dtype, dims) => write!(
                f,
                "{s} is a {} tensor of shape [{}]",
                dtype.name(),
                dims.iter()
                    .map(|d| d.map_or_else(|| "≥2".to_owned(), |n| n.to_string()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Check::SetItems(keys) => {
                let shown: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
                write!(f, "{s} holds exactly [{}], in this order", shown.join(", "))
            }
            Check::InSet(_, keys, found) => {
                let shown: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
                let op = if *found { "in" } else { "not in" };
                write!(f, "{s} {op} {{{}}}", shown.join(", "))
            }
            Check::SetHas(key, _, found) => {
                write!(f, "{key} {} {s}", if *found { "in" } else { "not in" })
            }
            Check::SetHasClass(class, found) => {
                write!(f, "{class:?} {} {s}", if *found { "in" } else { "not in" })
            }
            Check::Compare(op, rhs, expected) => {
                let rhs = number_text(rhs);
                if *expected {
                    write!(f, "{s} {} {rhs}", op.operator_token())
                } else {
                    write!(f, "not {s} {} {rhs}", op.operator_token())
                }
            }
        }
    }
}

/// The guards of one translation, checked in order.
#[derive(Debug, Default)]
pub struct GuardSet {
    pub guards: Vec<Guard>,
    /// Compiled on the first check, for the code object the set guards.
    program: OnceLock<GuardProgram>,
    /// The objects the guards hold weakly (see `weaken`).
    weak: Vec<Ident>,
}

impl GuardSet {
    pub fn new(guards: Vec<Guard>) -> Self {
        Self {
            guards,
            program: OnceLock::new(),
            weak: Vec::new(),
        }
    }

    /// Hold the objects the guards compare by identity weakly, as a cache entry keeps them
    /// (see `ident`): the set no longer keeps them alive, and fails once one of them is gone.
    pub fn weaken(&mut self, vm: &VirtualMachine) {
        let (mut weak, mut seen) = (Vec::new(), std::collections::HashSet::new());
        for g in &mut self.guards {
            g.idents_mut(&mut |i| {
                i.weaken(vm);
                if i.is_weak() && seen.insert(i.addr()) {
                    weak.push(i.clone());
                }
            });
        }
        self.weak = weak;
        self.program = OnceLock::new();
    }

    /// Whether an object the set holds weakly is gone: it can never hold again.
    pub fn lost_an_object(&self) -> bool {
        self.weak.iter().any(|i| !i.alive())
    }

    /// `Ok` when all hold; otherwise the first that does not (`None`: the compiled program
    /// failed, but each guard, read again, holds: something changed between the two reads).
    ///
    /// The compiled program and the readable guards are two evaluators of the same facts;
    /// debug builds assert that they agree.
    pub fn check(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> Result<(), Option<&Guard>> {
        self.check_reading(frame, vm, &mut GuardReads::default())
    }

    /// `check`, with what the guards read left in `reads`, for the node numbers of
    /// `program()`.
    pub fn check_reading<'f>(
        &self,
        frame: &FrameView<'f>,
        vm: &VirtualMachine,
        reads: &mut GuardReads<'f>,
    ) -> Result<(), Option<&Guard>> {
        let held = self.program(frame, vm).all_hold(frame, vm, reads);
        // A miss (a recompile or a fallback follows): name the first failing guard in order.
        let failed = (!held || cfg!(debug_assertions))
            .then(|| self.guards.iter().find(|g| !g.holds(frame, vm)))
            .flatten();
        debug_assert_eq!(
            held,
            failed.is_none(),
            "the compiled guard program and the readable guards disagree (first failing: {failed:?})"
        );
        if held { Ok(()) } else { Err(failed) }
    }

    /// The compiled program, compiled on first use for the code object of `frame`.
    pub fn program(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> &GuardProgram {
        self.program
            .get_or_init(|| GuardProgram::new(&self.guards, frame.code(), vm))
    }
}

impl fmt::Display for GuardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for g in &self.guards {
            writeln!(f, "{g}")?;
        }
        Ok(())
    }
}

/// What `get_cache_token`, the native function `f` of `_abc`, returns now.
pub fn abc_cache_token(f: &PyObject, vm: &VirtualMachine) -> Option<i64> {
    let token = f.to_owned().call((), vm).ok()?;
    token
        .downcast_ref::<PyInt>()
        .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
}
