//! A method of a native container on the stack, as the interpreter holds it: `xs.append`
//! taken for a call is `(list.append, xs)` (LOAD_ATTR's method form). A graph break inside
//! the call's arguments (`log.append(loss.item())`) passes the stack to the resume function
//! in that form, and the resume simulates the call again: `list.append(xs, v)` is the
//! container's method, as `xs.append(v)` is.

use rustpython_vm::{AsObject, PyObjectRef};

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
