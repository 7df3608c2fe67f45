//! Operators on instances of classes written in Python (`a + b`, `a += b`, `-a`, `a < b`
//! where a class defines `__add__`, `__radd__`, `__iadd__`, `__neg__`, `__lt__`...):
//! dispatched as the interpreter dispatches them (`binary_op1`, `_cmp_inner` of the VM), each
//! method found inlined, a `NotImplemented` it returns passing the turn to the other
//! operand's reflected method.
//!
//! Next to such an instance, the other operand is another such instance, or a value whose
//! own method is known to give way to it (`NotImplemented`): a number, `None`, a tensor. Any
//! other (a str, whose `%` formats anything; a list, whose `*` takes an `__index__`) and any
//! method not written in Python (a native base's) break, as does an operation that ends in a
//! TypeError, which the frame then raises as written.

use rustpython_vm::builtins::{PyFunction, PyType, PyTypeRef};
use rustpython_vm::bytecode::{BinaryOperator, ComparisonOperator};
use rustpython_vm::class::StaticType;
use rustpython_vm::{AsObject, Py, PyObjectRef, VirtualMachine};

use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;
use crate::translate::values::objects::{object_slot, python_method};
use crate::translate::values::operators::{is_inplace, not_inplace};

/// The order in which the interpreter tries the methods of two operands: `names` (the
/// method and the reflected one), the right operand's reflected method first
/// (`reflected_first`), and after the left's unless tried first (`reflected_after`).
struct Order {
    names: (&'static str, &'static str),
    reflected_first: bool,
    reflected_after: bool,
}

impl State<'_> {
    /// `a op b` (in place too) where an operand is an instance of a class written in
    /// Python; `None` where neither is.
    pub fn user_binary(&mut self, op: BinaryOperator, a: &Var, b: &Var) -> SimResult<Option<Var>> {
        if op == BinaryOperator::Subscr || !(self.is_instance(a) || self.is_instance(b)) {
            return Ok(None);
        }
        let base = not_inplace(op);
        let (forward, reflected, in_place) = dunders(base);
        let (ca, cb) = (self.user_class(a)?, self.user_class(b)?);
        // A number's, None's and a tensor's `a op= b` with an instance is `a op b`: the
        // tensor's in-place method gives way as its operator does.
        if ca.is_none() {
            self.gives_way(a, forward)?;
        }
        if is_inplace(op)
            && let Some(class) = &ca
            && let Some(r) = self.dunder(class, in_place, a, b)?
        {
            return Ok(Some(r));
        }
        let (ca, cb) = (ca.as_ref(), cb.as_ref());
        let same_class = matches!((ca, cb), (Some(x), Some(y)) if x.is(y));
        let subclass_first = matches!((ca, cb), (Some(x), Some(y))
            if !same_class && y.fast_issubclass(x) && overrides(x, y, reflected, self.vm));
        let order = Order {
            names: (forward, reflected),
            reflected_first: subclass_first,
            reflected_after: !same_class,
        };
        if let Some(r) = self.in_order((a, ca), (b, cb), order, Self::dunder)? {
            return Ok(Some(r));
        }
        // What remains is a TypeError, or the right operand's native method.
        unsupported(
            Kind::Raises,
            format!("unsupported operand types for {base:?} (TypeError, raised when run)"),
        )
    }

    /// `-a`, `+a`, `~a` (`name`: `__neg__`, `__pos__`, `__invert__`) of an instance of a
    /// class written in Python; `None` for another value.
    pub fn user_unary(&mut self, name: &'static str, a: &Var) -> SimResult<Option<Var>> {
        if !self.is_instance(a) {
            return Ok(None);
        }
        let Some(class) = self.user_class(a)? else {
            return Ok(None);
        };
        match self.method(&class, name)? {
            Some(f) => self
                .call_function(&f, vec![a.clone()], Vec::new())
                .map(Some),
            None => unsupported(
                Kind::Raises,
                format!("bad operand type for {name} (TypeError, raised when run)"),
            ),
        }
    }

    /// `a op b` compared, where an operand is an instance of a class that compares with a
    /// method written in Python; `None` where none takes part (identity, then, as `object`
    /// compares: `identity`).
    pub fn user_compare(
        &mut self,
        op: ComparisonOperator,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<Var>> {
        if !(self.is_instance(a) || self.is_instance(b)) {
            return Ok(None);
        }
        let (name, swapped) = rich_names(op);
        let vm = self.vm;
        let python = |v: &Var, name: &str| match v {
            Var::Object(o) => python_method(&o.class, name, vm).is_some(),
            Var::Lazy(o, _) => python_method(o.class(), name, vm).is_some(),
            _ => false,
        };
        let takes_part = |v: &Var| {
            python(v, name) || python(v, swapped) || (name == "__ne__" && python(v, "__eq__"))
        };
        if !(takes_part(a) || takes_part(b)) {
            return Ok(None);
        }
        let (ca, cb) = (self.user_class(a)?, self.user_class(b)?);
        if ca.is_none() {
            self.gives_way(a, name)?;
        }
        let (ca, cb) = (ca.as_ref(), cb.as_ref());
        // Unlike a binary operator, a comparison tries the reflected method of an operand of
        // the same class too, and that of a subclass first whether it overrides it or not.
        let order = Order {
            names: (name, swapped),
            reflected_first: matches!((ca, cb), (Some(x), Some(y)) if !x.is(y) && y.fast_issubclass(x)),
            reflected_after: true,
        };
        if let Some(r) = self.in_order((a, ca), (b, cb), order, Self::rich)? {
            return Ok(Some(r));
        }
        if cb.is_none() {
            self.gives_way(b, swapped)?;
        }
        let same = match op {
            ComparisonOperator::Equal => self.is(a, b)?,
            ComparisonOperator::NotEqual => !self.is(a, b)?,
            _ => {
                return unsupported(
                    Kind::Raises,
                    format!(
                        "{name} not supported between these instances (TypeError, raised when run)"
                    ),
                );
            }
        };
        Ok(Some(Var::Obj(vm.ctx.new_bool(same).into())))
    }

    /// The methods of the two operands (each with its class, where it is a user instance)
    /// tried in `order`, each by `call(class, name, owner, other)`: the first result that is
    /// not `NotImplemented`, or `None`.
    fn in_order(
        &mut self,
        (a, ca): (&Var, Option<&PyTypeRef>),
        (b, cb): (&Var, Option<&PyTypeRef>),
        order: Order,
        call: impl Fn(&mut Self, &Py<PyType>, &str, &Var, &Var) -> SimResult<Option<Var>>,
    ) -> SimResult<Option<Var>> {
        let (forward, reflected) = order.names;
        if order.reflected_first
            && let Some(y) = cb
            && let Some(r) = call(self, y, reflected, b, a)?
        {
            return Ok(Some(r));
        }
        if let Some(x) = ca
            && let Some(r) = call(self, x, forward, a, b)?
        {
            return Ok(Some(r));
        }
        if !order.reflected_first
            && order.reflected_after
            && let Some(y) = cb
            && let Some(r) = call(self, y, reflected, b, a)?
        {
            return Ok(Some(r));
        }
        Ok(None)
    }

    fn is_instance(&self, v: &Var) -> bool {
        match v {
            Var::Object(_) => true,
            Var::Lazy(o, _) => crate::translate::values::objects::is_user_instance(o, self.vm),
            _ => false,
        }
    }

    /// The class of `v` when it is an instance of a class written in Python.
    fn user_class(&mut self, v: &Var) -> SimResult<Option<PyTypeRef>> {
        Ok(self.instance(v)?.map(|inst| self.inst_class(&inst)))
    }

    /// Go on only where `v`'s own method `what` returns `NotImplemented` next to an instance
    /// of a class written in Python: a number, `None`, a tensor. Another value's (a str's `%`
    /// formats anything) might not: that breaks.
    fn gives_way(&mut self, v: &Var, what: &str) -> SimResult<()> {
        let vm = self.vm;
        let gives_way = |o: &PyObjectRef| {
            let c = o.class();
            [
                vm.ctx.types.int_type,
                vm.ctx.types.float_type,
                vm.ctx.types.bool_type,
                vm.ctx.types.complex_type,
                vm.ctx.types.none_type,
            ]
            .iter()
            .any(|t| c.is(*t))
                || c.is(PyTensor::static_type())
        };
        match v {
            Var::Tensor(_) | Var::Num(_) => Ok(()),
            Var::Obj(o) if gives_way(o) => Ok(()),
            Var::Lazy(o, source) if gives_way(o) => {
                self.guard(source, Check::type_is(o.class().to_owned()));
                Ok(())
            }
            _ => unsupported(
                Kind::Value,
                format!("{what} between an instance of a Python class and another kind of value"),
            ),
        }
    }

    /// `class`'s `name` when it is written in Python; `None` where the class has none; a
    /// break where it is something else (a native base's method, a callable object).
    fn method(&mut self, class: &Py<PyType>, name: &str) -> SimResult<Option<PyObjectRef>> {
        match class.get_attr(self.vm.ctx.intern_str(name)) {
            None => Ok(None),
            Some(f) if f.downcast_ref::<PyFunction>().is_some() => Ok(Some(f)),
            Some(_) => unsupported(
                Kind::Call,
                format!(
                    "{}.{name} (not written in Python, not simulated)",
                    class.name()
                ),
            ),
        }
    }

    /// `owner.name(other)` with `name` a binary operator's method of `class`, inlined:
    /// `None` where the class has none or it returns `NotImplemented`.
    fn dunder(
        &mut self,
        class: &Py<PyType>,
        name: &str,
        owner: &Var,
        other: &Var,
    ) -> SimResult<Option<Var>> {
        let Some(f) = self.method(class, name)? else {
            return Ok(None);
        };
        let r = self.call_function(&f, vec![owner.clone(), other.clone()], Vec::new())?;
        Ok((!self.not_implemented(&r)).then_some(r))
    }

    /// `owner.name(other)` with `name` a rich comparison of `class`: a method written in
    /// Python inlined, or `object`'s own (`==` by identity, `!=` the negated `==`, the
    /// others `NotImplemented`); `None` for `NotImplemented`.
    fn rich(
        &mut self,
        class: &Py<PyType>,
        name: &str,
        owner: &Var,
        other: &Var,
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        if !object_slot(class, name, vm) {
            return self.dunder(class, name, owner, other);
        }
        match name {
            "__eq__" => Ok(self
                .is(owner, other)?
                .then(|| Var::Obj(vm.ctx.new_bool(true).into()))),
            "__ne__" => match self.rich(class, "__eq__", owner, other)? {
                Some(eq) => {
                    let t = self.truth(&eq)?;
                    Ok(Some(Var::Obj(vm.ctx.new_bool(!t).into())))
                }
                None => Ok(None),
            },
            _ => Ok(None),
        }
    }

    /// Whether a method's result is `NotImplemented` (what was found relied upon).
    fn not_implemented(&mut self, r: &Var) -> bool {
        let ni = self.vm.ctx.not_implemented();
        match r {
            Var::Obj(o) => o.is(&ni),
            Var::Lazy(o, source) => {
                let check = if o.is(&ni) {
                    Check::is(ni.clone())
                } else {
                    Check::type_is(o.class().to_owned())
                };
                self.guard(source, check);
                o.is(&ni)
            }
            _ => false,
        }
    }
}

/// Whether `sub` has a `name` other than `base`'s (the VM's `method_is_overloaded`).
fn overrides(base: &Py<PyType>, sub: &Py<PyType>, name: &str, vm: &VirtualMachine) -> bool {
    let name = vm.ctx.intern_str(name);
    match (sub.get_attr(name), base.get_attr(name)) {
        (Some(s), Some(b)) => !s.is(&b),
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// A binary operator's method, its reflected method and its in-place method.
pub(super) fn dunders(op: BinaryOperator) -> (&'static str, &'static str, &'static str) {
    use BinaryOperator as B;
    match op {
        B::Add => ("__add__", "__radd__", "__iadd__"),
        B::Subtract => ("__sub__", "__rsub__", "__isub__"),
        B::Multiply => ("__mul__", "__rmul__", "__imul__"),
        B::MatrixMultiply => ("__matmul__", "__rmatmul__", "__imatmul__"),
        B::TrueDivide => ("__truediv__", "__rtruediv__", "__itruediv__"),
        B::FloorDivide => ("__floordiv__", "__rfloordiv__", "__ifloordiv__"),
        B::Remainder => ("__mod__", "__rmod__", "__imod__"),
        B::Power => ("__pow__", "__rpow__", "__ipow__"),
        B::Lshift => ("__lshift__", "__rlshift__", "__ilshift__"),
        B::Rshift => ("__rshift__", "__rrshift__", "__irshift__"),
        B::And => ("__and__", "__rand__", "__iand__"),
        B::Or => ("__or__", "__ror__", "__ior__"),
        B::Xor => ("__xor__", "__rxor__", "__ixor__"),
        _ => unreachable!("in-place operators are mapped to their base first"),
    }
}

/// A comparison's method and the one tried on the other operand.
fn rich_names(op: ComparisonOperator) -> (&'static str, &'static str) {
    use ComparisonOperator as C;
    match op {
        C::Less => ("__lt__", "__gt__"),
        C::LessOrEqual => ("__le__", "__ge__"),
        C::Equal => ("__eq__", "__eq__"),
        C::NotEqual => ("__ne__", "__ne__"),
        C::Greater => ("__gt__", "__lt__"),
        C::GreaterOrEqual => ("__ge__", "__le__"),
    }
}
