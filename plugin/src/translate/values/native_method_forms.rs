//! A method of a native container on the stack, as the interpreter holds it: `xs.append`
//! taken for a call is `(list.append, xs)` (LOAD_ATTR's method form). A graph break inside
//! the call's arguments (`log.append(loss.item())`) passes the stack to the resume function
//! in that form, and the resume simulates the call again: `list.append(xs, v)` is the
//! container's method, as `xs.append(v)` is.

use rustpython_vm::builtins::PyStr;
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

use crate::translate::state::{SimResult, State, is_dict};
use crate::translate::values::Var;
use crate::translate::values::deques::{deque_class, is_native_deque};

impl State<'_> {
    /// The native descriptor behind `owner.name` (`list.append`), when the owner's class is
    /// exactly a list, dict, set or deque, or a caller's plain subclass of dict that does not
    /// override it (a dict made here as an `OrderedDict` or `defaultdict` has methods of its
    /// own).
    fn native_descriptor(&self, owner: &Var, name: &str) -> Option<PyObjectRef> {
        let vm = self.vm;
        let types = &vm.ctx.types;
        let class: PyObjectRef = match owner {
            Var::List(_) => types.list_type.to_owned().into(),
            Var::Set(s) if s.class().is(types.set_type) => types.set_type.to_owned().into(),
            Var::Dict(d) if self.dict_kind(d).is_none() => types.dict_type.to_owned().into(),
            Var::Deque(_) => deque_class(vm)?,
            Var::Lazy(o, _)
                if [types.list_type, types.dict_type, types.set_type]
                    .iter()
                    .any(|t| o.class().is(*t))
                    || is_native_deque(o) =>
            {
                o.class().to_owned().into()
            }
            // A subclass of dict read as a dict (an `AttrDict`): the method is dict's only
            // when the subclass leaves it alone, which the lookup below tells.
            Var::Lazy(o, _) if is_dict(o, vm) => o.class().to_owned().into(),
            _ => return None,
        };
        let descriptor = class.get_attr(&vm.ctx.new_str(name), vm).ok()?;
        // `dict.__setitem__` is a slot wrapper, `dict.get` a method descriptor.
        let class = descriptor.class();
        (class.is(types.method_descriptor_type) || class.is(types.wrapper_descriptor_type))
            .then_some(descriptor)
    }

    /// `stack` with each `(method of a native container, NULL)` in the interpreter's method
    /// form `(descriptor, owner)`.
    pub fn native_method_forms(&self, mut stack: Vec<Var>) -> Vec<Var> {
        for i in 1..stack.len() {
            if let (Var::Method(owner, name), Var::Null) = (&stack[i - 1], &stack[i])
                && let Some(descriptor) = self.native_descriptor(owner, name)
            {
                stack[i] = (**owner).clone();
                stack[i - 1] = Var::Obj(descriptor);
            }
        }
        stack
    }

    /// `list.append(xs, v)` and the like: the container's method, when `callable` is the
    /// descriptor of its first argument's class (`None`: not such a call).
    pub(super) fn native_method_call(
        &mut self,
        callable: &Var,
        descriptor: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let Some((owner, rest)) = args.split_first() else {
            return Ok(None);
        };
        let Some(name) = descriptor.get_attr("__name__", self.vm).ok().and_then(|n| {
            n.downcast_ref::<rustpython_vm::builtins::PyStr>()
                .map(|s| s.to_string_lossy().into_owned())
        }) else {
            return Ok(None);
        };
        if !self
            .native_descriptor(owner, &name)
            .is_some_and(|d| d.is(descriptor))
        {
            return Ok(None);
        }
        if let ("__getitem__", [key]) = (name.as_str(), rest) {
            // `dict.__getitem__(d, k)` (an `AttrDict`'s `__getattr__`) is `d[k]`, and
            // `dict.__setitem__(d, k, v)` is `d[k] = v`: its class's methods are these.
            self.obj(callable)?;
            return self.subscript(owner, key).map(Some);
        }
        if let ("__setitem__", [key, value]) = (name.as_str(), rest) {
            self.obj(callable)?;
            self.set_item(owner, key, value.clone())?;
            return Ok(Some(Var::Obj(self.vm.ctx.none())));
        }
        let Ok((Var::Method(owner, name), Var::Null)) = self.method_of(owner, &name) else {
            return Ok(None);
        };
        self.obj(callable)?; // the descriptor's identity
        self.container_method(&owner, name, rest.to_vec(), kwargs.to_vec())
            .map(Some)
    }
}

impl State<'_> {
    /// `descriptor.__get__(obj)` of one of `object`'s native methods or slot wrappers
    /// (attrs' frozen `__init__` binds `object.__setattr__` so): the method bound to `obj`,
    /// which a call passes `obj` first, as the VM's method-wrapper does (`None`: not such a
    /// call).
    pub(super) fn native_descriptor_get(
        &self,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Option<Var> {
        let vm = self.vm;
        let types = &vm.ctx.types;
        if !f.class().is(types.method_wrapper_type) || !kwargs.is_empty() {
            return None;
        }
        let name = f.get_attr("__name__", vm).ok()?;
        if name.downcast_ref::<PyStr>()?.to_str() != Some("__get__") {
            return None;
        }
        let descriptor = f.get_attr("__self__", vm).ok()?;
        let class = descriptor.class();
        if !(class.is(types.method_descriptor_type) || class.is(types.wrapper_descriptor_type)) {
            return None;
        }
        // `object`'s own, which binds to anything: another class's raises TypeError for an
        // object not of that class, which a binding made here would not.
        if !descriptor
            .get_attr("__objclass__", vm)
            .is_ok_and(|c| c.is(types.object_type))
        {
            return None;
        }
        let obj = match args {
            [obj] | [obj, _] => obj,
            _ => return None,
        };
        if matches!(obj, Var::Obj(o) if vm.is_none(o)) {
            return None;
        }
        Some(Var::Bound(std::rc::Rc::new((
            Var::Obj(descriptor),
            obj.clone(),
        ))))
    }
}

/// The class of what `descriptor.__get__(obj)` makes when `function` (a bound method's) is
/// a native method or slot wrapper (`native_descriptor_get`): a builtin method or a
/// method-wrapper, not a Python bound method. `None` for any other function.
pub fn native_bound_class(function: &Var, vm: &VirtualMachine) -> Option<PyObjectRef> {
    let Var::Obj(d) = function else {
        return None;
    };
    let types = &vm.ctx.types;
    if d.class().is(types.wrapper_descriptor_type) {
        Some(types.method_wrapper_type.to_owned().into())
    } else if d.class().is(types.method_descriptor_type) {
        Some(types.builtin_function_or_method_type.to_owned().into())
    } else {
        None
    }
}
