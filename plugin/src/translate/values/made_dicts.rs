//! Instances of classes written in Python on dict, made during the simulation: Hugging Face's
//! `ModelOutput` (a dataclass on `OrderedDict` that a model's `forward` makes and returns,
//! with its own `__setitem__`, `__getitem__` and `__setattr__`), an `AttrDict` made in the
//! frame. Such an instance is one of the object model (its attributes, its class's Python
//! methods inlined) whose entries are a dict made during the simulation. The dict's own
//! methods, reached through the interpreter's protocols (`o[k]`, `k in o`, `len(o)`,
//! iteration), by attribute (`o.keys()`) or through `super()` (`super().__setitem__(k, v)`),
//! work on those entries; the class's Python methods come first wherever Python's lookup
//! puts them. The replacement makes the instance again without running its Python: the
//! native base's `__new__`, its entries set in order by the base's own `__setitem__`, its
//! attributes filled in natively.

use rustpython_vm::builtins::{PyStr, PyType, PyTypeRef};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, Py, PyObjectRef, PyResult, TryFromObject, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::objects::python_method;
use crate::translate::values::{DictRef, Var};

/// `collections.OrderedDict`, the one native subclass of dict whose subclasses are made here
/// (a `defaultdict`'s missing keys, a `Counter`'s arithmetic are not a dict's).
fn ordered_dict(vm: &VirtualMachine) -> Option<PyTypeRef> {
    let module = vm.sys_module.get_attr("modules", vm).ok()?;
    let collections = module.get_item("collections", vm).ok()?;
    collections
        .get_attr("OrderedDict", vm)
        .ok()?
        .downcast::<PyType>()
        .ok()
}

/// The native dict class (dict, or `OrderedDict`) that makes instances of `class`, when
/// `class` is written in Python on it and its instances can be made during the simulation:
/// every other class of its MRO written in Python, none defining `__new__`, `__missing__`
/// or `__del__`, its version tagged (the caller guards it).
pub fn native_dict_base(class: &Py<PyType>, vm: &VirtualMachine) -> Option<PyTypeRef> {
    let t = &vm.ctx.types;
    if class.is(t.dict_type)
        || !class.fast_issubclass(t.dict_type)
        || !class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
        || !class.slots.flags.has_feature(PyTypeFlags::HAS_DICT)
        || class.version_for_specialization(vm) == 0
    {
        return None;
    }
    let ordered = ordered_dict(vm);
    let mut base = t.dict_type.to_owned();
    for c in class.mro.read().iter() {
        if c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) {
            let own = |name: &str| c.attributes.contains(vm.ctx.intern_str(name));
            if own("__new__") || own("__missing__") || own("__del__") {
                return None;
            }
        } else if ordered.as_ref().is_some_and(|o| c.is(o)) {
            base = c.clone();
        } else if !c.is(t.dict_type) && !c.is(t.object_type) {
            return None;
        }
    }
    Some(base)
}

/// The dict methods a made instance's entries answer, by the base: the readers, and for a
/// dict base the writers too (an `OrderedDict`'s `update` and `setdefault` store through the
/// class's own `__setitem__` in CPython, not through the entries).
fn entries_method(name: &str, ordered: bool) -> Option<&'static str> {
    Some(match name {
        "keys" => "keys",
        "values" => "values",
        "items" => "items",
        "get" => "get",
        "update" if !ordered => "update",
        "setdefault" if !ordered => "setdefault",
        _ => return None,
    })
}

/// The protocols of the entries, by the name of the dict's slot.
const PROTOCOLS: &[&str] = &[
    "__getitem__",
    "__setitem__",
    "__delitem__",
    "__contains__",
    "__len__",
    "__iter__",
];

impl State<'_> {
    /// The entries of `v` when it is an instance made during the simulation of a class
    /// written on dict.
    pub fn made_entries(v: &Var) -> Option<DictRef> {
        match v {
            Var::Object(o) => o.entries.clone(),
            _ => None,
        }
    }

    /// The interpreter's `name` protocol (`__getitem__`, `__len__`...) on a made instance of
    /// a class written on dict whose `name` is the dict's own (not written in Python): done
    /// on its entries. `None` when `owner` is no such instance or its class has its own.
    pub(super) fn made_dict_protocol(
        &mut self,
        owner: &Var,
        name: &str,
        args: &[Var],
    ) -> SimResult<Option<Var>> {
        let Some(entries) = Self::made_entries(owner) else {
            return Ok(None);
        };
        let Var::Object(o) = owner else {
            return Ok(None);
        };
        if !PROTOCOLS.contains(&name) || python_method(&o.class, name, self.vm).is_some() {
            return Ok(None);
        }
        self.entries_protocol(entries, name, args).map(Some)
    }

    fn entries_protocol(&mut self, entries: DictRef, name: &str, args: &[Var]) -> SimResult<Var> {
        let vm = self.vm;
        let dict = Var::Dict(entries.clone());
        let none = || Var::Obj(vm.ctx.none());
        match (name, args) {
            ("__getitem__", [k]) => self.subscript(&dict, k),
            ("__setitem__", [k, v]) => self.set_item(&dict, k, v.clone()).map(|_| none()),
            ("__delitem__", [k]) => self.del_item(&dict, k).map(|_| none()),
            ("__contains__", [k]) => {
                let found = self.contains(&dict, k)?;
                Ok(Var::Obj(vm.ctx.new_bool(found).into()))
            }
            ("__len__", []) => Ok(Var::Obj(vm.ctx.new_int(entries.borrow().len()).into())),
            ("__iter__", []) => self.iterator_of(&dict),
            _ => unsupported(
                Kind::Raises,
                format!("dict.{name}() with these arguments (TypeError)"),
            ),
        }
    }

    /// `d(owner, *args)` where `d` is a native slot or method of dict (or `OrderedDict`)
    /// reached through `super()` or the class (`super().__setitem__(k, v)`,
    /// `dict.keys(self)`), and `owner` a made instance of a class written on it.
    pub(super) fn made_dict_native_call(
        &mut self,
        f: &PyObjectRef,
        args: &[Var],
    ) -> SimResult<Option<Var>> {
        let Some((owner, rest)) = args.split_first() else {
            return Ok(None);
        };
        let (Some(entries), Var::Object(o)) = (Self::made_entries(owner), owner) else {
            return Ok(None);
        };
        let Some((name, ordered)) = self.native_dict_member(&o.class, f) else {
            return Ok(None);
        };
        if PROTOCOLS.contains(&name.as_str()) {
            return self.entries_protocol(entries, &name, rest).map(Some);
        }
        match entries_method(&name, ordered) {
            Some(m) => self
                .container_method(&Var::Dict(entries), m, rest.to_vec(), Vec::new())
                .map(Some),
            None => unsupported(
                Kind::Call,
                format!(
                    "{}.{name} on a {} (not simulated)",
                    f.class().name(),
                    o.class.name()
                ),
            ),
        }
    }

    /// `name` of a made instance of a class written on dict, found on the class as the
    /// native base's method (`o.keys`): a method of its entries. `None` when the attribute is
    /// anything else.
    pub(super) fn made_dict_attr(&mut self, owner: &Var, d: &PyObjectRef) -> Option<Var> {
        let (Some(entries), Var::Object(o)) = (Self::made_entries(owner), owner) else {
            return None;
        };
        let (name, ordered) = self.native_dict_member(&o.class, d)?;
        let m = entries_method(&name, ordered)?;
        Some(Var::Method(Box::new(Var::Dict(entries)), m))
    }

    /// The name of `f` when it is a member of dict or of `class`'s native dict base (as
    /// `class` finds it: not hidden by a class written in Python), and whether that base is
    /// an `OrderedDict`.
    fn native_dict_member(&self, class: &Py<PyType>, f: &PyObjectRef) -> Option<(String, bool)> {
        let vm = self.vm;
        let base = native_dict_base(class, vm)?;
        let ordered = !base.is(vm.ctx.types.dict_type);
        let name = f.get_attr("__name__", vm).ok()?;
        let name = name.downcast_ref::<PyStr>()?.to_str()?.to_owned();
        let of = |c: &Py<PyType>| {
            c.get_attr(vm.ctx.intern_str(name.as_str()))
                .is_some_and(|x| x.is(f))
        };
        (of(&base) || of(vm.ctx.types.dict_type)).then_some((name, ordered))
    }
}

/// The function the replacement calls to make a made instance of a class written on dict
/// again: `base.__new__(class)`, each entry set in order through `base.__setitem__` (so an
/// `OrderedDict` records its order), then its attributes filled in natively.
pub fn dict_object_maker(vm: &VirtualMachine) -> PyObjectRef {
    vm.new_function(
        "__symtrace_make_dict_object",
        |class: PyTypeRef,
         base: PyTypeRef,
         entries: rustpython_vm::builtins::PyTupleRef,
         attrs: rustpython_vm::builtins::PyDictRef,
         vm: &VirtualMachine|
         -> PyResult {
            let slot = |name: &str| {
                base.get_attr(vm.ctx.intern_str(name))
                    .ok_or_else(|| vm.new_type_error(format!("{} has no {name}", base.name())))
            };
            let obj = slot("__new__")?.call((class,), vm)?;
            let set = slot("__setitem__")?;
            for pair in entries.as_slice() {
                let pair = rustpython_vm::builtins::PyTupleRef::try_from_object(vm, pair.clone())?;
                let [k, v] = pair.as_slice() else {
                    return Err(vm.new_type_error("an entry is a pair".to_owned()));
                };
                set.call((obj.clone(), k.clone(), v.clone()), vm)?;
            }
            crate::translate::object_templates::fill_attributes(&obj, &attrs, vm)?;
            Ok(obj)
        },
    )
    .into()
}
