//! `symtrace.Tensor`'s operators and protocols: arithmetic and comparison (also in place),
//! indexing and item assignment, `len`, iteration, truth and conversion to numbers.

use rustpython_vm::builtins::{PyList, PySlice, PyTuple};
use rustpython_vm::function::{Either, PyComparisonValue};
use rustpython_vm::protocol::{PyMappingMethods, PyNumberMethods, PySequenceMethods};
use rustpython_vm::types::{
    AsMapping, AsNumber, AsSequence, Comparable, Iterable, PyComparisonOp, Representable,
};
use rustpython_vm::{
    AsObject, Py, PyObject, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, atomic_func,
};

use super::convert::{data_of, scalar_of, tensor_dtype, with_operand_list, with_operands};
use crate::tensor::index::{self, Index, Select};
use crate::tensor::ops::select::encode_index;
use crate::tensor::{Attr, Attrs, DType, PyTensor, TensorData, format, registry};

pub(super) fn binary_slot(
    name: &'static str,
    a: &PyObject,
    b: &PyObject,
    vm: &VirtualMachine,
) -> PyResult {
    let result = with_operands(a, b, vm, |x, y| {
        PyTensor::wrap(registry().call(name, &[x, y], &Attrs::new()), vm)
    })?;
    Ok(match result {
        Some(t) => t.into_pyobject(vm),
        None => vm.ctx.not_implemented(),
    })
}

/// `a op= b`: computed, then stored into `a` in its own type and shape.
fn inplace_slot(name: &'static str, a: &PyObject, b: &PyObject, vm: &VirtualMachine) -> PyResult {
    let Some(target) = a.downcast_ref::<PyTensor>() else {
        return Ok(vm.ctx.not_implemented());
    };
    let reads = crate::tensor::size_reads::mark();
    let computed = with_operands(a, b, vm, |x, y| {
        let result = registry()
            .call(name, &[x, y], &Attrs::new())
            .map_err(|e| e.into_exception(vm))?;
        let fit = crate::graph::recorder::active()
            .then(|| crate::graph::recorder::with(|r| r.same_shape_checks(x, &result)))
            .flatten();
        Ok((result, x.dtype(), x.shape().to_vec(), fit))
    })?;
    let Some((result, dtype, shape, fit)) = computed else {
        return Ok(vm.ctx.not_implemented());
    };
    // While a tracer records: that the result fits is a comparison of sizes checked per
    // call, not a read of them, which would fix a dynamic graph's sizes.
    if let Some(checks) = fit.filter(|_| result.shape() == shape.as_slice()) {
        crate::tensor::size_reads::forget_since(reads);
        crate::graph::recorder::with(|r| checks.into_iter().for_each(|c| r.check(c)));
    }
    if DType::promote(dtype, result.dtype()) != dtype {
        return Err(vm.new_type_error(format!(
            "the {} result of {name} cannot be stored in place into a {} tensor",
            result.dtype().name(),
            dtype.name()
        )));
    }
    if result.shape() != shape.as_slice() {
        return Err(vm.new_runtime_error(format!(
            "the result of shape {} does not fit in place into a tensor of shape {}",
            crate::tensor::error::shape_str(result.shape()),
            crate::tensor::error::shape_str(&shape)
        )));
    }
    *target.update() = result.to_dtype(dtype).into_owned();
    Ok(a.to_owned())
}

fn unary_slot(name: &'static str, a: &PyObject, vm: &VirtualMachine) -> PyResult {
    let t = a.downcast_ref::<PyTensor>().expect("slot of Tensor");
    Ok(t.op(name, Attrs::new(), vm)?.into_pyobject(vm))
}

pub(super) fn index_of(
    t: &TensorData,
    needle: &PyObject,
    vm: &VirtualMachine,
) -> PyResult<(Vec<Index>, Option<TensorData>)> {
    if let Some(x) = needle.downcast_ref::<PyTensor>() {
        return Ok((vec![], Some(x.read().clone())));
    }
    if needle.downcast_ref::<PyList>().is_some() {
        return Ok((vec![], Some(data_of(needle, None, vm)?)));
    }
    let items: Vec<PyObjectRef> = match needle.downcast_ref::<PyTuple>() {
        Some(tuple) => tuple.as_slice().to_vec(),
        None => vec![needle.to_owned()],
    };
    let shape = t.shape();
    let mut out = Vec::new();
    let mut dim = 0;
    let consumed = items
        .iter()
        .filter(|i| !vm.is_none(i) && !i.is(&vm.ctx.ellipsis))
        .count();
    for item in &items {
        if vm.is_none(item) {
            out.push(Index::NewAxis);
        } else if item.is(&vm.ctx.ellipsis) {
            out.push(Index::Ellipsis);
            dim += shape.len().saturating_sub(consumed);
        } else if let Some(s) = item.downcast_ref::<PySlice>() {
            let len = shape.get(dim).copied().unwrap_or(0);
            let r = vm.call_method(s.as_object(), "indices", (len,))?;
            let v: Vec<i64> =
                vm.extract_elements_with(&r, |o| o.try_index(vm)?.try_to_primitive::<i64>(vm))?;
            out.push(Index::Slice(v[0], v[1], v[2]));
            dim += 1;
        } else if let Ok(i) = item.try_index(vm) {
            out.push(Index::Int(i.try_to_primitive::<i64>(vm)?));
            dim += 1;
        } else {
            return Err(vm.new_index_error(format!(
                "a tensor is indexed by ints, slices, None, ..., a bool tensor or an int tensor, not {}",
                item.class().name()
            )));
        }
    }
    Ok((out, None))
}

fn select<'a>(
    basic: Vec<Index>,
    by: &'a Option<TensorData>,
    vm: &VirtualMachine,
) -> PyResult<Select<'a>> {
    Ok(match by {
        None => Select::Basic(basic),
        Some(t) if t.dtype() == DType::Bool => Select::Mask(t),
        Some(t) if t.dtype() == DType::Int64 => Select::Take(t),
        Some(t) => {
            return Err(vm.new_index_error(format!(
                "a tensor index must be bool or int64, not {}",
                t.dtype().name()
            )));
        }
    })
}

/// `t[needle]`, through the registry's indexing ops (so that a traced frame records it): a
/// basic index (ints, slices, None, `...`) is one op; a tensor or a list indexes alone or
/// among basic indices (`mixed_index.rs`).
fn getitem(zelf: &Py<PyTensor>, needle: &PyObject, vm: &VirtualMachine) -> PyResult {
    let d = zelf.read();
    let result = if let Some(by) = needle.downcast_ref::<PyTensor>() {
        // Read in place: a traced index is a stand-in known by the address of its data.
        index_by(&d, &by.read(), vm)?
    } else if needle.downcast_ref::<PyList>().is_some() {
        index_by(&d, &data_of(needle, None, vm)?, vm)?
    } else if let Some(items) = needle
        .downcast_ref::<PyTuple>()
        .filter(|t| super::mixed_index::is_mixed(t.as_slice()))
    {
        super::mixed_index::getitem_mixed(&d, items.as_slice(), vm)?
    } else {
        // Ints, slices, `None` and `...` give a view of the elements, as torch's do.
        let (basic, _) = index_of(&d, needle, vm)?;
        let attrs = Attrs::new().with("index", Attr::Ints(encode_index(&basic)));
        let data = registry()
            .call("index", &[&d], &attrs)
            .map_err(|e| e.into_exception(vm))?;
        drop(d);
        return Ok(PyTensor::new_view(data, &zelf.to_owned(), "index", attrs).into_pyobject(vm));
    };
    Ok(PyTensor::new(result).into_pyobject(vm))
}

/// `t[by]` for a tensor `by`: a bool mask (the count of what it selects is part of the op,
/// as the result's shape depends on it) or int64 indices along the first dimension.
fn index_by(d: &TensorData, by: &TensorData, vm: &VirtualMachine) -> PyResult<TensorData> {
    let r = match by.dtype() {
        DType::Bool => {
            let count = by.to_scalars().iter().filter(|s| s.as_bool()).count();
            let attrs = Attrs::new().with("count", Attr::Int(count as i64));
            registry().call("index_mask", &[d, by], &attrs)
        }
        DType::Int64 => registry().call("index_take", &[d, by], &Attrs::new()),
        other => {
            return Err(vm.new_index_error(format!(
                "a tensor index must be bool or int64, not {}",
                other.name()
            )));
        }
    };
    r.map_err(|e| e.into_exception(vm))
}

fn setitem(
    zelf: &PyTensor,
    needle: &PyObject,
    value: &PyObject,
    vm: &VirtualMachine,
) -> PyResult<()> {
    // Another tensor is read in place: a traced value is a stand-in known by the address of
    // its data. The tensor itself (`t[:] = t`), or the base a view's update writes into
    // (`x.view(-1)[:] = x`), is read as a copy, before it is written.
    let other = value.downcast_ref::<PyTensor>().filter(|v| {
        !std::ptr::eq::<PyTensor>(&***v, zelf)
            && !std::ptr::eq::<PyTensor>(&***v, zelf.storage_root())
    });
    let guard;
    let owned;
    let value: &TensorData = match other {
        Some(v) => {
            guard = v.read();
            &guard
        }
        None => {
            owned = match scalar_of(value, vm)? {
                Some(s) => TensorData::scalar(s),
                None => data_of(value, None, vm)?,
            };
            &owned
        }
    };
    let mut d = zelf.update();
    if let Some(items) = needle
        .downcast_ref::<PyTuple>()
        .filter(|t| super::mixed_index::is_mixed(t.as_slice()))
    {
        return super::mixed_index::setitem_mixed(zelf, &mut d, items.as_slice(), value, vm);
    }
    let int_index = match needle.downcast_ref::<PyTensor>() {
        Some(i) => !std::ptr::eq::<PyTensor>(&**i, zelf) && i.read().dtype() == DType::Int64,
        None => {
            needle.downcast_ref::<PyList>().is_some()
                && data_of(needle, None, vm).is_ok_and(|t| t.dtype() == DType::Int64)
        }
    };
    if int_index {
        // `t[idx] = v` is `t[idx, ...] = v`: recorded as such when traced.
        let items = [needle.to_owned()];
        return super::mixed_index::setitem_mixed(zelf, &mut d, &items, value, vm);
    }
    let (basic, by) = index_of(&d, needle, vm)?;
    if by.is_none() {
        // In place; traced, the op `index_put` (see `Registry::update`).
        let attrs = Attrs::new().with("index", Attr::Ints(encode_index(&basic)));
        let sel = Select::Basic(basic);
        return registry()
            .update("index_put", &mut d, &[value], &attrs, |t| {
                index::set(t, &sel, value)
            })
            .map_err(|e| e.into_exception(vm));
    }
    let sel = select(basic, &by, vm)?;
    crate::tensor::registry::guarded("item assignment", || index::set(&mut d, &sel, value))
        .map_err(|e| e.into_exception(vm))
}

impl AsMapping for PyTensor {
    fn as_mapping() -> &'static PyMappingMethods {
        static AS_MAPPING: PyMappingMethods = PyMappingMethods {
            length: atomic_func!(|m, vm| PyTensor::mapping_downcast(m).len(vm)),
            subscript: atomic_func!(|m, needle, vm| getitem(
                PyTensor::mapping_downcast(m),
                needle,
                vm
            )),
            ass_subscript: atomic_func!(|m, needle, value, vm| match value {
                Some(value) => setitem(PyTensor::mapping_downcast(m), needle, &value, vm),
                None => Err(vm.new_type_error("tensor elements cannot be deleted".to_owned())),
            }),
        };
        &AS_MAPPING
    }
}

impl AsSequence for PyTensor {
    fn as_sequence() -> &'static PySequenceMethods {
        static AS_SEQUENCE: PySequenceMethods = PySequenceMethods {
            length: atomic_func!(|s, vm| PyTensor::sequence_downcast(s).len(vm)),
            ..PySequenceMethods::NOT_IMPLEMENTED
        };
        &AS_SEQUENCE
    }
}

impl Iterable for PyTensor {
    fn iter(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult {
        let n = zelf.len(vm)?;
        let rows: Vec<PyObjectRef> = (0..n)
            .map(|i| getitem(&zelf, vm.ctx.new_int(i).as_object(), vm))
            .collect::<PyResult<_>>()?;
        vm.ctx
            .new_list(rows)
            .as_object()
            .get_iter(vm)
            .map(Into::into)
    }
}

impl Representable for PyTensor {
    fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
        Ok(format::repr(&zelf.read()))
    }
}

impl Comparable for PyTensor {
    fn slot_richcompare(
        zelf: &PyObject,
        other: &PyObject,
        op: PyComparisonOp,
        vm: &VirtualMachine,
    ) -> PyResult<Either<PyObjectRef, PyComparisonValue>> {
        let name = match op {
            PyComparisonOp::Lt => "lt",
            PyComparisonOp::Le => "le",
            PyComparisonOp::Eq => "eq",
            PyComparisonOp::Ne => "ne",
            PyComparisonOp::Gt => "gt",
            PyComparisonOp::Ge => "ge",
        };
        let result = binary_slot(name, zelf, other, vm)?;
        Ok(if result.is(&vm.ctx.not_implemented) {
            Either::B(PyComparisonValue::NotImplemented)
        } else {
            Either::A(result)
        })
    }
    fn cmp(
        _zelf: &Py<Self>,
        _other: &PyObject,
        _op: PyComparisonOp,
        _vm: &VirtualMachine,
    ) -> PyResult<PyComparisonValue> {
        unreachable!("slot_richcompare is overridden")
    }
}

impl AsNumber for PyTensor {
    fn as_number() -> &'static PyNumberMethods {
        static AS_NUMBER: PyNumberMethods = PyNumberMethods {
            add: Some(|a, b, vm| binary_slot("add", a, b, vm)),
            subtract: Some(|a, b, vm| binary_slot("sub", a, b, vm)),
            multiply: Some(|a, b, vm| binary_slot("mul", a, b, vm)),
            true_divide: Some(|a, b, vm| binary_slot("div", a, b, vm)),
            floor_divide: Some(|a, b, vm| binary_slot("floordiv", a, b, vm)),
            remainder: Some(|a, b, vm| binary_slot("mod", a, b, vm)),
            power: Some(|a, b, c, vm| {
                if !vm.is_none(c) {
                    return Err(vm.new_type_error(
                        "pow() with a modulus is not supported for tensors".to_owned(),
                    ));
                }
                binary_slot("pow", a, b, vm)
            }),
            matrix_multiply: Some(|a, b, vm| binary_slot("matmul", a, b, vm)),
            and: Some(|a, b, vm| binary_slot("logical_and", a, b, vm)),
            or: Some(|a, b, vm| binary_slot("logical_or", a, b, vm)),
            xor: Some(|a, b, vm| binary_slot("logical_xor", a, b, vm)),
            inplace_add: Some(|a, b, vm| inplace_slot("add", a, b, vm)),
            inplace_subtract: Some(|a, b, vm| inplace_slot("sub", a, b, vm)),
            inplace_multiply: Some(|a, b, vm| inplace_slot("mul", a, b, vm)),
            inplace_true_divide: Some(|a, b, vm| inplace_slot("div", a, b, vm)),
            inplace_floor_divide: Some(|a, b, vm| inplace_slot("floordiv", a, b, vm)),
            inplace_remainder: Some(|a, b, vm| inplace_slot("mod", a, b, vm)),
            inplace_and: Some(|a, b, vm| inplace_slot("logical_and", a, b, vm)),
            inplace_or: Some(|a, b, vm| inplace_slot("logical_or", a, b, vm)),
            negative: Some(|a, vm| unary_slot("neg", a.obj, vm)),
            absolute: Some(|a, vm| unary_slot("abs", a.obj, vm)),
            invert: Some(|a, vm| unary_slot("invert", a.obj, vm)),
            positive: Some(|a, _vm| Ok(a.obj.to_owned())),
            boolean: Some(|a, vm| {
                let t = a.obj.downcast_ref::<PyTensor>().expect("slot of Tensor");
                let item = t.read().item().map_err(|_| {
                    vm.new_runtime_error(
                        "the truth value of a tensor with more than one element is ambiguous"
                            .to_owned(),
                    )
                })?;
                Ok(item.as_bool())
            }),
            float: Some(|a, vm| {
                let t = a.obj.downcast_ref::<PyTensor>().expect("slot of Tensor");
                Ok(vm.ctx.new_float(t.to_f64(vm)?).into())
            }),
            int: Some(|a, vm| {
                let t = a.obj.downcast_ref::<PyTensor>().expect("slot of Tensor");
                Ok(vm.ctx.new_int(t.to_i64(vm)?).into())
            }),
            ..PyNumberMethods::NOT_IMPLEMENTED
        };
        &AS_NUMBER
    }
}

/// A binary function of tensors or numbers (`maximum`, `matmul`...), which raises where the
/// operator would return `NotImplemented`.
pub(super) fn binary_fn(
    name: &'static str,
    a: &PyObject,
    b: &PyObject,
    vm: &VirtualMachine,
) -> PyResult {
    let r = binary_slot(name, a, b, vm)?;
    if r.is(&vm.ctx.not_implemented) {
        return Err(vm.new_type_error(format!("{name} needs tensors or numbers")));
    }
    Ok(r)
}

/// `clamp(x, min, max)`: the op `clamp` for number bounds; with a tensor among them, the
/// larger of `x` and `min`, then the smaller of that and `max` (torch's order: where `min`
/// exceeds `max`, `max`).
pub(super) fn clamp(x: &PyObject, bounds: super::args::ClampArgs, vm: &VirtualMachine) -> PyResult {
    if let Some(attrs) = bounds.attrs(vm)? {
        let d = super::convert::operand(x, None, vm)?.ok_or_else(|| {
            vm.new_type_error(format!("clamp() needs a tensor, not {}", x.class().name()))
        })?;
        return Ok(PyTensor::wrap(registry().call("clamp", &[&d], &attrs), vm)?.into_pyobject(vm));
    }
    let mut r = x.to_owned();
    if let Some(min) = bounds.min.filter(|b| !vm.is_none(b)) {
        r = binary_fn("maximum", &r, &min, vm)?;
    }
    if let Some(max) = bounds.max.filter(|b| !vm.is_none(b)) {
        r = binary_fn("minimum", &r, &max, vm)?;
    }
    Ok(r)
}

/// torch's `where(cond, a, b)`: `a` where `cond`, else `b`. A number takes the type of the
/// tensor beside it (weakly); the condition is converted alone.
pub(super) fn where_select(
    cond: &PyObject,
    a: &PyObject,
    b: &PyObject,
    vm: &VirtualMachine,
) -> PyResult<PyTensor> {
    let operands = [(cond, None), (a, tensor_dtype(b)), (b, tensor_dtype(a))];
    with_operand_list(&operands, vm, |d| {
        PyTensor::wrap(registry().call("where", d, &Attrs::new()), vm)
    })?
    .ok_or_else(|| vm.new_type_error("where() needs tensors or numbers".to_owned()))
}
