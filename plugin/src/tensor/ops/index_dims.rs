//! `index_dims`: dimensions of a tensor taken by int index tensors, as torch's advanced
//! indexing does (`v[:, [-1]]`, `x[:, rows, cols]`, `logits[st.arange(B), targets]`). The
//! indices broadcast together; their shape replaces the taken dimensions where those stand
//! side by side, else it comes first. The attributes are dimensions, never sizes: a graph
//! recorded at one size runs at another. `index_dims_put` is the store (`x[:, idx] = v`,
//! `onehot[st.arange(n), labels] = 1.0`): the value broadcast to what `index_dims` would give,
//! written in order (a repeated index keeps the last write, as torch's CPU kernel does).

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

use crate::tensor::data::{Element, TensorData};
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError, shape_str};
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};
use crate::tensor::shape::broadcast;

pub fn ops() -> Vec<OpDef> {
    vec![
        put_op(),
        OpDef::new(
            "index_dims",
            Arity::AtLeast(2),
            |m: &[Meta], a: &Attrs| {
                let dims = taken_dims(&a.ints("dims")?, m[0].shape.len(), m.len() - 1)?;
                if m[1..].iter().any(|i| i.dtype != DType::Int64) {
                    return Err(TensorError::index(
                        "tensors used as indices must be int64 among other indices",
                    ));
                }
                let common = common_shape(m[1..].iter().map(|i| i.shape.as_slice()))?;
                Ok(Meta {
                    shape: result_shape(&m[0].shape, &dims, &common),
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                let dims = taken_dims(&a.ints("dims")?, t[0].ndim(), t.len() - 1)?;
                let indices = t[1..]
                    .iter()
                    .map(|i| match i {
                        TensorData::Int64(i) => Ok(i),
                        _ => Err(TensorError::index("tensors used as indices must be int64")),
                    })
                    .collect::<TResult<Vec<_>>>()?;
                Ok(crate::each_dtype!(t[0], x => take(x, &indices, &dims)?.into()))
            },
        ),
    ]
}

/// The taken dimensions: one per index, in increasing order.
fn taken_dims(dims: &[i64], ndim: usize, n_indices: usize) -> TResult<Vec<usize>> {
    let ok = dims.len() == n_indices
        && dims.windows(2).all(|w| w[0] < w[1])
        && dims.iter().all(|&d| d >= 0 && (d as usize) < ndim);
    if !ok {
        return Err(TensorError::index(format!(
            "too many indices for tensor of dimension {ndim}"
        )));
    }
    Ok(dims.iter().map(|&d| d as usize).collect())
}

fn common_shape<'a>(mut shapes: impl Iterator<Item = &'a [usize]>) -> TResult<Vec<usize>> {
    let first = shapes.next().unwrap_or(&[]).to_vec();
    shapes.try_fold(first, |acc, s| {
        broadcast(&acc, s).map_err(|_| {
            TensorError::index(format!(
                "shape mismatch: indexing tensors could not be broadcast together with shapes {} and {}",
                shape_str(&acc),
                shape_str(s)
            ))
        })
    })
}

fn side_by_side(dims: &[usize]) -> bool {
    dims.windows(2).all(|w| w[1] == w[0] + 1)
}

fn result_shape(shape: &[usize], dims: &[usize], common: &[usize]) -> Vec<usize> {
    let rest = (0..shape.len()).filter(|p| !dims.contains(p));
    if side_by_side(dims) {
        let first = dims[0];
        let mut out = shape[..first].to_vec();
        out.extend_from_slice(common);
        out.extend(rest.filter(|&p| p > first).map(|p| shape[p]));
        return out;
    }
    let mut out = common.to_vec();
    out.extend(rest.map(|p| shape[p]));
    out
}

/// The coordinates each position of the broadcast indices picks in the taken dimensions, `k`
/// per position in row-major order, negative ones counted from the end and every one checked
/// first (a store writes nothing when one is out of range).
fn coordinates(
    indices: &[&ArrayD<i64>],
    common: &[usize],
    shape: &[usize],
    dims: &[usize],
) -> TResult<Vec<usize>> {
    let views: Vec<ArrayViewD<i64>> = indices
        .iter()
        .map(|i| i.broadcast(IxDyn(common)).expect("a common shape"))
        .collect();
    let mut positions: Vec<_> = views.iter().map(|v| v.iter()).collect();
    let count: usize = common.iter().product();
    let mut out = Vec::with_capacity(count * dims.len());
    for _ in 0..count {
        for (k, position) in positions.iter_mut().enumerate() {
            let i = *position.next().expect("one per position");
            let n = shape[dims[k]] as i64;
            let j = if i < 0 { i + n } else { i };
            if j < 0 || j >= n {
                return Err(TensorError::index(format!(
                    "index {i} is out of bounds for dimension {} with size {n}",
                    dims[k]
                )));
            }
            out.push(j as usize);
        }
    }
    Ok(out)
}

fn take<T: Element>(x: &ArrayD<T>, indices: &[&ArrayD<i64>], dims: &[usize]) -> TResult<ArrayD<T>> {
    let shape = x.shape();
    let common = common_shape(indices.iter().map(|i| i.shape()))?;
    let rest: Vec<usize> = (0..shape.len()).filter(|p| !dims.contains(p)).collect();
    let order: Vec<usize> = dims.iter().chain(&rest).copied().collect();
    // The taken dimensions first: each position of the indices picks one block of the rest.
    let moved = x.view().permuted_axes(IxDyn(&order));
    let block: usize = rest.iter().map(|&p| shape[p]).product();
    let picks = coordinates(indices, &common, shape, dims)?;
    let mut out = Vec::with_capacity(picks.len() / dims.len() * block);
    for pick in picks.chunks(dims.len()) {
        let mut sub = moved.view();
        for &j in pick {
            sub = sub.index_axis_move(Axis(0), j);
        }
        out.extend(sub.iter().copied());
    }
    let mut front_shape = common.clone();
    front_shape.extend(rest.iter().map(|&p| shape[p]));
    let front = ArrayD::from_shape_vec(IxDyn(&front_shape), out).expect("one per element");
    if !side_by_side(dims) || dims[0] == 0 {
        return Ok(front);
    }
    // In place: the dimensions before the first taken one go back in front of the indices'.
    let (nb, before) = (common.len(), dims[0]);
    let back: Vec<usize> = (nb..nb + before)
        .chain(0..nb)
        .chain(nb + before..front_shape.len())
        .collect();
    Ok(front
        .permuted_axes(IxDyn(&back))
        .as_standard_layout()
        .into_owned())
}

fn indices_of<'a>(t: &[&'a TensorData]) -> TResult<Vec<&'a ArrayD<i64>>> {
    t.iter()
        .map(|i| match i {
            TensorData::Int64(i) => Ok(i),
            _ => Err(TensorError::index("tensors used as indices must be int64")),
        })
        .collect()
}

fn put_op() -> OpDef {
    OpDef::new(
        "index_dims_put",
        Arity::AtLeast(3),
        |m: &[Meta], a: &Attrs| {
            let dims = taken_dims(&a.ints("dims")?, m[0].shape.len(), m.len() - 2)?;
            if m[2..].iter().any(|i| i.dtype != DType::Int64) {
                return Err(TensorError::index(
                    "tensors used as indices must be int64 among other indices",
                ));
            }
            let common = common_shape(m[2..].iter().map(|i| i.shape.as_slice()))?;
            let target = result_shape(&m[0].shape, &dims, &common);
            if broadcast(&m[1].shape, &target).ok().as_deref() != Some(&target[..]) {
                return Err(TensorError::runtime(format!(
                    "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
                    shape_str(&m[1].shape),
                    shape_str(&target)
                )));
            }
            Ok(m[0].clone())
        },
        |t: &[&TensorData], a: &Attrs| {
            let dims = taken_dims(&a.ints("dims")?, t[0].ndim(), t.len() - 2)?;
            let indices = indices_of(&t[2..])?;
            let value = t[1].to_dtype(t[0].dtype());
            let mut out = t[0].clone();
            match (&mut out, &*value) {
                (TensorData::Float64(x), TensorData::Float64(v)) => put(x, v, &indices, &dims)?,
                (TensorData::Float32(x), TensorData::Float32(v)) => put(x, v, &indices, &dims)?,
                (TensorData::Int64(x), TensorData::Int64(v)) => put(x, v, &indices, &dims)?,
                (TensorData::Bool(x), TensorData::Bool(v)) => put(x, v, &indices, &dims)?,
                _ => unreachable!("the value is cast to the target's type"),
            }
            Ok(out)
        },
    )
}

fn put<T: Element>(
    x: &mut ArrayD<T>,
    value: &ArrayD<T>,
    indices: &[&ArrayD<i64>],
    dims: &[usize],
) -> TResult<()> {
    let shape = x.shape().to_vec();
    let common = common_shape(indices.iter().map(|i| i.shape()))?;
    let target = result_shape(&shape, dims, &common);
    let value = value.broadcast(IxDyn(&target)).ok_or_else(|| {
        TensorError::runtime(format!(
            "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
            shape_str(value.shape()),
            shape_str(&target)
        ))
    })?;
    // The value as `take` makes its result before the last move: the indices' dimensions
    // first, then the rest.
    let nb = common.len();
    let value = if side_by_side(dims) && dims[0] > 0 {
        let before = dims[0];
        let back: Vec<usize> = (nb..nb + before)
            .chain(0..nb)
            .chain(nb + before..target.len())
            .collect();
        let mut front = vec![0; back.len()];
        for (j, &f) in back.iter().enumerate() {
            front[f] = j;
        }
        value.permuted_axes(IxDyn(&front))
    } else {
        value
    };
    let rest: Vec<usize> = (0..shape.len()).filter(|p| !dims.contains(p)).collect();
    let rest_shape: Vec<usize> = rest.iter().map(|&p| shape[p]).collect();
    let order: Vec<usize> = dims.iter().chain(&rest).copied().collect();
    let mut moved = x.view_mut().permuted_axes(IxDyn(&order));
    let picks = coordinates(indices, &common, &shape, dims)?;
    let count = picks.len() / dims.len();
    let block: usize = rest_shape.iter().product();
    let rows = value
        .as_standard_layout()
        .into_owned()
        .into_shape_with_order((count, block))
        .expect("one block per position");
    for (b, pick) in picks.chunks(dims.len()).enumerate() {
        let mut sub = moved.view_mut();
        for &j in pick {
            sub = sub.index_axis_move(Axis(0), j);
        }
        let row = rows.row(b);
        sub.assign(
            &row.into_shape_with_order(IxDyn(&rest_shape))
                .expect("a block"),
        );
    }
    Ok(())
}
