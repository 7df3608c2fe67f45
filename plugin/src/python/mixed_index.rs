//! `t[:, idx]`, `v[:, [-1]]`, `t[0, :, [1, 2]]`, `logits[st.arange(B), targets]`: int tensors
//! or lists among basic indices, read as torch reads them. The ints, slices, `None` and `...`
//! apply first, an int removing its dimension (torch, unlike NumPy, never counts an int with
//! the tensor indices); then the dimensions the tensor indices stand at are taken by them,
//! the indices' broadcast shape in their place. Every step is a registry op, so a traced frame
//! records it. A bool mask among them (`x[:, keep]`, `vel[hit, 1]`) stands for the indices
//! of its true elements, found from its values: a traced frame breaks before it (the count
//! is data-dependent).

use rustpython_vm::builtins::{PyList, PySlice, PyTuple};
use rustpython_vm::common::lock::PyRwLockReadGuard;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload, PyResult, VirtualMachine};

use super::convert::data_of;
use crate::tensor::index::{self, Index, Select};
use crate::tensor::ops::select::{basic_index_shape, encode_index};
use crate::tensor::{Attr, Attrs, DType, PyTensor, TensorData, registry, size_reads};

/// The items with each bool mask among them (a bool tensor, or a list of bools) in torch's
/// reading of it: the int64 indices of its true elements, one vector per dimension it spans
/// (`x[m, 1]` is `x[m.nonzero(as_tuple=True) + (1,)]`). The mask's shape must be the shape
/// of the dimensions it spans. A 0-d mask is left as it is (an error further on).
fn masks_as_indices(
    d: &TensorData,
    items: &[PyObjectRef],
    vm: &VirtualMachine,
) -> PyResult<Vec<PyObjectRef>> {
    let masks = items
        .iter()
        .map(|item| {
            let mask = match item.downcast_ref::<PyTensor>() {
                Some(t) => (t.read().dtype() == DType::Bool).then(|| t.read().clone()),
                None if is_sequence(item) => {
                    Some(data_of(item, None, vm)?).filter(|m| m.dtype() == DType::Bool)
                }
                None => None,
            };
            Ok(mask.filter(|m| m.ndim() > 0))
        })
        .collect::<PyResult<Vec<_>>>()?;
    if masks.iter().all(Option::is_none) {
        return Ok(items.to_vec());
    }
    // The dimension of `d` each item starts at: a mask spans its own number of dimensions.
    let spans = |i: usize| match &masks[i] {
        Some(m) => m.ndim(),
        None if vm.is_none(&items[i]) || items[i].is(&vm.ctx.ellipsis) => 0,
        None => 1,
    };
    let spanned: usize = (0..items.len()).map(spans).sum();
    let mut out = Vec::with_capacity(items.len());
    let mut dim = 0;
    for (i, item) in items.iter().enumerate() {
        if item.is(&vm.ctx.ellipsis) {
            dim += d.ndim().saturating_sub(spanned);
        }
        let Some(mask) = &masks[i] else {
            out.push(item.clone());
            dim += spans(i);
            continue;
        };
        let under = d.shape().get(dim..dim + mask.ndim());
        if under != Some(mask.shape()) {
            return Err(vm.new_index_error(format!(
                "the shape of the mask {:?} at index {i} does not match the shape of the indexed tensor {:?}",
                mask.shape(),
                d.shape()
            )));
        }
        out.extend(
            true_positions(mask)
                .into_iter()
                .map(|p| PyTensor::new(p).into_pyobject(vm)),
        );
        dim += mask.ndim();
    }
    Ok(out)
}

/// The coordinates of a mask's true elements in row-major order, one int64 vector per
/// dimension.
fn true_positions(mask: &TensorData) -> Vec<TensorData> {
    let shape = mask.shape().to_vec();
    let mut coords: Vec<Vec<i64>> = vec![Vec::new(); shape.len()];
    for (flat, v) in mask.to_scalars().into_iter().enumerate() {
        if !v.as_bool() {
            continue;
        }
        let mut rest = flat;
        for (axis, &size) in shape.iter().enumerate().rev() {
            coords[axis].push((rest % size) as i64);
            rest /= size;
        }
    }
    coords
        .into_iter()
        .map(|c| {
            let n = c.len();
            TensorData::Int64(
                ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[n]), c).expect("a vector"),
            )
        })
        .collect()
}

/// A list, or a tuple inside the index tuple (`t[:, (0, 2)]`), which torch reads as a list.
fn is_sequence(item: &PyObjectRef) -> bool {
    item.downcast_ref::<PyList>().is_some() || item.downcast_ref::<PyTuple>().is_some()
}

fn is_advanced(item: &PyObjectRef) -> bool {
    item.downcast_ref::<PyTensor>().is_some() || is_sequence(item)
}

/// Whether a tuple index holds a tensor, a list or a tuple.
pub(super) fn is_mixed(items: &[PyObjectRef]) -> bool {
    items.iter().any(is_advanced)
}

/// An index read in place (a traced index is a stand-in known by the address of its data)
/// or made from a list.
enum Held<'a> {
    Read(PyRwLockReadGuard<'a, TensorData>),
    Made(TensorData),
}

impl std::ops::Deref for Held<'_> {
    type Target = TensorData;
    fn deref(&self) -> &TensorData {
        match self {
            Held::Read(guard) => guard,
            Held::Made(data) => data,
        }
    }
}

fn held<'a>(item: &'a PyObjectRef, vm: &VirtualMachine) -> PyResult<Held<'a>> {
    let index = match item.downcast_ref::<PyTensor>() {
        Some(t) => Held::Read(t.read()),
        None => Held::Made(data_of(item, None, vm)?),
    };
    if index.dtype() != DType::Int64 {
        return Err(vm.new_index_error(format!(
            "among other indices, a tensor index must be int64, not {} (a bool mask indexes a tensor alone: t[mask])",
            index.dtype().name()
        )));
    }
    Ok(index)
}

/// A tuple index split in two: the tensor and list indices (read), and the basic index the
/// rest makes with `:` in their places; `dims`, where each tensor index stands in the basic
/// result; `reads`, the size reads before the basic index was worked out.
struct Split<'a> {
    indices: Vec<Held<'a>>,
    basic: Vec<Index>,
    dims: Vec<i64>,
    reads: usize,
}

fn split<'a>(d: &TensorData, items: &'a [PyObjectRef], vm: &VirtualMachine) -> PyResult<Split<'a>> {
    let at: Vec<usize> = (0..items.len())
        .filter(|&i| is_advanced(&items[i]))
        .collect();
    let indices = at
        .iter()
        .map(|&i| held(&items[i], vm))
        .collect::<PyResult<Vec<_>>>()?;
    let mut basic_items = items.to_vec();
    for &i in &at {
        basic_items[i] = PySlice {
            start: None,
            stop: vm.ctx.none(),
            step: None,
        }
        .into_pyobject(vm);
    }
    let tuple = vm.ctx.new_tuple(basic_items);
    let reads = size_reads::mark();
    let (basic, _) = super::tensor_protocols::index_of(d, tuple.as_object(), vm)?;
    let dims = at
        .iter()
        .map(|&i| taken_dim(items, i, d.ndim(), vm) as i64)
        .collect();
    Ok(Split {
        indices,
        basic,
        dims,
        reads,
    })
}

/// `d[items]`, with tensor or list indices among them: the basic indices first (none when
/// they only span whole dimensions: a graph then keeps no size), then `index_dims`.
pub(super) fn getitem_mixed(
    d: &TensorData,
    items: &[PyObjectRef],
    vm: &VirtualMachine,
) -> PyResult<TensorData> {
    let items = masks_as_indices(d, items, vm)?;
    let split = split(d, &items, vm)?;
    let sliced;
    let y = if spans_all(d, &split.basic) {
        // The sizes read to work out the slices made no difference.
        size_reads::forget_since(split.reads);
        d
    } else {
        let attrs = Attrs::new().with("index", Attr::Ints(encode_index(&split.basic)));
        sliced = call("index", &[d], attrs, vm)?;
        &sliced
    };
    let mut inputs = vec![y];
    inputs.extend(split.indices.iter().map(|i| &**i));
    call(
        "index_dims",
        &inputs,
        Attrs::new().with("dims", Attr::Ints(split.dims)),
        vm,
    )
}

fn call(
    op: &str,
    inputs: &[&TensorData],
    attrs: Attrs,
    vm: &VirtualMachine,
) -> PyResult<TensorData> {
    registry()
        .call(op, inputs, &attrs)
        .map_err(|e| e.into_exception(vm))
}

/// Whether a basic index takes every element in place (only `:` and `...`).
fn spans_all(d: &TensorData, basic: &[Index]) -> bool {
    let whole = basic.iter().all(|i| match *i {
        Index::Slice(start, _, step) => start == 0 && step == 1,
        Index::Ellipsis => true,
        Index::Int(_) | Index::NewAxis => false,
    });
    whole && basic_index_shape(d.shape(), basic).is_ok_and(|s| s == d.shape())
}

/// The dimension of the basic result the index stands at: one per slice, `None` and tensor
/// index before it (each tensor index stands for a full slice there), none per int, and what
/// `...` spans.
fn taken_dim(items: &[PyObjectRef], at: usize, ndim: usize, vm: &VirtualMachine) -> usize {
    let consumed = items
        .iter()
        .filter(|i| !vm.is_none(i) && !i.is(&vm.ctx.ellipsis))
        .count();
    items[..at]
        .iter()
        .map(|item| {
            if item.is(&vm.ctx.ellipsis) {
                ndim.saturating_sub(consumed)
            } else if vm.is_none(item)
                || item.downcast_ref::<PySlice>().is_some()
                || is_advanced(item)
            {
                1
            } else {
                0
            }
        })
        .sum()
}

/// `d[items] = value` with tensor or list indices among the others (`x[:, idx] = v`,
/// `onehot[st.arange(n), labels] = 1.0`, `x[0, idx] = v`): `index_dims_put`, in place (on a
/// tracer's stand-in, recorded, its result taking the stand-in's place); with ints, slices or
/// `None` among them, into the basic selection, put back with `index_put`.
pub(super) fn setitem_mixed(
    target: &PyTensor,
    d: &mut TensorData,
    items: &[PyObjectRef],
    value: &TensorData,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let targets_itself = items.iter().any(|i| {
        i.downcast_ref::<PyTensor>()
            .is_some_and(|t| std::ptr::eq::<PyTensor>(&**t, target))
    });
    if targets_itself {
        return Err(vm.new_index_error("a tensor used as an index into itself while assigned"));
    }
    let items = masks_as_indices(d, items, vm)?;
    let split = split(d, &items, vm)?;
    let attrs = Attrs::new().with("dims", Attr::Ints(split.dims));
    let mut rest: Vec<&TensorData> = vec![value];
    rest.extend(split.indices.iter().map(|i| &**i));
    if !spans_all(d, &split.basic) {
        // `x[0, idx] = v`: the basic selection taken out, stored into, and put back.
        let index = Attrs::new().with("index", Attr::Ints(encode_index(&split.basic)));
        let part = call("index", &[d], index.clone(), vm)?;
        let mut inputs: Vec<&TensorData> = vec![&part];
        inputs.extend_from_slice(&rest);
        let stored = call("index_dims_put", &inputs, attrs, vm)?;
        let selection = Select::Basic(split.basic);
        return registry()
            .update("index_put", d, &[&stored], &index, |t| {
                index::set(t, &selection, &stored)
            })
            .map_err(|e| e.into_exception(vm));
    }
    size_reads::forget_since(split.reads);
    registry()
        .update("index_dims_put", d, &rest, &attrs, |t| {
            let mut inputs: Vec<&TensorData> = vec![t];
            inputs.extend_from_slice(&rest);
            let new = registry().call("index_dims_put", &inputs, &attrs)?;
            *t = new;
            Ok(())
        })
        .map_err(|e| e.into_exception(vm))
}
