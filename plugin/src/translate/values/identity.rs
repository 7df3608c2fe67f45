//! Identity: `==` of two objects whose classes compare as `object` does (an enum's
//! members), and the objects whose identity the guards may pin because it is all they are
//! (an enum's members, one object per member for the life of its class).

use rustpython_vm::builtins::PyStr;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::source::Source;
use crate::translate::state::{SimResult, State};
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

    /// `a == b` of two objects whose classes compare as `object` does (an enum's members):
    /// whether they are one object, each object pinned by the guards (its class's version
    /// too, which keeps `__eq__` as it is). `None` for anything else.
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
        let (x, y) = (self.obj(a)?, self.obj(b)?);
        for o in [&x, &y] {
            let class = o.class().to_owned();
            self.guard_class(Source::object(class.clone().into()), &class)?;
        }
        Ok(Some(x.is(&y)))
    }
}
