//! Attributes: reads in attribute and method form (modules, tensors, instances and classes
//! written in Python through `objects`, named tuples, builtin types, plain values, the
//! containers made during the simulation), a context manager's special methods, and stores
//! and deletes (on the caller's objects: side effects).

use std::rc::Rc;

use rustpython_vm::builtins::{PyFunction, PyGetSet, PyType};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload};

use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::guards::class_entries::is_data;
use crate::translate::guards::guard::Check;
use crate::translate::source::{Source, native_getter};
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::objects::{descriptor, is_user_class, python_method};
use crate::translate::values::{Var, caller_sets, is_plain};

impl State<'_> {
    /// `del owner.name`.
    pub fn del_attr(&mut self, owner: &Var, name: &str) -> SimResult<()> {
        match self.instance(owner)? {
            Some(inst) => self.instance_setattr(owner, &inst, name, None),
            None => unsupported(
                Kind::SideEffect,
                format!(
                    "del of attribute {name} of a {} (a side effect that is not replayed)",
                    owner.kind()
                ),
            ),
        }
    }

    /// `owner.name = value`.
    pub fn set_attr(&mut self, owner: &Var, name: &str, value: Var) -> SimResult<()> {
        match self.instance(owner)? {
            Some(inst) => self.instance_setattr(owner, &inst, name, Some(value)),
            None if self.mark_stored(owner, name, &value)? => Ok(()),
            None if self.class_store(owner, name, value.clone())? => Ok(()),
            None if self.module_store(owner, name, value.clone())? => Ok(()),
            None if self.function_store(owner, name, value)? => Ok(()),
            None => unsupported(
                Kind::SideEffect,
                format!(
                    "attribute store on a {} (a side effect that is not replayed)",
                    owner.kind()
                ),
            ),
        }
    }

    /// `owner.name` in attribute form.
    pub fn attr_of(&mut self, owner: &Var, name: &str) -> SimResult<Var> {
        let vm = self.vm;
        if let Var::Lazy(o, source) = owner
            && let Some(method) = self.generator_method(o, source, name)?
        {
            return Ok(method);
        }
        // A reading method of a caller's dict subclass taken as a value (`Counter.update`'s
        // `self_get = self.get`): the method the call form finds.
        if let Var::Lazy(o, _) = owner
            && crate::translate::state::is_dict(o, vm)
            && !o.class().is(vm.ctx.types.dict_type)
            && matches!(name, "get" | "keys" | "values" | "items")
            && let (method @ Var::Method(..), Var::Null) = self.method_of(owner, name)?
        {
            return Ok(method);
        }
        if let Var::Lazy(o, source) = owner
            && o.class().is(vm.ctx.types.module_type)
        {
            // Exactly a module: a subclass may define `__getattribute__`.
            self.check_readable(o, source)?;
            self.obj(owner)?; // the module's identity
            // A global of the module stored by a function of it that the simulation ran.
            if let Some(written) = self.module_global_written(o, name)? {
                return written.ok_or_else(|| {
                    Unsupported::new(
                        Kind::Raises,
                        format!("module attribute {name:?} read after the call deleted it"),
                    )
                });
            }
            let read = || {
                o.dict()
                    .and_then(|d| d.get_item_opt(name, vm).ok().flatten())
            };
            return match read().or_else(|| {
                crate::translate::lazy_modules::load(o, vm)
                    .then(read)
                    .flatten()
            }) {
                Some(v) => Ok(Var::Lazy(v, source.clone().attr(name))),
                None => unsupported(Kind::Raises, format!("module has no attribute {name:?}")),
            };
        }
        if self.is_tensor(owner) {
            // `x.__class__` is `type(x)`: a tensor made in the graph is a Tensor.
            if name == "__class__" {
                return Ok(Var::Obj(self.type_of(owner)?));
            }
            return self.tensor_attr(owner, name);
        }
        if let Some(inst) = self.instance(owner)? {
            return self.instance_attr(owner, &inst, name);
        }
        if let Some(v) = self.custom_lookup_attr(owner, name)? {
            return Ok(v);
        }
        if let Some(v) = self.namedtuple_attr(owner, name)? {
            return Ok(v);
        }
        if let Var::Lazy(o, source) = owner
            && o.dict().is_none()
            && o.class().slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
            && native_getter(o, name, vm).is_some()
        {
            // A slot of an instance of a class with `__slots__` (`@dataclass(slots=True)`):
            // its class and the class's version guarded, the value read where it is.
            let class = o.class().to_owned();
            self.guard(source, Check::type_is(class.clone()));
            self.guard_class(source.clone().type_of(), &class)?;
            let v = o.get_attr(&vm.ctx.new_str(name), vm).map_err(|_| {
                Unsupported::new(
                    Kind::Raises,
                    format!("the empty slot {name} (AttributeError)"),
                )
            })?;
            let read = Source::NativeAttr(Box::new(source.clone()), name.to_owned());
            return Ok(Var::Lazy(v, read));
        }
        if let Some(v) = self.exception_attr(owner, name) {
            return Ok(v);
        }
        if let Some(v) = self.tstr_attr(owner, name)? {
            return Ok(v);
        }
        if let Some(v) = self.enum_field(owner, name)? {
            return Ok(v);
        }
        if let Some(v) = self.function_attr(owner, name)? {
            return Ok(v);
        }
        match owner {
            // `v.__class__` of a container, function or number made here, or of the caller's
            // object of a builtin class (`singledispatch` dispatches on it): its type, which a
            // builtin class cannot override.
            Var::List(_)
            | Var::Tuple(_)
            | Var::Dict(_)
            | Var::Set(_)
            | Var::Func(_)
            | Var::Num(_)
                if name == "__class__" =>
            {
                Ok(Var::Obj(self.type_of(owner)?))
            }
            Var::Lazy(o, _) | Var::Obj(o)
                if name == "__class__"
                    && !o.class().slots.flags.has_feature(PyTypeFlags::HEAPTYPE) =>
            {
                Ok(Var::Obj(self.type_of(owner)?))
            }
            // A method of a list, dict or set made here taken as a value (`key=d.get`):
            // what a call in method form would call.
            Var::List(_) | Var::Dict(_) | Var::Set(_) => Ok(self.method_of(owner, name)?.0),
            Var::Deque(d) => match self.deque_attr(d, name) {
                Some(v) => Ok(v),
                None => Ok(self.method_of(owner, name)?.0),
            },
            Var::Bound(b) => match name {
                "__func__"
                    if crate::translate::values::native_method_forms::native_bound_class(
                        &b.0, vm,
                    )
                    .is_none() =>
                {
                    Ok(b.0.clone())
                }
                "__self__" => Ok(b.1.clone()),
                _ => unsupported(Kind::Value, format!("attribute {name} of a bound method")),
            },
            Var::Obj(o) | Var::Lazy(o, _) if o.downcast_ref::<PyType>().is_some() => {
                self.class_attr(owner, name)
            }
            // A function's names (`fn.__name__` in dispatch tables and messages): plain data;
            // a caller's function's read from where it is (guarded where used).
            Var::Func(f) if matches!(name, "__name__" | "__qualname__") => {
                let n = match name {
                    "__name__" => f.code.obj_name.as_str(),
                    _ => f.code.qualname.as_str(),
                };
                Ok(Var::Obj(vm.ctx.new_str(n).into()))
            }
            Var::Lazy(o, _) | Var::Obj(o)
                if o.downcast_ref::<PyFunction>().is_some()
                    && matches!(name, "__name__" | "__qualname__" | "__module__" | "__doc__") =>
            {
                let source = match owner {
                    Var::Lazy(_, source) => source.clone(),
                    _ => Source::object(o.clone()),
                };
                let v = o
                    .get_attr(&vm.ctx.new_str(name), vm)
                    .map_err(|_| Unsupported::new(Kind::Raises, format!("function.{name}")))?;
                Ok(Var::Lazy(
                    v,
                    Source::NativeAttr(Box::new(source), name.to_owned()),
                ))
            }
            Var::Obj(o) | Var::Lazy(o, _)
                if is_plain(o, vm) || o.downcast_ref::<crate::tensor::PyDType>().is_some() =>
            {
                let o = self.obj(owner)?;
                self.native_result(o.get_attr(&vm.ctx.new_str(name), vm), false, "an attribute")
            }
            _ => unsupported(
                Kind::Value,
                format!("attribute {name} of a {}", owner.kind()),
            ),
        }
    }

    /// A tensor's attribute: a native one of `Tensor`, or a function set on the class from
    /// Python, bound to the tensor (and inlined when called).
    fn tensor_attr(&mut self, owner: &Var, name: &str) -> SimResult<Var> {
        let vm = self.vm;
        if let Some(f) = self.tensor_python_method(name)? {
            return Ok(Var::Bound(Rc::new((Var::Obj(f), owner.clone()))));
        }
        let class = PyTensor::class(&vm.ctx);
        if let Some(p) = class.get_attr(vm.ctx.intern_str(name))
            && p.class().is(vm.ctx.types.property_type)
        {
            // A property set from Python: its getter is the user's code, inlined.
            return match p.get_attr("fget", vm).ok().filter(|f| !vm.is_none(f)) {
                Some(fget) => self.invoke(&Var::Obj(fget), vec![owner.clone()], Vec::new()),
                None => unsupported(Kind::Raises, format!("Tensor.{name} has no getter")),
            };
        }
        // Anything else must be native (what `tensor_class_attr` accepts): reading it runs
        // no code of the user's. A method is bound to the tensor, as the method form of the
        // read binds it (`x.view(*shape)` reads it so).
        let a = self.tensor_class_attr(name)?;
        if a.class().is(vm.ctx.types.method_descriptor_type) {
            return Ok(Var::Bound(Rc::new((Var::Obj(a), owner.clone()))));
        }
        if name == "requires_grad" {
            let flag = self.requires_grad_of(owner)?;
            return Ok(Var::Obj(vm.ctx.new_bool(flag).into()));
        }
        if name == "shape"
            && let Some(sizes) = self.symbolic_sizes(owner)?
        {
            return Ok(Var::Tuple(Rc::new(sizes)));
        }
        let o = self.obj(owner)?;
        let r = o.get_attr(&vm.ctx.new_str(name), vm);
        if !TENSOR_META.contains(&name) {
            // Attributes computed by ops (`T`) come back as recorded fakes.
            let fake = self.is_fake(owner);
            return match self.native_result(r, fake, &format!("Tensor.{name}"))? {
                v @ Var::Tensor(_) => Ok(v),
                // Of a tensor made from constants: a constant.
                v @ Var::Obj(_) if !fake => Ok(v),
                _ => unsupported(Kind::Value, format!("Tensor.{name} as a value")),
            };
        }
        self.native_result(r, false, &format!("Tensor.{name}"))
    }

    /// `C.name` for a class `C` (read from `owner`, whose identity is guarded): a class
    /// written in Python is read through its MRO as Python does (a function is itself, a
    /// static method its function, a class method bound to `C`); a builtin type, which
    /// cannot change, natively.
    pub(super) fn class_attr(&mut self, owner: &Var, name: &str) -> SimResult<Var> {
        let vm = self.vm;
        let class_obj = self.obj(owner)?;
        let class = class_obj
            .downcast_ref::<PyType>()
            .expect("a class")
            .to_owned();
        if !class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) {
            let r = class_obj.get_attr(&vm.ctx.new_str(name), vm);
            let r = self.native_result(r, false, &format!("{}.{name}", class.name()))?;
            return Ok(r);
        }
        // `type` finds a class's attributes in the dicts of its MRO whatever the bases are (a
        // named tuple's `tuple`, a class with `__slots__`): only a metaclass of its own can
        // change that lookup.
        if !class.class().is(vm.ctx.types.type_type) {
            if !crate::translate::values::objects::plain_metaclass_lookup(&class, name, vm) {
                return unsupported(
                    Kind::Value,
                    format!("attribute {name} of class {} (not simulated)", class.name()),
                );
            }
            let meta = class.class().to_owned();
            self.guard_class(Source::object(meta.clone().into()), &meta)?;
            // The metaclass's own `name`, found not to be a data descriptor: its class
            // could become one (`__get__`/`__set__` added), which comes first then.
            if let Some(m) = meta.get_attr(vm.ctx.intern_str(name))
                && m.class().slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
            {
                let of = m.class().to_owned();
                self.guard_class(Source::object(of.clone().into()), &of)?;
            }
        }
        self.guard_class(Source::object(class_obj.clone()), &class)?;
        if let Some(v) = self.class_written(&class, name) {
            return Ok(v);
        }
        let Some(d) = class.get_attr(vm.ctx.intern_str(name)) else {
            // What the metaclass (`type`) gives: `__name__`, `__qualname__`, `__mro__`...
            let r = class_obj.get_attr(&vm.ctx.new_str(name), vm);
            return self.native_result(r, false, &format!("{}.{name}", class.name()));
        };
        if let Some(r) = self.metaclass_data_first(&class_obj, &class, name, &d)? {
            return Ok(r);
        }
        let t = &vm.ctx.types;
        if d.downcast_ref::<rustpython_vm::builtins::PyFunction>()
            .is_some()
            || d.class().is(t.property_type)
        {
            return Ok(Var::Obj(d));
        }
        if d.class().is(t.staticmethod_type) {
            return Ok(Var::Obj(d.get_attr("__func__", vm).map_err(|_| {
                Unsupported::new(Kind::Value, "a static method without its function")
            })?));
        }
        if d.class().is(t.classmethod_type) {
            let f = d.get_attr("__func__", vm).map_err(|_| {
                Unsupported::new(Kind::Value, "a class method without its function")
            })?;
            return Ok(Var::Bound(Rc::new((Var::Obj(f), Var::Obj(class_obj)))));
        }
        if is_user_class(d.class(), vm) {
            self.guard_class(Source::object(d.class().to_owned().into()), d.class())?;
            if let Some(get) = python_method(d.class(), "__get__", vm) {
                let none = Var::Obj(vm.ctx.none());
                return self.call_function(
                    &get,
                    vec![descriptor(&d), none, Var::Obj(class_obj)],
                    Vec::new(),
                );
            }
            return Ok(Var::Lazy(d.clone(), Source::object(d)));
        }
        if d.class().slots.descr_get.load().is_none() {
            if is_data(&d, vm) {
                let source = match owner {
                    Var::Lazy(_, s) => s.clone(),
                    _ => Source::object(class_obj.clone()),
                };
                return Ok(self.class_data(&class, source, name, d));
            }
            return Ok(if is_plain(&d, vm) {
                Var::Obj(d)
            } else {
                Var::Lazy(d.clone(), Source::object(d))
            });
        }
        unsupported(
            Kind::Value,
            format!(
                "{}.{name}, a {} (not simulated)",
                class.name(),
                d.class().name()
            ),
        )
    }

    /// `C.name` where the metaclass has a data descriptor `name` (`type.__base__`,
    /// `type.__name__`) and `C`'s MRO has an entry `d` of that name too: the descriptor comes
    /// first, as `type.__getattribute__` finds it. `None` where it gives `d` itself (`type`'s
    /// `__module__` and `__doc__` read the class's entry) or there is no such descriptor.
    fn metaclass_data_first(
        &mut self,
        class_obj: &PyObjectRef,
        class: &PyType,
        name: &str,
        d: &PyObjectRef,
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some(m) = class_obj.class().get_attr(vm.ctx.intern_str(name)) else {
            return Ok(None);
        };
        if m.class().slots.descr_set.load().is_none() {
            return Ok(None);
        }
        let what = format!("{}.{name}", class.name());
        let r = class_obj.get_attr(&vm.ctx.new_str(name), vm);
        if r.as_ref().is_ok_and(|v| v.is(d)) {
            return Ok(None);
        }
        // Read now, it is what every call reads: a name, a class, classes (`__mro__`).
        let fixed = |o: &PyObjectRef| is_plain(o, vm) || o.downcast_ref::<PyType>().is_some();
        let immutable = r.as_ref().is_ok_and(|v| {
            fixed(v)
                || v.downcast_ref::<rustpython_vm::builtins::PyTuple>()
                    .is_some_and(|t| t.as_slice().iter().all(fixed))
        });
        if !immutable {
            return unsupported(
                Kind::Value,
                format!(
                    "{what}: the metaclass's data descriptor, shadowing the class's entry (not simulated)"
                ),
            );
        }
        self.native_result(r, false, &what).map(Some)
    }

    /// `__enter__` or `__exit__` of a context manager (LOAD_SPECIAL): looked up on its type,
    /// as `(function, self)`. A Python function is inlined when called; a method of a native
    /// type breaks the graph when called (both are constants of the replacement, fixed by the
    /// type guard). Other kinds of attribute (LOAD_SPECIAL would push a NULL) are not simulated.
    pub fn special_method_of(&mut self, owner: &Var, name: &'static str) -> SimResult<(Var, Var)> {
        let vm = self.vm;
        if let Some(inst) = self.instance(owner)? {
            let class = self.inst_class(&inst);
            return match python_method(&class, name, vm) {
                Some(f) => Ok((Var::Obj(f), owner.clone())),
                None => unsupported(
                    Kind::Value,
                    format!("{name} of a {} that is not written in Python", class.name()),
                ),
            };
        }
        let Var::Lazy(o, source) = owner else {
            return unsupported(
                Kind::Value,
                format!("a {} as a context manager", owner.kind()),
            );
        };
        let method = o
            .class()
            .get_attr(vm.ctx.intern_str(name))
            .filter(|f| f.class().is(vm.ctx.types.method_descriptor_type));
        match method {
            Some(f) if !o.class().slots.flags.has_feature(PyTypeFlags::HEAPTYPE) => {
                self.guard(
                    source,
                    crate::translate::guards::guard::Check::type_is(o.class().to_owned()),
                );
                Ok((Var::Obj(f), owner.clone()))
            }
            _ => unsupported(
                Kind::Value,
                format!(
                    "{name} of a {} that is not a function or a native method",
                    o.class().name()
                ),
            ),
        }
    }

    /// Whether `name` of the caller's dict `o` is dict's method: always for a dict; for an
    /// instance of a subclass (whose class overrides none, `plain_dict_subclass`), while its
    /// own attributes do not hide it (their names are guarded when the instance is met).
    fn dict_method_not_shadowed(
        &mut self,
        owner: &Var,
        o: &PyObjectRef,
        name: &str,
    ) -> SimResult<bool> {
        let Some(attrs) = o.dict() else {
            return Ok(true);
        };
        if self.instance(owner)?.is_none() {
            // A native `defaultdict` or `OrderedDict` has a `__dict__` here: the name's
            // absence from it is guarded.
            return Ok(match owner {
                Var::Lazy(_, source)
                    if !o.class().slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
                        && matches!(attrs.get_item_opt(name, self.vm), Ok(None)) =>
                {
                    self.guard(&source.clone().instance_dict().key(name), Check::Absent);
                    true
                }
                _ => false,
            });
        }
        Ok(matches!(attrs.get_item_opt(name, self.vm), Ok(None)))
    }

    /// `owner.name` in method form: `(callable, self or NULL)`.
    pub fn method_of(&mut self, owner: &Var, name: &str) -> SimResult<(Var, Var)> {
        let vm = self.vm;
        match owner {
            Var::List(_) | Var::Dict(_) | Var::Set(_) => {
                return Ok((
                    Var::Method(Box::new(owner.clone()), intern_method(name)?),
                    Var::Null,
                ));
            }
            Var::Deque(_) => {
                let name = crate::translate::values::deques::DEQUE_METHODS
                    .iter()
                    .find(|m| **m == name)
                    .ok_or_else(|| {
                        Unsupported::new(Kind::Value, format!("attribute {name} of a deque"))
                    })?;
                return Ok((Var::Method(Box::new(owner.clone()), name), Var::Null));
            }
            // A change of a caller's deque, replayed (`deques`); a method of a caller's set
            // (`caller_sets`).
            Var::Lazy(o, _)
                if let Some(name) = caller_sets::caller_container_method(o, name, vm) =>
            {
                return Ok((Var::Method(Box::new(owner.clone()), name), Var::Null));
            }
            // A method of a caller's list: one that changes it is made to its shadow.
            Var::Lazy(o, _)
                if o.class().is(vm.ctx.types.list_type)
                    && (crate::translate::values::caller_lists::LIST_MUTATORS.contains(&name)
                        || matches!(name, "count" | "index" | "copy")) =>
            {
                return Ok((
                    Var::Method(Box::new(owner.clone()), intern_method(name)?),
                    Var::Null,
                ));
            }
            // Of a caller's dict (`CALLER_DICT_METHODS`).
            Var::Lazy(o, _)
                if crate::translate::state::is_dict(o, vm)
                    && crate::translate::values::caller_dicts::CALLER_DICT_METHODS
                        .contains(&name)
                    && crate::translate::values::dict_subclasses::dict_method_is_dicts(
                        o.class(),
                        name,
                        vm,
                    )
                    && self.dict_method_not_shadowed(owner, o, name)? =>
            {
                return Ok((
                    Var::Method(Box::new(owner.clone()), intern_method(name)?),
                    Var::Null,
                ));
            }
            // `_replace` and `_asdict` of a named tuple: made from its items (the class's own
            // functions would call `tuple.__new__`).
            Var::NamedTuple(..) | Var::Lazy(..)
                if matches!(name, "_replace" | "_asdict")
                    && self.namedtuple_parts(owner)?.is_some() =>
            {
                return Ok((
                    Var::Method(Box::new(owner.clone()), intern_method(name)?),
                    Var::Null,
                ));
            }
            // A method written in Python on a named tuple's class (a `def` in the body of a
            // `typing.NamedTuple`): inlined with the tuple as `self`. Only where instances
            // have no `__dict__` (`__slots__ = ()`), which could hold an entry of that name.
            Var::NamedTuple(..) | Var::Lazy(..)
                if let Some((class, _, _)) = self.namedtuple_parts(owner)?
                    && !class.slots.flags.has_feature(PyTypeFlags::HAS_DICT)
                    && let Some(f) = python_method(&class, name, vm) =>
            {
                return Ok((Var::Obj(f), owner.clone()));
            }
            _ => {}
        }
        if self.is_tensor(owner) {
            if let Some(f) = self.tensor_python_method(name)? {
                return Ok((Var::Obj(f), owner.clone()));
            }
            let a = self.tensor_class_attr(name)?;
            return if a.downcast_ref::<PyGetSet>().is_some() {
                Ok((self.attr_of(owner, name)?, Var::Null))
            } else {
                Ok((Var::Obj(a), owner.clone()))
            };
        }
        if let Some(inst) = self.instance(owner)? {
            return self.instance_method(owner, &inst, name);
        }
        match owner {
            Var::Obj(o) | Var::Lazy(o, _) if is_plain(o, vm) => {
                let o = self.obj(owner)?;
                let m = o.get_attr(&vm.ctx.new_str(name), vm).map_err(|_| {
                    Unsupported::new(
                        Kind::Raises,
                        format!("{} has no attribute {name:?}", o.class().name()),
                    )
                })?;
                Ok((Var::Obj(m), Var::Null))
            }
            _ => Ok((self.attr_of(owner, name)?, Var::Null)),
        }
    }
}

/// Non-tensor results a tensor's method or attribute may give: they depend only on its
/// dtype and shape, which its guard fixes.
const TENSOR_META: &[&str] = &[
    "shape",
    "dtype",
    "ndim",
    "dim",
    "numel",
    "size",
    "is_floating_point",
    "__len__",
    "device",
    "is_cuda",
];

fn intern_method(name: &str) -> SimResult<&'static str> {
    const METHODS: &[&str] = &[
        "append",
        "extend",
        "pop",
        "insert",
        "items",
        "keys",
        "values",
        "get",
        "index",
        "count",
        "copy",
        "update",
        "setdefault",
        "move_to_end",
        "add",
        "discard",
        "remove",
        "union",
        "intersection",
        "difference",
        "symmetric_difference",
        "issubset",
        "issuperset",
        "isdisjoint",
        "intersection_update",
        "difference_update",
        "clear",
        "popitem",
        "reverse",
        "sort",
        "_replace",
        "_asdict",
    ];
    METHODS
        .iter()
        .find(|m| **m == name)
        .copied()
        .ok_or_else(|| {
            Unsupported::new(
                Kind::Call,
                format!("method {name} of a list or dict made here"),
            )
        })
}

impl State<'_> {
    /// The attribute `name` of the Tensor class, as the simulation may use it: a native
    /// method or attribute, with the class's version guarded (a function or property set on
    /// `Tensor` from Python later is seen on the next call). One set from Python now is not
    /// simulated here: a function is (`tensor_python_method`), anything else would run code.
    fn tensor_class_attr(&mut self, name: &str) -> SimResult<PyObjectRef> {
        let vm = self.vm;
        let class = PyTensor::class(&vm.ctx);
        self.guard_class(Source::object(class.to_owned().into()), class)?;
        let t = &vm.ctx.types;
        match class.get_attr(vm.ctx.intern_str(name)) {
            Some(a)
                if a.downcast_ref::<PyGetSet>().is_some()
                    || a.class().is(t.method_descriptor_type)
                    || a.class().is(t.wrapper_descriptor_type)
                    || a.class().is(t.builtin_function_or_method_type) =>
            {
                Ok(a)
            }
            Some(a) => unsupported(
                Kind::Value,
                format!(
                    "Tensor.{name} is a {} set from Python (not simulated)",
                    a.class().name()
                ),
            ),
            None => unsupported(Kind::Raises, format!("Tensor has no attribute {name:?}")),
        }
    }

    /// A function written in Python and set on `Tensor` (`Tensor.scale = f`): a method of
    /// the user's, inlined when called; fixed by `Tensor`'s version, which is guarded.
    fn tensor_python_method(&mut self, name: &str) -> SimResult<Option<PyObjectRef>> {
        let vm = self.vm;
        let class = PyTensor::class(&vm.ctx);
        self.guard_class(Source::object(class.to_owned().into()), class)?;
        Ok(python_method(class, name, vm))
    }
}
