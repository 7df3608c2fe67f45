//! Writes at indices along a dimension, the inverses of `gather` and `index_select`:
//! `scatter` and `scatter_add` (`out[i][index[i][j]] = src[i][j]` for dim 1, or `+=`; and
//! `scatter_mul`, `scatter_amax`, `scatter_amin`, which `scatter_reduce` is made of), and
//! `index_add`/`index_copy` (`out[index[i]] += source[i]` along the dimension). Each returns
//! a new tensor; the in-place spellings (`scatter_`, `index_add_`) store it into the target.
//! Writes are made in the row-major order of the index, so that of two writes to one place
//! the last stays, and sums are added in that order, in the tensor's own type.

use ndarray::{ArrayD, Dimension, IxDyn};

use crate::tensor::data::TensorData;
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError, shape_str};
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};
use crate::tensor::shape::normalize_dim;

/// What a write does with the value already there.
#[derive(Clone, Copy)]
enum Write {
    Replace,
    Add,
    Mul,
    Max,
    Min,
}

impl Write {
    fn combine(self, data: &mut TensorData, at: &[usize], src: &TensorData, from: &[usize]) {
        let (at, from) = (IxDyn(at), IxDyn(from));
        match (data, src) {
            (TensorData::Float64(o), TensorData::Float64(s)) => {
                o[&at] = self.float(o[&at], s[&from]);
            }
            (TensorData::Float32(o), TensorData::Float32(s)) => {
                o[&at] = self.float(f64::from(o[&at]), f64::from(s[&from])) as f32;
            }
            (TensorData::Int64(o), TensorData::Int64(s)) => {
                let (old, new) = (o[&at], s[&from]);
                o[&at] = match self {
                    Write::Replace => new,
                    Write::Add => old.wrapping_add(new),
                    Write::Mul => old.wrapping_mul(new),
                    Write::Max => old.max(new),
                    Write::Min => old.min(new),
                };
            }
            (TensorData::Bool(o), TensorData::Bool(s)) => {
                let (old, new) = (o[&at], s[&from]);
                o[&at] = match self {
                    Write::Replace => new,
                    Write::Add | Write::Max => old | new,
                    Write::Mul | Write::Min => old & new,
                };
            }
            _ => unreachable!("the dtypes were checked by inference"),
        }
    }

    /// The write in floats (a float32 product or sum rounded once to float32 is the
    /// float32 operation's result); a NaN wins a max or a min, as torch's.
    fn float(self, old: f64, new: f64) -> f64 {
        match self {
            Write::Replace => new,
            Write::Add => old + new,
            Write::Mul => old * new,
            Write::Max | Write::Min if old.is_nan() || new.is_nan() => f64::NAN,
            Write::Max => old.max(new),
            Write::Min => old.min(new),
        }
    }
}

fn same_dtype(name: &str, target: &Meta, src: &Meta) -> TResult<()> {
    if target.dtype != src.dtype {
        return Err(TensorError::runtime(format!(
            "{name}(): Expected self.dtype to be equal to src.dtype ({} and {})",
            target.dtype.name(),
            src.dtype.name()
        )));
    }
    Ok(())
}

/// `scatter(self, index, src, dim)`: torch's rules, an int64 index of the rank of `self`, no
/// larger than `src`, nor than `self` but along `dim`.
fn scatter_meta(name: &str, m: &[Meta], a: &Attrs) -> TResult<Meta> {
    let (target, index, src) = (&m[0], &m[1], &m[2]);
    let d = normalize_dim(a.int("dim")?, target.shape.len().max(1))?;
    if index.dtype != DType::Int64 {
        return Err(TensorError::runtime(format!(
            "{name}(): Expected dtype int64 for index"
        )));
    }
    same_dtype(name, target, src)?;
    let rank = target.shape.len();
    if index.shape.len() != rank || src.shape.len() != rank {
        return Err(TensorError::runtime(
            "Index tensor must have the same number of dimensions as self tensor",
        ));
    }
    for k in 0..rank {
        if index.shape[k] > src.shape[k] || (k != d && index.shape[k] > target.shape[k]) {
            return Err(TensorError::runtime(format!(
                "Expected index {} to be smaller than self {} apart from dimension {d} and to be smaller size than src {}",
                shape_str(&index.shape),
                shape_str(&target.shape),
                shape_str(&src.shape)
            )));
        }
    }
    Ok(target.clone())
}

/// What both kinds of write start from: a copy of the target, the dimension, the index.
fn write_parts<'a>(
    t: &[&'a TensorData],
    a: &Attrs,
) -> TResult<(TensorData, usize, &'a ArrayD<i64>)> {
    let out = t[0].clone();
    let d = normalize_dim(a.int("dim")?, out.ndim().max(1))?;
    let TensorData::Int64(index) = t[1] else {
        unreachable!("checked by inference")
    };
    Ok((out, d, index))
}

fn scatter(write: Write, t: &[&TensorData], a: &Attrs) -> TResult<TensorData> {
    let (mut out, d, index) = write_parts(t, a)?;
    if out.ndim() == 0 {
        return Ok(out);
    }
    let n = out.shape()[d];
    for (pos, &k) in index.indexed_iter() {
        let mut at = pos.slice().to_vec();
        at[d] = position(k, n, d)?;
        write.combine(&mut out, &at, t[2], pos.slice());
    }
    Ok(out)
}

/// `index_add(self, index, source, dim)`: a vector index, one entry per slice of `source`
/// along `dim`, and `source` of `self`'s shape but along `dim`.
fn index_meta(name: &str, m: &[Meta], a: &Attrs) -> TResult<Meta> {
    let (target, index, src) = (&m[0], &m[1], &m[2]);
    let d = normalize_dim(a.int("dim")?, target.shape.len().max(1))?;
    if index.dtype != DType::Int64 || index.shape.len() > 1 {
        return Err(TensorError::index(format!(
            "{name}(): Index is supposed to be a vector of int64"
        )));
    }
    same_dtype(name, target, src)?;
    let count = index.shape.first().copied().unwrap_or(1);
    let fits = src.shape.len() == target.shape.len()
        && (target.shape.is_empty()
            || (src.shape[d] == count
                && (0..target.shape.len()).all(|k| k == d || src.shape[k] == target.shape[k])));
    if !fits {
        return Err(TensorError::runtime(format!(
            "{name}(): source {} does not fit self {} with {count} indices along dimension {d}",
            shape_str(&src.shape),
            shape_str(&target.shape)
        )));
    }
    Ok(target.clone())
}

fn index_write(write: Write, t: &[&TensorData], a: &Attrs) -> TResult<TensorData> {
    let (mut out, d, index) = write_parts(t, a)?;
    let index: Vec<i64> = index.iter().copied().collect();
    if out.ndim() == 0 {
        if let Some(&k) = index.first() {
            position(k, 1, 0)?;
            write.combine(&mut out, &[], t[2], &[]);
        }
        return Ok(out);
    }
    let n = out.shape()[d];
    let rows = index
        .iter()
        .map(|&k| position(k, n, d))
        .collect::<TResult<Vec<_>>>()?;
    let src_shape = t[2].shape().to_vec();
    let all = ArrayD::<()>::from_elem(IxDyn(&src_shape), ());
    for (pos, _) in all.indexed_iter() {
        let mut at = pos.slice().to_vec();
        at[d] = rows[at[d]];
        write.combine(&mut out, &at, t[2], pos.slice());
    }
    Ok(out)
}

/// Index `k` of a dimension of size `n`, negative from the end.
fn position(k: i64, n: usize, d: usize) -> TResult<usize> {
    let j = if k < 0 { k + n as i64 } else { k };
    if j < 0 || j >= n as i64 {
        return Err(TensorError::index(format!(
            "index {k} is out of bounds for dimension {d} with size {n}"
        )));
    }
    Ok(j as usize)
}

pub fn ops() -> Vec<OpDef> {
    let mut out = Vec::new();
    for (name, write) in [
        ("scatter", Write::Replace),
        ("scatter_add", Write::Add),
        ("scatter_mul", Write::Mul),
        ("scatter_amax", Write::Max),
        ("scatter_amin", Write::Min),
    ] {
        out.push(OpDef::new(
            name,
            Arity::Exactly(3),
            move |m: &[Meta], a: &Attrs| scatter_meta(name, m, a),
            move |t: &[&TensorData], a: &Attrs| scatter(write, t, a),
        ));
    }
    // `put(self, index, source)`: torch's `put` (`put_` out of place), what a view's update
    // made by any ops records (`tensor::view_link`): `self.flat[index] = source`.
    out.push(OpDef::new("put", Arity::Exactly(3), put_meta, put));
    // The row-major position of each of a tensor's elements (`arange(numel).view(shape)`):
    // where a view's elements lie in its base, made in the graph from the base (so at each
    // call's sizes) and then viewed as the view was.
    out.push(OpDef::new(
        "element_positions",
        Arity::Exactly(1),
        |m: &[Meta], _: &Attrs| {
            Ok(Meta {
                shape: m[0].shape.clone(),
                dtype: DType::Int64,
            })
        },
        |t: &[&TensorData], _: &Attrs| {
            let shape = t[0].shape().to_vec();
            let n = shape.iter().product::<usize>() as i64;
            let all = ArrayD::from_shape_vec(IxDyn(&shape), (0..n).collect())
                .map_err(|e| TensorError::runtime(e.to_string()))?;
            Ok(TensorData::Int64(all))
        },
    ));
    for (name, write) in [("index_copy", Write::Replace), ("index_add", Write::Add)] {
        out.push(OpDef::new(
            name,
            Arity::Exactly(3),
            move |m: &[Meta], a: &Attrs| index_meta(name, m, a),
            move |t: &[&TensorData], a: &Attrs| index_write(write, t, a),
        ));
    }
    out
}

fn put_meta(m: &[Meta], _: &Attrs) -> TResult<Meta> {
    let (target, index, src) = (&m[0], &m[1], &m[2]);
    if index.dtype != DType::Int64 {
        return Err(TensorError::runtime(
            "put_(): Expected a long tensor for index",
        ));
    }
    same_dtype("put_", target, src)?;
    let count = |s: &[usize]| s.iter().product::<usize>();
    if count(&index.shape) != count(&src.shape) {
        return Err(TensorError::runtime(format!(
            "put_(): Expected source and index to have the same number of elements, but got source.numel() = {}, index.numel() = {}",
            count(&src.shape),
            count(&index.shape)
        )));
    }
    Ok(target.clone())
}

/// Row-major positions, negative from the end, in the order of `index`'s elements: of two
/// writes to one place the last stays.
fn put(t: &[&TensorData], _: &Attrs) -> TResult<TensorData> {
    let TensorData::Int64(index) = t[1] else {
        unreachable!("checked by inference")
    };
    let mut out = t[0].clone();
    put_into(&mut out, index, t[2])?;
    Ok(out)
}

/// `target.flat[index] = source` in place (the two of one dtype, `index` of `source`'s
/// number of elements): what a view's update writes into its base.
pub fn put_into(target: &mut TensorData, index: &ArrayD<i64>, source: &TensorData) -> TResult<()> {
    fn write<T: Copy + Send + Sync>(
        out: &mut ArrayD<T>,
        index: &ArrayD<i64>,
        src: &ArrayD<T>,
    ) -> TResult<()> {
        if !out.is_standard_layout() {
            *out = crate::tensor::layout::row_major(out.view());
        }
        let n = out.len();
        let flat = out.as_slice_mut().expect("a row-major array");
        for (&k, &v) in index.iter().zip(src.iter()) {
            flat[position(k, n, 0).map_err(|_| {
                TensorError::index(format!(
                    "out of range: tried to access index {k} on a tensor of {n} elements."
                ))
            })?] = v;
        }
        Ok(())
    }
    match (target, source) {
        (TensorData::Float64(o), TensorData::Float64(s)) => write(o, index, s),
        (TensorData::Float32(o), TensorData::Float32(s)) => write(o, index, s),
        (TensorData::Int64(o), TensorData::Int64(s)) => write(o, index, s),
        (TensorData::Bool(o), TensorData::Bool(s)) => write(o, index, s),
        _ => Err(TensorError::runtime(
            "put_(): self and source expected to have the same dtype",
        )),
    }
}
