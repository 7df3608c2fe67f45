//! Attributes: reads in attribute and method form (modules, tensors, instances of user
//! classes, plain values, the containers made during the simulation), a context manager's
//! special methods, and attribute stores and deletes on the caller's objects (side effects).

use rustpython_vm::builtins::PyGetSet;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload, VirtualMachine};

use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::{Var, is_plain};

impl State<'_> {
    /// `del owner.name` on an object of the caller: a side effect replayed as written.
    pub fn del_attr(&mut self, owner: &Var, name: &str) -> SimResult<()> {
        let vm = self.vm;
        match owner {
            Var::Lazy(o, source)
                if is_user_instance(o, vm)
                    && crate::translate::side_effects::plain_attribute_store(o, name, vm) =>
            {
                // Under a handler, the delete must not raise where it is replayed (see
                // `del_item`): the attribute is checked now, and guarded.
                if self.under_handler {
                    self.effects.check_attr_readable(o, name)?;
                    let present = o
                        .dict()
                        .and_then(|d| d.get_item_opt(name, vm).ok().flatten());
                    let Some(v) = present else {
                        return unsupported(
                            Kind::Raises,
                            format!("del of {source}.{name}, which is not set (AttributeError)"),
                        );
                    };
                    self.guard(
                        &source.clone().attr(name),
                        Check::TypeIs(v.class().to_owned()),
                    );
                }
                self.guard(source, Check::TypeIs(o.class().to_owned()));
                self.effects.mutate(
                    o,
                    Effect::DelAttr {
                        target: source.clone(),
                        name: name.to_owned(),
                    },
                );
                Ok(())
            }
            _ => unsupported(
                Kind::SideEffect,
                format!(
                    "del of attribute {name} of a {} (a side effect that is not replayed)",
                    owner.kind()
                ),
            ),
        }
    }

    /// `owner.name = value`: on an object of the caller, a side effect replayed as written.
    pub fn set_attr(&mut self, owner: &Var, name: &str, value: Var) -> SimResult<()> {
        let vm = self.vm;
        match owner {
            Var::Lazy(o, source)
                if is_user_instance(o, vm)
                    && crate::translate::side_effects::plain_attribute_store(o, name, vm) =>
            {
                self.guard(source, Check::TypeIs(o.class().to_owned()));
                self.effects.mutate(
                    o,
                    Effect::SetAttr {
                        target: source.clone(),
                        name: name.to_owned(),
                        value,
                    },
                );
                Ok(())
            }
            _ => unsupported(
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
        match owner {
            // Exactly a module: a subclass may define `__getattribute__`.
            Var::Lazy(o, source) if o.class().is(vm.ctx.types.module_type) => {
                self.effects.check_readable(o)?;
                self.obj(owner)?; // the module's identity
                match o
                    .dict()
                    .and_then(|d| d.get_item_opt(name, vm).ok().flatten())
                {
                    Some(v) => Ok(Var::Lazy(v, source.clone().attr(name))),
                    None => unsupported(Kind::Raises, format!("module has no attribute {name:?}")),
                }
            }
            _ if self.is_tensor(owner) => {
                self.tensor_class_attr(name)?;
                let o = self.obj(owner)?;
                let r = o.get_attr(&vm.ctx.new_str(name), vm);
                if !TENSOR_META.contains(&name) {
                    // Attributes computed by ops (`T`) come back as recorded fakes.
                    return match self.native_result(r, true, &format!("Tensor.{name}"))? {
                        v @ Var::Tensor(_) => Ok(v),
                        _ => unsupported(Kind::Value, format!("Tensor.{name} as a value")),
                    };
                }
                self.native_result(r, false, &format!("Tensor.{name}"))
            }
            Var::Lazy(o, source) if is_user_instance(o, vm) => {
                self.effects.check_attr_readable(o, name)?;
                self.guard(source, Check::TypeIs(o.class().to_owned()));
                // No data descriptor of the class comes before the instance's own.
                self.guard_class(source.clone().type_of(), o.class())?;
                if let Some(v) = o
                    .dict()
                    .and_then(|d| d.get_item_opt(name, vm).ok().flatten())
                {
                    if class_has_data_descriptor(o, name, vm) {
                        return unsupported(
                            Kind::Value,
                            format!("attribute {name} behind a descriptor"),
                        );
                    }
                    return Ok(Var::Lazy(v, source.clone().attr(name)));
                }
                unsupported(
                    Kind::Value,
                    format!(
                        "attribute {name} of a {} that is not in its __dict__",
                        o.class().name()
                    ),
                )
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

    /// `__enter__` or `__exit__` of a context manager (LOAD_SPECIAL): looked up on its type,
    /// as `(function, self)`. A Python function is inlined when called; a method of a native
    /// type breaks the graph when called (both are constants of the replacement, fixed by the
    /// type guard). Other kinds of attribute (LOAD_SPECIAL would push a NULL) are not simulated.
    pub fn special_method_of(&mut self, owner: &Var, name: &'static str) -> SimResult<(Var, Var)> {
        let vm = self.vm;
        let Var::Lazy(o, source) = owner else {
            return unsupported(
                Kind::Value,
                format!("a {} as a context manager", owner.kind()),
            );
        };
        let method = o.class().get_attr(vm.ctx.intern_str(name)).filter(|f| {
            f.downcast_ref::<rustpython_vm::builtins::PyFunction>()
                .is_some()
                || f.class().is(vm.ctx.types.method_descriptor_type)
        });
        match method {
            Some(f) => {
                self.guard(source, Check::TypeIs(o.class().to_owned()));
                self.guard_class(source.clone().type_of(), o.class())?;
                Ok((Var::Obj(f), owner.clone()))
            }
            None => unsupported(
                Kind::Value,
                format!(
                    "{name} of a {} that is not a function or a native method",
                    o.class().name()
                ),
            ),
        }
    }

    /// `owner.name` in method form: `(callable, self or NULL)`.
    pub fn method_of(&mut self, owner: &Var, name: &str) -> SimResult<(Var, Var)> {
        let vm = self.vm;
        match owner {
            Var::List(_) | Var::Dict(_) => Ok((
                Var::Method(Box::new(owner.clone()), intern_method(name)?),
                Var::Null,
            )),
            // A mutating method of a caller's list: recorded as a side effect when called.
            Var::Lazy(o, _)
                if o.class().is(vm.ctx.types.list_type)
                    && matches!(name, "append" | "extend" | "insert") =>
            {
                Ok((
                    Var::Method(Box::new(owner.clone()), intern_method(name)?),
                    Var::Null,
                ))
            }
            // Of a caller's dict: recorded as a side effect when called.
            Var::Lazy(o, _) if o.class().is(vm.ctx.types.dict_type) && name == "update" => Ok((
                Var::Method(Box::new(owner.clone()), intern_method(name)?),
                Var::Null,
            )),
            _ if self.is_tensor(owner) => {
                let a = self.tensor_class_attr(name)?;
                if a.downcast_ref::<PyGetSet>().is_some() {
                    Ok((self.attr_of(owner, name)?, Var::Null))
                } else {
                    Ok((Var::Obj(a), owner.clone()))
                }
            }
            Var::Lazy(o, _)
                if is_user_instance(o, vm)
                    && o.dict()
                        .is_none_or(|d| d.get_item_opt(name, vm).ok().flatten().is_none()) =>
            {
                let Var::Lazy(_, source) = owner else {
                    unreachable!()
                };
                self.effects.check_attr_readable(o, name)?;
                self.guard(source, Check::TypeIs(o.class().to_owned()));
                // The method found on the class: the class unchanged, and not shadowed by an
                // attribute of the instance's own.
                self.guard_class(source.clone().type_of(), o.class())?;
                self.guard(&source.clone().attr(name), Check::Absent);
                match o.class().get_attr(vm.ctx.intern_str(name)) {
                    Some(f)
                        if f.downcast_ref::<rustpython_vm::builtins::PyFunction>()
                            .is_some() =>
                    {
                        Ok((Var::Obj(f), owner.clone()))
                    }
                    _ => unsupported(
                        Kind::Call,
                        format!("method {name} of a {}", o.class().name()),
                    ),
                }
            }
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
    "is_floating_point",
    "__len__",
];

/// Instances of classes defined in Python without their own attribute hooks.
fn is_user_instance(o: &PyObjectRef, vm: &VirtualMachine) -> bool {
    let c = o.class();
    if c.slots
        .flags
        .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE)
        && o.dict().is_some()
    {
        let custom = |n: &str| {
            c.get_attr(vm.ctx.intern_str(n)).is_some_and(|a| {
                !a.class().is(vm.ctx.types.wrapper_descriptor_type)
                    && a.downcast_ref::<rustpython_vm::builtins::PyFunction>()
                        .is_some()
            })
        };
        return !custom("__getattr__") && !custom("__getattribute__");
    }
    false
}

fn class_has_data_descriptor(o: &PyObjectRef, name: &str, vm: &VirtualMachine) -> bool {
    o.class()
        .get_attr(vm.ctx.intern_str(name))
        .is_some_and(|a| a.class().slots.descr_set.load().is_some())
}

fn intern_method(name: &str) -> SimResult<&'static str> {
    const METHODS: &[&str] = &[
        "append", "extend", "pop", "insert", "items", "keys", "values", "get", "index", "count",
        "copy", "update",
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
    /// simulated: reading it would run its code.
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
}
