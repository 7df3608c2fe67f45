//! The tensor functions and methods that pick elements and share their argument handling:
//! `masked_fill`, `split`, `chunk`, `narrow`, `gather`, `index_select`. Each computes
//! through the registry's ops (`tensor::ops::select`), reading its tensors in place.

use rustpython_vm::builtins::PyTupleRef;
use rustpython_vm::{Py, PyObject, PyObjectRef, PyResult, VirtualMachine};

use super::convert::{ints_of, scalar_of};
use crate::tensor::{Attr, Attrs, PyTensor, Scalar, registry};

pub(super) fn masked_fill(
    x: &PyTensor,
    mask: &PyTensor,
    value: &PyObject,
    vm: &VirtualMachine,
) -> PyResult<PyTensor> {
    // A 0-d tensor's value as a tensor operand, cast to `x`'s type and selected by `where`:
    // never read out (traced, it is a graph value, whose stand-in holds no data).
    if let Some(t) = value.downcast_ref::<PyTensor>()
        && t.read().ndim() == 0
    {
        let (d, m) = (x.read(), mask.read());
        if crate::tensor::shape::broadcast(d.shape(), m.shape()).is_ok_and(|s| s == d.shape()) {
            let cast = Attrs::new().with("dtype", Attr::DType(d.dtype()));
            let v = registry()
                .call("to", &[&t.read()], &cast)
                .map_err(|e| e.into_exception(vm))?;
            return PyTensor::wrap(registry().call("where", &[&m, &v, &d], &Attrs::new()), vm);
        }
    }
    let value = match scalar_of(value, vm)? {
        Some(Scalar::Bool(b)) => Attr::Bool(b),
        Some(Scalar::Int(i)) => Attr::Int(i),
        Some(Scalar::Float(f)) => Attr::Float(f),
        None => match value.downcast_ref::<PyTensor>() {
            // A 0-d tensor's value, as torch accepts it.
            Some(t) if t.read().ndim() == 0 => {
                match t.read().item().map_err(|e| e.into_exception(vm))? {
                    Scalar::Bool(b) => Attr::Bool(b),
                    Scalar::Int(i) => Attr::Int(i),
                    Scalar::Float(f) => Attr::Float(f),
                }
            }
            _ => {
                return Err(vm.new_type_error(format!(
                    "masked_fill() needs a number as its value, not {}",
                    value.class().name()
                )));
            }
        },
    };
    let (d, m) = (x.read(), mask.read());
    PyTensor::wrap(
        registry().call("masked_fill", &[&d, &m], &Attrs::new().with("value", value)),
        vm,
    )
}

pub(super) fn narrow(
    x: &Py<PyTensor>,
    dim: i64,
    start: i64,
    length: i64,
    vm: &VirtualMachine,
) -> PyResult<PyTensor> {
    PyTensor::view_op(
        x,
        "narrow",
        Attrs::new()
            .with("dim", Attr::Int(dim))
            .with("start", Attr::Int(start))
            .with("length", Attr::Int(length)),
        vm,
    )
}

fn dim_len(x: &PyTensor, dim: i64, vm: &VirtualMachine) -> PyResult<(i64, i64)> {
    let d = x.read();
    let k = crate::tensor::shape::normalize_dim(dim, d.ndim()).map_err(|e| e.into_exception(vm))?;
    if d.ndim() == 0 {
        return Err(
            vm.new_runtime_error("split expects at least a 1-dimensional tensor".to_owned())
        );
    }
    Ok((k as i64, d.shape()[k] as i64))
}

/// torch's `split`: pieces of `split_size` along `dim` (the last one smaller), or of the
/// listed sizes, which must add up to the dimension.
pub(super) fn split(
    x: &Py<PyTensor>,
    sizes: &PyObjectRef,
    dim: i64,
    vm: &VirtualMachine,
) -> PyResult<PyTupleRef> {
    let (dim, n) = dim_len(x, dim, vm)?;
    let pieces: Vec<i64> = if let Ok(size) = sizes.try_index(vm) {
        let size = size.try_to_primitive::<i64>(vm)?;
        if size <= 0 {
            return Err(vm.new_runtime_error(format!(
                "split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
            )));
        }
        let mut v = vec![size; (n / size) as usize];
        if n % size != 0 {
            v.push(n % size);
        }
        v
    } else {
        let v = ints_of(std::slice::from_ref(sizes), vm)?;
        if v.iter().sum::<i64>() != n || v.iter().any(|&s| s < 0) {
            return Err(vm.new_runtime_error(format!(
                "split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at dimension {dim}), but got split_sizes={v:?}"
            )));
        }
        v
    };
    let mut start = 0;
    let mut out = Vec::with_capacity(pieces.len());
    for len in pieces {
        out.push(narrow(x, dim, start, len, vm)?.into_pyobject(vm));
        start += len;
    }
    Ok(vm.ctx.new_tuple(out))
}

/// torch's `chunk`: `chunks` pieces of `ceil(n / chunks)` along `dim` (fewer when they run out).
pub(super) fn chunk(
    x: &Py<PyTensor>,
    chunks: i64,
    dim: i64,
    vm: &VirtualMachine,
) -> PyResult<PyTupleRef> {
    if chunks <= 0 {
        return Err(vm.new_runtime_error(
            "chunk expects `chunks` to be greater than 0, got: ".to_owned() + &chunks.to_string(),
        ));
    }
    let (_, n) = dim_len(x, dim, vm)?;
    let size = ((n + chunks - 1) / chunks).max(1);
    split(x, &vm.ctx.new_int(size).into(), dim, vm)
}

/// `gather(dim, index)` or `index_select(dim, index)`.
pub(super) fn with_index(
    op: &str,
    x: &PyTensor,
    dim: i64,
    index: &PyTensor,
    vm: &VirtualMachine,
) -> PyResult<PyTensor> {
    let (d, i) = (x.read(), index.read());
    PyTensor::wrap(
        registry().call(op, &[&d, &i], &Attrs::new().with("dim", Attr::Int(dim))),
        vm,
    )
}

use rustpython_vm::PyPayload;
