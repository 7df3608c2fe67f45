//! Identity: `is` and `is None` of the simulation's values (the caller's objects compared
//! with guards on what they are), `==` of two objects whose classes compare as `object` does
//! (an enum's members), and the objects whose identity the guards may pin because it is all
//! they are (an enum's members, one object per member for the life of its class).

use std::rc::Rc;

use rustpython_vm::builtins::{PyNone, PyStr};
use rustpython_vm::{AsObject, PyObjectRef};

use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::{Var, is_plain};

/// A member of an `enum.Enum` class: one object per member for the life of its class.
pub fn is_enum_member(obj: &PyObjectRef) -> bool {
    obj.class().class().mro.read().iter().any(|m| {
        &*m.name() == "EnumType"
            && m.get_attr(rustpython_vm::Context::genesis().intern_str("__module__"))
                .and_then(|n| {
                    n.downcast_ref::<PyStr>()
                        .map(|s| s.to_str() == Some("enum"))
                })
                .unwrap_or(false)
    })
}

/// Whether `class` was defined by the module `module` (its `__module__`).
fn defined_in(class: &rustpython_vm::Py<rustpython_vm::builtins::PyType>, module: &str) -> bool {
    class
        .get_direct_attr(rustpython_vm::Context::genesis().intern_str("__module__"))
        .and_then(|n| {
            n.downcast_ref::<PyStr>()
                .map(|s| s.to_str() == Some(module))
        })
        .unwrap_or(false)
}

impl State<'_> {
    /// `member.value` or `member.name` of an enum member that the object model does not
    /// handle as an instance (an `IntEnum`'s or `StrEnum`'s, an int or a str), where the
    /// class's `value` or `name` is `enum`'s own (which gives the member's `_value_` or
    /// `_name_`): that entry of its dictionary, read where it is (guarded where used), the
    /// class's version guarded. `None` for anything else.
    pub(super) fn enum_field(&mut self, owner: &Var, name: &str) -> SimResult<Option<Var>> {
        let (Var::Obj(o) | Var::Lazy(o, _)) = owner else {
            return Ok(None);
        };
        if !matches!(name, "value" | "name") || !is_enum_member(o) {
            return Ok(None);
        }
        let vm = self.vm;
        let class = o.class().to_owned();
        let key = vm.ctx.intern_str(name);
        let enums_own = class
            .mro
            .read()
            .iter()
            .find(|k| k.attributes.contains(key))
            .is_some_and(|k| defined_in(k, "enum"));
        let field = if name == "value" { "_value_" } else { "_name_" };
        let Some(v) = o
            .dict()
            .and_then(|d| d.get_item_opt(field, vm).ok().flatten())
            .filter(|_| enums_own)
        else {
            return Ok(None);
        };
        let source = match owner {
            Var::Lazy(_, s) => s.clone(),
            _ => Source::object(o.clone()),
        };
        self.guard_class(source.clone().type_of(), &class)?;
        Ok(Some(Var::Lazy(v, source.attr(field))))
    }

    /// `a == b` of two objects whose classes compare as `object` does (an enum's members,
    /// modules): whether they are one object. `None` for anything else.
    pub(super) fn identity_equality(&mut self, a: &Var, b: &Var) -> SimResult<Option<bool>> {
        let vm = self.vm;
        let object_eq = vm
            .ctx
            .types
            .object_type
            .get_attr(vm.ctx.intern_str("__eq__"));
        let compares_as_object = |v: &Var| match v {
            Var::Lazy(o, _) | Var::Obj(o) => {
                !is_plain(o, vm)
                    && o.class()
                        .slots
                        .flags
                        .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE)
                    && match (o.class().get_attr(vm.ctx.intern_str("__eq__")), &object_eq) {
                        (Some(e), Some(oe)) => e.is(oe),
                        _ => false,
                    }
            }
            _ => false,
        };
        if !(compares_as_object(a) && compares_as_object(b)) {
            return Ok(None);
        }
        // Each one's class pinned (its version keeps `__eq__` as it is), then identity as
        // `is` tells it: two of the caller's modules (`layer == self.layer0`) by the
        // relation of their sources, not by pinning each.
        for v in [a, b] {
            let (Var::Lazy(o, _) | Var::Obj(o)) = v else {
                unreachable!("compares_as_object")
            };
            let class = o.class().to_owned();
            let source = match v {
                Var::Lazy(_, s) => s.clone().type_of(),
                _ => Source::object(class.clone().into()),
            };
            self.guard_class(source, &class)?;
        }
        self.is(a, b).map(Some)
    }
}

impl State<'_> {
    pub fn is_none(&mut self, v: &Var) -> SimResult<bool> {
        match v {
            Var::Lazy(o, source) => {
                if o.downcast_ref::<PyNone>().is_some() {
                    self.guard(source, Check::IsNone);
                    Ok(true)
                } else {
                    self.guard(source, Check::type_is(o.class().to_owned()));
                    Ok(false)
                }
            }
            Var::Obj(o) => Ok(o.downcast_ref::<PyNone>().is_some()),
            _ => Ok(false),
        }
    }

    /// Whether `v` is the fake of a tensor read by a call made first (`Source::Draw`).
    fn is_first_call_tensor(&self, v: &Var) -> bool {
        let Var::Tensor(t) = v else {
            return false;
        };
        self.tensors
            .iter()
            .any(|(s, (f, _))| f.is(t) && s.has_draw())
    }

    pub fn is(&mut self, a: &Var, b: &Var) -> SimResult<bool> {
        if let Var::Obj(o) = b
            && o.downcast_ref::<PyNone>().is_some()
        {
            return self.is_none(a);
        }
        if let Var::Obj(o) = a
            && o.downcast_ref::<PyNone>().is_some()
        {
            return self.is_none(b);
        }
        // A tensor the replacement reads by a call it makes first (an lru_cache's) is known
        // only then: whether it is another tensor is a guard no one can make before.
        if [a, b].iter().any(|v| self.is_first_call_tensor(v)) {
            return unsupported(
                Kind::DataDependent,
                "`is` of a tensor an lru_cache holds: it is looked up only when the \
                 replacement runs",
            );
        }
        // A bare `object()` (a sentinel: a library's `_MISSING` default, the marker of an
        // unbound local after a split loop) is no tensor, and no value of another type; read
        // from the caller (a global), it is known by its identity, guarded.
        let object_type = self.vm.ctx.types.object_type;
        let bare =
            |v: &Var| matches!(v, Var::Obj(o) | Var::Lazy(o, _) if o.class().is(object_type));
        if bare(a) || bare(b) {
            let (s, other) = if bare(a) { (a, b) } else { (b, a) };
            let (Var::Obj(sentinel) | Var::Lazy(sentinel, _)) = s else {
                unreachable!()
            };
            let sentinel = sentinel.clone();
            if let Var::Lazy(_, from) = s {
                self.guard(from, Check::is(sentinel.clone()));
            }
            match other {
                Var::Lazy(o, source) if !o.class().is(object_type) => {
                    self.guard(source, Check::type_is(o.class().to_owned()));
                    return Ok(false);
                }
                Var::Lazy(o, source) if o.is(&sentinel) => {
                    self.guard(source, Check::is(sentinel));
                    return Ok(true);
                }
                Var::Lazy(..) => {}
                Var::Obj(o) => return Ok(o.is(&sentinel)),
                // Made in the call (a tensor, a number, a container, an instance): not an
                // object that existed before it.
                _ => return Ok(false),
            }
        }
        if let Some(same) = self.instances_are(a, b)? {
            return Ok(same);
        }
        // Two values of the caller's: one object or two, the relation guarded. Their objects
        // are compared, never what `obj` makes of them (a list or tuple read by its items is
        // made anew), and equal values are not one object for that (two equal ints may be two).
        if let (Var::Lazy(x, sx), Var::Lazy(y, sy)) = (a, b)
            && !self.is_tensor(a)
            && !self.is_tensor(b)
        {
            let same = x.is(y);
            if sx != sy {
                let check = if same {
                    Check::SameAs(sx.clone())
                } else {
                    Check::NotSameAs(sx.clone())
                };
                self.guard(sy, check);
            }
            return Ok(same);
        }
        // Tensors of the caller's (read from the frame, or their fakes): told apart by the
        // objects, the relation guarded; a tensor the call made is none of them.
        match (self.caller_tensor(a), self.caller_tensor(b)) {
            (Some((x, sx)), Some((y, sy))) => {
                let same = x.is(&y);
                let check = if same {
                    Check::SameAs(sx)
                } else {
                    Check::NotSameAs(sx)
                };
                self.guard(&sy, check);
                return Ok(same);
            }
            (Some(_), None) | (None, Some(_))
                if matches!(a, Var::Tensor(_)) || matches!(b, Var::Tensor(_)) =>
            {
                return Ok(false);
            }
            _ => {}
        }
        Ok(match (a, b) {
            (Var::Tensor(x), Var::Tensor(y)) => x.is(y),
            // A tensor made in the call from constants, and one updated or computed.
            (Var::Tensor(x), Var::Obj(y)) | (Var::Obj(y), Var::Tensor(x))
                if y.downcast_ref::<PyTensor>().is_some() =>
            {
                x.is(y)
            }
            (Var::Object(x), Var::Object(y)) => Rc::ptr_eq(x, y),
            (Var::List(x), Var::List(y)) => Rc::ptr_eq(x, y),
            (Var::Deque(x), Var::Deque(y)) => Rc::ptr_eq(x, y),
            (Var::Dict(x), Var::Dict(y)) => Rc::ptr_eq(x, y),
            (Var::Tuple(x), Var::Tuple(y)) => Rc::ptr_eq(x, y),
            (Var::Func(x), Var::Func(y)) => Rc::ptr_eq(x, y),
            (Var::Lazy(..) | Var::Obj(_), Var::Lazy(..) | Var::Obj(_))
                if !self.is_tensor(a) && !self.is_tensor(b) =>
            {
                let (x, y) = (self.obj(a)?, self.obj(b)?);
                x.is(&y)
            }
            _ => {
                return unsupported(
                    Kind::Value,
                    "an identity test between values of different kinds",
                );
            }
        })
    }

    /// `a is b` where one of them is an instance of a user class: `None` when neither is.
    /// Two of the caller's are compared by identity, and what was found is guarded; one
    /// made during the simulation is none of the caller's.
    fn instances_are(&mut self, a: &Var, b: &Var) -> SimResult<Option<bool>> {
        let vm = self.vm;
        let user = |v: &Var| match v {
            Var::Object(_) => true,
            Var::Lazy(o, _) => crate::translate::values::objects::is_user_instance(o, vm),
            _ => false,
        };
        if !user(a) && !user(b) {
            return Ok(None);
        }
        match (a, b) {
            (Var::Object(x), Var::Object(y)) => Ok(Some(Rc::ptr_eq(x, y))),
            (Var::Lazy(x, sx), Var::Lazy(y, sy)) => {
                let same = x.is(y);
                let check = if same {
                    Check::SameAs(sy.clone())
                } else {
                    Check::NotSameAs(sy.clone())
                };
                self.guard(sx, check);
                Ok(Some(same))
            }
            (Var::Lazy(o, source), _) | (_, Var::Lazy(o, source)) => {
                // One of the caller's and something else: of another type, or made here.
                self.guard(source, Check::type_is(o.class().to_owned()));
                Ok(Some(false))
            }
            _ => Ok(Some(false)),
        }
    }
}

impl State<'_> {
    /// `id(x)` of an object that existed before the call, read from the frame (a parameter
    /// an optimizer keys its state by, `self.state[id(p)]`): the guard on its identity keeps
    /// its number the same at every call the entry serves. `None` for any other value: an
    /// object made during the call has another number at each call.
    pub(super) fn identity_number(&mut self, v: &Var) -> SimResult<Option<Var>> {
        let Var::Lazy(o, source) = v else {
            return Ok(None);
        };
        self.guard(source, Check::is(o.clone()));
        Ok(Some(Var::Obj(self.vm.ctx.new_int(o.get_id()).into())))
    }
}
