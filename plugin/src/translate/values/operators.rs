//! Operators over symbolic values: binary and in-place operators, comparisons, truth and
//! membership (identity is `identity`). Plain values (see `is_plain`) are computed at trace time by the VM
//! itself; tensors go through their Python methods on fakes, so each op is recorded once by
//! the registry; native results are checked (`native_result`) so that nothing read from a
//! fake's made-up data is taken for a value.

use rustpython_vm::builtins::{PyBytes, PyModule, PyStr, PyTuple};
use rustpython_vm::bytecode::{BinaryOperator, ComparisonOperator};
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported, is_dict, unsupported};
use crate::translate::values::caller_sets::set_elements;
use crate::translate::values::{Var, ViewKind, is_plain};

pub(crate) fn binary_vm(
    op: BinaryOperator,
    a: &PyObjectRef,
    b: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    use BinaryOperator as B;
    match op {
        B::Add => vm._add(a, b),
        B::Subtract => vm._sub(a, b),
        B::Multiply => vm._mul(a, b),
        B::MatrixMultiply => vm._matmul(a, b),
        B::TrueDivide => vm._truediv(a, b),
        B::FloorDivide => vm._floordiv(a, b),
        B::Remainder => vm._mod(a, b),
        B::Power => vm._pow(a, b, vm.ctx.none.as_object()),
        B::Lshift => vm._lshift(a, b),
        B::Rshift => vm._rshift(a, b),
        B::And => vm._and(a, b),
        B::Or => vm._or(a, b),
        B::Xor => vm._xor(a, b),
        B::InplaceAdd => vm._iadd(a, b),
        B::InplaceSubtract => vm._isub(a, b),
        B::InplaceMultiply => vm._imul(a, b),
        B::InplaceMatrixMultiply => vm._imatmul(a, b),
        B::InplaceTrueDivide => vm._itruediv(a, b),
        B::InplaceFloorDivide => vm._ifloordiv(a, b),
        B::InplaceRemainder => vm._imod(a, b),
        B::InplacePower => vm._ipow(a, b, vm.ctx.none.as_object()),
        B::InplaceLshift => vm._ilshift(a, b),
        B::InplaceRshift => vm._irshift(a, b),
        B::InplaceAnd => vm._iand(a, b),
        B::InplaceOr => vm._ior(a, b),
        B::InplaceXor => vm._ixor(a, b),
        B::Subscr => a.get_item(&**b, vm),
    }
}

pub(super) fn is_inplace(op: BinaryOperator) -> bool {
    (op as u8) >= (BinaryOperator::InplaceAdd as u8) && op != BinaryOperator::Subscr
}

pub(super) fn not_inplace(op: BinaryOperator) -> BinaryOperator {
    use BinaryOperator as B;
    match op {
        B::InplaceAdd => B::Add,
        B::InplaceSubtract => B::Subtract,
        B::InplaceMultiply => B::Multiply,
        B::InplaceMatrixMultiply => B::MatrixMultiply,
        B::InplaceTrueDivide => B::TrueDivide,
        B::InplaceFloorDivide => B::FloorDivide,
        B::InplaceRemainder => B::Remainder,
        B::InplacePower => B::Power,
        B::InplaceLshift => B::Lshift,
        B::InplaceRshift => B::Rshift,
        B::InplaceAnd => B::And,
        B::InplaceOr => B::Or,
        B::InplaceXor => B::Xor,
        other => other,
    }
}

impl State<'_> {
    /// The result of native code run on fakes or plain values. Made from fakes, a tensor
    /// must be a recorded fake, and anything else is refused (it would read a fake's zeros).
    pub fn native_result(&mut self, r: PyResult, from_fakes: bool, what: &str) -> SimResult<Var> {
        let vm = self.vm;
        let r = r.map_err(|e| {
            let msg = e
                .as_object()
                .str(vm)
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Unsupported::new(
                Kind::Raises,
                format!(
                    "{what} raises {}: {msg} (it raises again when run)",
                    e.class().name()
                ),
            )
        })?;
        self.wrap_result(r, from_fakes, what)
    }

    fn wrap_result(&mut self, r: PyObjectRef, from_fakes: bool, what: &str) -> SimResult<Var> {
        let vm = self.vm;
        if let Some(t) = r.downcast_ref::<PyTensor>() {
            if self.value_of(t).is_some() {
                let t = r.downcast::<PyTensor>().expect("tensor");
                self.keep_alive(&t);
                return Ok(Var::Tensor(t));
            }
            if from_fakes {
                return unsupported(
                    Kind::Value,
                    format!("{what} computes a tensor outside the op registry (not traceable yet)"),
                );
            }
            return Ok(Var::Obj(r));
        }
        if r.class().is(vm.ctx.types.tuple_type) {
            let items = r
                .downcast_ref::<PyTuple>()
                .expect("tuple")
                .as_slice()
                .to_vec();
            if items.iter().any(|i| i.downcast_ref::<PyTensor>().is_some()) {
                let vars = items
                    .into_iter()
                    .map(|i| self.wrap_result(i, from_fakes, what))
                    .collect::<SimResult<Vec<_>>>()?;
                return Ok(Var::tuple(vars));
            }
        }
        if !from_fakes && r.class().is(vm.ctx.types.list_type) {
            // A new list (`sorted`, `str.split`): a list made during the simulation.
            let items = r
                .downcast_ref::<rustpython_vm::builtins::PyList>()
                .expect("list")
                .borrow_vec()
                .to_vec();
            return Ok(Var::list(items.into_iter().map(Var::Obj).collect()));
        }
        // A plain value computed from fakes (not from their dtype or shape: those calls pass
        // `from_fakes = false`) would be read from made-up data: `item()`, `allclose`...
        if from_fakes && is_plain(&r, vm) && !vm.is_none(&r) {
            return unsupported(
                Kind::DataDependent,
                format!("{what} reads the values of a traced tensor (data-dependent)"),
            );
        }
        if from_fakes && !is_plain(&r, vm) && r.downcast_ref::<crate::tensor::PyDType>().is_none() {
            return unsupported(
                Kind::Value,
                format!(
                    "{what} gives a {} made from a traced tensor",
                    r.class().name()
                ),
            );
        }
        Ok(Var::Obj(r))
    }

    /// A plain value to compute with.
    pub fn plain_obj(&mut self, v: &Var, what: &str) -> SimResult<PyObjectRef> {
        // A set of the simulation's, read (by comparisons, `sorted`, a plain method).
        if let Var::Set(s) = v {
            if self.holds_identities(s) {
                return unsupported(
                    Kind::Value,
                    "a set holding objects of the caller's, read as a plain value",
                );
            }
            return Ok(s.clone());
        }
        // What native code would iterate (`sorted(d.keys())`, `any(g)`): its items, as a
        // list of plain values.
        if matches!(
            v,
            Var::View(..)
                | Var::CallerView(_)
                | Var::Iter(_)
                | Var::Stepper(_)
                | Var::DictIter(_)
                | Var::Gen(_)
        ) {
            let items = self.items(v)?;
            let objs = items
                .iter()
                .map(|i| self.plain_obj(i, what))
                .collect::<SimResult<Vec<_>>>()?;
            return Ok(self.vm.ctx.new_list(objs).into());
        }
        let o = self.obj(v)?;
        // A list of plain values made here, or the copy `obj` makes of a caller's (its items
        // guarded): native code may read it.
        let fresh_plain_list = matches!(v, Var::List(_) | Var::Lazy(..))
            && o.downcast_ref::<rustpython_vm::builtins::PyList>()
                .is_some_and(|l| l.borrow_vec().iter().all(|x| is_plain(x, self.vm)));
        // So is the copy `obj` makes of a deque made here, of plain values.
        let fresh_plain_deque = matches!(v, Var::Deque(_)) && vm_iter_plain(&o, self.vm);
        // And the copy it makes of a caller's set (`caller_sets`).
        let fresh_set = matches!(v, Var::Lazy(..)) && set_elements(&o, self.vm).is_some();
        if !is_plain(&o, self.vm) && !fresh_plain_list && !fresh_plain_deque && !fresh_set {
            return unsupported(Kind::Value, format!("{what} of a {}", o.class().name()));
        }
        Ok(o)
    }

    pub fn binary(&mut self, op: BinaryOperator, a: &Var, b: &Var) -> SimResult<Var> {
        crate::translate::nesting::stack_left()?;
        let vm = self.vm;
        if let Some(n) = self.size_binary(op, a, b)? {
            return Ok(n);
        }
        if let Some(n) = self.size_float_binary(op, a, b)? {
            return Ok(n);
        }
        if op == BinaryOperator::Subscr
            && let Some(r) = self.index_by_number_lists(a, b)?
        {
            return Ok(r);
        }
        if op == BinaryOperator::Subscr
            && let Some(r) = self.symbolic_getitem(a, b)?
        {
            return Ok(r);
        }
        if op == BinaryOperator::Subscr
            && let Some(r) = self.mixed_symbolic_getitem(a, b)?
        {
            return Ok(r);
        }
        if let Some(n) = self.deferred_binary(op, a, b)? {
            return Ok(n);
        }
        if let Some(r) = self.deferred_tensor_operand(op, a, b)? {
            return Ok(r);
        }
        if let Some(r) = self.user_binary(op, a, b)? {
            return Ok(r);
        }
        if let Some(r) = self.enum_operands(op, a, b)? {
            return Ok(r);
        }
        // The caller's list read at an index that changes per call, as the replacement reads it.
        if op == BinaryOperator::Subscr
            && let Var::Lazy(o, source) = a
            && let Some(v) = self.item_at_changing_index(o, source, b)?
        {
            return Ok(v);
        }
        // Any other operator uses a deferred number's value.
        let (a, b) = (&self.forced(a)?, &self.forced(b)?);
        if op == BinaryOperator::Subscr {
            return self.subscript(a, b);
        }
        if let Some(r) = self.set_binary(op, a, b)? {
            return Ok(r);
        }
        if let Some(r) = self.sequence_binary(op, a, b)? {
            return Ok(r);
        }
        if let Some(r) = self.tstr_binary(op, a, b)? {
            return Ok(r);
        }
        if is_inplace(op) && self.is_tensor(a) {
            return self.tensor_inplace(op, a, b);
        }
        // Anything else updated in place by a tensor is a number, which has no in-place
        // operator: `grad += t` is `grad + t`, the tensor's reflected operator (the number
        // may reach the graph as an input of its own, a tensor, which must not be updated).
        let number = |v: &Var| match v {
            Var::Obj(o) | Var::Lazy(o, _) => {
                let t = &vm.ctx.types;
                [t.int_type, t.float_type, t.bool_type]
                    .iter()
                    .any(|k| o.class().is(*k))
            }
            _ => false,
        };
        let op = if is_inplace(op) && number(a) {
            not_inplace(op)
        } else {
            op
        };
        let tensors = self.is_tensor(a) || self.is_tensor(b);
        let (x, y) = self.operands(Some(op), a, b, tensors)?;
        if !tensors
            && not_inplace(op) == BinaryOperator::Or
            && union_operand(&x, vm)
            && union_operand(&y, vm)
        {
            // `int | None`: `type`'s own `__or__` makes the union; no user code runs.
            return self.native_result(binary_vm(BinaryOperator::Or, &x, &y, vm), false, "a union");
        }
        if !tensors && (!is_plain(&x, vm) || !is_plain(&y, vm)) {
            return unsupported(
                Kind::Value,
                format!(
                    "operator {op:?} on {} and {}",
                    x.class().name(),
                    y.class().name()
                ),
            );
        }
        if tensors && !(operand_ok(&x, vm) && operand_ok(&y, vm)) {
            return unsupported(
                Kind::Value,
                format!(
                    "operator {op:?} on {} and {}",
                    x.class().name(),
                    y.class().name()
                ),
            );
        }
        if !tensors && is_inplace(op) {
            // Plain values are immutable: `a op= b` is `a op b`.
            return self.native_result(
                binary_vm(not_inplace(op), &x, &y, vm),
                false,
                "an operator",
            );
        }
        // A tensor made here from constants gives a constant (computed now, as constant
        // folding would); one from a graph value must come back recorded.
        let fakes = self.is_fake(a) || self.is_fake(b);
        self.native_result(binary_vm(op, &x, &y, vm), fakes, "an operator")
    }

    /// The objects an operator computes with. Next to a traced tensor, a number read from
    /// the frame may be a graph input rather than a constant guarded by value (see
    /// `Specialization::number_is_input`): a learning rate that changes per call then
    /// changes no graph.
    fn operands(
        &mut self,
        op: Option<BinaryOperator>,
        a: &Var,
        b: &Var,
        tensors: bool,
    ) -> SimResult<(PyObjectRef, PyObjectRef)> {
        if tensors {
            if let Some(n) = self.number_operand(op, a, b)? {
                return Ok((n, self.obj(b)?));
            }
            if let Some(n) = self.number_operand(op, b, a)? {
                return Ok((self.obj(a)?, n));
            }
        }
        Ok((self.obj(a)?, self.obj(b)?))
    }

    /// `a op= b` on a tensor: computed out of place, then the result takes the place of `a`'s
    /// data, as the eager in-place update does (on the caller's tensor, written back after
    /// the graph: `input_writes`).
    fn tensor_inplace(&mut self, op: BinaryOperator, a: &Var, b: &Var) -> SimResult<Var> {
        let target = self.obj(a)?;
        let Ok(target) = target.downcast::<PyTensor>() else {
            return unsupported(Kind::Internal, "in-place update of a tensor");
        };
        // A tensor made here from constants (`m = st.zeros(T, T); m += 1.0`): a graph
        // constant from now on, so that its update is recorded (and rolled back with a failed
        // inline call) like any other.
        if self.value_of(&target).is_none() {
            self.before_update(&target)?;
        }
        let a = &Var::Tensor(target.clone());
        let result = self.binary(not_inplace(op), a, b)?;
        self.take_result(&target, result)?;
        Ok(a.clone())
    }

    pub fn compare(&mut self, op: ComparisonOperator, a: &Var, b: &Var) -> SimResult<Var> {
        let vm = self.vm;
        if let Some(r) = self.user_compare(op, a, b)? {
            return Ok(r);
        }
        let is_container = |v: &Var| match v {
            Var::List(_) => true,
            Var::Lazy(o, _) => {
                o.class().is(vm.ctx.types.list_type) || set_elements(o, vm).is_some()
            }
            _ => false,
        };
        // Sets (made here, or a caller's read on a copy), and lists (of plain values: a list
        // made here, or a caller's as the simulation sees it), compare as native code
        // compares them.
        if matches!(a, Var::Set(_))
            || matches!(b, Var::Set(_))
            || is_container(a)
            || is_container(b)
        {
            let (x, y) = (
                self.plain_obj(a, "a comparison")?,
                self.plain_obj(b, "a comparison")?,
            );
            let r = x.rich_compare(y, op.into(), vm);
            return self.native_result(r, false, "a comparison of containers");
        }
        let tensors = self.is_tensor(a) || self.is_tensor(b);
        if !tensors && let Some(r) = self.sequence_compare(op, a, b)? {
            return Ok(r);
        }
        if !tensors && let Some(r) = self.size_compare(op.into(), a, b)? {
            return Ok(Var::Obj(vm.ctx.new_bool(r).into()));
        }
        if !tensors && let Some(r) = self.number_condition(op.into(), a, b)? {
            return Ok(Var::Obj(vm.ctx.new_bool(r).into()));
        }
        if !tensors
            && matches!(op, ComparisonOperator::Equal | ComparisonOperator::NotEqual)
            && let Some(same) = self.identity_equality(a, b)?
        {
            let r = same == matches!(op, ComparisonOperator::Equal);
            return Ok(Var::Obj(vm.ctx.new_bool(r).into()));
        }
        let (a, b) = &self.compared_scalars(a, b)?;
        let (x, y) = self.operands(None, a, b, tensors)?;
        let ok = if tensors {
            operand_ok(&x, vm) && operand_ok(&y, vm)
        } else {
            let comparable = |o: &PyObjectRef| is_plain(o, vm) || int_compared(o, vm);
            comparable(&x) && comparable(&y)
        };
        if !ok {
            return unsupported(
                Kind::Value,
                format!(
                    "comparison of {} and {}",
                    x.class().name(),
                    y.class().name()
                ),
            );
        }
        let cmp: PyComparisonOp = op.into();
        let r = x.rich_compare(y, cmp, vm);
        let fakes = self.is_fake(a) || self.is_fake(b);
        self.native_result(r, fakes, "a comparison")
    }

    pub fn truth(&mut self, v: &Var) -> SimResult<bool> {
        let vm = self.vm;
        match v {
            Var::Tensor(_) => unsupported(
                Kind::DataDependent,
                "a branch on a tensor's value (data-dependent control flow)",
            ),
            Var::Tuple(t) => Ok(!t.is_empty()),
            Var::List(l) => Ok(!l.borrow().is_empty()),
            Var::Deque(d) => Ok(!d.borrow().items.is_empty()),
            Var::Dict(d) | Var::View(d, _) => Ok(!d.borrow().is_empty()),
            Var::SymSlice(_)
            | Var::Func(_)
            | Var::Method(..)
            | Var::Iter(_)
            | Var::Stepper(_)
            | Var::Partial(_)
            | Var::Gen(_)
            | Var::DictIter(_)
            | Var::TStr(_)
            | Var::Bound(_) => Ok(true),
            Var::NamedTuple(_, items) => Ok(!items.is_empty()),
            Var::CallerView(_) => Ok(!self.items(v)?.is_empty()),
            Var::Set(s) => s
                .length(vm)
                .map(|n| n > 0)
                .map_err(|_| Unsupported::new(Kind::Internal, "len of a set")),
            Var::Object(_) => {
                let t = self.instance_truth(v)?.expect("an instance");
                self.truth(&t)
            }
            Var::Num(n) => {
                if let Some(r) = self.number_truth(v)? {
                    return Ok(r);
                }
                let o = self.force_number(n)?;
                self.truth(&Var::Obj(o))
            }
            Var::Text(parts) => {
                let o = self.forced_text(parts)?;
                self.truth(&Var::Obj(o))
            }
            Var::Lazy(o, source) => {
                if o.downcast_ref::<PyTensor>().is_some() {
                    return unsupported(
                        Kind::DataDependent,
                        "a branch on a tensor's value (data-dependent control flow)",
                    );
                }
                if let Some(t) = self.instance_truth(v)? {
                    return self.truth(&t);
                }
                if let Some(items) = self.lazy_items(o, source)? {
                    return Ok(!items.is_empty());
                }
                if is_dict(o, vm) {
                    return self.caller_dict_truth(o, source);
                }
                if let Some(r) = self.number_truth(v)? {
                    return Ok(r);
                }
                let o = self.obj(v)?;
                o.try_to_bool(vm)
                    .map_err(|_| Unsupported::new(Kind::Raises, "truth value raises"))
            }
            // A tensor the call made from constants (`(ones_like(x) > 0).all()`): its value
            // is the same on every run the guards admit, and so is its truth.
            Var::Obj(o)
                if o.downcast_ref::<PyTensor>()
                    .is_some_and(|t| t.read().unwatched_shape().iter().product::<usize>() == 1) =>
            {
                o.try_to_bool(vm)
                    .map_err(|_| Unsupported::new(Kind::Raises, "truth value raises"))
            }
            Var::Obj(o) => {
                if !is_plain(o, vm)
                    && o.downcast_ref::<PyModule>().is_none()
                    && o.downcast_ref::<crate::tensor::PyDType>().is_none()
                {
                    return unsupported(
                        Kind::Value,
                        format!("the truth of a {}", o.class().name()),
                    );
                }
                o.try_to_bool(vm)
                    .map_err(|_| Unsupported::new(Kind::Raises, "truth value raises"))
            }
            Var::Null | Var::Cell(_) => unsupported(Kind::Value, "truth of an internal value"),
        }
    }

    pub fn contains(&mut self, haystack: &Var, needle: &Var) -> SimResult<bool> {
        let vm = self.vm;
        if let Some(r) = self.call_dunder(haystack, "__contains__", vec![needle.clone()])? {
            return self.truth(&r);
        }
        if let Var::Set(s) = haystack {
            let n = self.set_element(Some(s), needle)?;
            return vm
                ._contains(s, &n)
                .map_err(|_| Unsupported::new(Kind::Raises, "an unhashable element (TypeError)"));
        }
        if let Var::Lazy(h, _) = haystack
            && h.class().is(vm.ctx.types.frozenset_type)
            && let Some(n) = self.exact_class(needle)?
        {
            // A class looked up in the caller's frozenset (`type(obj) in _ATOMIC_TYPES`): the
            // set cannot change, and such a class hashes and compares by identity.
            self.obj(haystack)?;
            return vm
                ._contains(h, &n)
                .map_err(|_| Unsupported::new(Kind::Raises, "a membership test raises"));
        }
        if let Some(found) = self.caller_set_contains(haystack, needle)? {
            return Ok(found);
        }
        if let Var::Lazy(o, source) = haystack
            && is_dict(o, vm)
        {
            let k = self.caller_key(needle, "a membership test")?;
            return Ok(self.caller_dict_read(o, source, &k)?.is_some());
        }
        if let Some(found) = self.deferred_membership(haystack, needle)? {
            return Ok(found);
        }
        let n = self.plain_obj(needle, "a membership test")?;
        match haystack {
            // As Python compares keys and items: identity first, then equality.
            Var::Dict(d) | Var::View(d, ViewKind::Keys) => Ok(d
                .borrow()
                .iter()
                .any(|(k, _)| k.is(&n) || vm.bool_eq(k, &n).unwrap_or(false))),
            // A string or bytes: a substring test, as the VM computes it.
            Var::Obj(o) | Var::Lazy(o, _)
                if o.downcast_ref::<PyStr>().is_some() || o.downcast_ref::<PyBytes>().is_some() =>
            {
                let h = self.plain_obj(haystack, "a membership test")?;
                vm._contains(&h, &n).map_err(|e| {
                    Unsupported::new(
                        Kind::Raises,
                        format!("a membership test raises {}", e.class().name()),
                    )
                })
            }
            // An iterator is read only up to the first item found, as Python reads it: what
            // follows is left for the next reader.
            Var::Iter(_) | Var::Stepper(_) | Var::DictIter(_) | Var::Gen(_) => {
                while let Some(i) = self.next_item(haystack)? {
                    if self.member_equals(&i, &n)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            _ => {
                for i in &self.items(haystack)? {
                    if self.member_equals(i, &n)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }
}

impl State<'_> {
    /// An item against the needle of a membership test: identity first, then equality.
    fn member_equals(&mut self, item: &Var, needle: &PyObjectRef) -> SimResult<bool> {
        let o = self.plain_obj(item, "a membership test")?;
        Ok(o.is(needle)
            || self
                .vm
                .bool_eq(&o, needle)
                .map_err(|_| Unsupported::new(Kind::Raises, "comparison raises"))?)
    }

    /// `n in items` for a deferred number `n` (`self.epoch in self.milestones`) and a tuple
    /// or list of numbers: each item's equality tested in turn as Python tests it, each
    /// outcome guarded (`number_condition`), not the number's value. A number computed in the
    /// call is never one of the items, so identity finds nothing equality would not.
    fn deferred_membership(&mut self, haystack: &Var, needle: &Var) -> SimResult<Option<bool>> {
        let vm = self.vm;
        if !matches!(needle, Var::Num(_)) {
            return Ok(None);
        }
        let sequence = match haystack {
            Var::Tuple(_) | Var::List(_) => true,
            Var::Obj(o) | Var::Lazy(o, _) => {
                o.class().is(vm.ctx.types.tuple_type) || o.class().is(vm.ctx.types.list_type)
            }
            _ => false,
        };
        if !sequence {
            return Ok(None);
        }
        for item in self.items(haystack)? {
            match self.number_condition(PyComparisonOp::Eq, needle, &item)? {
                Some(true) => return Ok(Some(true)),
                Some(false) => {}
                None => return Ok(None),
            }
        }
        Ok(Some(false))
    }

    /// `v` when it is a class whose metaclass is exactly `type` (hashed and compared by
    /// identity), relied upon.
    fn exact_class(&mut self, v: &Var) -> SimResult<Option<PyObjectRef>> {
        let vm = self.vm;
        let is_class = |o: &PyObjectRef| {
            o.downcast_ref::<rustpython_vm::builtins::PyType>()
                .is_some()
                && o.class().is(vm.ctx.types.type_type)
        };
        match v {
            Var::Obj(o) | Var::Lazy(o, _) if is_class(o) => Ok(Some(self.obj(v)?)),
            _ => Ok(None),
        }
    }
}

/// Python numbers, tensors and plain sequences: what a tensor operator accepts without
/// calling user code.
fn operand_ok(x: &PyObjectRef, vm: &VirtualMachine) -> bool {
    x.downcast_ref::<PyTensor>().is_some()
        || is_plain(x, vm)
        || x.class().is(vm.ctx.types.list_type)
}

/// An operand of a type union (`int | None`) whose `|` is `type`'s own: None, a union, or a
/// class whose metaclass is exactly `type` (another metaclass may define `__or__`).
fn union_operand(o: &PyObjectRef, vm: &VirtualMachine) -> bool {
    vm.is_none(o)
        || o.class().is(vm.ctx.types.union_type)
        || (o
            .downcast_ref::<rustpython_vm::builtins::PyType>()
            .is_some()
            && o.class().is(vm.ctx.types.type_type))
}

/// An instance of a subclass of `int` that compares as `int` does (an `IntEnum`'s member,
/// `annotationlib.Format.VALUE`): its comparisons are `int`'s native ones. The caller's such
/// object is guarded by identity (`rely_leaf`), so its value is fixed.
fn int_compared(o: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> bool {
    let (c, int) = (o.class(), vm.ctx.types.int_type);
    c.fast_issubclass(int)
        && ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"]
            .iter()
            .all(|n| {
                let n = vm.ctx.intern_str(*n);
                match (c.get_attr(n), int.get_attr(n)) {
                    (Some(a), Some(b)) => a.is(&b),
                    _ => false,
                }
            })
}

/// Whether the items of `o`, an iterable the simulation made, are all plain values.
fn vm_iter_plain(o: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> bool {
    vm.extract_elements_with(o, Ok)
        .is_ok_and(|items: Vec<PyObjectRef>| items.iter().all(|x| is_plain(x, vm)))
}
