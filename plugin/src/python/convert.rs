//! Python values to tensors and back: numbers, nested lists and tuples, dtypes, shapes, and the
//! operands of a tensor operator.

use rustpython_vm::builtins::{PyFloat, PyInt, PyList, PyTuple};
use rustpython_vm::common::lock::PyRwLockReadGuard;
use rustpython_vm::function::OptionalArg;
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyResult, VirtualMachine};

use crate::tensor::dtype::weak_scalar_dtype;
use crate::tensor::{DType, PyDType, PyTensor, Scalar, TensorData};

/// The dtype a `dtype=` argument names (`None` when absent or None).
pub(super) fn opt_dtype(
    obj: &OptionalArg<PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult<Option<DType>> {
    match obj {
        OptionalArg::Missing => Ok(None),
        OptionalArg::Present(o) if vm.is_none(o) => Ok(None),
        OptionalArg::Present(o) => match o.downcast_ref::<PyDType>() {
            Some(d) => Ok(Some(d.dtype)),
            None => Err(vm.new_type_error(format!(
                "dtype must be a symtrace dtype, not {}",
                o.class().name()
            ))),
        },
    }
}

// ---- Python values <-> tensors ----

pub(super) fn scalar_of(obj: &PyObject, vm: &VirtualMachine) -> PyResult<Option<Scalar>> {
    if obj.class().is(vm.ctx.types.bool_type) {
        return Ok(Some(Scalar::Bool(obj.is(&vm.ctx.true_value))));
    }
    if let Some(i) = obj.downcast_ref::<PyInt>() {
        let v: i64 = i
            .try_to_primitive(vm)
            .map_err(|_| vm.new_overflow_error("Python int too large for int64"))?;
        return Ok(Some(Scalar::Int(v)));
    }
    if let Some(f) = obj.downcast_ref::<PyFloat>() {
        return Ok(Some(Scalar::Float(f.to_f64())));
    }
    Ok(None)
}

/// torch's `device` argument: `None`, `"cpu"`, `"cpu:0"` or a `symtrace.device`, the CPU,
/// the one device symtrace computes on; any other is refused, as torch refuses a device it
/// was not built for.
pub(super) fn check_device(obj: &OptionalArg<PyObjectRef>, vm: &VirtualMachine) -> PyResult<()> {
    match obj {
        OptionalArg::Present(o) if !vm.is_none(o) && !super::device::names_cpu(o) => Err(vm
            .new_runtime_error(format!(
                "symtrace computes on the CPU only, not on {}",
                o.repr(vm)?.to_string_lossy()
            ))),
        _ => Ok(()),
    }
}

/// Nested lists/tuples of numbers (or tensors) → shape and elements.
fn flatten(
    obj: &PyObject,
    depth: usize,
    shape: &mut Vec<usize>,
    out: &mut Vec<Scalar>,
    vm: &VirtualMachine,
) -> PyResult<()> {
    if let Some(s) = scalar_of(obj, vm)? {
        if depth != shape.len() {
            return Err(vm.new_value_error(format!(
                "expected a sequence at depth {depth}, got a number"
            )));
        }
        out.push(s);
        return Ok(());
    }
    if let Some(t) = obj.downcast_ref::<PyTensor>() {
        let data = t.read();
        let sub = data.shape();
        if depth + sub.len() > shape.len() && depth == shape.len() && out.is_empty() {
            shape.extend_from_slice(sub);
        }
        if shape.len() != depth + sub.len() || shape[depth..] != *sub {
            return Err(vm.new_value_error("nested tensors of different shapes".to_owned()));
        }
        out.extend(data.to_scalars());
        return Ok(());
    }
    let items: Vec<PyObjectRef> = if let Some(l) = obj.downcast_ref::<PyList>() {
        l.borrow_vec().to_vec()
    } else if let Some(t) = obj.downcast_ref::<PyTuple>() {
        t.as_slice().to_vec()
    } else {
        return Err(vm.new_type_error(format!("cannot make a tensor of a {}", obj.class().name())));
    };
    if depth == shape.len() {
        if !out.is_empty() {
            return Err(vm.new_value_error(format!(
                "expected a number at depth {depth}, got a sequence"
            )));
        }
        shape.push(items.len());
    } else if shape[depth] != items.len() {
        return Err(vm.new_value_error(format!(
            "expected a sequence of length {} at dimension {depth}, got {}",
            shape[depth],
            items.len()
        )));
    }
    for item in &items {
        flatten(item, depth + 1, shape, out, vm)?;
    }
    Ok(())
}

pub(super) fn data_of(
    obj: &PyObject,
    dtype: Option<DType>,
    vm: &VirtualMachine,
) -> PyResult<TensorData> {
    if let Some(t) = obj.downcast_ref::<PyTensor>() {
        let d = t.read().clone();
        return Ok(match dtype {
            Some(dt) => d.cast(dt),
            None => d,
        });
    }
    let mut shape = Vec::new();
    let mut values = Vec::new();
    flatten(obj, 0, &mut shape, &mut values, vm)?;
    let inferred = values
        .iter()
        .map(|s| s.dtype())
        .max()
        .unwrap_or_else(crate::tensor::dtype::default_float);
    TensorData::from_scalars(&shape, &values, dtype.unwrap_or(inferred))
        .map_err(|e| e.into_exception(vm))
}

pub(super) fn to_py(s: Scalar, vm: &VirtualMachine) -> PyObjectRef {
    match s {
        Scalar::Bool(b) => vm.ctx.new_bool(b).into(),
        Scalar::Int(i) => vm.ctx.new_int(i).into(),
        Scalar::Float(f) => vm.ctx.new_float(f).into(),
    }
}

pub(super) fn tolist(shape: &[usize], items: &[Scalar], vm: &VirtualMachine) -> PyObjectRef {
    match shape {
        [] => to_py(items[0], vm),
        [n, rest @ ..] => {
            let chunk = if *n == 0 { 0 } else { items.len() / n };
            let list: Vec<PyObjectRef> = (0..*n)
                .map(|i| tolist(rest, &items[i * chunk..(i + 1) * chunk], vm))
                .collect();
            vm.ctx.new_list(list).into()
        }
    }
}

/// An operand: a tensor's data, read in place (ops never copy their inputs), or a tensor
/// made for the call from a Python number or list.
pub(super) enum Operand<'a> {
    Borrowed(PyRwLockReadGuard<'a, TensorData>),
    Owned(TensorData),
}

impl core::ops::Deref for Operand<'_> {
    type Target = TensorData;
    fn deref(&self) -> &TensorData {
        match self {
            Operand::Borrowed(g) => g,
            Operand::Owned(t) => t,
        }
    }
}

pub(super) fn tensor_dtype(x: &PyObject) -> Option<DType> {
    x.downcast_ref::<PyTensor>().map(|t| t.read().dtype())
}

/// `x` as an operand; a Python number next to a tensor of type `other` is weakly typed (it
/// takes the tensor's type unless its kind is higher), a number alone takes its own type.
pub(super) fn operand<'a>(
    x: &'a PyObject,
    other: Option<DType>,
    vm: &VirtualMachine,
) -> PyResult<Option<Operand<'a>>> {
    if let Some(t) = x.downcast_ref::<PyTensor>() {
        return Ok(Some(Operand::Borrowed(t.read())));
    }
    if let Some(s) = scalar_of(x, vm)? {
        let dtype = other.map_or_else(|| s.dtype(), |o| weak_scalar_dtype(s, o));
        return Ok(Some(Operand::Owned(TensorData::full(&[], s, dtype))));
    }
    if x.downcast_ref::<PyList>().is_some() || x.downcast_ref::<PyTuple>().is_some() {
        return data_of(x, None, vm).map(|d| Some(Operand::Owned(d)));
    }
    Ok(None)
}

/// Run `f` on both operands of a binary operator; `None` when one is not tensor-like. The
/// types are read before any lock is held, and `x op x` reads its tensor once.
pub(super) fn with_operands<R>(
    a: &PyObject,
    b: &PyObject,
    vm: &VirtualMachine,
    f: impl FnOnce(&TensorData, &TensorData) -> PyResult<R>,
) -> PyResult<Option<R>> {
    let (da, db) = (tensor_dtype(a), tensor_dtype(b));
    let Some(x) = operand(a, db, vm)? else {
        return Ok(None);
    };
    if b.is(a) {
        return f(&x, &x).map(Some);
    }
    let Some(y) = operand(b, da, vm)? else {
        return Ok(None);
    };
    f(&x, &y).map(Some)
}

pub(super) fn ints_of(args: &[PyObjectRef], vm: &VirtualMachine) -> PyResult<Vec<i64>> {
    // f(2, 3) and f((2, 3)) alike
    let items: Vec<PyObjectRef> = match args {
        [one]
            if one.downcast_ref::<PyTuple>().is_some()
                || one.downcast_ref::<PyList>().is_some() =>
        {
            vm.extract_elements_with(one, Ok)?
        }
        _ => args.to_vec(),
    };
    items
        .iter()
        .map(|o| o.try_index(vm)?.try_to_primitive::<i64>(vm))
        .collect()
}

pub(super) fn check_size(shape: &[usize], vm: &VirtualMachine) -> PyResult<()> {
    crate::tensor::shape::check_size(shape).map_err(|e| e.into_exception(vm))
}

pub(super) fn shape_of(args: &[PyObjectRef], vm: &VirtualMachine) -> PyResult<Vec<usize>> {
    let shape = ints_of(args, vm)?
        .into_iter()
        .map(|d| {
            usize::try_from(d).map_err(|_| vm.new_runtime_error(format!("negative dimension {d}")))
        })
        .collect::<PyResult<Vec<usize>>>()?;
    check_size(&shape, vm)?;
    Ok(shape)
}

/// Run `f` on the data of `objs`: each tensor read in place (the op sees the tensor itself:
/// a traced tensor is then recorded as the graph value it stands for, never copied into a
/// constant), its lock taken once however often it appears; numbers and lists converted, a
/// number typed as `operand` says with the dtype given beside it. `Ok(None)` when an object
/// is none of these.
pub(super) fn with_operand_list<R>(
    objs: &[(&PyObject, Option<DType>)],
    vm: &VirtualMachine,
    f: impl FnOnce(&[&TensorData]) -> PyResult<R>,
) -> PyResult<Option<R>> {
    let mut distinct: Vec<(&PyObject, Option<DType>, Operand<'_>)> = Vec::with_capacity(objs.len());
    let mut at = Vec::with_capacity(objs.len());
    for &(o, other) in objs {
        // A tensor is read once; a number converted once per dtype it must take.
        let same = |(seen, t, _): &(&PyObject, Option<DType>, Operand<'_>)| {
            seen.is(o) && (*t == other || tensor_dtype(o).is_some())
        };
        if let Some(k) = distinct.iter().position(same) {
            at.push(k);
            continue;
        }
        let Some(x) = operand(o, other, vm)? else {
            return Ok(None);
        };
        at.push(distinct.len());
        distinct.push((o, other, x));
    }
    let refs: Vec<&TensorData> = at.iter().map(|k| &*distinct[*k].2).collect();
    f(&refs).map(Some)
}
