//! Ops that pick elements: indexing (`t[...]` with ints, slices, None, `...`, a bool mask or
//! an int tensor), `gather`, `index_select`, `narrow` (what `split` and `chunk` make),
//! `masked_fill`, `tril`/`triu`, and `clone`. Indexing is an op like any other, so a traced
//! frame records it into its graph.

use ndarray::{ArrayD, Axis, Dimension, IxDyn, Zip};

use super::lineup::{Fit, fit};
use crate::tensor::data::{Element, Scalar, TensorData};
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError, shape_str};
use crate::tensor::index::{self, Index, Select};
use crate::tensor::layout::row_major;
use crate::tensor::registry::{Arity, Attr, Attrs, Meta, OpDef};
use crate::tensor::shape::{broadcast, normalize_dim};

/// An index as the `index` op's attribute carries it: per element a tag and its numbers
/// (`0 i`: an int; `1 start stop step`: a slice, already normalized against its dimension;
/// `2`: None; `3`: `...`).
pub fn encode_index(index: &[Index]) -> Vec<i64> {
    let mut out = Vec::new();
    for i in index {
        match *i {
            Index::Int(k) => out.extend([0, k]),
            Index::Slice(a, b, c) => out.extend([1, a, b, c]),
            Index::NewAxis => out.push(2),
            Index::Ellipsis => out.push(3),
        }
    }
    out
}

fn decode_index(code: &[i64]) -> TResult<Vec<Index>> {
    let bad = || TensorError::value(format!("a malformed index code {code:?}"));
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let (item, len) = match code[i] {
            0 => (Index::Int(*code.get(i + 1).ok_or_else(bad)?), 2),
            1 => {
                let s = code.get(i + 1..i + 4).ok_or_else(bad)?;
                (Index::Slice(s[0], s[1], s[2]), 4)
            }
            2 => (Index::NewAxis, 1),
            3 => (Index::Ellipsis, 1),
            _ => return Err(bad()),
        };
        out.push(item);
        i += len;
    }
    Ok(out)
}

/// The shape `t[index]` has, for a basic index (ints, slices, None, `...`).
/// The dimensions of a tensor of shape `shape` that the encoded basic index `code` selects
/// from, each with the int it takes there (`None`: a slice, whose bounds were worked out at
/// the dimension's recorded size); those an ellipsis covers, or past the index's end, are
/// taken whole, whatever their size.
pub fn addressed_dims(shape: &[usize], code: &[i64]) -> Option<Vec<(usize, Option<i64>)>> {
    let index = decode_index(code).ok()?;
    let consumed = crate::tensor::index::dims_consumed(shape, &index).ok()?;
    let mut dims = Vec::new();
    let mut dim = 0;
    for i in &index {
        match *i {
            Index::Ellipsis => dim += shape.len() - consumed,
            Index::NewAxis => {}
            Index::Int(k) => {
                dims.push((dim, Some(k)));
                dim += 1;
            }
            Index::Slice(..) => {
                dims.push((dim, None));
                dim += 1;
            }
        }
    }
    Some(dims)
}

pub fn basic_index_shape(shape: &[usize], index: &[Index]) -> TResult<Vec<usize>> {
    // The slice of a zero-filled stand-in of one element per dimension would not do: the
    // bounds checks need the real lengths. Work the shape out as ndarray would.
    let consumed = crate::tensor::index::dims_consumed(shape, index)?;
    let mut out = Vec::new();
    let mut dim = 0;
    for i in index {
        match *i {
            Index::Ellipsis => {
                for _ in 0..shape.len() - consumed {
                    out.push(shape[dim]);
                    dim += 1;
                }
            }
            Index::NewAxis => out.push(1),
            Index::Int(k) => {
                let n = shape[dim] as i64;
                let j = if k < 0 { k + n } else { k };
                if j < 0 || j >= n {
                    return Err(TensorError::index(format!(
                        "index {k} is out of bounds for dimension {dim} with size {n}"
                    )));
                }
                dim += 1;
            }
            Index::Slice(start, stop, step) => {
                let len = if step > 0 {
                    if stop > start {
                        (stop - start + step - 1) / step
                    } else {
                        0
                    }
                } else if start > stop {
                    (start - stop - step - 1) / -step
                } else {
                    0
                };
                out.push(len as usize);
                dim += 1;
            }
        }
    }
    out.extend_from_slice(&shape[dim..]);
    Ok(out)
}

fn index_take_shape(shape: &[usize], index: &Meta) -> TResult<Vec<usize>> {
    if shape.is_empty() {
        return Err(TensorError::index(
            "cannot index a 0-d tensor with a tensor",
        ));
    }
    if index.dtype != DType::Int64 {
        return Err(TensorError::index(format!(
            "a tensor index must be bool or int64, not {}",
            index.dtype.name()
        )));
    }
    let mut out = index.shape.clone();
    out.extend_from_slice(&shape[1..]);
    Ok(out)
}

fn index_mask_shape(shape: &[usize], mask: &Meta, count: i64) -> TResult<Vec<usize>> {
    if mask.dtype != DType::Bool {
        return Err(TensorError::index("a mask must be a bool tensor"));
    }
    let m = &mask.shape;
    if m.len() > shape.len() || shape[..m.len()] != *m {
        return Err(TensorError::index(format!(
            "a mask of shape {} does not match the leading dimensions of shape {}",
            shape_str(m),
            shape_str(shape)
        )));
    }
    let mut out = vec![count as usize];
    out.extend_from_slice(&shape[m.len()..]);
    Ok(out)
}

/// `torch.gather(x, dim, index)`: `out[i][j][k] = x[i][index[i][j][k]][k]` (for dim 1), the
/// index of the result's shape.
fn gather_shape(x: &Meta, index: &Meta, dim: i64) -> TResult<Vec<usize>> {
    let d = normalize_dim(dim, x.shape.len())?;
    if index.dtype != DType::Int64 {
        return Err(TensorError::runtime(
            "gather(): Expected dtype int64 for index",
        ));
    }
    if index.shape.len() != x.shape.len() {
        return Err(TensorError::runtime(
            "Index tensor must have the same number of dimensions as input tensor",
        ));
    }
    for (k, (&i, &s)) in index.shape.iter().zip(&x.shape).enumerate() {
        if k != d && i > s {
            return Err(TensorError::runtime(format!(
                "Size does not match at dimension {k} expected index {} to be smaller than self {} apart from dimension {d}",
                shape_str(&index.shape),
                shape_str(&x.shape)
            )));
        }
    }
    Ok(index.shape.clone())
}

fn gather_data<T: Element>(x: &ArrayD<T>, index: &ArrayD<i64>, d: usize) -> TResult<ArrayD<T>> {
    let n = x.shape()[d] as i64;
    let mut out = Vec::with_capacity(index.len());
    for (pos, &k) in index.indexed_iter() {
        let j = if k < 0 { k + n } else { k };
        if j < 0 || j >= n {
            return Err(TensorError::index(format!(
                "index {k} is out of bounds for dimension {d} with size {n}"
            )));
        }
        let mut at = pos.slice().to_vec();
        at[d] = j as usize;
        out.push(x[IxDyn(&at)]);
    }
    Ok(ArrayD::from_shape_vec(IxDyn(index.shape()), out).expect("one per index"))
}

fn index_select_data<T: Element>(x: &ArrayD<T>, index: &[i64], d: usize) -> TResult<ArrayD<T>> {
    let n = x.shape()[d] as i64;
    let rows = index
        .iter()
        .map(|&k| {
            let j = if k < 0 { k + n } else { k };
            if j < 0 || j >= n {
                Err(TensorError::index(format!(
                    "index out of range in self (index {k}, dimension {d} of size {n})"
                )))
            } else {
                Ok(j as usize)
            }
        })
        .collect::<TResult<Vec<_>>>()?;
    Ok(x.select(Axis(d), &rows))
}

/// The dimension, start and length `narrow` takes of a tensor of `shape`.
pub(crate) fn narrow_range(shape: &[usize], a: &Attrs) -> TResult<(usize, usize, usize)> {
    let d = normalize_dim(a.int("dim")?, shape.len())?;
    let n = shape[d] as i64;
    let start = a.int("start")?;
    let start = if start < 0 { start + n } else { start };
    let length = a.int("length")?;
    if start < 0 || length < 0 || start + length > n {
        return Err(TensorError::index(format!(
            "start ({start}) + length ({length}) exceeds dimension size ({n})."
        )));
    }
    Ok((d, start as usize, length as usize))
}

/// The fill value of `masked_fill`, a Python number: weakly typed, as the other operand of
/// an arithmetic op is.
fn fill_scalar(a: &Attrs) -> TResult<Scalar> {
    Ok(match a.get("value") {
        Attr::Bool(b) => Scalar::Bool(*b),
        Attr::Int(i) => Scalar::Int(*i),
        Attr::Float(f) => Scalar::Float(*f),
        other => {
            return Err(TensorError::type_error(format!(
                "masked_fill needs a number as its value, not {other:?}"
            )));
        }
    })
}

fn masked_fill_meta(m: &[Meta], a: &Attrs) -> TResult<Meta> {
    if m[1].dtype != DType::Bool {
        return Err(TensorError::runtime(format!(
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            m[1].dtype.name()
        )));
    }
    let shape = broadcast(&m[0].shape, &m[1].shape)?;
    if shape != m[0].shape {
        return Err(TensorError::runtime(format!(
            "the mask of shape {} does not broadcast to the tensor's shape {}",
            shape_str(&m[1].shape),
            shape_str(&m[0].shape)
        )));
    }
    if let Scalar::Float(v) = fill_scalar(a)?
        && !m[0].dtype.is_float()
        && !v.is_finite()
    {
        return Err(TensorError::runtime(format!(
            "value cannot be converted to type {} without overflow",
            m[0].dtype.name()
        )));
    }
    Ok(m[0].clone())
}

fn masked_fill(x: &TensorData, mask: &TensorData, a: &Attrs) -> TResult<TensorData> {
    let value = TensorData::full(&[], fill_scalar(a)?, x.dtype());
    let TensorData::Bool(m) = mask else {
        unreachable!("checked by inference")
    };
    let rows = m.as_slice().filter(|ms| {
        !ms.is_empty() && matches!(fit(m.shape(), x.shape()), Some(Fit::Whole | Fit::Rows))
    });
    let m = m.broadcast(IxDyn(x.shape())).expect("checked by inference");
    fn fill<T: Element>(
        x: &ArrayD<T>,
        m: &ndarray::ArrayViewD<'_, bool>,
        rows: Option<&[bool]>,
        v: T,
    ) -> ArrayD<T> {
        // A row-major mask of the tensor's shape or of its last dimensions (a causal mask
        // over a batch of score matrices), row after row: ndarray's general zip walks a
        // broadcast view element by element.
        if let (Some(xs), Some(ms)) = (x.as_slice(), rows) {
            let out: Vec<T> = xs
                .chunks_exact(ms.len())
                .flat_map(|row| row.iter().zip(ms).map(|(&e, &k)| if k { v } else { e }))
                .collect();
            return ArrayD::from_shape_vec(x.raw_dim(), out).expect("one value per element");
        }
        Zip::from(x)
            .and(m)
            .map_collect(|&e, &k| if k { v } else { e })
    }
    Ok(match (x, &value) {
        (TensorData::Bool(x), TensorData::Bool(v)) => TensorData::Bool(fill(x, &m, rows, v[[]])),
        (TensorData::Int64(x), TensorData::Int64(v)) => TensorData::Int64(fill(x, &m, rows, v[[]])),
        (TensorData::Float32(x), TensorData::Float32(v)) => {
            TensorData::Float32(fill(x, &m, rows, v[[]]))
        }
        (TensorData::Float64(x), TensorData::Float64(v)) => {
            TensorData::Float64(fill(x, &m, rows, v[[]]))
        }
        _ => unreachable!("the value has the tensor's type"),
    })
}

/// `tril` (`upper` false) or `triu` of the last two dimensions, from `diagonal`.
fn triangle(x: &TensorData, diagonal: i64, upper: bool) -> TResult<TensorData> {
    let shape = x.shape().to_vec();
    if shape.len() < 2 {
        return Err(TensorError::runtime(format!(
            "{}: input tensor must have at least 2 dimensions",
            if upper { "triu" } else { "tril" }
        )));
    }
    let (rows, cols) = (shape[shape.len() - 2], shape[shape.len() - 1]);
    let keep = move |i: usize, j: usize| {
        let off = j as i64 - i as i64;
        if upper {
            off >= diagonal
        } else {
            off <= diagonal
        }
    };
    fn apply<T: Element + Default>(
        a: &ArrayD<T>,
        rows: usize,
        cols: usize,
        keep: &impl Fn(usize, usize) -> bool,
    ) -> ArrayD<T> {
        let mut out = row_major(a.view());
        let zero = T::from_scalar(Scalar::Int(0));
        if let Some(s) = out.as_slice_mut() {
            for (k, e) in s.iter_mut().enumerate() {
                let (i, j) = ((k / cols) % rows.max(1), k % cols.max(1));
                if !keep(i, j) {
                    *e = zero;
                }
            }
        }
        out
    }
    Ok(crate::each_dtype!(x, a => apply(a, rows, cols, &keep).into()))
}

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "index",
            Arity::Exactly(1),
            |m: &[Meta], a: &Attrs| {
                Ok(Meta {
                    shape: basic_index_shape(&m[0].shape, &decode_index(&a.ints("index")?)?)?,
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                index::get(t[0], &Select::Basic(decode_index(&a.ints("index")?)?))
            },
        ),
        OpDef::new(
            "index_take",
            Arity::Exactly(2),
            |m: &[Meta], _| {
                Ok(Meta {
                    shape: index_take_shape(&m[0].shape, &m[1])?,
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], _| index::get(t[0], &Select::Take(t[1])),
        ),
        OpDef::new(
            "index_mask",
            Arity::Exactly(2),
            |m: &[Meta], a: &Attrs| {
                Ok(Meta {
                    shape: index_mask_shape(&m[0].shape, &m[1], a.int("count")?)?,
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], _| index::get(t[0], &Select::Mask(t[1])),
        ),
        OpDef::new(
            "gather",
            Arity::Exactly(2),
            |m: &[Meta], a: &Attrs| {
                Ok(Meta {
                    shape: gather_shape(&m[0], &m[1], a.int("dim")?)?,
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                let d = normalize_dim(a.int("dim")?, t[0].ndim())?;
                let TensorData::Int64(index) = t[1] else {
                    unreachable!("checked by inference")
                };
                Ok(crate::each_dtype!(t[0], x => gather_data(x, index, d)?.into()))
            },
        ),
        OpDef::new(
            "index_select",
            Arity::Exactly(2),
            |m: &[Meta], a: &Attrs| {
                let d = normalize_dim(a.int("dim")?, m[0].shape.len())?;
                if m[1].dtype != DType::Int64 || m[1].shape.len() > 1 {
                    return Err(TensorError::index(
                        "index_select(): Index is supposed to be a vector of int64",
                    ));
                }
                let mut shape = m[0].shape.clone();
                if shape.is_empty() {
                    return Err(TensorError::index("index_select() of a 0-d tensor"));
                }
                shape[d] = m[1].shape.first().copied().unwrap_or(1);
                Ok(Meta {
                    shape,
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                let d = normalize_dim(a.int("dim")?, t[0].ndim())?;
                let TensorData::Int64(index) = t[1] else {
                    unreachable!("checked by inference")
                };
                let index: Vec<i64> = index.iter().copied().collect();
                Ok(crate::each_dtype!(t[0], x => index_select_data(x, &index, d)?.into()))
            },
        ),
        OpDef::new(
            "narrow",
            Arity::Exactly(1),
            |m: &[Meta], a: &Attrs| {
                let (d, _, length) = narrow_range(&m[0].shape, a)?;
                let mut shape = m[0].shape.clone();
                shape[d] = length;
                Ok(Meta {
                    shape,
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                let (d, start, length) = narrow_range(t[0].shape(), a)?;
                Ok(crate::each_dtype!(t[0], x => row_major(
                    x.slice_axis(Axis(d), ndarray::Slice::from(start..start + length))
                )
                .into()))
            },
        ),
        OpDef::new(
            "masked_fill",
            Arity::Exactly(2),
            masked_fill_meta,
            |t: &[&TensorData], a: &Attrs| masked_fill(t[0], t[1], a),
        ),
        OpDef::new(
            "tril",
            Arity::Exactly(1),
            |m: &[Meta], _| triangle_meta(&m[0], "tril"),
            |t: &[&TensorData], a: &Attrs| triangle(t[0], a.int("diagonal")?, false),
        ),
        OpDef::new(
            "triu",
            Arity::Exactly(1),
            |m: &[Meta], _| triangle_meta(&m[0], "triu"),
            |t: &[&TensorData], a: &Attrs| triangle(t[0], a.int("diagonal")?, true),
        ),
        OpDef::new(
            "clone",
            Arity::Exactly(1),
            |m: &[Meta], _| Ok(m[0].clone()),
            |t: &[&TensorData], _| Ok(t[0].clone()),
        ),
        // `t[index] = value` out of place (what a traced item assignment records; eager
        // code assigns in place, `Registry::update`): `t` with the selection set to `value`,
        // broadcast to it and cast to `t`'s dtype.
        OpDef::new(
            "index_put",
            Arity::Exactly(2),
            |m: &[Meta], a: &Attrs| {
                let target = basic_index_shape(&m[0].shape, &decode_index(&a.ints("index")?)?)?;
                if broadcast(&m[1].shape, &target).ok().as_deref() != Some(&target[..]) {
                    return Err(TensorError::runtime(format!(
                        "cannot assign a value of shape {} to a selection of shape {}",
                        shape_str(&m[1].shape),
                        shape_str(&target)
                    )));
                }
                Ok(m[0].clone())
            },
            |t: &[&TensorData], a: &Attrs| {
                let mut out = t[0].clone();
                let index = Select::Basic(decode_index(&a.ints("index")?)?);
                index::set(&mut out, &index, t[1])?;
                Ok(out)
            },
        ),
    ]
}

fn triangle_meta(m: &Meta, name: &str) -> TResult<Meta> {
    if m.shape.len() < 2 {
        return Err(TensorError::runtime(format!(
            "{name}: input tensor must have at least 2 dimensions"
        )));
    }
    Ok(m.clone())
}
