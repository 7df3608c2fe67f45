//! Operators, truth, identity, membership, iteration, subscripts and attributes over symbolic
//! values. Plain values (see `var::is_plain`) are computed at trace time by the VM itself;
//! tensors go through their Python methods on fakes, so each op is recorded once by the
//! registry; containers made during the simulation are handled here.

use std::rc::Rc;

use rustpython_vm::builtins::{
    PyDict, PyGetSet, PyInt, PyList, PyModule, PyNone, PySlice, PyStr, PyTuple,
};
use rustpython_vm::bytecode::{BinaryOperator, ComparisonOperator};
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload, PyResult, VirtualMachine};

use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::side_effects::Effect;
use crate::translate::state::{SimResult, State, Unsupported, is_dict, unsupported};
use crate::translate::values::{Var, is_plain};

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

fn binary_vm(
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

fn is_inplace(op: BinaryOperator) -> bool {
    (op as u8) >= (BinaryOperator::InplaceAdd as u8) && op != BinaryOperator::Subscr
}

fn not_inplace(op: BinaryOperator) -> BinaryOperator {
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
        let o = self.obj(v)?;
        let fresh_plain_list = matches!(v, Var::List(_))
            && o.downcast_ref::<rustpython_vm::builtins::PyList>()
                .is_some_and(|l| l.borrow_vec().iter().all(|x| is_plain(x, self.vm)));
        if !is_plain(&o, self.vm) && !fresh_plain_list {
            return unsupported(Kind::Value, format!("{what} of a {}", o.class().name()));
        }
        Ok(o)
    }

    /// A dictionary key: a plain value.
    pub fn key(&mut self, v: &Var) -> SimResult<PyObjectRef> {
        self.plain_obj(v, "a dictionary key")
    }

    pub fn binary(&mut self, op: BinaryOperator, a: &Var, b: &Var) -> SimResult<Var> {
        let vm = self.vm;
        if op == BinaryOperator::Subscr {
            return self.subscript(a, b);
        }
        // Sequences made during the simulation.
        match (not_inplace(op), a, b) {
            (BinaryOperator::Add, Var::List(x), Var::List(y)) if !is_inplace(op) => {
                let mut items = x.borrow().clone();
                items.extend(y.borrow().iter().cloned());
                return Ok(Var::list(items));
            }
            (BinaryOperator::Add, Var::List(x), _) if is_inplace(op) => {
                let items = self.items(b)?;
                x.borrow_mut().extend(items);
                return Ok(a.clone());
            }
            (BinaryOperator::Add, Var::Tuple(_), _) | (BinaryOperator::Add, _, Var::Tuple(_))
                if !self.is_tensor(a) && !self.is_tensor(b) =>
            {
                let mut items = self.items(a)?;
                items.extend(self.items(b)?);
                return Ok(Var::tuple(items));
            }
            _ => {}
        }
        if is_inplace(op) && self.is_tensor(a) {
            return self.tensor_inplace(op, a, b);
        }
        let tensors = self.is_tensor(a) || self.is_tensor(b);
        let (x, y) = (self.obj(a)?, self.obj(b)?);
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
        self.native_result(binary_vm(op, &x, &y, vm), tensors, "an operator")
    }

    /// `a op= b` on a tensor: computed out of place, then the result takes the place of `a`'s
    /// data, as the eager in-place update does. An input's data belongs to the caller: that
    /// would be a side effect.
    fn tensor_inplace(&mut self, op: BinaryOperator, a: &Var, b: &Var) -> SimResult<Var> {
        let target = match a {
            Var::Tensor(t) => t.clone(),
            _ => {
                return unsupported(
                    Kind::SideEffect,
                    "an in-place update of a tensor of the caller (a side effect)",
                );
            }
        };
        if matches!(self.value_of(&target), Some(crate::graph::Value::Input(_))) {
            return unsupported(
                Kind::SideEffect,
                "an in-place update of an input tensor (a side effect)",
            );
        }
        let result = self.binary(not_inplace(op), a, b)?;
        let Var::Tensor(r) = result else {
            return unsupported(Kind::Internal, "in-place update");
        };
        let (old_meta, new_meta) = {
            let (x, y) = (target.read(), r.read());
            (crate::tensor::Meta::of(&x), crate::tensor::Meta::of(&y))
        };
        if old_meta != new_meta {
            return unsupported(
                Kind::Raises,
                "an in-place update that changes the dtype or shape (it casts or raises)",
            );
        }
        self.keep_alive(&r);
        let new = std::mem::replace(
            &mut *r.write(),
            crate::tensor::TensorData::Bool(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[]), false)),
        );
        let old = std::mem::replace(&mut *target.write(), new);
        crate::graph::recorder::with(|rec| rec.keep(old));
        Ok(a.clone())
    }

    fn subscript(&mut self, a: &Var, b: &Var) -> SimResult<Var> {
        let vm = self.vm;
        match a {
            Var::Tuple(_) | Var::List(_) => {
                let items = self.items(a)?;
                let key = self.plain_obj(b, "an index")?;
                index_items(&items, &key, matches!(a, Var::List(_)), vm)
            }
            Var::Dict(d) => {
                let key = self.key(b)?;
                let found = d
                    .borrow()
                    .iter()
                    .find(|(k, _)| vm.bool_eq(k, &key).unwrap_or(false))
                    .map(|(_, v)| v.clone());
                found.ok_or_else(|| Unsupported::new(Kind::Raises, "a missing key (KeyError)"))
            }
            Var::Lazy(o, source) if is_dict(o, vm) => {
                self.effects.check_readable(o)?;
                let key = self.plain_obj(b, "a key")?;
                let Some(k) = key.downcast_ref::<PyStr>() else {
                    return unsupported(Kind::Value, "a dictionary read with a non-string key");
                };
                let k = k.to_string_lossy().into_owned();
                self.guard(source, Check::TypeIs(o.class().to_owned()));
                match o
                    .downcast_ref::<PyDict>()
                    .expect("dict")
                    .get_item_opt(k.as_str(), vm)
                    .ok()
                    .flatten()
                {
                    Some(v) => Ok(Var::Lazy(v, source.clone().key(&k))),
                    None => unsupported(
                        Kind::Raises,
                        format!("{source} has no key {k:?} (KeyError)"),
                    ),
                }
            }
            Var::Lazy(o, source)
                if o.class().is(vm.ctx.types.tuple_type)
                    || o.class().is(vm.ctx.types.list_type) =>
            {
                let items = self.lazy_items(o, source)?.expect("a sequence");
                let key = self.plain_obj(b, "an index")?;
                index_items(&items, &key, o.class().is(vm.ctx.types.list_type), vm)
            }
            _ => {
                let tensors = self.is_tensor(a) || self.is_tensor(b);
                let (x, y) = (self.obj(a)?, self.obj(b)?);
                if !tensors && (!is_plain(&x, vm) || !is_plain(&y, vm)) {
                    return unsupported(
                        Kind::Value,
                        format!("subscript of a {}", x.class().name()),
                    );
                }
                self.native_result(x.get_item(&*y, vm), tensors, "indexing")
            }
        }
    }

    pub fn set_item(&mut self, container: &Var, key: &Var, value: Var) -> SimResult<()> {
        let vm = self.vm;
        match container {
            Var::List(l) => {
                let k = self.plain_obj(key, "an index")?;
                let mut l = l.borrow_mut();
                let j = list_position(&k, l.len(), vm)?;
                l[j] = value;
                Ok(())
            }
            Var::Dict(d) => {
                let k = self.key(key)?;
                crate::translate::values::dict_insert(&mut d.borrow_mut(), k, value, vm)
            }
            Var::Lazy(o, source) if is_dict(o, vm) || o.class().is(vm.ctx.types.list_type) => {
                // Replayed as written; a list index is checked now, as the store would.
                let k = self.plain_obj(key, "a key")?;
                if k.downcast_ref::<PySlice>().is_some() && o.downcast_ref::<PyList>().is_some() {
                    // A slice store may change the length: replayed as written, it raises
                    // there if the value does not fit (an extended slice).
                    self.items(&value)?; // what the store reads, checked readable now
                } else if let Some(l) = o.downcast_ref::<PyList>() {
                    self.effects.check_len_readable(o)?;
                    let n = l.borrow_vec().len();
                    list_position(&k, n, vm)?;
                    self.guard(source, Check::Len(n));
                } else if !k.class().is(vm.ctx.types.str_type) {
                    return unsupported(
                        Kind::Value,
                        "a store into a dict of the caller with a key that is not a str",
                    );
                }
                self.guard(source, Check::TypeIs(o.class().to_owned()));
                self.effects.mutate(
                    o,
                    Effect::SetItem {
                        target: source.clone(),
                        key: Var::Obj(k),
                        value,
                    },
                );
                Ok(())
            }
            _ => unsupported(
                Kind::SideEffect,
                format!(
                    "item assignment into a {} (a side effect that is not replayed)",
                    container.kind()
                ),
            ),
        }
    }

    /// `slice(start, stop)` of plain values (STORE_SLICE's key).
    pub fn slice_of(&mut self, start: &Var, stop: &Var) -> SimResult<Var> {
        let vm = self.vm;
        let (start, stop) = (
            self.plain_obj(start, "a slice bound")?,
            self.plain_obj(stop, "a slice bound")?,
        );
        let s = vm
            .ctx
            .types
            .slice_type
            .as_object()
            .call((start, stop), vm)
            .map_err(|_| Unsupported::new(Kind::Raises, "slice() raises"))?;
        Ok(Var::Obj(s))
    }

    /// `del container[key]`: in a list or dict made during the simulation, done there; in one
    /// of the caller, a side effect replayed as written (an index out of range, or a missing
    /// key, raises then, at the same point among the effects as it would have).
    pub fn del_item(&mut self, container: &Var, key: &Var) -> SimResult<()> {
        let vm = self.vm;
        match container {
            Var::List(l) => {
                let k = self.plain_obj(key, "an index")?;
                let mut l = l.borrow_mut();
                let j = list_position(&k, l.len(), vm)?;
                l.remove(j);
                Ok(())
            }
            Var::Dict(d) => {
                let k = self.key(key)?;
                let mut d = d.borrow_mut();
                let at = d
                    .iter()
                    .position(|(k2, _)| vm.bool_eq(k2, &k).unwrap_or(false))
                    .ok_or_else(|| {
                        Unsupported::new(Kind::Raises, "del of a missing key (KeyError)")
                    })?;
                d.remove(at);
                Ok(())
            }
            Var::Lazy(o, source) if is_dict(o, vm) || o.class().is(vm.ctx.types.list_type) => {
                let k = self.plain_obj(key, "a key")?;
                // The length is not read: an index out of range raises when replayed.
                if o.downcast_ref::<PyList>().is_some() {
                    if k.downcast_ref::<PyInt>().is_none() && k.downcast_ref::<PySlice>().is_none()
                    {
                        return unsupported(
                            Kind::Value,
                            "a list index that is not an int or a slice",
                        );
                    }
                } else if !k.class().is(vm.ctx.types.str_type) {
                    return unsupported(
                        Kind::Value,
                        "a delete from a dict of the caller with a key that is not a str",
                    );
                }
                self.guard(source, Check::TypeIs(o.class().to_owned()));
                self.effects.mutate(
                    o,
                    Effect::DelItem {
                        target: source.clone(),
                        key: Var::Obj(k),
                    },
                );
                Ok(())
            }
            _ => unsupported(
                Kind::SideEffect,
                format!(
                    "item deletion from a {} (a side effect that is not replayed)",
                    container.kind()
                ),
            ),
        }
    }

    /// `del owner.name` on an object of the caller: a side effect replayed as written.
    pub fn del_attr(&mut self, owner: &Var, name: &str) -> SimResult<()> {
        let vm = self.vm;
        match owner {
            Var::Lazy(o, source)
                if is_user_instance(o, vm)
                    && crate::translate::side_effects::plain_attribute_store(o, name, vm) =>
            {
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

    pub fn compare(&mut self, op: ComparisonOperator, a: &Var, b: &Var) -> SimResult<Var> {
        let vm = self.vm;
        let tensors = self.is_tensor(a) || self.is_tensor(b);
        let (x, y) = (self.obj(a)?, self.obj(b)?);
        let ok = if tensors {
            operand_ok(&x, vm) && operand_ok(&y, vm)
        } else {
            is_plain(&x, vm) && is_plain(&y, vm)
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
        self.native_result(r, tensors, "a comparison")
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
            Var::Dict(d) => Ok(!d.borrow().is_empty()),
            Var::Func(_) | Var::Method(..) | Var::Iter(_) | Var::Gen(_) => Ok(true),
            Var::Lazy(o, source) => {
                if o.downcast_ref::<PyTensor>().is_some() {
                    return unsupported(
                        Kind::DataDependent,
                        "a branch on a tensor's value (data-dependent control flow)",
                    );
                }
                if let Some(items) = self.lazy_items(o, source)? {
                    return Ok(!items.is_empty());
                }
                if is_dict(o, vm) {
                    return unsupported(Kind::Value, "the truth of a dictionary argument");
                }
                let o = self.obj(v)?;
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

    pub fn is_none(&mut self, v: &Var) -> SimResult<bool> {
        match v {
            Var::Lazy(o, source) => {
                if o.downcast_ref::<PyNone>().is_some() {
                    self.guard(source, Check::IsNone);
                    Ok(true)
                } else {
                    self.guard(source, Check::TypeIs(o.class().to_owned()));
                    Ok(false)
                }
            }
            Var::Obj(o) => Ok(o.downcast_ref::<PyNone>().is_some()),
            _ => Ok(false),
        }
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
        // A bare `object()` (a sentinel, such as the marker of an unbound local after a split
        // loop) is no tensor, and no value of another type.
        let bare =
            |v: &Var| matches!(v, Var::Obj(o) if o.class().is(self.vm.ctx.types.object_type));
        if bare(a) || bare(b) {
            let (s, other) = if bare(a) { (a, b) } else { (b, a) };
            let Var::Obj(s) = s else { unreachable!() };
            match other {
                Var::Tensor(_) => return Ok(false),
                Var::Lazy(o, source) if !o.class().is(self.vm.ctx.types.object_type) => {
                    self.guard(source, Check::TypeIs(o.class().to_owned()));
                    return Ok(false);
                }
                Var::Lazy(o, source) if o.is(s) => {
                    self.guard(source, Check::Is(s.clone()));
                    return Ok(true);
                }
                _ => {}
            }
        }
        Ok(match (a, b) {
            (Var::Tensor(x), Var::Tensor(y)) => x.is(y),
            (Var::List(x), Var::List(y)) => Rc::ptr_eq(x, y),
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

    pub fn contains(&mut self, haystack: &Var, needle: &Var) -> SimResult<bool> {
        let vm = self.vm;
        let n = self.plain_obj(needle, "a membership test")?;
        match haystack {
            Var::Dict(d) => Ok(d
                .borrow()
                .iter()
                .any(|(k, _)| vm.bool_eq(k, &n).unwrap_or(false))),
            Var::Lazy(o, source) if is_dict(o, vm) => {
                self.effects.check_readable(o)?;
                let Some(k) = n.downcast_ref::<PyStr>() else {
                    return unsupported(Kind::Value, "a membership test with a non-string key");
                };
                let k = k.to_string_lossy().into_owned();
                let present = o
                    .downcast_ref::<PyDict>()
                    .expect("dict")
                    .get_item_opt(k.as_str(), vm)
                    .ok()
                    .flatten();
                self.guard(source, Check::TypeIs(o.class().to_owned()));
                match &present {
                    Some(v) => {
                        self.guard(&source.clone().key(&k), Check::TypeIs(v.class().to_owned()))
                    }
                    None => self.guard(&source.clone().key(&k), Check::Absent),
                }
                Ok(present.is_some())
            }
            _ => {
                let items = self.items(haystack)?;
                for i in &items {
                    let o = self.plain_obj(i, "a membership test")?;
                    if vm
                        .bool_eq(&o, &n)
                        .map_err(|_| Unsupported::new(Kind::Raises, "comparison raises"))?
                    {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }

    /// The items of an iterable, in order (for loops, unpacking, `*args`).
    pub fn items(&mut self, v: &Var) -> SimResult<Vec<Var>> {
        let vm = self.vm;
        match v {
            Var::Tuple(t) => Ok(t.to_vec()),
            Var::List(l) => Ok(l.borrow().clone()),
            Var::Dict(d) => Ok(d
                .borrow()
                .iter()
                .map(|(k, _)| Var::Obj(k.clone()))
                .collect()),
            Var::Iter(it) => Ok(it.borrow_mut().drain(..).collect()),
            Var::Gen(_) => {
                // Consumed whole (by list(), sum(), a starred call...), as it is when run.
                let mut items = Vec::new();
                while let Some(item) = self.next_item(v)? {
                    if items.len() == crate::translate::state::MAX_UNROLL {
                        return unsupported(
                            Kind::Limit,
                            format!(
                                "a generator of more than {} items",
                                crate::translate::state::MAX_UNROLL
                            ),
                        );
                    }
                    items.push(item);
                }
                Ok(items)
            }
            Var::Lazy(o, source) => {
                if let Some(items) = self.lazy_items(o, source)? {
                    return Ok(items);
                }
                if o.downcast_ref::<PyTensor>().is_some() {
                    return unsupported(
                        Kind::DataDependent,
                        "iteration over a tensor (not traceable yet)",
                    );
                }
                let o = self.plain_obj(v, "iteration")?;
                plain_items(&o, vm)
            }
            Var::Obj(o) => {
                if o.class().is(vm.ctx.types.range_type) || is_plain(o, vm) {
                    return plain_items(o, vm);
                }
                unsupported(
                    Kind::Value,
                    format!("iteration over a {}", o.class().name()),
                )
            }
            other => unsupported(Kind::Value, format!("iteration over a {}", other.kind())),
        }
    }

    /// The entries of a mapping (for `**kwargs` and dict updates).
    pub fn dict_entries(&mut self, v: &Var) -> SimResult<Vec<(PyObjectRef, Var)>> {
        let vm = self.vm;
        match v {
            Var::Dict(d) => Ok(d.borrow().clone()),
            Var::Lazy(o, source) if is_dict(o, vm) => {
                self.effects.check_readable(o)?;
                let d = o.downcast_ref::<PyDict>().expect("dict");
                self.guard(source, Check::TypeIs(o.class().to_owned()));
                self.guard(source, Check::Len(d.__len__()));
                let mut out = Vec::new();
                for (k, val) in d {
                    let Some(ks) = k.downcast_ref::<PyStr>() else {
                        return unsupported(Kind::Value, "a mapping with non-string keys");
                    };
                    let ks = ks.to_string_lossy().into_owned();
                    out.push((k.clone(), Var::Lazy(val, source.clone().key(&ks))));
                }
                Ok(out)
            }
            other => unsupported(Kind::Value, format!("a {} used as a mapping", other.kind())),
        }
    }

    /// `owner.name` in attribute form.
    pub fn attr_of(&mut self, owner: &Var, name: &str) -> SimResult<Var> {
        let vm = self.vm;
        match owner {
            Var::Lazy(o, source) if o.downcast_ref::<PyModule>().is_some() => {
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
                let class = PyTensor::class(&vm.ctx);
                match class.get_attr(vm.ctx.intern_str(name)) {
                    Some(a) if a.downcast_ref::<PyGetSet>().is_some() => {
                        Ok((self.attr_of(owner, name)?, Var::Null))
                    }
                    Some(a) => Ok((Var::Obj(a), owner.clone())),
                    None => unsupported(Kind::Raises, format!("Tensor has no attribute {name:?}")),
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

/// Python numbers, tensors and plain sequences: what a tensor operator accepts without
/// calling user code.
fn operand_ok(x: &PyObjectRef, vm: &VirtualMachine) -> bool {
    x.downcast_ref::<PyTensor>().is_some()
        || is_plain(x, vm)
        || x.class().is(vm.ctx.types.list_type)
}

/// The position an int index names in a sequence of `len` items (negative from the end).
fn list_position(key: &PyObjectRef, len: usize, vm: &VirtualMachine) -> SimResult<usize> {
    let i = key
        .downcast_ref::<PyInt>()
        .ok_or_else(|| Unsupported::new(Kind::Value, "an index that is not an int"))?;
    let i = i
        .try_to_primitive::<i64>(vm)
        .map_err(|_| Unsupported::new(Kind::Limit, "index too large"))?;
    let n = len as i64;
    let j = if i < 0 { i + n } else { i };
    if j < 0 || j >= n {
        return unsupported(Kind::Raises, "index out of range (IndexError)");
    }
    Ok(j as usize)
}

fn index_items(
    items: &[Var],
    key: &PyObjectRef,
    list: bool,
    vm: &VirtualMachine,
) -> SimResult<Var> {
    if key.downcast_ref::<PyInt>().is_some() {
        return Ok(items[list_position(key, items.len(), vm)?].clone());
    }
    if let Some(s) = key.downcast_ref::<PySlice>() {
        let idx = vm
            .ctx
            .new_list((0..items.len()).map(|i| vm.ctx.new_int(i).into()).collect());
        let picked = idx
            .as_object()
            .get_item(s.as_object(), vm)
            .map_err(|_| Unsupported::new(Kind::Raises, "bad slice"))?;
        let picked: Vec<usize> = vm
            .extract_elements_with(&picked, |o| o.try_index(vm)?.try_to_primitive::<usize>(vm))
            .map_err(|_| Unsupported::new(Kind::Raises, "bad slice"))?;
        let out: Vec<Var> = picked.into_iter().map(|i| items[i].clone()).collect();
        return Ok(if list {
            Var::list(out)
        } else {
            Var::tuple(out)
        });
    }
    unsupported(
        Kind::Value,
        format!("a sequence indexed by a {}", key.class().name()),
    )
}

/// The items of a range or a plain container. Its length is asked first (natively: these
/// types have no Python `__len__`), so that `range(10**9)` is refused before a billion
/// integers are made.
fn plain_items(o: &PyObjectRef, vm: &VirtualMachine) -> SimResult<Vec<Var>> {
    let too_long = || {
        unsupported(
            Kind::Limit,
            format!(
                "a loop of more than {} iterations",
                crate::translate::state::MAX_UNROLL
            ),
        )
    };
    match o.length(vm) {
        Ok(n) if n <= crate::translate::state::MAX_UNROLL => {}
        Ok(_) => return too_long(),
        Err(_) => {
            return unsupported(
                Kind::Value,
                format!("iteration over a {} of unknown length", o.class().name()),
            );
        }
    }
    let items: Vec<PyObjectRef> = vm.extract_elements_with(o, Ok).map_err(|_| {
        Unsupported::new(
            Kind::Value,
            format!("iteration over a {}", o.class().name()),
        )
    })?;
    if items.len() > crate::translate::state::MAX_UNROLL {
        return too_long();
    }
    Ok(items.into_iter().map(Var::Obj).collect())
}

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

impl crate::translate::source::Source {
    pub fn key(self, k: &str) -> crate::translate::source::Source {
        crate::translate::source::Source::Key(Box::new(self), k.to_owned())
    }
}
