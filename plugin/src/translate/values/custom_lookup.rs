//! Instances of a class whose `__getattribute__` is written in Python (Hugging Face's
//! `PretrainedConfig` maps `config.hidden_size` to `config.d_model` so, and model code reads
//! its config throughout `forward`): an attribute read inlines that function, and
//! `object.__getattribute__(self, name)` in it (or `super().__getattribute__(name)`) reads as
//! `object` reads, without the hook. What it reads of the instance's own dictionary must be a
//! constant (an int, float, string, bool or None), guarded by value, as TorchDynamo reads
//! such a config: the replacement never loads through the hook, which would run the
//! program's code again. Anything else, or a class with `__getattr__` too, runs as written.

use std::rc::Rc;

use rustpython_vm::builtins::{PyClassMethod, PyFloat, PyFunction, PyInt, PyStaticMethod, PyStr};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyObject, PyObjectRef, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;

/// The class's `__getattribute__`, where it is a Python function of a class written in
/// Python up to `object`, made by `type`, whose instances have a dictionary and whose class
/// has no `__getattr__`.
pub fn custom_getattribute(o: &PyObject, vm: &VirtualMachine) -> Option<PyObjectRef> {
    let class = o.class();
    let object = vm.ctx.types.object_type;
    o.dict()?;
    let plain = class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
        && class.class().is(vm.ctx.types.type_type)
        && class
            .mro
            .read()
            .iter()
            .all(|c| c.is(object) || c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE));
    let f = class.get_attr(vm.ctx.intern_str("__getattribute__"))?;
    (plain
        && f.downcast_ref::<PyFunction>().is_some()
        && class.get_attr(vm.ctx.intern_str("__getattr__")).is_none())
    .then_some(f)
}

/// The guard that fixes `v`, a constant: an exact int, float (not NaN), str, bool or None.
fn constant_check(v: &PyObject, vm: &VirtualMachine) -> Option<Check> {
    let t = &vm.ctx.types;
    let class = v.class();
    if vm.is_none(v) {
        Some(Check::IsNone)
    } else if class.is(t.bool_type) {
        Some(Check::EqBool(v.is(&vm.ctx.true_value)))
    } else if class.is(t.int_type) {
        let n = v
            .downcast_ref::<PyInt>()?
            .try_to_primitive::<i64>(vm)
            .ok()?;
        Some(Check::EqInt(n))
    } else if class.is(t.float_type) {
        let x = v.downcast_ref::<PyFloat>()?.to_f64();
        (!x.is_nan()).then_some(Check::EqFloat(x))
    } else if class.is(t.str_type) {
        Some(Check::EqStr(
            v.downcast_ref::<PyStr>()?.to_string_lossy().into_owned(),
        ))
    } else {
        None
    }
}

impl State<'_> {
    /// `owner.name` where `owner`, the caller's, has a class with a `__getattribute__` in
    /// Python: that function inlined (its class and the class's version guarded). `None`
    /// where `owner` is no such instance.
    pub fn custom_lookup_attr(&mut self, owner: &Var, name: &str) -> SimResult<Option<Var>> {
        let Var::Lazy(o, source) = owner else {
            return Ok(None);
        };
        let Some(f) = custom_getattribute(o, self.vm) else {
            return Ok(None);
        };
        let class = o.class().to_owned();
        self.guard(source, Check::type_is(class.clone()));
        self.guard_class(source.clone().type_of(), &class)?;
        let name = Var::Obj(self.vm.ctx.new_str(name).into());
        self.call_function(&f, vec![owner.clone(), name], Vec::new())
            .map(Some)
    }

    /// Whether `owner` is an instance `custom_lookup_attr` reads.
    pub fn has_custom_lookup(&self, owner: &Var) -> bool {
        matches!(owner, Var::Lazy(o, _) if custom_getattribute(o, self.vm).is_some())
    }

    /// `object.__getattribute__(owner, name)` of such an instance: a data descriptor of its
    /// class refused, then its dictionary's entry (a constant, guarded by value), else the
    /// class's (a function bound to it, a static or class method, or data of the class).
    pub fn object_getattribute(&mut self, owner: &Var, name: &str) -> SimResult<Var> {
        let vm = self.vm;
        let Var::Lazy(o, source) = owner else {
            return unsupported(Kind::Value, "object.__getattribute__ of a value made here");
        };
        let class = o.class().to_owned();
        self.guard(source, Check::type_is(class.clone()));
        self.guard_class(source.clone().type_of(), &class)?;
        let entry = class.get_attr(vm.ctx.intern_str(name));
        if let Some(d) = &entry
            && d.class().slots.descr_set.load().is_some()
        {
            return unsupported(
                Kind::Value,
                format!(
                    "{}.{name}, a data descriptor, read through a Python __getattribute__",
                    class.name()
                ),
            );
        }
        let read = source.clone().attr(name);
        let held = o
            .dict()
            .and_then(|d| d.get_item_opt(name, vm).ok().flatten());
        if let Some(v) = held {
            let Some(check) = constant_check(&v, vm) else {
                return unsupported(
                    Kind::Value,
                    format!(
                        "{}.{name}, a {} read through a Python __getattribute__ (only constants are)",
                        class.name(),
                        v.class().name()
                    ),
                );
            };
            self.guard(&read, check);
            return Ok(Var::Obj(v));
        }
        self.guard(&read, Check::Absent);
        match entry {
            None => unsupported(
                Kind::Raises,
                format!(
                    "'{}' object has no attribute '{name}' (AttributeError)",
                    class.name()
                ),
            ),
            Some(d) if d.downcast_ref::<PyFunction>().is_some() => {
                Ok(Var::Bound(Rc::new((Var::Obj(d), owner.clone()))))
            }
            Some(d)
                if d.class().slots.descr_get.load().is_none()
                    || d.downcast_ref::<PyStaticMethod>().is_some()
                    || d.downcast_ref::<PyClassMethod>().is_some() =>
            {
                let class_var = Var::Lazy(class.into(), source.clone().type_of());
                self.class_attr(&class_var, name)
            }
            Some(d) => unsupported(
                Kind::Value,
                format!(
                    "{}.{name}, a {}, read through a Python __getattribute__",
                    class.name(),
                    d.class().name()
                ),
            ),
        }
    }
}

impl State<'_> {
    /// `super().__getattribute__` in a method of `class` (a Python `__getattribute__`): the
    /// next class's, `object`'s or one written in Python.
    pub(super) fn super_getattribute(
        &mut self,
        this: &Var,
        class: &rustpython_vm::Py<rustpython_vm::builtins::PyType>,
        method: bool,
    ) -> SimResult<(Var, Var)> {
        let vm = self.vm;
        let Var::Lazy(o, _) = this else {
            return unsupported(Kind::Value, "super().__getattribute__ of a value made here");
        };
        let key = vm.ctx.intern_str("__getattribute__");
        let mro = o.class().mro.read().clone();
        let next = mro
            .iter()
            .skip_while(|c| !c.is(class))
            .skip(1)
            .find_map(|c| c.get_direct_attr(key).map(|d| (c.clone(), d)));
        match next {
            // `object`'s, or a base's written in Python (inlined when called).
            Some((holder, d))
                if holder.is(vm.ctx.types.object_type)
                    || d.downcast_ref::<PyFunction>().is_some() =>
            {
                Ok(if method {
                    (Var::Obj(d), this.clone())
                } else {
                    (Var::Bound(Rc::new((Var::Obj(d), this.clone()))), Var::Null)
                })
            }
            _ => unsupported(
                Kind::Value,
                "super().__getattribute__ reaching a native one other than object's",
            ),
        }
    }
}
