//! Members of enums on a number or str (`IntEnum`, `class Level(float, Enum)`, `StrEnum`)
//! as operands: where the member's class finds the operator's methods on its native base
//! (`int.__mul__`, not a method written in Python such as `Flag.__and__`), the operator
//! computes on the member's value as it would on the plain number (`Act.TANH * 2` is `4`), so
//! the simulation computes it with that value, the member's identity guarded.

use rustpython_vm::builtins::{PyFloat, PyInt, PyStr};
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::identity::is_enum_member;
use crate::translate::values::objects::python_method;
use crate::translate::values::operators::not_inplace;
use crate::translate::values::user_operators::dunders;

impl State<'_> {
    /// `a op b` with the plain values of the enum members among its operands; `None` where
    /// there are none, or where a class of theirs takes part in the operator in Python.
    pub(super) fn enum_operands(
        &mut self,
        op: BinaryOperator,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<Var>> {
        if op == BinaryOperator::Subscr {
            return Ok(None);
        }
        let vm = self.vm;
        let (forward, reflected, in_place) = dunders(not_inplace(op));
        let member = |v: &Var| match v {
            Var::Lazy(o, _) | Var::Obj(o) if is_enum_member(o) && plain_value(o, vm).is_some() => {
                Some(o.clone())
            }
            _ => None,
        };
        let (ma, mb) = (member(a), member(b));
        if ma.is_none() && mb.is_none() {
            return Ok(None);
        }
        let in_python = |o: &PyObjectRef| {
            [forward, reflected, in_place]
                .iter()
                .any(|name| python_method(o.class(), name, vm).is_some())
        };
        if ma.iter().chain(mb.iter()).any(in_python) {
            return Ok(None);
        }
        let mut value = |v: &Var, m: Option<PyObjectRef>| -> SimResult<Var> {
            Ok(match m {
                Some(o) => {
                    self.obj(v)?; // the member itself
                    Var::Obj(plain_value(&o, vm).expect("checked"))
                }
                None => v.clone(),
            })
        };
        let (x, y) = (value(a, ma)?, value(b, mb)?);
        self.binary(op, &x, &y).map(Some)
    }
}

impl State<'_> {
    /// The arguments of `int(...)` or `float(...)` with each enum member on a number in
    /// them replaced by its value (guarded by identity), where the member's class converts
    /// it natively (no `__int__`, `__float__`, `__index__` or `__trunc__` written in Python).
    pub(super) fn enum_conversion_args(
        &mut self,
        name: &str,
        args: Vec<Var>,
    ) -> SimResult<Vec<Var>> {
        let vm = self.vm;
        if !matches!(name, "int" | "float") {
            return Ok(args);
        }
        let native = |o: &PyObjectRef| {
            ["__int__", "__float__", "__index__", "__trunc__"]
                .iter()
                .all(|n| python_method(o.class(), n, vm).is_none())
        };
        args.into_iter()
            .map(|v| match &v {
                Var::Lazy(o, _) | Var::Obj(o)
                    if is_enum_member(o)
                        && native(o)
                        && o.downcast_ref::<PyStr>().is_none()
                        && let Some(value) = plain_value(o, vm) =>
                {
                    self.obj(&v)?; // the member itself
                    Ok(Var::Obj(value))
                }
                _ => Ok(v),
            })
            .collect()
    }
}

/// The plain number or str a member of an enum on that type holds.
fn plain_value(o: &PyObjectRef, vm: &VirtualMachine) -> Option<PyObjectRef> {
    if o.class().is(vm.ctx.types.bool_type) {
        return None;
    }
    if let Some(i) = o.downcast_ref::<PyInt>() {
        return Some(vm.ctx.new_int(i.as_bigint().clone()).into());
    }
    if let Some(f) = o.downcast_ref::<PyFloat>() {
        return Some(vm.ctx.new_float(f.to_f64()).into());
    }
    o.downcast_ref::<PyStr>()
        .map(|s| vm.ctx.new_str(s.as_wtf8().to_owned()).into())
}
