//! Indexing and item assignment: ints, slices with steps, None, `...`, a bool mask, an int
//! tensor. Basic indices combine in a tuple; a mask or an int tensor stands alone.

use ndarray::{ArrayD, Axis, IxDyn, SliceInfo, SliceInfoElem};

use super::data::{Element, TensorData};
use super::error::{TResult, TensorError, shape_str};
use super::layout::row_major;

/// One element of an index, as Python gave it (slices already resolved against the length of
/// their dimension with `slice.indices`, which the caller does).
#[derive(Clone, Debug)]
pub enum Index {
    Int(i64),
    /// Python's normalized (start, stop, step) for the dimension.
    Slice(i64, i64, i64),
    NewAxis,
    Ellipsis,
}

/// `slice(start, stop, step).indices(len)`, as Python computes it: the bounds a slice
/// selects in a dimension of `len` elements (`None` for a step of zero, which Python refuses).
pub fn slice_indices(
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
    len: usize,
) -> Option<(i64, i64, i64)> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let len = i64::try_from(len).ok()?;
    let (lower, upper) = if step < 0 { (-1, len - 1) } else { (0, len) };
    let clamp = |bound: Option<i64>, default: i64| match bound {
        None => default,
        Some(b) if b < 0 => (b + len).max(lower),
        Some(b) => b.min(upper),
    };
    let start = clamp(start, if step < 0 { upper } else { lower });
    let stop = clamp(stop, if step < 0 { lower } else { upper });
    Some((start, stop, step))
}

/// An index that selects by a tensor.
pub enum Select<'a> {
    Basic(Vec<Index>),
    Mask(&'a TensorData),
    Take(&'a TensorData),
}

/// How many dimensions a basic index consumes (its ints and slices), after checking that it
/// has at most one ellipsis and no more of them than `shape` has dimensions.
pub(crate) fn dims_consumed(shape: &[usize], index: &[Index]) -> TResult<usize> {
    let consumed = index
        .iter()
        .filter(|i| matches!(i, Index::Int(_) | Index::Slice(..)))
        .count();
    if index
        .iter()
        .filter(|i| matches!(i, Index::Ellipsis))
        .count()
        > 1
    {
        return Err(TensorError::index(
            "an index can only have a single ellipsis ('...')",
        ));
    }
    if consumed > shape.len() {
        return Err(TensorError::index(format!(
            "too many indices for a tensor of {} dimension{}: {consumed} given",
            shape.len(),
            if shape.len() == 1 { "" } else { "s" }
        )));
    }
    Ok(consumed)
}

/// Indices with the ellipsis expanded and checked, as ndarray slice elements.
fn slice_elems(shape: &[usize], index: &[Index]) -> TResult<Vec<SliceInfoElem>> {
    let consumed = dims_consumed(shape, index)?;
    let mut out = Vec::new();
    let mut dim = 0;
    for i in index {
        match *i {
            Index::Ellipsis => {
                for _ in 0..shape.len() - consumed {
                    out.push(SliceInfoElem::Slice {
                        start: 0,
                        end: None,
                        step: 1,
                    });
                    dim += 1;
                }
            }
            Index::NewAxis => out.push(SliceInfoElem::NewAxis),
            Index::Int(k) => {
                let n = shape[dim] as i64;
                let j = if k < 0 { k + n } else { k };
                if j < 0 || j >= n {
                    return Err(TensorError::index(format!(
                        "index {k} is out of bounds for dimension {dim} with size {n}"
                    )));
                }
                out.push(SliceInfoElem::Index(j as isize));
                dim += 1;
            }
            Index::Slice(start, stop, step) => {
                // ndarray walks a negative step from the end of [start, end): turn Python's
                // (start, stop, step < 0) into that range.
                out.push(if step > 0 {
                    SliceInfoElem::Slice {
                        start: start as isize,
                        end: Some(stop.max(start) as isize),
                        step: step as isize,
                    }
                } else if start <= stop {
                    SliceInfoElem::Slice {
                        start: 0,
                        end: Some(0),
                        step: 1,
                    }
                } else {
                    SliceInfoElem::Slice {
                        start: (stop + 1) as isize,
                        end: Some((start + 1) as isize),
                        step: step as isize,
                    }
                });
                dim += 1;
            }
        }
    }
    // Dimensions the index does not name are taken whole.
    for _ in dim..shape.len() {
        out.push(SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: 1,
        });
    }
    Ok(out)
}

fn info(elems: Vec<SliceInfoElem>) -> SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn> {
    SliceInfo::try_from(elems).expect("dimensions were counted")
}

fn mask_rows(shape: &[usize], mask: &TensorData) -> TResult<Vec<usize>> {
    let m = mask.shape();
    if m.len() > shape.len() || shape[..m.len()] != *m {
        return Err(TensorError::index(format!(
            "a mask of shape {} does not match the leading dimensions of shape {}",
            shape_str(m),
            shape_str(shape)
        )));
    }
    Ok(mask
        .to_scalars()
        .iter()
        .enumerate()
        .filter(|(_, s)| s.as_bool())
        .map(|(i, _)| i)
        .collect())
}

fn take_rows(shape: &[usize], take: &TensorData) -> TResult<Vec<usize>> {
    let n = *shape
        .first()
        .ok_or_else(|| TensorError::index("cannot index a 0-d tensor with a tensor"))?
        as i64;
    take.to_scalars()
        .iter()
        .map(|s| {
            let k = s.as_i64();
            let j = if k < 0 { k + n } else { k };
            if j < 0 || j >= n {
                Err(TensorError::index(format!(
                    "index {k} is out of bounds for dimension 0 with size {n}"
                )))
            } else {
                Ok(j as usize)
            }
        })
        .collect()
}

/// `t[index]`.
pub fn get(t: &TensorData, index: &Select<'_>) -> TResult<TensorData> {
    match index {
        Select::Basic(idx) => {
            let elems = slice_elems(t.shape(), idx)?;
            Ok(crate::each_dtype!(t, a => row_major(a.slice(info(elems))).into()))
        }
        Select::Mask(mask) => {
            let rows = mask_rows(t.shape(), mask)?;
            let lead = mask.ndim();
            Ok(crate::each_dtype!(t, a => gather(a, lead, &rows, &[rows.len()]).into()))
        }
        Select::Take(take) => {
            let rows = take_rows(t.shape(), take)?;
            Ok(crate::each_dtype!(t, a => gather(a, 1, &rows, take.shape()).into()))
        }
    }
}

/// Rows of `a` flattened over its first `lead` dimensions, picked by `rows`, the picked axis
/// reshaped to `index_shape`.
fn gather<T: Element>(
    a: &ArrayD<T>,
    lead: usize,
    rows: &[usize],
    index_shape: &[usize],
) -> ArrayD<T> {
    let rest = &a.shape()[lead..];
    // Rows are picked from the tensor in place when it is row-major (an embedding table is),
    // not from a copy of it.
    let copy = (!a.is_standard_layout()).then(|| row_major(a.view()));
    let flat = copy
        .as_ref()
        .unwrap_or(a)
        .as_slice()
        .expect("standard layout");
    let row_len: usize = rest.iter().product();
    let mut picked = Vec::with_capacity(rows.len() * row_len);
    for &r in rows {
        picked.extend_from_slice(&flat[r * row_len..(r + 1) * row_len]);
    }
    let mut out_shape = index_shape.to_vec();
    out_shape.extend_from_slice(rest);
    ArrayD::from_shape_vec(IxDyn(&out_shape), picked).expect("same count")
}

/// `t[index] = value`: the value is cast to the tensor's type and broadcast to the selection.
pub fn set(t: &mut TensorData, index: &Select<'_>, value: &TensorData) -> TResult<()> {
    let value = value.cast(t.dtype());
    macro_rules! assign {
        ($variant:ident) => {{
            let TensorData::$variant(a) = t else {
                unreachable!("dtype checked")
            };
            let TensorData::$variant(v) = &value else {
                unreachable!("value cast")
            };
            assign(a, index, v)
        }};
    }
    match t.dtype() {
        super::DType::Bool => assign!(Bool),
        super::DType::Int64 => assign!(Int64),
        super::DType::Float32 => assign!(Float32),
        super::DType::Float64 => assign!(Float64),
    }
}

fn assign<T: Element>(a: &mut ArrayD<T>, index: &Select<'_>, v: &ArrayD<T>) -> TResult<()> {
    let cannot = |target: &[usize]| {
        TensorError::runtime(format!(
            "cannot assign a value of shape {} to a selection of shape {}",
            shape_str(v.shape()),
            shape_str(target)
        ))
    };
    match index {
        Select::Basic(idx) => {
            let elems = slice_elems(a.shape(), idx)?;
            let mut view = a.slice_mut(info(elems));
            let target = view.shape().to_vec();
            let v = v.broadcast(IxDyn(&target)).ok_or_else(|| cannot(&target))?;
            view.assign(&v);
            Ok(())
        }
        Select::Mask(_) | Select::Take(_) => {
            let (lead, rows, index_shape) = match index {
                Select::Mask(m) => {
                    let rows = mask_rows(a.shape(), m)?;
                    let n = rows.len();
                    (m.ndim(), rows, vec![n])
                }
                Select::Take(k) => (1, take_rows(a.shape(), k)?, k.shape().to_vec()),
                Select::Basic(_) => unreachable!("handled above"),
            };
            let rest = a.shape()[lead..].to_vec();
            let mut target = index_shape;
            target.extend_from_slice(&rest);
            let v = v.broadcast(IxDyn(&target)).ok_or_else(|| cannot(&target))?;
            let v = crate::tensor::layout::row_major(v);
            let vrows = v
                .into_shape_with_order(IxDyn(
                    &[rows.len()]
                        .iter()
                        .chain(rest.iter())
                        .copied()
                        .collect::<Vec<_>>(),
                ))
                .expect("same count");
            let flat_len: usize = a.shape()[..lead].iter().product();
            let mut flat_shape = vec![flat_len];
            flat_shape.extend_from_slice(&rest);
            let mut flat = crate::tensor::layout::row_major(a.view())
                .into_shape_with_order(IxDyn(&flat_shape))
                .expect("standard layout");
            for (k, &r) in rows.iter().enumerate() {
                flat.index_axis_mut(Axis(0), r)
                    .assign(&vrows.index_axis(Axis(0), k));
            }
            *a = flat
                .into_shape_with_order(IxDyn(a.shape()))
                .expect("same count");
            Ok(())
        }
    }
}
