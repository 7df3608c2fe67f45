//! Ops that move elements around without computing: reshape, transpose, permute, unsqueeze,
//! squeeze, expand, cat, stack.

use ndarray::{ArrayD, Axis, IxDyn};

use crate::tensor::data::TensorData;
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError, shape_str};
use crate::tensor::layout::row_major;
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};
use crate::tensor::shape::{normalize_dim, numel};

/// `shape` with its one `-1` resolved, checked against `numel` elements.
pub fn reshape_target(from: &[usize], spec: &[i64]) -> TResult<Vec<usize>> {
    let bad = || {
        TensorError::runtime(format!(
            "cannot reshape a tensor of shape {} into {:?}",
            shape_str(from),
            spec
        ))
    };
    let n = numel(from);
    if spec.iter().filter(|&&d| d == -1).count() > 1 || spec.iter().any(|&d| d < -1) {
        return Err(bad());
    }
    let known: usize = spec
        .iter()
        .filter(|&&d| d >= 0)
        .map(|&d| d as usize)
        .product();
    let out: Vec<usize> = spec
        .iter()
        .map(|&d| {
            if d >= 0 {
                Ok(d as usize)
            } else if known == 0 || !n.is_multiple_of(known) {
                Err(bad())
            } else {
                Ok(n / known)
            }
        })
        .collect::<TResult<_>>()?;
    if numel(&out) != n {
        return Err(bad());
    }
    Ok(out)
}

/// The shape `expand(*sizes)` gives a tensor of shape `from`, as torch works it out: new
/// leading dimensions of the sizes given, a dimension of 1 repeated to its size, `-1` keeping
/// a dimension as it is.
pub fn expand_target(from: &[usize], sizes: &[i64]) -> TResult<Vec<usize>> {
    if sizes.len() < from.len() {
        return Err(TensorError::runtime(format!(
            "expand: {} sizes given for a tensor of {} dimensions (at least as many are needed)",
            sizes.len(),
            from.len()
        )));
    }
    let lead = sizes.len() - from.len();
    let mut out = Vec::with_capacity(sizes.len());
    for (i, &want) in sizes.iter().enumerate() {
        let size = match i.checked_sub(lead).map(|j| from[j]) {
            None if want >= 0 => want as usize,
            None => {
                return Err(TensorError::runtime(format!(
                    "expand: the size of a new leading dimension cannot be {want}"
                )));
            }
            Some(have) if want == -1 || want == have as i64 => have,
            Some(1) if want >= 0 => want as usize,
            Some(have) => {
                return Err(TensorError::runtime(format!(
                    "expand: the size {want} must match the existing size {have} at \
                     non-singleton dimension {i} (shape {})",
                    shape_str(from)
                )));
            }
        };
        out.push(size);
    }
    Ok(out)
}

pub fn permutation(dims: &[i64], ndim: usize) -> TResult<Vec<usize>> {
    let perm: Vec<usize> = dims
        .iter()
        .map(|&d| normalize_dim(d, ndim))
        .collect::<TResult<_>>()?;
    let mut seen = vec![false; ndim];
    if perm.len() != ndim || perm.iter().any(|&d| std::mem::replace(&mut seen[d], true)) {
        return Err(TensorError::runtime(format!(
            "permute needs a permutation of the {ndim} dimensions, got {dims:?}"
        )));
    }
    Ok(perm)
}

pub fn transpose_perm(ndim: usize, a: &Attrs) -> TResult<Vec<usize>> {
    if ndim == 0 {
        return Ok(vec![]);
    }
    let (d0, d1) = (
        normalize_dim(a.int("dim0")?, ndim)?,
        normalize_dim(a.int("dim1")?, ndim)?,
    );
    let mut perm: Vec<usize> = (0..ndim).collect();
    perm.swap(d0, d1);
    Ok(perm)
}

fn permute_data(t: &TensorData, perm: &[usize]) -> TensorData {
    crate::each_dtype!(t, x => row_major(x.view().permuted_axes(IxDyn(perm))).into())
}

fn unsqueeze_dim(ndim: usize, dim: i64) -> TResult<usize> {
    normalize_dim(dim, ndim + 1)
}

fn squeeze_shape(shape: &[usize], dim: Option<i64>) -> TResult<Vec<usize>> {
    Ok(match dim {
        None => shape.iter().copied().filter(|&d| d != 1).collect(),
        Some(d) => {
            if shape.is_empty() {
                normalize_dim(d, 0)?;
                return Ok(vec![]);
            }
            let d = normalize_dim(d, shape.len())?;
            let mut out = shape.to_vec();
            if out[d] == 1 {
                out.remove(d);
            }
            out
        }
    })
}

fn reshape_data(t: &TensorData, shape: &[usize]) -> TensorData {
    crate::each_dtype!(t, x => row_major(x.view()).into_shape_with_order(IxDyn(shape)).expect("checked").into())
}

/// Shape of `cat` (stack: `new_axis`) of tensors of `shapes` along `dim`.
fn join_shape(
    shapes: &[Vec<usize>],
    dim: i64,
    new_axis: bool,
    name: &str,
) -> TResult<(Vec<usize>, usize)> {
    let first = &shapes[0];
    let ndim = first.len() + usize::from(new_axis);
    if !new_axis && first.is_empty() {
        return Err(TensorError::runtime(
            "cat: zero-dimensional tensors cannot be concatenated",
        ));
    }
    let d = normalize_dim(dim, ndim)?;
    for s in &shapes[1..] {
        let same = if new_axis {
            s == first
        } else {
            s.len() == first.len()
                && s.iter()
                    .zip(first)
                    .enumerate()
                    .all(|(i, (a, b))| i == d || a == b)
        };
        if !same {
            return Err(TensorError::runtime(format!(
                "{name}: shapes {} and {} do not match{}",
                shape_str(first),
                shape_str(s),
                if new_axis {
                    String::new()
                } else {
                    format!(" outside dimension {d}")
                }
            )));
        }
    }
    let mut out = first.clone();
    if new_axis {
        out.insert(d, shapes.len());
    } else {
        out[d] = shapes.iter().map(|s| s[d]).sum();
    }
    Ok((out, d))
}

fn join(ts: &[&TensorData], dim: i64, new_axis: bool) -> TResult<TensorData> {
    let shapes: Vec<Vec<usize>> = ts.iter().map(|t| t.shape().to_vec()).collect();
    let (_, d) = join_shape(
        &shapes,
        dim,
        new_axis,
        if new_axis { "stack" } else { "cat" },
    )?;
    let dt = ts
        .iter()
        .map(|t| t.dtype())
        .reduce(DType::promote)
        .expect("at least one");
    let cast: Vec<std::borrow::Cow<'_, TensorData>> = ts.iter().map(|t| t.to_dtype(dt)).collect();
    fn go<T: Clone>(arrays: Vec<&ArrayD<T>>, d: usize, new_axis: bool) -> ArrayD<T> {
        let views: Vec<_> = arrays.iter().map(|a| a.view()).collect();
        if new_axis {
            ndarray::stack(Axis(d), &views).expect("checked")
        } else {
            ndarray::concatenate(Axis(d), &views).expect("checked")
        }
    }
    macro_rules! collect {
        ($variant:ident) => {
            TensorData::$variant(go(
                cast.iter()
                    .map(|t| match t.as_ref() {
                        TensorData::$variant(a) => a,
                        _ => unreachable!("cast to one type"),
                    })
                    .collect(),
                d,
                new_axis,
            ))
        };
    }
    Ok(match dt {
        DType::Bool => collect!(Bool),
        DType::Int64 => collect!(Int64),
        DType::Float32 => collect!(Float32),
        DType::Float64 => collect!(Float64),
    })
}

pub fn ops() -> Vec<OpDef> {
    let same_dtype = |m: &[Meta]| m[0].dtype;
    vec![
        OpDef::new(
            "reshape",
            Arity::Exactly(1),
            move |m: &[Meta], a: &Attrs| {
                Ok(Meta {
                    shape: reshape_target(&m[0].shape, &a.ints("shape")?)?,
                    dtype: same_dtype(m),
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                Ok(reshape_data(
                    t[0],
                    &reshape_target(t[0].shape(), &a.ints("shape")?)?,
                ))
            },
        ),
        OpDef::new(
            "expand",
            Arity::Exactly(1),
            move |m: &[Meta], a: &Attrs| {
                Ok(Meta {
                    shape: expand_target(&m[0].shape, &a.ints("shape")?)?,
                    dtype: same_dtype(m),
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                let to = IxDyn(&expand_target(t[0].shape(), &a.ints("shape")?)?);
                Ok(crate::each_dtype!(t[0], x => x
                    .broadcast(to.clone())
                    .expect("expand_target checked it")
                    .as_standard_layout()
                    .into_owned()
                    .into()))
            },
        ),
        OpDef::new(
            "transpose",
            Arity::Exactly(1),
            move |m: &[Meta], a: &Attrs| {
                let perm = transpose_perm(m[0].shape.len(), a)?;
                Ok(Meta {
                    shape: perm.iter().map(|&p| m[0].shape[p]).collect(),
                    dtype: same_dtype(m),
                })
            },
            |t: &[&TensorData], a: &Attrs| Ok(permute_data(t[0], &transpose_perm(t[0].ndim(), a)?)),
        ),
        OpDef::new(
            "permute",
            Arity::Exactly(1),
            move |m: &[Meta], a: &Attrs| {
                let perm = permutation(&a.ints("dims")?, m[0].shape.len())?;
                Ok(Meta {
                    shape: perm.iter().map(|&p| m[0].shape[p]).collect(),
                    dtype: same_dtype(m),
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                Ok(permute_data(
                    t[0],
                    &permutation(&a.ints("dims")?, t[0].ndim())?,
                ))
            },
        ),
        OpDef::new(
            "unsqueeze",
            Arity::Exactly(1),
            move |m: &[Meta], a: &Attrs| {
                let d = unsqueeze_dim(m[0].shape.len(), a.int("dim")?)?;
                let mut s = m[0].shape.clone();
                s.insert(d, 1);
                Ok(Meta {
                    shape: s,
                    dtype: same_dtype(m),
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                let d = unsqueeze_dim(t[0].ndim(), a.int("dim")?)?;
                Ok(crate::each_dtype!(t[0], x => x.clone().insert_axis(Axis(d)).into()))
            },
        ),
        OpDef::new(
            "squeeze",
            Arity::Exactly(1),
            move |m: &[Meta], a: &Attrs| {
                Ok(Meta {
                    shape: squeeze_shape(&m[0].shape, a.opt_int("dim")?)?,
                    dtype: same_dtype(m),
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                Ok(reshape_data(
                    t[0],
                    &squeeze_shape(t[0].shape(), a.opt_int("dim")?)?,
                ))
            },
        ),
        OpDef::new(
            "cat",
            Arity::AtLeast(1),
            |m: &[Meta], a: &Attrs| {
                let shapes: Vec<Vec<usize>> = m.iter().map(|x| x.shape.clone()).collect();
                let dtype = m
                    .iter()
                    .map(|x| x.dtype)
                    .reduce(DType::promote)
                    .expect("at least one");
                Ok(Meta {
                    shape: join_shape(&shapes, a.opt_int("dim")?.unwrap_or(0), false, "cat")?.0,
                    dtype,
                })
            },
            |t: &[&TensorData], a: &Attrs| join(t, a.opt_int("dim")?.unwrap_or(0), false),
        ),
        OpDef::new(
            "stack",
            Arity::AtLeast(1),
            |m: &[Meta], a: &Attrs| {
                let shapes: Vec<Vec<usize>> = m.iter().map(|x| x.shape.clone()).collect();
                let dtype = m
                    .iter()
                    .map(|x| x.dtype)
                    .reduce(DType::promote)
                    .expect("at least one");
                Ok(Meta {
                    shape: join_shape(&shapes, a.opt_int("dim")?.unwrap_or(0), true, "stack")?.0,
                    dtype,
                })
            },
            |t: &[&TensorData], a: &Attrs| join(t, a.opt_int("dim")?.unwrap_or(0), true),
        ),
    ]
}
