//! The Python object model in the simulation: instances of classes written in Python, those
//! of the caller (read through their sources, changed by recorded side effects) and those
//! made during the call. Attribute reads follow Python's own order: a data descriptor of the
//! class (a property, a descriptor written in Python), the instance's dictionary, other class
//! attributes (methods bound to the instance, static and class methods, non-data descriptors
//! such as `functools.cached_property`, plain values), then `__getattr__`; stores and deletes
//! go through `__setattr__`/`__delattr__`. Every method, property and descriptor written in
//! Python is inlined, never run. Instances are made by calling their class (`__init__`
//! inlined), called through `__call__`, and the interpreter's own protocols (`__iter__`,
//! `__len__`, `__getitem__`, `__contains__`, `__bool__`) are inlined as they are called.
//!
//! What the simulation relies on is guarded once per object of the caller it touches: its
//! exact class, the class's version tag (any change to the class or a base invalidates it,
//! as CPython's type version tags do), and the exact keys of its instance dictionary (which
//! settles every lookup that found, or did not find, an attribute of its own). Changes to an
//! object of the caller are kept in `State::attr_writes` and read back by later reads of the
//! same object, found by identity; the identities it relied on are guarded too
//! (`State::finish_guards`).

use std::rc::Rc;

use rustpython_vm::builtins::{PyFunction, PyStr, PyType, PyTypeRef};
use rustpython_vm::{AsObject, Py, PyObject, PyObjectRef, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::class_entries::is_data;
use crate::translate::guards::guard::{Check, exact_str};
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Touched, Unsupported, unsupported};
use crate::translate::values::{NewObject, Var, class_stores, is_plain, slot_objects};

pub(super) use super::descriptor_kinds::{Descr, classify, is_plain_property_subclass};
pub use super::user_classes::{
    instantiable_class, is_user_class, is_user_instance, plain_metaclass_lookup,
};

/// An instance the object model handles.
#[derive(Clone, Debug)]
pub enum Inst {
    /// The caller's: its index in `State::objects`.
    Existing(usize),
    New(Rc<NewObject>),
}

/// The class's own `name` (through its bases) when it is a function written in Python.
pub fn python_method(class: &Py<PyType>, name: &str, vm: &VirtualMachine) -> Option<PyObjectRef> {
    class
        .get_attr(vm.ctx.intern_str(name))
        .filter(|f| f.downcast_ref::<PyFunction>().is_some())
}

/// The class's `__new__` when it is a function written in Python (a static method of the
/// class, as `def __new__` makes it): that function.
pub fn python_new(class: &Py<PyType>, vm: &VirtualMachine) -> Option<PyObjectRef> {
    class
        .get_attr(vm.ctx.intern_str("__new__"))
        .filter(|n| n.class().is(vm.ctx.types.staticmethod_type))
        .and_then(|n| n.get_attr("__func__", vm).ok())
        .filter(|f| f.downcast_ref::<PyFunction>().is_some())
}

/// Whether the class's `name` is `object`'s own (not overridden).
pub(crate) fn object_slot(class: &Py<PyType>, name: &str, vm: &VirtualMachine) -> bool {
    let n = vm.ctx.intern_str(name);
    match (class.get_attr(n), vm.ctx.types.object_type.get_attr(n)) {
        (Some(a), Some(b)) => a.is(&b),
        _ => false,
    }
}

fn name_var(name: &str, vm: &VirtualMachine) -> Var {
    Var::Obj(vm.ctx.new_str(name).into())
}

fn key_is(k: &PyObject, name: &str) -> bool {
    k.downcast_ref::<PyStr>()
        .is_some_and(|s| s.to_str() == Some(name))
}

/// A descriptor found on a class, as its `__get__`/`__set__` sees itself: an object of the
/// user's whose attributes are read, and guarded, through itself.
pub fn descriptor(d: &PyObjectRef) -> Var {
    Var::Lazy(d.clone(), Source::object(d.clone()))
}

/// A value found on a class (its version is guarded, so the object found is fixed): a plain
/// value is a constant; another is read through itself, so that what the simulation uses of
/// it is guarded as it is used.
pub(super) fn class_value(d: PyObjectRef, vm: &VirtualMachine) -> Var {
    if is_plain(&d, vm) {
        Var::Obj(d)
    } else {
        Var::Lazy(d.clone(), Source::object(d))
    }
}

impl State<'_> {
    /// What `d`, found on a class, is as a descriptor. The class's own version fixes `d`;
    /// when `d` is an object of the user's, what its class offers (`__get__`, `__set__`,
    /// `__delete__`, or none) is guarded too, on that class's version.
    pub(super) fn descr(&mut self, d: &PyObjectRef) -> SimResult<Descr> {
        let class = d.class();
        if is_user_class(class, self.vm) || is_plain_property_subclass(class, self.vm) {
            self.guard_class(Source::object(class.to_owned().into()), class)?;
        }
        Ok(classify(d, self.vm))
    }

    /// `v` as an instance the object model handles: one made during the simulation, or one
    /// of the caller's (guarded the first time it is met).
    pub fn instance(&mut self, v: &Var) -> SimResult<Option<Inst>> {
        match v {
            Var::Object(o) => Ok(Some(Inst::New(o.clone()))),
            Var::Lazy(o, source) if is_user_instance(o, self.vm) => {
                Ok(Some(Inst::Existing(self.touch(o, source)?)))
            }
            _ => Ok(None),
        }
    }

    /// The caller's object `o`, read from `source`: its index in `objects`. Met for the first
    /// time, its class, the class's version and its attribute names are guarded; met again
    /// through another source, that the two are one object.
    fn touch(&mut self, o: &PyObjectRef, source: &Source) -> SimResult<usize> {
        if let Some(i) = self.objects.iter().position(|t| t.obj.is(o)) {
            let first = self.objects[i].source.clone();
            if first != *source {
                self.guard(source, Check::SameAs(first));
            }
            return Ok(i);
        }
        let class = o.class().to_owned();
        self.guard(source, Check::type_is(class.clone()));
        self.guard_class(source.clone().type_of(), &class)?;
        // An instance with slots only (`slot_objects`) has no names to guard: its class's
        // member descriptors are its attributes.
        let Some(dict) = o.dict() else {
            self.objects.push(Touched {
                obj: o.clone(),
                source: source.clone(),
            });
            return Ok(self.objects.len() - 1);
        };
        let keys = dict
            .keys_vec()
            .iter()
            .map(|k| exact_str(k, self.vm).map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                Unsupported::new(
                    Kind::Value,
                    format!(
                        "an instance of {} with an attribute name that is not a str",
                        class.name()
                    ),
                )
            })?;
        self.guard(&source.clone().instance_dict(), Check::Keys(keys));
        self.objects.push(Touched {
            obj: o.clone(),
            source: source.clone(),
        });
        Ok(self.objects.len() - 1)
    }

    pub fn inst_class(&self, inst: &Inst) -> PyTypeRef {
        match inst {
            Inst::Existing(i) => self.objects[*i].obj.class().to_owned(),
            Inst::New(o) => o.class.clone(),
        }
    }

    /// What the call last stored into (`Some(None)`: deleted) the attribute `name` of the
    /// caller's object `i`; `None` when it did neither.
    pub(super) fn written_attr(&self, i: usize, name: &str) -> Option<Option<Var>> {
        self.attr_writes
            .iter()
            .rev()
            .find(|(j, n, _)| *j == i && n == name)
            .map(|(_, _, w)| w.clone())
    }

    /// The entry `name` of the instance's dictionary, as the simulation sees it now.
    pub(super) fn dict_entry(&mut self, inst: &Inst, name: &str) -> SimResult<Option<Var>> {
        match inst {
            Inst::New(o) => Ok(o
                .dict
                .borrow()
                .iter()
                .find(|(k, _)| key_is(k, name))
                .map(|(_, v)| v.clone())),
            Inst::Existing(i) => {
                let t = self.objects[*i].clone();
                // A change made through `obj.__dict__` (`cached_property` stores its value
                // there) is followed by key, as in a caller's dict; beside an attribute store
                // of the same name, which of the two came last is not known: refused.
                if let Some(dict) = t.obj.dict()
                    && self.effects.changed(dict.as_object())
                {
                    if self.written_attr(*i, name).is_some() {
                        return unsupported(
                            Kind::SideEffect,
                            format!(
                                "an attribute of a {} written both as an attribute and through \
                                 its __dict__",
                                t.obj.class().name()
                            ),
                        );
                    }
                    let source = t.source.clone().instance_dict();
                    return self.caller_dict_key(&dict.into(), &source, name);
                }
                if let Some(w) = self.written_attr(*i, name) {
                    return Ok(w);
                }
                // An instance with slots only has none (`slot_objects`).
                let Some(dict) = t.obj.dict() else {
                    return Ok(None);
                };
                for other in self.effects.others_changed_like(dict.as_object()) {
                    self.guard(&t.source.clone().instance_dict(), Check::NotSameAs(other));
                }
                Ok(dict
                    .get_item_opt(name, self.vm)
                    .ok()
                    .flatten()
                    .map(|v| Var::Lazy(v, t.source.attr(name))))
            }
        }
    }

    /// `owner.name` for an instance, in Python's order.
    pub fn instance_attr(&mut self, owner: &Var, inst: &Inst, name: &str) -> SimResult<Var> {
        if let Some(v) = self.lookup_attr(owner, inst, name, false)? {
            return Ok(v);
        }
        self.raise_no_attribute(inst, name)
    }

    /// The AttributeError of a lookup of `name` that found nothing (a slot of its that is
    /// empty, too).
    pub(super) fn raise_no_attribute<T>(&mut self, inst: &Inst, name: &str) -> SimResult<T> {
        let message = format!(
            "'{}' object has no attribute '{name}'",
            self.inst_class(inst).slot_name()
        );
        match inst {
            // The VM's AttributeError, with its `name` and `obj` (a handler of the frame may
            // catch it: `try: m = self.mask except AttributeError:`).
            Inst::Existing(i) => {
                let vm = self.vm;
                let t = &self.objects[*i];
                let attributes = vec![
                    ("name", Var::Obj(vm.ctx.new_str(name).into())),
                    ("obj", Var::Lazy(t.obj.clone(), t.source.clone())),
                ];
                let arg = Var::Obj(vm.ctx.new_str(message.as_str()).into());
                self.raise_native_with(
                    vm.ctx.exceptions.attribute_error,
                    vec![arg],
                    attributes,
                    format!("{message} (AttributeError)"),
                )
            }
            // Its `obj` would be an instance the simulation made: not one to hand a handler.
            Inst::New(_) => unsupported(Kind::Raises, format!("{message} (AttributeError)")),
        }
    }

    /// `owner.name`, or `None` where the lookup raises AttributeError (an AttributeError
    /// raised by an inlined `__getattr__` is caught).
    pub fn instance_attr_or_missing(
        &mut self,
        owner: &Var,
        inst: &Inst,
        name: &str,
    ) -> SimResult<Option<Var>> {
        self.lookup_attr(owner, inst, name, true)
    }

    fn lookup_attr(
        &mut self,
        owner: &Var,
        inst: &Inst,
        name: &str,
        catch: bool,
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let class = self.inst_class(inst);
        if let Some(w) = self.class_written(&class, name) {
            // A value the call stored into the class: not a descriptor, so the instance's
            // own attribute comes first.
            if !class_stores::is_descriptor_free(&w) {
                return unsupported(
                    Kind::Value,
                    format!(
                        "{}.{name}, stored into the class by the call, read through an instance",
                        class.name()
                    ),
                );
            }
            return Ok(Some(self.dict_entry(inst, name)?.unwrap_or(w)));
        }
        let found = class.get_attr(vm.ctx.intern_str(name));
        let descr = match &found {
            Some(d) => Some(self.descr(d)?),
            None => None,
        };
        if let (Some(d), Some(descr)) = (&found, &descr)
            && descr.is_data()
        {
            return match descr {
                Descr::Property { fget: Some(f), .. } => self
                    .call_function(f, vec![owner.clone()], Vec::new())
                    .map(Some),
                Descr::Property { fget: None, .. } => unsupported(
                    Kind::Raises,
                    format!(
                        "property {name:?} of {} has no getter (AttributeError)",
                        class.name()
                    ),
                ),
                Descr::Python { get: Some(g), .. } => {
                    let class_var = Var::Obj(class.clone().into());
                    self.call_function(g, vec![descriptor(d), owner.clone(), class_var], Vec::new())
                        .map(Some)
                }
                _ => self.native_data_attr(inst, name).map(Some),
            };
        }
        if let Some(v) = self.dict_entry(inst, name)? {
            return Ok(Some(v));
        }
        if let (Some(d), Some(descr)) = (found, descr) {
            return match descr {
                Descr::Function(f) => Ok(Var::Bound(Rc::new((Var::Obj(f), owner.clone())))),
                Descr::Static(f) => Ok(Var::Obj(f)),
                Descr::ClassMethod(f) => {
                    Ok(Var::Bound(Rc::new((Var::Obj(f), Var::Obj(class.into())))))
                }
                Descr::Python { get: Some(g), .. } => {
                    let class_var = Var::Obj(class.into());
                    self.call_function(
                        &g,
                        vec![descriptor(&d), owner.clone(), class_var],
                        Vec::new(),
                    )
                }
                Descr::Plain if is_data(&d, vm) => {
                    let through = match inst {
                        Inst::Existing(i) => self.objects[*i].source.clone().type_of(),
                        Inst::New(_) => Source::object(class.clone().into()),
                    };
                    Ok(self.class_data(&class, through, name, d))
                }
                Descr::Python { get: None, .. } | Descr::Plain => Ok(class_value(d, vm)),
                // A dict method of a made instance of a class written on dict: its entries'.
                _ if let Some(m) = self.made_dict_attr(owner, &d) => Ok(m),
                _ => unsupported(
                    Kind::Value,
                    format!(
                        "{}.{name}, a {} (not simulated)",
                        class.name(),
                        d.class().name()
                    ),
                ),
            }
            .map(Some);
        }
        let Some(getattr) = class.get_attr(vm.ctx.intern_str("__getattr__")) else {
            return Ok(None);
        };
        let args = vec![owner.clone(), name_var(name, vm)];
        if getattr.downcast_ref::<PyFunction>().is_none() {
            // Another callable as the hook (`__getattr__ = dict.__getitem__`, an
            // `AttrDict`): called as the VM calls it, with what it raises propagating. A
            // lookup that catches AttributeError (`getattr` with a default) would have to
            // tell its errors apart, unless the hook is dict's own read of a class without
            // `__missing__` (which raises KeyError or nothing).
            let dict = vm.ctx.types.dict_type;
            let dicts_read = ["__getitem__", "get"].iter().any(|m| {
                dict.get_attr(vm.ctx.intern_str(*m))
                    .is_some_and(|d| d.is(&getattr))
            }) && class.get_attr(vm.ctx.intern_str("__missing__")).is_none();
            if catch && !dicts_read {
                return unsupported(
                    Kind::Call,
                    format!(
                        "{}.__getattr__, a {}, where an AttributeError is caught",
                        class.name(),
                        getattr.class().name()
                    ),
                );
            }
            return self.invoke(&Var::Obj(getattr), args, Vec::new()).map(Some);
        }
        if !catch {
            return self.call_function(&getattr, args, Vec::new()).map(Some);
        }
        match self.call_function_catching(&getattr, args)? {
            Ok(v) => Ok(Some(v)),
            Err(Var::Obj(e)) if e.class().fast_issubclass(vm.ctx.exceptions.attribute_error) => {
                Ok(None)
            }
            Err(e) => unsupported(
                Kind::Raises,
                format!("{}.__getattr__ raised a {}", class.name(), e.kind()),
            ),
        }
    }

    /// `__dict__` and `__class__`, the native data descriptors of `object` that code reads.
    fn native_data_attr(&mut self, inst: &Inst, name: &str) -> SimResult<Var> {
        if slot_objects::is_slot(&self.inst_class(inst), name, self.vm) {
            return self.slot_read(inst, name);
        }
        match (name, inst) {
            ("__class__", _) => Ok(Var::Obj(self.inst_class(inst).into())),
            ("__dict__", Inst::New(o)) => Ok(Var::Dict(o.dict.clone())),
            // Its keys the call stored as attributes are followed as keyed stores
            // (`SideEffects::read_key`); a read of the whole dict after them is refused.
            ("__dict__", Inst::Existing(i)) => {
                let t = &self.objects[*i];
                let dict = t.obj.dict().expect("an instance with a dictionary");
                Ok(Var::Lazy(dict.into(), t.source.clone().instance_dict()))
            }
            _ => unsupported(
                Kind::Value,
                format!("attribute {name} (a native descriptor, not simulated)"),
            ),
        }
    }

    /// `owner.name` in method form: a function of the class, not shadowed by the instance, is
    /// called with the instance (no bound method is made); anything else is read.
    pub fn instance_method(
        &mut self,
        owner: &Var,
        inst: &Inst,
        name: &str,
    ) -> SimResult<(Var, Var)> {
        let class = self.inst_class(inst);
        if let Some(f) = python_method(&class, name, self.vm)
            && self.dict_entry(inst, name)?.is_none()
        {
            return Ok((Var::Obj(f), owner.clone()));
        }
        Ok((self.instance_attr(owner, inst, name)?, Var::Null))
    }

    /// `owner.name = value` (`None`: `del owner.name`), through the class's `__setattr__` or
    /// `__delattr__` when it has its own in Python.
    pub fn instance_setattr(
        &mut self,
        owner: &Var,
        inst: &Inst,
        name: &str,
        value: Option<Var>,
    ) -> SimResult<()> {
        let vm = self.vm;
        let class = self.inst_class(inst);
        let hook = if value.is_some() {
            "__setattr__"
        } else {
            "__delattr__"
        };
        if let Some(f) = python_method(&class, hook, vm) {
            let mut args = vec![owner.clone(), name_var(name, vm)];
            args.extend(value);
            self.call_function(&f, args, Vec::new())?;
            return Ok(());
        }
        if !object_slot(&class, hook, vm)
            && let Some(f) = class.get_attr(vm.ctx.intern_str(hook))
            && (f.class().is(vm.ctx.types.wrapper_descriptor_type)
                || f.class().is(vm.ctx.types.method_descriptor_type))
        {
            // A native method as the hook (`__setattr__ = dict.__setitem__`): called as the VM
            // calls it; one the simulation does not know is refused there.
            let mut args = vec![owner.clone(), name_var(name, vm)];
            args.extend(value);
            self.invoke(&Var::Obj(f), args, Vec::new())?;
            return Ok(());
        }
        if !object_slot(&class, hook, vm) {
            return unsupported(
                Kind::Value,
                format!(
                    "{}.{hook} (not written in Python, not simulated)",
                    class.name()
                ),
            );
        }
        self.object_setattr(owner, inst, name, value)
    }

    /// `object.__setattr__(owner, name, value)` (`None`: `object.__delattr__`): a data
    /// descriptor of the class takes it, otherwise the instance's dictionary does.
    pub fn object_setattr(
        &mut self,
        owner: &Var,
        inst: &Inst,
        name: &str,
        value: Option<Var>,
    ) -> SimResult<()> {
        let vm = self.vm;
        let class = self.inst_class(inst);
        if let Some(d) = class.get_attr(vm.ctx.intern_str(name)) {
            let descr = self.descr(&d)?;
            if descr.is_data() {
                let call = match (&descr, &value) {
                    (Descr::Property { fset: Some(f), .. }, Some(v)) => {
                        Some((f.clone(), vec![owner.clone(), v.clone()]))
                    }
                    (Descr::Property { fdel: Some(f), .. }, None) => {
                        Some((f.clone(), vec![owner.clone()]))
                    }
                    (Descr::Python { set: Some(f), .. }, Some(v)) => {
                        Some((f.clone(), vec![descriptor(&d), owner.clone(), v.clone()]))
                    }
                    (
                        Descr::Python {
                            delete: Some(f), ..
                        },
                        None,
                    ) => Some((f.clone(), vec![descriptor(&d), owner.clone()])),
                    _ => None,
                };
                return match call {
                    Some((f, args)) => self.call_function(&f, args, Vec::new()).map(|_| ()),
                    None if slot_objects::is_slot(&class, name, vm) => {
                        if value.is_none() {
                            self.slot_deletable(inst, name)?;
                        }
                        self.store(inst, name, value)
                    }
                    None => unsupported(
                        Kind::Raises,
                        format!(
                            "{}.{name} cannot be set or deleted here (a descriptor of the class)",
                            class.name()
                        ),
                    ),
                };
            }
        }
        if slot_objects::slots_only_class(&class, vm) {
            return unsupported(
                Kind::Raises,
                format!(
                    "'{}' object has no attribute '{name}' and no __dict__ for setting new attributes (AttributeError)",
                    class.name()
                ),
            );
        }
        self.plain_store(inst, name, value)
    }

    /// Store into (or delete from) the instance's dictionary.
    fn plain_store(&mut self, inst: &Inst, name: &str, value: Option<Var>) -> SimResult<()> {
        if value.is_none() && self.dict_entry(inst, name)?.is_none() {
            return unsupported(
                Kind::Raises,
                format!("del of attribute {name:?}, which is not set (AttributeError)"),
            );
        }
        self.store(inst, name, value)
    }

    /// Store into (or delete from) the instance's attributes: a made instance's own, a
    /// caller's as a change replayed after the graph (`object.__setattr__`, which takes a
    /// slot through its descriptor), which later reads follow.
    fn store(&mut self, inst: &Inst, name: &str, value: Option<Var>) -> SimResult<()> {
        let vm = self.vm;
        match inst {
            Inst::New(o) => {
                let mut d = o.dict.borrow_mut();
                d.retain(|(k, _)| !key_is(k, name));
                if let Some(v) = value {
                    d.push((vm.ctx.new_str(name).into(), v));
                }
            }
            Inst::Existing(i) => {
                let t = self.objects[*i].clone();
                let effect = match &value {
                    Some(v) => Effect::SetAttr {
                        target: t.source.clone(),
                        name: name.to_owned(),
                        value: v.clone(),
                        on_class: false,
                    },
                    None => Effect::DelAttr {
                        target: t.source.clone(),
                        name: name.to_owned(),
                    },
                };
                self.effects.mutate(&t.obj, effect);
                self.attr_writes.push((*i, name.to_owned(), value));
            }
        }
        Ok(())
    }
}
