//! Symbolic values: what a simulated frame holds in its locals, cells and stack (`Var`). Each
//! knows enough to be used again by generated code: a value read from the frame keeps its
//! source, a tensor is a fake standing for a graph value, a container made during the
//! simulation holds symbolic values. What each kind of value does is in the files beside:
//! `operators` (arithmetic, comparison, truth, identity, membership), `containers`
//! (subscripts, item stores, iteration, container methods), `attrs` (attributes and methods),
//! `calls` (calls: inlined user functions, tensor functions), `builtins` (the builtins the
//! simulation models), `exceptions` (exceptions made natively and raised).

pub mod asserted_truths;
pub mod attrs;
pub mod builtins;
pub mod cached_calls;
pub mod callables;
pub mod caller_cells;
pub mod caller_dict_entries;
pub mod caller_dicts;
pub mod caller_lists;
pub mod caller_sets;
pub mod calls;
pub mod class_stores;
pub mod class_tests;
pub mod container_methods;
pub mod containers;
pub mod counted_elements;
mod custom_lookup;
pub mod deferred_log;
pub mod deferred_print;
pub mod deferred_text;
pub mod deferred_warning;
pub mod deques;
mod descriptor_kinds;
pub mod dict_arguments;
pub mod dict_subclasses;
pub mod enum_classes;
pub mod enum_keys;
pub mod enum_operands;
pub mod exceptions;
mod function_attrs;
pub mod heap_queues;
pub mod identity;
pub mod identity_sets;
pub mod indexed_items;
pub mod indexed_stores;
pub mod input_writes;
pub mod iterators;
pub mod itertools;
pub mod keyed;
pub mod keyed_stores;
pub mod keyword_positions;
pub mod library_constructors;
pub mod list_lengths;
pub mod list_methods;
pub mod located_output;
pub mod log_levels;
pub mod made_dicts;
pub mod module_stores;
pub mod named_tuples;
pub mod native_calls;
pub mod native_method_forms;
pub mod nested_functions;
pub mod number_builtins;
pub mod number_operands;
pub mod numbers;
pub mod objects;
pub mod operator_getters;
pub mod operators;
pub mod protocols;
pub mod python_draws;
pub mod replayed_stacklevel;
pub mod scalar_inputs;
pub mod sequence_ops;
pub mod sets;
pub mod size_attrs;
pub mod size_counters;
pub mod size_factories;
pub mod size_floats;
pub mod size_indexes;
pub mod size_reshapes;
pub mod size_rounding;
pub mod sizes;
pub mod slot_objects;
pub mod template_strings;
pub mod tensor_functions;
pub mod tensor_stores;
pub mod user_classes;
pub mod user_operators;
pub mod weak_references;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rustpython_vm::builtins::PyEllipsis;
use rustpython_vm::builtins::{PyBytes, PyCode, PyFloat, PyInt, PyNone, PyStr, PyTuple, PyTypeRef};
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyRef, VirtualMachine};

use crate::tensor::PyTensor;
use crate::translate::source::Source;
use crate::translate::state::SimResult;

/// A closure cell: one made during the simulation, or one of the frame's own free variables.
#[derive(Debug)]
pub struct CellState {
    pub value: Option<Var>,
    /// A cell that existed before the frame ran: storing into it is a side effect.
    pub existing: bool,
    /// For a free variable of the translated frame: its name there, by which the replacement
    /// code replays a store into it (other cells of the caller are not written).
    pub home: Option<String>,
}

pub type CellRef = Rc<RefCell<CellState>>;

/// A function made by MAKE_FUNCTION during the simulation (it exists only there).
#[derive(Debug)]
pub struct SimFunction {
    pub code: PyRef<PyCode>,
    pub defaults: Option<Var>,
    pub kwdefaults: Option<Var>,
    /// `__annotations__` or `__annotate__`, as SET_FUNCTION_ATTRIBUTE's flag gave it: not read
    /// by the simulation, kept to make the function again.
    pub annotations: Option<(u32, Var)>,
    pub closure: Vec<CellRef>,
    /// The globals of the frame that made it.
    pub globals: Globals,
}

/// Whose globals a frame reads: the translated frame's own, or those of an inlined function
/// read from a source (`fn.__globals__`).
#[derive(Clone, Debug)]
pub struct Globals {
    pub dict: PyRef<rustpython_vm::builtins::PyDict>,
    /// `None` for the translated frame's globals (sources `G[...]`).
    pub owner: Option<Source>,
}

impl Globals {
    pub fn source(&self, name: &str) -> Source {
        Source::global_in(self.owner.as_ref(), name)
    }
}

#[derive(Clone, Debug)]
pub enum Var {
    /// The NULL of the call protocol.
    Null,
    /// An object read from the frame (an argument, a global, an attribute...), not yet relied
    /// upon: it is guarded when the simulation uses what it is.
    Lazy(PyObjectRef, Source),
    /// An object whose value is known: a constant, or computed during the simulation.
    Obj(PyObjectRef),
    /// A fake tensor (see `recorder`).
    Tensor(PyRef<PyTensor>),
    Tuple(Rc<Vec<Var>>),
    List(Rc<RefCell<Vec<Var>>>),
    /// Keys are plain constants (see [`is_plain`]).
    Dict(Rc<RefCell<Vec<(PyObjectRef, Var)>>>),
    Iter(Rc<RefCell<VecDeque<Var>>>),
    /// `keys()`, `values()` or `items()` of a dict made during the simulation: live, it reads
    /// the dict as it is when used.
    View(DictRef, ViewKind),
    /// An iterator over a dict made during the simulation (or a view of one), by position as
    /// Python's iterates; a change of the dict's keys while it iterates is not simulated.
    DictIter(Rc<RefCell<DictIter>>),
    Func(Rc<SimFunction>),
    Cell(CellRef),
    /// A method of a list or dict made during the simulation.
    Method(Box<Var>, &'static str),
    /// A generator of a user generator function called during the simulation: its frame is
    /// simulated between its yields, as its consumer asks for items, so that the two
    /// interleave as they do when run.
    Gen(Rc<RefCell<SimGen>>),
    /// An instance of a user class made during the simulation (see `objects`).
    Object(Rc<NewObject>),
    /// A method bound to its object (or a class method to its class), taken as a value.
    Bound(Rc<(Var, Var)>),
    /// An instance of a named tuple class made during the simulation: its class and items.
    NamedTuple(PyTypeRef, Rc<Vec<Var>>),
    /// An iterator stepped lazily, as Python steps it (see `iterators`).
    Stepper(Rc<RefCell<iterators::Stepper>>),
    /// `keys()`, `values()` or `items()` of a dict of the caller's.
    CallerView(Rc<iterators::CallerView>),
    /// A set made during the simulation: a real set of plain values it owns (see `sets`).
    Set(PyObjectRef),
    /// `functools.partial(func, *args, **kwargs)` made during the simulation.
    Partial(Rc<Partial>),
    /// A number the replacement computes again from the frame (see `numbers`), or a size
    /// that changes from call to call (see `sizes`).
    Num(Rc<numbers::Num>),
    /// A slice with a size that changes from call to call among its parts (`:T`), kept for a
    /// tensor's index (see `sizes`).
    SymSlice(Rc<[Var; 3]>),
    /// A str formatted from numbers that change from call to call, which the replacement
    /// formats again (see `deferred_text`).
    Text(Rc<Vec<deferred_text::TextPart>>),
    /// A template string or one of its interpolations (see `template_strings`).
    TStr(Rc<template_strings::TStr>),
    /// A `collections.deque` made during the simulation (see `deques`).
    Deque(deques::DequeRef),
}

/// A partial application: called, it calls `func` with its arguments first.
#[derive(Debug)]
pub struct Partial {
    pub func: Var,
    pub args: Vec<Var>,
    pub kwargs: Vec<(String, Var)>,
}

/// An instance of a user class made during the simulation: its class (whose version the
/// simulation guards) and its attribute dictionary, which `obj.__dict__` shares.
#[derive(Debug)]
pub struct NewObject {
    pub class: PyTypeRef,
    pub dict: DictRef,
    /// The entries of an instance of a class written on dict (see `made_dicts`), apart from
    /// its attributes; `None` for any other class.
    pub entries: Option<DictRef>,
}

/// The entries of a dict made during the simulation, in insertion order (keys are plain).
pub type DictRef = Rc<RefCell<Vec<(PyObjectRef, Var)>>>;

/// The items of a list made during the simulation, or of a caller's list's shadow.
pub type ListRef = Rc<RefCell<Vec<Var>>>;

/// What a dict view, or an iterator over one, gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewKind {
    Keys,
    Values,
    Items,
}

impl ViewKind {
    pub fn name(self) -> &'static str {
        match self {
            ViewKind::Keys => "dict_keys",
            ViewKind::Values => "dict_values",
            ViewKind::Items => "dict_items",
        }
    }

    /// The dict method that makes the view.
    pub fn method(self) -> &'static str {
        match self {
            ViewKind::Keys => "keys",
            ViewKind::Values => "values",
            ViewKind::Items => "items",
        }
    }

    /// What the view gives for an entry.
    pub fn of(self, (k, v): &(PyObjectRef, Var)) -> Var {
        match self {
            ViewKind::Keys => key_var(k),
            ViewKind::Values => v.clone(),
            ViewKind::Items => Var::tuple(vec![key_var(k), v.clone()]),
        }
    }

    /// What the view gives for each entry of `dict` now.
    pub fn items(self, dict: &DictRef) -> Vec<Var> {
        dict.borrow().iter().map(|e| self.of(e)).collect()
    }
}

/// A dict's key as the simulation holds it: an object of the caller's found by identity (a
/// parameter tensor keying an optimizer's state) stays the caller's, read through itself, so
/// that a tensor is a graph input and an update of it is written back; any other key is a
/// plain value.
pub fn key_var(k: &PyObjectRef) -> Var {
    let ctx = rustpython_vm::Context::genesis();
    let instance = k.downcast_ref::<PyTensor>().is_some()
        || k.class()
            .slots
            .flags
            .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE);
    // An enum member keys by `Enum.__hash__` or its mixed-in type's, but is one object
    // all the same, which the dict's key guards fix.
    if instance
        && (crate::translate::source::identity_key(k, ctx).is_some()
            || crate::translate::values::identity::is_enum_member(k))
    {
        Var::Lazy(k.clone(), Source::object(k.clone()))
    } else {
        Var::Obj(k.clone())
    }
}

/// Where an iteration over a dict is: the keys it started with (by identity), and the next
/// position.
#[derive(Debug)]
pub struct DictIter {
    pub dict: DictRef,
    pub kind: ViewKind,
    pub keys: Vec<usize>,
    pub next: usize,
}

impl DictIter {
    pub fn new(dict: DictRef, kind: ViewKind) -> Self {
        let keys = dict.borrow().iter().map(|(k, _)| k.get_id()).collect();
        Self {
            dict,
            kind,
            keys,
            next: 0,
        }
    }
}

/// The state of a simulated generator.
pub struct SimGen {
    /// Its frame, suspended at a yield (or not started); taken out while it runs.
    pub frame: Option<crate::translate::executor::SimFrame>,
    pub started: bool,
    /// It has returned: it gives nothing more.
    pub done: bool,
    pub qualname: String,
    /// The callable it was made by and the arguments of that call: not started, it is made
    /// again by calling it so (`iterator_templates::generator_template`).
    pub made_by: Option<(Var, Vec<Var>, Vec<(String, Var)>)>,
}

impl std::fmt::Debug for SimGen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<generator {}>", self.qualname)
    }
}

impl Var {
    /// The object of a value that is one object (read from the frame, or known), with where
    /// the replacement finds it: its source, or the object itself.
    pub fn object_and_source(&self) -> Option<(PyObjectRef, Source)> {
        match self {
            Var::Lazy(o, s) => Some((o.clone(), s.clone())),
            Var::Obj(o) => Some((o.clone(), Source::object(o.clone()))),
            _ => None,
        }
    }
    pub fn tuple(items: Vec<Var>) -> Var {
        Var::Tuple(Rc::new(items))
    }
    pub fn list(items: Vec<Var>) -> Var {
        Var::List(Rc::new(RefCell::new(items)))
    }
    pub fn kind(&self) -> String {
        match self {
            Var::Null => "NULL".into(),
            Var::Lazy(o, _) | Var::Obj(o) => o.class().name().to_string(),
            Var::Tensor(_) => "Tensor".into(),
            Var::Tuple(_) => "tuple".into(),
            Var::List(_) => "list".into(),
            Var::Dict(_) => "dict".into(),
            Var::Iter(_) => "iterator".into(),
            Var::View(_, kind) => kind.name().into(),
            Var::DictIter(_) => "dict iterator".into(),
            Var::Func(_) => "function".into(),
            Var::Cell(_) => "cell".into(),
            Var::Method(_, m) => format!("method {m}"),
            Var::Gen(g) => format!("generator {}", g.borrow().qualname),
            Var::Object(o) => o.class.name().to_string(),
            Var::Bound(_) => "bound method".into(),
            Var::NamedTuple(c, _) => c.name().to_string(),
            Var::Stepper(_) => "iterator".into(),
            Var::CallerView(v) => v.kind.name().into(),
            Var::Set(_) => "set".into(),
            Var::Partial(_) => "functools.partial".into(),
            Var::Num(n) => n.value.class().name().to_string(),
            Var::SymSlice(_) => "slice".into(),
            Var::Text(_) => "str".into(),
            Var::TStr(t) => t.class_name().into(),
            Var::Deque(_) => "deque".into(),
        }
    }
}

/// Values whose operations run no user code and whose results depend only on their value:
/// the simulation computes with them at trace time, and generated code may hold them as
/// constants.
pub fn is_plain(obj: &PyObject, vm: &VirtualMachine) -> bool {
    let c = obj.class();
    let t = &vm.ctx.types;
    if c.is(t.int_type)
        || c.is(t.bool_type)
        || c.is(t.float_type)
        || c.is(t.str_type)
        || c.is(t.bytes_type)
    {
        return true;
    }
    if obj.downcast_ref::<PyNone>().is_some()
        || obj.downcast_ref::<PyEllipsis>().is_some()
        || obj.downcast_ref::<crate::tensor::PyDType>().is_some()
        || obj.downcast_ref::<crate::tensor::PyDevice>().is_some()
    {
        return true;
    }
    // A tuple, or a native subclass of it (`sys.version_info`, a struct sequence), which
    // compares and hashes as a tuple does.
    let native_tuple = c.fast_issubclass(t.tuple_type)
        && !c
            .slots
            .flags
            .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE);
    if native_tuple {
        return obj
            .downcast_ref::<PyTuple>()
            .is_some_and(|tu| tu.as_slice().iter().all(|x| is_plain(x, vm)));
    }
    if c.is(t.frozenset_type) {
        return sets::is_plain_set(obj, vm);
    }
    if let Some(s) = obj.downcast_ref::<rustpython_vm::builtins::PySlice>() {
        let part = |p: &Option<PyObjectRef>| p.as_ref().is_none_or(|p| is_plain(p, vm));
        return part(&s.start) && is_plain(&s.stop, vm) && part(&s.step);
    }
    false
}

/// Plain values the assembler's constant table accepts (what `LOAD_CONST` may load).
pub fn is_literal(obj: &PyObject, vm: &VirtualMachine) -> bool {
    is_plain(obj, vm)
        && (obj.downcast_ref::<PyInt>().is_some()
            || obj.downcast_ref::<PyFloat>().is_some()
            || obj.downcast_ref::<PyStr>().is_some()
            || obj.downcast_ref::<PyBytes>().is_some()
            || obj.downcast_ref::<PyNone>().is_some()
            || obj.downcast_ref::<PyEllipsis>().is_some()
            || obj
                .downcast_ref::<PyTuple>()
                .is_some_and(|t| t.as_slice().iter().all(|x| is_literal(x, vm))))
}

/// Whether `obj` is a class whose metaclass is exactly `type`: a key hashed and compared by
/// identity, which a dict made during the call may hold and the replacement may name.
pub fn is_plain_class(obj: &PyObject, ctx: &rustpython_vm::Context) -> bool {
    obj.downcast_ref::<rustpython_vm::builtins::PyType>()
        .is_some()
        && obj.class().is(ctx.types.type_type)
}

/// The value under `key` of a dictionary made during the simulation, as Python finds it
/// (keys are plain values, compared by equality).
pub fn dict_entry(entries: &DictRef, key: &PyObjectRef, vm: &VirtualMachine) -> Option<Var> {
    entries
        .borrow()
        .iter()
        .find(|(k, _)| vm.bool_eq(k, key).unwrap_or(false))
        .map(|(_, v)| v.clone())
}

/// Insert into a dictionary made during the simulation (keys are plain values).
pub fn dict_insert(
    entries: &mut Vec<(PyObjectRef, Var)>,
    key: PyObjectRef,
    value: Var,
    vm: &VirtualMachine,
) -> SimResult<()> {
    for (k, v) in entries.iter_mut() {
        if vm.bool_eq(k, &key).unwrap_or(false) {
            *v = value;
            return Ok(());
        }
    }
    entries.push((key, value));
    Ok(())
}
