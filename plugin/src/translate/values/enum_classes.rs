//! An enum class iterated (`for act in Act`, `list(Mode)`): its members in definition order,
//! as `EnumType.__iter__` hands them out, read from the class's `_member_names_` and
//! `_member_map_` instead of running that generator. The class is guarded to be the one it
//! was, its attributes unchanged (its version: a member set on it later changes it), and its
//! list of names its length (a name appended in place does not).

use rustpython_vm::builtins::{PyDict, PyList, PyStr, PyType};
use rustpython_vm::{AsObject, Py, PyObjectRef, VirtualMachine};

use crate::translate::guards::guard::Check;
use crate::translate::guards::guard::exact_str;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;

impl State<'_> {
    /// The members of `o`, read from `source`, when it is an enum class iterated by the
    /// standard `EnumType.__iter__`: each the caller's, read through itself.
    pub fn enum_class_members(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
    ) -> SimResult<Option<Vec<Var>>> {
        let Some(class) = o.downcast_ref::<PyType>() else {
            return Ok(None);
        };
        let Some(members) = members_in_order(class, self.vm) else {
            return Ok(None);
        };
        self.guard(source, Check::is(o.clone()));
        self.guard_class(source.clone(), class)?;
        let names = Source::ClassAttr(Box::new(source.clone()), "_member_names_".to_owned());
        self.guard(&names, Check::Len(members.len()));
        Ok(Some(
            members
                .into_iter()
                .map(|m| Var::Lazy(m.clone(), Source::object(m)))
                .collect(),
        ))
    }
}

/// `list(class)` as the standard library's `EnumType.__iter__` makes it: `None` for a class
/// whose metaclass iterates otherwise, or whose names or map are not what `enum` keeps.
fn members_in_order(class: &Py<PyType>, vm: &VirtualMachine) -> Option<Vec<PyObjectRef>> {
    let iter = vm.ctx.intern_str("__iter__");
    let standard = class.class().mro.read().iter().find_map(|m| {
        let from_enum = m
            .get_direct_attr(vm.ctx.intern_str("__module__"))
            .is_some_and(|n| n.downcast_ref::<PyStr>().and_then(|s| s.to_str()) == Some("enum"));
        (&*m.name() == "EnumType" && from_enum)
            .then(|| m.get_direct_attr(iter))
            .flatten()
    })?;
    if !class
        .class()
        .get_attr(iter)
        .is_some_and(|i| i.is(&standard))
    {
        return None;
    }
    // The class's own: what `EnumType.__new__` sets on each enum class.
    let names = class.get_direct_attr(vm.ctx.intern_str("_member_names_"))?;
    let map = class.get_direct_attr(vm.ctx.intern_str("_member_map_"))?;
    let (names, map) = (
        names.downcast_ref::<PyList>()?,
        map.downcast_ref::<PyDict>()?,
    );
    if !names.class().is(vm.ctx.types.list_type) || !map.class().is(vm.ctx.types.dict_type) {
        return None;
    }
    let names = names.borrow_vec().to_vec();
    names
        .iter()
        .map(|n| {
            let n = exact_str(n, vm)?;
            map.get_item_opt(n, vm).ok().flatten()
        })
        .collect()
}
