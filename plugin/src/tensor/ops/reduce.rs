//! Reductions over one dimension, several, or all of them (`dim=None`), with `keepdim`;
//! variance; softmax and log_softmax.

use std::mem::MaybeUninit;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

use super::lane_sums;
use super::parallel::{by_lanes, copied};
use super::product::written;
use super::softmax::{softmax_rows_f32, softmax_rows_f64};
use crate::tensor::data::{Element, TensorData};
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError, shape_str};
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};
use crate::tensor::shape::normalize_dim;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    Sum,
    Mean,
    Max,
    Min,
    ArgMax,
    ArgMin,
    /// The product of each lane's elements, multiplied in order (1 for an empty lane).
    Prod,
}

impl Reduction {
    pub const ALL: [Reduction; 7] = [
        Reduction::Sum,
        Reduction::Mean,
        Reduction::Max,
        Reduction::Min,
        Reduction::ArgMax,
        Reduction::ArgMin,
        Reduction::Prod,
    ];

    fn name(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Mean => "mean",
            Reduction::Max => "max",
            Reduction::Min => "min",
            Reduction::ArgMax => "argmax",
            Reduction::ArgMin => "argmin",
            Reduction::Prod => "prod",
        }
    }

    fn result_dtype(self, t: DType) -> DType {
        match self {
            Reduction::Sum | Reduction::Prod if !t.is_float() => DType::Int64,
            Reduction::Mean => t.to_float(),
            Reduction::ArgMax | Reduction::ArgMin => DType::Int64,
            _ => t,
        }
    }

    fn needs_elements(self) -> bool {
        !matches!(self, Reduction::Sum | Reduction::Mean | Reduction::Prod)
    }
}

/// The dimensions an op reduces: `None` for all of them, or the listed ones (made absolute,
/// sorted, each once); `dim` is an int, a sequence of ints, or None.
pub(crate) fn reduced_dims(shape: &[usize], attrs: &Attrs) -> TResult<Option<Vec<usize>>> {
    let dims = match attrs.get("dim") {
        crate::tensor::registry::Attr::None => return Ok(None),
        crate::tensor::registry::Attr::Ints(v) if v.is_empty() => return Ok(None),
        _ => attrs.ints("dim")?,
    };
    let mut out = Vec::with_capacity(dims.len());
    for d in dims {
        let d = normalize_dim(d, shape.len())?;
        if out.contains(&d) {
            return Err(TensorError::runtime(format!(
                "dim {d} appears multiple times in the list of dims"
            )));
        }
        out.push(d);
    }
    out.sort_unstable();
    Ok(Some(out))
}

/// The result shape, and the dimension reduced (None: all; several dimensions are folded
/// into one by `fold_dims` before the kernel runs).
fn reduced_shape(
    r: Reduction,
    shape: &[usize],
    attrs: &Attrs,
) -> TResult<(Vec<usize>, Option<Vec<usize>>)> {
    let keepdim = attrs.flag("keepdim");
    let dims = reduced_dims(shape, attrs)?;
    let name = r.name();
    match dims {
        None => {
            if r.needs_elements() && shape.contains(&0) {
                return Err(TensorError::runtime(format!(
                    "{name} of an empty tensor (shape {})",
                    shape_str(shape)
                )));
            }
            Ok((
                if keepdim {
                    vec![1; shape.len()]
                } else {
                    vec![]
                },
                None,
            ))
        }
        Some(dims) => {
            if shape.is_empty() {
                return Ok((vec![], Some(dims)));
            }
            if dims.len() > 1 && matches!(r, Reduction::ArgMax | Reduction::ArgMin) {
                return Err(TensorError::type_error(format!(
                    "{name} takes one dimension, not several"
                )));
            }
            if r.needs_elements() && dims.iter().any(|&d| shape[d] == 0) {
                return Err(TensorError::index(format!(
                    "{name} over a dimension of size 0 (shape {})",
                    shape_str(shape)
                )));
            }
            let mut out = Vec::with_capacity(shape.len());
            for (d, &n) in shape.iter().enumerate() {
                if !dims.contains(&d) {
                    out.push(n);
                } else if keepdim {
                    out.push(1);
                }
            }
            Ok((out, Some(dims)))
        }
    }
}

/// `t` with the dimensions `dims` moved to the end and folded into one (row-major), so that
/// a reduction over them is one over the last dimension; one dimension is left in place.
fn fold_dims<'a>(t: &'a TensorData, dims: &[usize]) -> (std::borrow::Cow<'a, TensorData>, usize) {
    if dims.len() <= 1 {
        return (
            std::borrow::Cow::Borrowed(t),
            dims.first().copied().unwrap_or(0),
        );
    }
    let shape = t.shape();
    let mut perm: Vec<usize> = (0..shape.len()).filter(|d| !dims.contains(d)).collect();
    let mut folded: Vec<usize> = perm.iter().map(|&d| shape[d]).collect();
    folded.push(dims.iter().map(|&d| shape[d]).product());
    perm.extend_from_slice(dims);
    let last = folded.len() - 1;
    let out = crate::each_dtype!(t, x => crate::tensor::layout::row_major(
        x.view().permuted_axes(IxDyn(&perm)),
    )
        .into_shape_with_order(IxDyn(&folded))
        .expect("same count")
        .into());
    (std::borrow::Cow::Owned(out), last)
}

fn lane_f64<D: ndarray::Dimension>(r: Reduction, lane: ndarray::ArrayView<'_, f64, D>) -> f64 {
    let n = lane.len();
    match r {
        Reduction::Sum => lane.sum(),
        Reduction::Mean => {
            if n == 0 {
                f64::NAN
            } else {
                lane.sum() / n as f64
            }
        }
        Reduction::Max => lane.iter().fold(f64::NEG_INFINITY, |m, &x| {
            if m.is_nan() || x.is_nan() {
                f64::NAN
            } else {
                m.max(x)
            }
        }),
        Reduction::Min => lane.iter().fold(f64::INFINITY, |m, &x| {
            if m.is_nan() || x.is_nan() {
                f64::NAN
            } else {
                m.min(x)
            }
        }),
        Reduction::ArgMax | Reduction::ArgMin => arg(r, lane.iter().copied()) as f64,
        Reduction::Prod => lane.iter().product(),
    }
}

/// Index of the first maximum (minimum); a NaN is the extreme, as in NumPy.
pub(super) fn arg<T: PartialOrd + Copy>(r: Reduction, values: impl Iterator<Item = T>) -> i64 {
    let mut best: Option<(usize, T)> = None;
    for (i, x) in values.enumerate() {
        #[allow(clippy::eq_op)]
        let nan = x != x;
        match best {
            None => best = Some((i, x)),
            Some((_, b)) => {
                #[allow(clippy::eq_op)]
                let best_nan = b != b;
                if best_nan {
                    break;
                }
                let better = nan || if r == Reduction::ArgMax { x > b } else { x < b };
                if better {
                    best = Some((i, x));
                }
            }
        }
        if nan {
            break;
        }
    }
    best.map_or(0, |(i, _)| i as i64)
}

fn reduce_typed<T: Element + PartialOrd>(
    r: Reduction,
    a: &ArrayD<T>,
    dim: Option<usize>,
    out_shape: &[usize],
) -> TensorData {
    // Integer sums and min/max stay exact in i64 / the own type; the rest goes through f64.
    let to_out = |values: Vec<f64>| -> TensorData {
        let dt = r.result_dtype(T::DTYPE);
        let scalars: Vec<_> = values
            .into_iter()
            .map(crate::tensor::data::Scalar::Float)
            .collect();
        TensorData::from_scalars(out_shape, &scalars, dt).expect("shape computed by inference")
    };
    let exact_int = T::DTYPE == DType::Int64 || T::DTYPE == DType::Bool;
    // Row-major float data, reduced from its own elements (`lane_sums`): the values a lane's
    // copy gives, without the copy.
    if let (Some(flat), false) = (a.as_slice(), exact_int) {
        match dim {
            Some(d) if a.ndim() > 0 && d + 1 == a.ndim() && a.shape()[d] > 0 => {
                return to_out(lane_sums::along_runs(r, flat, a.shape()[d]));
            }
            Some(d) if a.ndim() > 0 && lane_sums::across(r) => {
                let (outer, inner) = (
                    a.shape()[..d].iter().product(),
                    a.shape()[d + 1..].iter().product(),
                );
                return to_out(lane_sums::across_runs(r, flat, outer, a.shape()[d], inner));
            }
            None if !flat.is_empty() => {
                return to_out(lane_sums::along_runs(r, flat, flat.len()));
            }
            _ => {}
        }
    }
    let lanes: Vec<ArrayViewD<'_, T>> = match dim {
        None => vec![
            a.view()
                .into_shape_with_order(IxDyn(&[a.len()]))
                .unwrap_or_else(|_| unreachable!()),
        ],
        Some(_) if a.ndim() == 0 => vec![a.view()],
        Some(d) => a.lanes(Axis(d)).into_iter().map(|l| l.into_dyn()).collect(),
    };
    if exact_int
        && matches!(
            r,
            Reduction::Sum
                | Reduction::Prod
                | Reduction::Max
                | Reduction::Min
                | Reduction::ArgMax
                | Reduction::ArgMin
        )
    {
        let values: Vec<crate::tensor::data::Scalar> = lanes
            .iter()
            .map(|lane| {
                let ints = lane.iter().map(|v| v.to_scalar().as_i64());
                crate::tensor::data::Scalar::Int(match r {
                    Reduction::Sum => ints.fold(0i64, i64::wrapping_add),
                    Reduction::Prod => ints.fold(1i64, i64::wrapping_mul),
                    Reduction::Max => ints.max().unwrap_or(0),
                    Reduction::Min => ints.min().unwrap_or(0),
                    _ => arg(r, ints),
                })
            })
            .collect();
        return TensorData::from_scalars(out_shape, &values, r.result_dtype(T::DTYPE))
            .expect("shape computed by inference");
    }
    to_out(
        lanes
            .iter()
            .map(|lane| lane_f64(r, lane.mapv(|v| v.to_scalar().as_f64()).view()))
            .collect(),
    )
}

pub fn reduce(r: Reduction, t: &TensorData, attrs: &Attrs) -> TResult<TensorData> {
    let (out_shape, dims) = reduced_shape(r, t.shape(), attrs)?;
    let (t, dim) = match &dims {
        Some(dims) => {
            let (t, d) = fold_dims(t, dims);
            (t, Some(d))
        }
        // `lanes(Axis(d))` yields lanes in the row-major order of the other axes, the order
        // of the result's elements; only a whole-tensor reduction views the data as one
        // row, which needs row-major storage.
        None if !t.is_standard_layout() => (
            std::borrow::Cow::Owned(
                crate::each_dtype!(t, x => crate::tensor::layout::row_major(x.view()).into()),
            ),
            None,
        ),
        None => (std::borrow::Cow::Borrowed(t), None),
    };
    let t: &TensorData = &t;
    Ok(crate::each_dtype!(t, a => reduce_typed(r, a, dim, &out_shape)))
}

/// `var(x, dim, correction, keepdim)`: the mean squared deviation from the mean of each lane,
/// divided by `n - correction` (torch's `unbiased=True` is a correction of 1), computed in
/// f64 and given in the tensor's float type.
pub fn var(t: &TensorData, attrs: &Attrs) -> TResult<TensorData> {
    let (out_shape, dims) = reduced_shape(Reduction::Mean, t.shape(), attrs)?;
    let correction = attrs.int("correction")? as f64;
    let dt = t.dtype().to_float();
    let var_of = |values: &[f64]| var_lane(values, correction);
    // float32 along its last, row-major dimension (a layer norm's): each run widened on its
    // own, the same sums, no f64 copy of the whole tensor.
    if let (TensorData::Float32(a), Some(dims)) = (t, &dims)
        && let (Some(flat), [d]) = (a.as_slice(), dims.as_slice())
        && d + 1 == a.ndim()
        && a.shape()[*d] > 0
    {
        let n = a.shape()[*d];
        let values: Vec<f32> = lane_sums::per_run(flat, n, |run| {
            let wide: Vec<f64> = run.iter().map(|&v| f64::from(v)).collect();
            var_of(&wide) as f32
        });
        return Ok(TensorData::Float32(
            ArrayD::from_shape_vec(IxDyn(&out_shape), values).expect("one value per lane"),
        ));
    }
    let x = t.as_f64_array();
    let lane_var = |lane: &mut dyn Iterator<Item = f64>| var_of(&lane.collect::<Vec<f64>>());
    let values: Vec<f64> = match &dims {
        None => vec![lane_var(&mut x.iter().copied())],
        Some(dims) => {
            let data = TensorData::Float64(x);
            let (folded, d) = fold_dims(&data, dims);
            let TensorData::Float64(f) = folded.as_ref() else {
                unreachable!("f64 in, f64 out")
            };
            if f.ndim() == 0 {
                vec![lane_var(&mut f.iter().copied())]
            } else if let Some(flat) = f.as_slice()
                && d + 1 == f.ndim()
                && f.shape()[d] > 0
            {
                // Row-major lanes along the last dimension: each a run of memory.
                lane_sums::per_run(flat, f.shape()[d], var_of)
            } else {
                f.lanes(Axis(d))
                    .into_iter()
                    .map(|l| lane_var(&mut l.iter().copied()))
                    .collect()
            }
        }
    };
    let scalars: Vec<_> = values
        .into_iter()
        .map(crate::tensor::data::Scalar::Float)
        .collect();
    TensorData::from_scalars(&out_shape, &scalars, dt)
}

/// The sum of one lane, as `sum` computes it (its elements widened to f64). Lowered graphs
/// reduce through here and [`mean_lane`], [`var_lane`], so that they round as eager does.
pub fn sum_lane(lane: &[f64]) -> f64 {
    lane_f64(Reduction::Sum, ndarray::ArrayView1::from(lane))
}

/// The mean of one lane, as `mean` computes it.
pub fn mean_lane(lane: &[f64]) -> f64 {
    lane_f64(Reduction::Mean, ndarray::ArrayView1::from(lane))
}

/// The variance of one lane, as `var` computes it: the mean squared deviation from the mean,
/// divided by `n - correction`.
pub fn var_lane(lane: &[f64], correction: f64) -> f64 {
    // Both sums in eight interleaved parts, as `sum` adds (one dependency chain per part:
    // 256 lanes of 1024 floats took 395 µs with one chain per lane).
    let n = lane.len() as f64;
    let mean = lane_sums::sum8(lane) / n;
    let ss = lane_sums::sum8_by(lane, |v| (v - mean) * (v - mean));
    ss / (n - correction).max(0.0)
}

/// softmax / log_softmax along `dim`, computed in the tensor's float type (other types in
/// float64, then cast to their float type).
pub fn softmax(t: &TensorData, dim: i64, log: bool) -> TResult<TensorData> {
    let d = normalize_dim(dim, t.ndim())?;
    if t.ndim() == 0 {
        // One element: softmax 1, log_softmax 0 (NaN for a non-finite input, as torch).
        let x = t.as_f64_array().mapv(|v| match (v.is_finite(), log) {
            (false, _) => f64::NAN,
            (true, true) => 0.0,
            (true, false) => 1.0,
        });
        return Ok(TensorData::Float64(x).cast(t.dtype().to_float()));
    }
    Ok(match t {
        TensorData::Float32(a) => TensorData::Float32(along(a.view(), d, log, softmax_rows_f32)),
        TensorData::Float64(a) => TensorData::Float64(along(a.view(), d, log, softmax_rows_f64)),
        _ => {
            let x = along(t.as_f64_array().view(), d, log, softmax_rows_f64);
            TensorData::Float64(x).cast(t.dtype().to_float())
        }
    })
}

/// `rows` (softmax of whole runs of a buffer, in place) over the lanes of `a` along `d`,
/// lane by lane by the same steps whatever the layout (a layout must never change how a
/// result rounds).
fn along<T: ndarray::LinalgScalar + Send + Sync>(
    a: ArrayViewD<'_, T>,
    d: usize,
    log: bool,
    rows: fn(&mut [T], usize, bool),
) -> ArrayD<T> {
    let n = a.shape()[d];
    if n == 0 {
        return a.to_owned();
    }
    if let Some(xs) = a.as_slice()
        && d + 1 == a.ndim()
    {
        // Row-major along the last dimension: the lanes are consecutive runs of memory. Each
        // thread copies its own lanes: a copy of the whole on the calling thread first took a
        // third of the time two threads gained.
        let fill = |out: &mut [MaybeUninit<T>]| {
            by_lanes(xs, out, n, |xs, out| rows(copied(xs, out), n, log))
        };
        // SAFETY: `by_lanes` hands every element of `out` to one part, which writes it.
        let out = unsafe { written(xs.len(), fill) };
        return ArrayD::from_shape_vec(a.raw_dim(), out).expect("one value per element");
    }
    let mut out = ArrayD::<T>::zeros(a.raw_dim());
    let mut run = Vec::with_capacity(n);
    for (lane, mut o) in a.lanes(Axis(d)).into_iter().zip(out.lanes_mut(Axis(d))) {
        run.clear();
        run.extend(lane.iter().copied());
        rows(&mut run, n, log);
        o.iter_mut().zip(&run).for_each(|(v, &r)| *v = r);
    }
    out
}

pub fn ops() -> Vec<OpDef> {
    let mut out = Vec::new();
    for r in Reduction::ALL {
        out.push(OpDef::new(
            r.name(),
            Arity::Exactly(1),
            move |m: &[Meta], a: &Attrs| {
                Ok(Meta {
                    shape: reduced_shape(r, &m[0].shape, a)?.0,
                    dtype: r.result_dtype(m[0].dtype),
                })
            },
            move |t: &[&TensorData], a: &Attrs| reduce(r, t[0], a),
        ));
    }
    out.push(OpDef::new(
        "var",
        Arity::Exactly(1),
        |m: &[Meta], a: &Attrs| {
            Ok(Meta {
                shape: reduced_shape(Reduction::Mean, &m[0].shape, a)?.0,
                dtype: m[0].dtype.to_float(),
            })
        },
        |t: &[&TensorData], a: &Attrs| var(t[0], a),
    ));
    for (name, log) in [("softmax", false), ("log_softmax", true)] {
        out.push(OpDef::new(
            name,
            Arity::Exactly(1),
            |m: &[Meta], a: &Attrs| {
                normalize_dim(a.int("dim")?, m[0].shape.len())?;
                Ok(Meta {
                    shape: m[0].shape.clone(),
                    dtype: m[0].dtype.to_float(),
                })
            },
            move |t: &[&TensorData], a: &Attrs| softmax(t[0], a.int("dim")?, log),
        ));
    }
    out
}
