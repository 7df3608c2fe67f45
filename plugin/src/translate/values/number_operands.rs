//! Numbers next to tensors in `+ - * /`: a number that may change per call (a deferred
//! one, or one read from the frame) becomes a 0-d input of the graph, of the type eager
//! arithmetic converts it to, beside a traced tensor or a tensor made from constants; so a
//! learning rate or a counter that scales a tensor changes no graph.

use rustpython_vm::builtins::{PyFloat, PyInt};
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::numbers::NumExpr;
use crate::translate::values::operators::is_inplace;

impl State<'_> {
    /// `a op b` for a deferred number and a traced tensor (`x * self.t` after
    /// `self.t += 1`): when the numbers it is computed from may change per call (see
    /// `Specialization::number_is_input`), the number is a graph input that the replacement
    /// computes on each call as the frame would, from the same values; so a counter that
    /// scales a tensor changes no graph. Only `+ - * /`, whose eager form converts the
    /// number to the tensor's float type before computing, as the graph's input does.
    pub(crate) fn deferred_tensor_operand(
        &mut self,
        op: BinaryOperator,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<Var>> {
        use crate::tensor::Scalar;
        use BinaryOperator as B;
        if !matches!(
            op,
            B::Add
                | B::Subtract
                | B::Multiply
                | B::TrueDivide
                | B::InplaceAdd
                | B::InplaceSubtract
                | B::InplaceMultiply
                | B::InplaceTrueDivide
        ) {
            return Ok(None);
        }
        // A tensor made from constants (`ones_like(x) * t`) computes in the graph too, so
        // that the number stays an input; updated in place it stays the constant it is.
        let (a, b) = (&self.sized(a)?, &self.sized(b)?);
        let operand = |s: &Self, t: &Var| s.is_fake(t) || (!is_inplace(op) && constant_tensor(t));
        let (n, other, number_first) = match (a, b) {
            (Var::Num(n), t) if operand(self, t) => (n.clone(), t, true),
            (t, Var::Num(n)) if operand(self, t) => (n.clone(), t, false),
            _ => return Ok(None),
        };
        let vm = self.vm;
        if n.has_size() && !self.is_fake(other) {
            return Ok(None);
        }
        if let NumExpr::Size(expr) = &n.expr {
            return self.size_tensor_operand(op, expr, &n.value, other, number_first);
        }
        if n.has_size() {
            return self.size_float_tensor_operand(op, &n, other, number_first);
        }
        if !self.varies_per_call(&n) {
            return Ok(None);
        }
        let float = |o: &PyObjectRef| o.class().is(vm.ctx.types.float_type);
        let scalar = if float(&n.value) {
            Scalar::Float(n.value.downcast_ref::<PyFloat>().expect("float").to_f64())
        } else {
            match n
                .value
                .downcast_ref::<PyInt>()
                .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
            {
                Some(i) => Scalar::Int(i),
                None => return Ok(None),
            }
        };
        let Some(tensor_dtype) = self.tensor_dtype(other) else {
            return Ok(None);
        };
        let dtype = crate::tensor::dtype::weak_scalar_dtype(scalar, tensor_dtype);
        let Some(source) = n.as_source() else {
            return Ok(None);
        };
        if !(dtype.is_float() || exact_int_op(op, dtype, &scalar)) {
            return Ok(None);
        }
        let fake = Var::Tensor(self.number_input(&n.value, &source, dtype)?);
        let (x, y) = if number_first {
            (fake, other.clone())
        } else {
            (other.clone(), fake)
        };
        self.binary(op, &x, &y).map(Some)
    }

    /// `v`, a number read from the frame, as a graph input next to the traced tensor `other`:
    /// a 0-d tensor of the type eager arithmetic converts it to (it is weakly typed), when
    /// that type is a float type (an int tensor's integer arithmetic stays specialized).
    pub(crate) fn number_operand(
        &mut self,
        op: Option<BinaryOperator>,
        v: &Var,
        other: &Var,
    ) -> SimResult<Option<PyObjectRef>> {
        use crate::tensor::Scalar;
        let vm = self.vm;
        let Var::Lazy(o, source) = v else {
            return Ok(None);
        };
        let scalar = if o.class().is(vm.ctx.types.float_type) {
            Scalar::Float(o.downcast_ref::<PyFloat>().expect("float").to_f64())
        } else if o.class().is(vm.ctx.types.int_type) {
            match o
                .downcast_ref::<PyInt>()
                .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
            {
                Some(i) => Scalar::Int(i),
                None => return Ok(None),
            }
        } else {
            return Ok(None);
        };
        if !(self.is_fake(other) || constant_tensor(other)) {
            return Ok(None);
        }
        let is_float = matches!(scalar, Scalar::Float(_));
        if !self.spec.number_is_input(source, is_float) {
            return Ok(None);
        }
        let Some(tensor_dtype) = self.tensor_dtype(other) else {
            return Ok(None);
        };
        let dtype = crate::tensor::dtype::weak_scalar_dtype(scalar, tensor_dtype);
        // A comparison (`op` None) of an int tensor with an int is exact in int64 too.
        let exact_int = match op {
            Some(op) => exact_int_op(op, dtype, &scalar),
            None => exact_int_op(BinaryOperator::Add, dtype, &scalar),
        };
        if !(dtype.is_float() || exact_int) {
            return Ok(None);
        }
        let (o, source) = (o.clone(), source.clone());
        Ok(Some(self.number_input(&o, &source, dtype)?.into()))
    }
}

/// Whether `v` is a tensor made during the call from constants (not a graph value).
fn constant_tensor(v: &Var) -> bool {
    matches!(v, Var::Obj(o) if o.downcast_ref::<crate::tensor::PyTensor>().is_some())
}

/// Whether `op` of an int64 tensor and the int `scalar` computes the same with the int as a
/// 0-d int64 input: `+ - *` (and comparisons), the int small enough that no conversion of
/// it differs (`scalar_input`'s bound).
fn exact_int_op(
    op: BinaryOperator,
    dtype: crate::tensor::DType,
    scalar: &crate::tensor::Scalar,
) -> bool {
    use BinaryOperator as B;
    dtype == crate::tensor::DType::Int64
        && matches!(scalar, crate::tensor::Scalar::Int(i) if i.unsigned_abs() <= 1 << 24)
        && matches!(
            op,
            B::Add
                | B::Subtract
                | B::Multiply
                | B::InplaceAdd
                | B::InplaceSubtract
                | B::InplaceMultiply
        )
}

/// The operator a native method of `Tensor` of one number is (`t.mul(n)` is `t * n`).
pub(crate) fn method_operator(
    method: &PyObjectRef,
    vm: &rustpython_vm::VirtualMachine,
) -> Option<BinaryOperator> {
    use rustpython_vm::class::StaticType;
    // No `Tensor` class before symtrace is imported: no method of it either.
    let class = crate::tensor::PyTensor::static_cell().get()?;
    let is = |name: &str| {
        class
            .get_attr(vm.ctx.intern_str(name))
            .is_some_and(|m| m.is(method))
    };
    [
        ("add", BinaryOperator::Add),
        ("sub", BinaryOperator::Subtract),
        ("subtract", BinaryOperator::Subtract),
        ("mul", BinaryOperator::Multiply),
        ("multiply", BinaryOperator::Multiply),
        ("div", BinaryOperator::TrueDivide),
        ("divide", BinaryOperator::TrueDivide),
        ("true_divide", BinaryOperator::TrueDivide),
    ]
    .into_iter()
    .find(|(name, _)| is(name))
    .map(|(_, op)| op)
}

impl State<'_> {
    /// `t.add(n)`, `t.sub(n)`, `t.mul(n)`, `t.div(n)` (and their long names) of a tensor
    /// and a number, without keywords (`alpha=`, `rounding_mode=`): the operator they are, so
    /// that a number that changes per call (`logits.div(temperature)`) is a graph input, as
    /// beside the operator (`None`: not such a call).
    pub(crate) fn tensor_method_operator(
        &mut self,
        method: &Var,
        owner: &Var,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        // The function form too (`st.add(x, n)`: `symtrace.add` is `Tensor.add`), read from
        // a module, pinned by identity once it is one of them.
        let (Var::Obj(function) | Var::Lazy(function, _)) = method else {
            return Ok(None);
        };
        let (Some(op), [arg], true) = (method_operator(function, self.vm), args, kwargs.is_empty())
        else {
            return Ok(None);
        };
        let t = &self.vm.ctx.types;
        let number = match arg {
            Var::Num(_) => true,
            Var::Lazy(o, _) => o.class().is(t.float_type) || o.class().is(t.int_type),
            _ => false,
        };
        if !number || !self.is_tensor(owner) {
            return Ok(None);
        }
        self.obj(method)?;
        self.binary(op, owner, arg).map(Some)
    }
}
