//! What the interpreter does with instances of classes written in Python besides reading
//! and writing their attributes (`objects`): making them (`__init__` inlined), the protocols
//! it calls on them (`__iter__`, `__len__`, `__getitem__`, `__contains__`, `__bool__`),
//! `super()`, and named tuples (their classes are written in Python on `tuple`).

use std::cell::RefCell;
use std::rc::Rc;

use rustpython_vm::builtins::{PyType, PyTypeRef};
use rustpython_vm::{AsObject, Py};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::class_entries::is_data;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::objects::{
    Descr, class_value, descriptor, instantiable_class, object_slot, python_method,
};
use crate::translate::values::{NewObject, Var};

impl State<'_> {
    /// `class(*args, **kwargs)` for a class the object model handles: a new instance, its
    /// `__init__` inlined. `None` for another class.
    pub fn instantiate(
        &mut self,
        class: &Py<PyType>,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        if !instantiable_class(class, vm) {
            return Ok(None);
        }
        // The class is fixed by the caller's guard on it; its attributes by its version,
        // and a metaclass of its own (that leaves the call alone) by the metaclass's.
        if !class.class().is(vm.ctx.types.type_type) {
            let meta = class.class().to_owned();
            self.guard_class(Source::object(meta.clone().into()), &meta)?;
        }
        self.guard_class(Source::object(class.to_owned().into()), class)?;
        if let Some(abstract_methods) = class.get_attr(vm.ctx.intern_str("__abstractmethods__"))
            && abstract_methods.length(vm).is_ok_and(|n| n > 0)
        {
            return unsupported(
                Kind::Raises,
                format!(
                    "Can't instantiate abstract class {} (TypeError)",
                    class.name()
                ),
            );
        }
        let dict_base = crate::translate::values::made_dicts::native_dict_base(class, vm);
        let base_new = |base: &PyTypeRef| {
            let new = vm.ctx.intern_str("__new__");
            match (class.get_attr(new), base.get_attr(new)) {
                (Some(a), Some(b)) => a.is(&b),
                _ => false,
            }
        };
        if !dict_base
            .as_ref()
            .map_or_else(|| object_slot(class, "__new__", vm), base_new)
        {
            if let Some(made) = self.factory_new(class, &args, &kwargs)? {
                return Ok(Some(made));
            }
            return unsupported(
                Kind::Call,
                format!(
                    "{}() with a __new__ of its own (not simulated)",
                    class.name()
                ),
            );
        }
        if class.get_attr(vm.ctx.intern_str("__del__")).is_some() {
            // A simulated instance that the call drops is never made, and its finalizer
            // would never run; one that escapes would be made by the replacement, when the
            // finalizer's side effects could no longer be placed.
            return unsupported(
                Kind::Call,
                format!(
                    "{}() of a class with __del__ (its finalizer runs as written)",
                    class.name()
                ),
            );
        }
        let entries = dict_base
            .as_ref()
            .map(|_| Rc::new(RefCell::new(Vec::new())));
        let obj = Var::Object(Rc::new(NewObject {
            class: class.to_owned(),
            dict: Rc::new(RefCell::new(Vec::new())),
            entries: entries.clone(),
        }));
        if let Some(init) = python_method(class, "__init__", vm) {
            let mut all = vec![obj.clone()];
            all.extend(args);
            let r = self.call_function(&init, all, kwargs)?;
            if !matches!(&r, Var::Obj(o) if vm.is_none(o)) {
                return unsupported(Kind::Raises, "__init__() should return None (TypeError)");
            }
        } else if let (Some(base), Some(entries)) = (&dict_base, &entries)
            && let (Some(a), Some(b)) = (
                class.get_attr(vm.ctx.intern_str("__init__")),
                base.get_attr(vm.ctx.intern_str("__init__")),
            )
            && a.is(&b)
        {
            // The dict's own `__init__`: its entries as `dict(...)` takes them.
            *entries.borrow_mut() = self.dict_arguments(&args, kwargs)?;
        } else if !object_slot(class, "__init__", vm) {
            return unsupported(
                Kind::Call,
                format!(
                    "{}.__init__ (not written in Python, not simulated)",
                    class.name()
                ),
            );
        } else if !args.is_empty() || !kwargs.is_empty() {
            return unsupported(
                Kind::Raises,
                format!("{}() takes no arguments (TypeError)", class.name()),
            );
        }
        Ok(Some(obj))
    }

    /// `class(*args)` where the class's `__new__` is a function written in Python that makes
    /// something other than an instance of the class (a factory: `Parameter(data)` returns a
    /// marked copy of a tensor): `__new__` inlined with the class first. What it returns is
    /// not an instance of the class by type (`type.__call__`'s test), so no `__init__` runs.
    /// `None` for another `__new__`; one that returns an instance is not simulated.
    fn factory_new(
        &mut self,
        class: &Py<PyType>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some(new) = crate::translate::values::objects::python_new(class, vm) else {
            return Ok(None);
        };
        let mut all = vec![Var::Obj(class.to_owned().into())];
        all.extend(args.iter().cloned());
        let made = self.call_function(&new, all, kwargs.to_vec())?;
        let made_class = self.type_of(&made)?;
        match made_class.downcast_ref::<PyType>() {
            Some(c) if !c.fast_issubclass(class) => Ok(Some(made)),
            _ => unsupported(
                Kind::Call,
                format!(
                    "{}() whose __new__ of its own makes an instance (its __init__ not simulated)",
                    class.name()
                ),
            ),
        }
    }

    /// The instance's `name` method called by the interpreter itself (`__iter__`, `__len__`,
    /// `__getitem__`, `__contains__`, `__bool__`, `__call__`): looked up on the class, inlined.
    /// `None` when the class has no such method written in Python.
    pub fn call_dunder(
        &mut self,
        owner: &Var,
        name: &str,
        args: Vec<Var>,
    ) -> SimResult<Option<Var>> {
        // A caller's dict subclass: its protocols are dict's, read as a dict's entries.
        if is_dict_instance(owner, self.vm) {
            return Ok(None);
        }
        if let Some(r) = self.made_dict_protocol(owner, name, &args)? {
            return Ok(Some(r));
        }
        let Some(inst) = self.instance(owner)? else {
            return Ok(None);
        };
        let class = self.inst_class(&inst);
        match python_method(&class, name, self.vm) {
            Some(f) => {
                let mut all = vec![owner.clone()];
                all.extend(args);
                self.call_function(&f, all, Vec::new()).map(Some)
            }
            None if class.get_attr(self.vm.ctx.intern_str(name)).is_some()
                && !object_slot(&class, name, self.vm) =>
            {
                unsupported(
                    Kind::Call,
                    format!(
                        "{}.{name} (not written in Python, not simulated)",
                        class.name()
                    ),
                )
            }
            None => Ok(None),
        }
    }

    /// `super().name` in a method of `class` called on `this` (LOAD_SUPER_ATTR): the first
    /// class after `class` in the MRO of `this`'s class that has `name`; in method form,
    /// `(callable, self or NULL)`. The MRO is fixed by the class's guarded version.
    pub fn super_attr(
        &mut self,
        this: &Var,
        class: &Py<PyType>,
        name: &str,
        method: bool,
    ) -> SimResult<(Var, Var)> {
        let vm = self.vm;
        if name == "__getattribute__" && self.has_custom_lookup(this) {
            return self.super_getattribute(this, class, method);
        }
        let Some(inst) = self.instance(this)? else {
            return self.super_attr_of_type(this, class, name);
        };
        let own = self.inst_class(&inst);
        let mro: Vec<PyTypeRef> = own.mro.read().clone();
        let Some(at) = mro.iter().position(|c| c.is(class)) else {
            return unsupported(
                Kind::Raises,
                "super(type, obj): obj must be an instance or subtype of type (TypeError)",
            );
        };
        let key = vm.ctx.intern_str(name);
        if self.class_writes.iter().any(|(_, n, _)| n == name) {
            return unsupported(
                Kind::Value,
                format!("super().{name}, a name the call stored into a class"),
            );
        }
        let Some((holder, d)) = mro[at + 1..]
            .iter()
            .find_map(|c| Some((c.clone(), c.get_direct_attr(key)?)))
        else {
            return unsupported(
                Kind::Raises,
                format!("'super' object has no attribute '{name}' (AttributeError)"),
            );
        };
        let own_var = || Var::Obj(own.clone().into());
        Ok(match self.descr(&d)? {
            Descr::Function(f) if method => (Var::Obj(f), this.clone()),
            Descr::Function(f) => (Var::Bound(Rc::new((Var::Obj(f), this.clone()))), Var::Null),
            Descr::Static(f) => (Var::Obj(f), Var::Null),
            Descr::ClassMethod(f) => (Var::Bound(Rc::new((Var::Obj(f), own_var()))), Var::Null),
            Descr::Property { fget: Some(f), .. } => (
                self.call_function(&f, vec![this.clone()], Vec::new())?,
                Var::Null,
            ),
            Descr::Python { get: Some(g), .. } => (
                self.call_function(
                    &g,
                    vec![descriptor(&d), this.clone(), own_var()],
                    Vec::new(),
                )?,
                Var::Null,
            ),
            Descr::Plain if is_data(&d, vm) => {
                let source = Source::object(holder.clone().into());
                (self.class_data(&holder, source, name, d), Var::Null)
            }
            Descr::Plain | Descr::Python { get: None, .. } => (class_value(d, vm), Var::Null),
            // `object`'s own slots (`super().__init__()`, `super().__setattr__(...)`), which
            // `object_protocol_call` models.
            Descr::Native { .. }
                if method && d.class().is(vm.ctx.types.wrapper_descriptor_type) =>
            {
                (Var::Obj(d), this.clone())
            }
            _ => {
                return unsupported(
                    Kind::Value,
                    format!("super().{name}, a {} (not simulated)", d.class().name()),
                );
            }
        })
    }

    /// `super().name` in a method whose first argument is a class the simulation knows
    /// (`__new__`, a class method): the attribute after `class` in that class's MRO, got as
    /// `super(class, cls)` gets it, through `__get__(None, cls)`: a function as itself, a
    /// static method's function, a class method bound to `cls`. The class's version is
    /// guarded (an attribute set on it or a base since is seen).
    fn super_attr_of_type(
        &mut self,
        this: &Var,
        class: &Py<PyType>,
        name: &str,
    ) -> SimResult<(Var, Var)> {
        let vm = self.vm;
        let own = match this {
            Var::Obj(o) => o.clone().downcast::<PyType>().ok(),
            _ => None,
        };
        let Some(own) = own else {
            return unsupported(
                Kind::Value,
                format!("super() in a method of a {}", this.kind()),
            );
        };
        let mro: Vec<PyTypeRef> = own.mro.read().clone();
        let Some(at) = mro.iter().position(|c| c.is(class)) else {
            return unsupported(
                Kind::Raises,
                "super(type, obj): obj must be an instance or subtype of type (TypeError)",
            );
        };
        if self.class_writes.iter().any(|(_, n, _)| n == name) {
            return unsupported(
                Kind::Value,
                format!("super().{name}, a name the call stored into a class"),
            );
        }
        self.guard_class(Source::object(own.clone().into()), &own)?;
        let key = vm.ctx.intern_str(name);
        let Some(d) = mro[at + 1..].iter().find_map(|c| c.get_direct_attr(key)) else {
            return unsupported(
                Kind::Raises,
                format!("'super' object has no attribute '{name}' (AttributeError)"),
            );
        };
        Ok(match self.descr(&d)? {
            Descr::Function(f) | Descr::Static(f) => (Var::Obj(f), Var::Null),
            Descr::ClassMethod(f) => (
                Var::Bound(Rc::new((Var::Obj(f), Var::Obj(own.into())))),
                Var::Null,
            ),
            Descr::Plain if !is_data(&d, vm) => (class_value(d, vm), Var::Null),
            _ => {
                return unsupported(
                    Kind::Value,
                    format!(
                        "super().{name} in a method of a class, a {} (not simulated)",
                        d.class().name()
                    ),
                );
            }
        })
    }

    /// The next item of an instance used as an iterator: its `__next__` inlined, a
    /// StopIteration it raises caught (`Some(None)`). `None` when `it` is no such instance.
    pub fn instance_next(&mut self, it: &Var) -> SimResult<Option<Option<Var>>> {
        let vm = self.vm;
        let Some(inst) = self.instance(it)? else {
            return Ok(None);
        };
        let class = self.inst_class(&inst);
        let Some(next) = python_method(&class, "__next__", vm) else {
            return unsupported(
                Kind::Raises,
                format!("'{}' object is not an iterator (TypeError)", class.name()),
            );
        };
        match self.call_function_catching(&next, vec![it.clone()])? {
            Ok(v) => Ok(Some(Some(v))),
            Err(Var::Obj(e)) if e.class().fast_issubclass(vm.ctx.exceptions.stop_iteration) => {
                Ok(Some(None))
            }
            Err(e) => unsupported(
                Kind::Raises,
                format!("{}.__next__ raised a {}", class.name(), e.kind()),
            ),
        }
    }

    /// The items of an instance iterated whole (`list(x)`, `for` over it before a graph
    /// break...): its `__iter__` inlined, then what that gives, item by item.
    pub fn instance_items(&mut self, v: &Var) -> SimResult<Option<Vec<Var>>> {
        if is_dict_instance(v, self.vm) || self.instance(v)?.is_none() {
            return Ok(None);
        }
        let Some(it) = self.call_dunder(v, "__iter__", Vec::new())? else {
            return unsupported(
                Kind::Raises,
                format!("'{}' object is not iterable (TypeError)", v.kind()),
            );
        };
        if self.instance(&it)?.is_none() {
            return self.items(&it).map(Some);
        }
        let mut items = Vec::new();
        while let Some(item) = self.instance_next(&it)?.flatten() {
            if items.len() == crate::translate::state::MAX_UNROLL {
                return unsupported(Kind::Limit, "an iterator of too many items");
            }
            items.push(item);
        }
        Ok(Some(items))
    }

    /// The truth of an instance: `__bool__`, else `__len__`, else true.
    pub fn instance_truth(&mut self, owner: &Var) -> SimResult<Option<Var>> {
        if is_dict_instance(owner, self.vm) || self.instance(owner)?.is_none() {
            return Ok(None);
        }
        if let Some(v) = self.call_dunder(owner, "__bool__", Vec::new())? {
            // Exactly a bool, or Python raises (a `__bool__` that returns `self` must not
            // send the simulation round again).
            let is_bool =
                |o: &rustpython_vm::PyObjectRef| o.class().is(self.vm.ctx.types.bool_type);
            if !matches!(&v, Var::Obj(o) | Var::Lazy(o, _) if is_bool(o)) {
                return Err(Unsupported::new(
                    Kind::Raises,
                    "__bool__ should return bool (TypeError)",
                ));
            }
            return Ok(Some(v));
        }
        if let Some(n) = self.call_dunder(owner, "__len__", Vec::new())? {
            let n = self.plain_obj(&n, "__len__()")?;
            // An int of at least 0, or Python raises (TypeError, ValueError).
            let len = n
                .downcast_ref::<rustpython_vm::builtins::PyInt>()
                .filter(|i| !num_traits::Signed::is_negative(i.as_bigint()));
            let Some(len) = len else {
                return Err(Unsupported::new(
                    Kind::Raises,
                    "__len__() should return an int >= 0 (TypeError, ValueError)",
                ));
            };
            let truth = !num_traits::Zero::is_zero(len.as_bigint());
            return Ok(Some(Var::Obj(self.vm.ctx.new_bool(truth).into())));
        }
        Ok(Some(Var::Obj(self.vm.ctx.new_bool(true).into())))
    }
}

/// A caller's instance of a plain subclass of dict (`plain_dict_subclass`): an instance of
/// the object model for its attributes, a dict for its protocols (truth, length, iteration,
/// `in`), which callers then read as a dict's entries.
fn is_dict_instance(v: &Var, vm: &rustpython_vm::VirtualMachine) -> bool {
    matches!(v, Var::Lazy(o, _) if !o.class().is(vm.ctx.types.dict_type)
        && crate::translate::state::is_dict(o, vm))
}
