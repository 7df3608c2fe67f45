//! Pooling over the last two dimensions of a batch of images (`(n, c, h, w)`): `max_pool2d`,
//! `avg_pool2d` and `adaptive_avg_pool2d`, with torch's sizes (floor or ceil mode), padding
//! and divisors. The attributes are windows and output sizes chosen by the program, never
//! sizes of the input: a graph recorded at one image size runs at another.

use ndarray::{ArrayD, IxDyn, LinalgScalar};

use crate::tensor::data::TensorData;
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError, shape_str};
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "max_pool2d",
            Arity::Exactly(1),
            |m: &[Meta], a: &Attrs| meta(&m[0], &Windows::of(a, true)?, "max_pool2d", true),
            |t: &[&TensorData], a: &Attrs| {
                let w = Windows::of(a, true)?;
                Ok(match t[0] {
                    TensorData::Float64(x) => pooled(x, &w, max_of)?.into(),
                    TensorData::Float32(x) => pooled(x, &w, max_of)?.into(),
                    TensorData::Int64(x) => pooled(x, &w, max_of)?.into(),
                    TensorData::Bool(_) => unreachable!("checked by inference"),
                })
            },
        ),
        OpDef::new(
            "avg_pool2d",
            Arity::Exactly(1),
            |m: &[Meta], a: &Attrs| meta(&m[0], &Windows::of(a, false)?, "avg_pool2d", false),
            |t: &[&TensorData], a: &Attrs| {
                let w = Windows::of(a, false)?;
                let include_pad = a.flag("count_include_pad");
                Ok(match t[0] {
                    TensorData::Float64(x) => {
                        pooled(x, &w, |v, s| mean_of(v, s, include_pad))?.into()
                    }
                    TensorData::Float32(x) => {
                        pooled(x, &w, |v, s| mean_of(v, s, include_pad))?.into()
                    }
                    _ => unreachable!("checked by inference"),
                })
            },
        ),
        OpDef::new(
            "adaptive_avg_pool2d",
            Arity::Exactly(1),
            |m: &[Meta], a: &Attrs| {
                let out = adaptive_size(a)?;
                let [n, c, ..] = planes(&m[0].shape, "adaptive_avg_pool2d")?;
                float_only(m[0].dtype, "adaptive_avg_pool2d")?;
                Ok(Meta {
                    shape: vec![n, c, out[0], out[1]],
                    dtype: m[0].dtype,
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                let out = adaptive_size(a)?;
                Ok(match t[0] {
                    TensorData::Float64(x) => adaptive(x, out).into(),
                    TensorData::Float32(x) => adaptive(x, out).into(),
                    _ => unreachable!("checked by inference"),
                })
            },
        ),
    ]
}

/// The element types pooled: the lowest value starts a maximum, a count divides a sum.
trait Pooled: LinalgScalar + PartialOrd {
    const LOWEST: Self;
    fn count(n: usize) -> Self;
}

impl Pooled for f64 {
    const LOWEST: f64 = f64::NEG_INFINITY;
    fn count(n: usize) -> f64 {
        n as f64
    }
}

impl Pooled for f32 {
    const LOWEST: f32 = f32::NEG_INFINITY;
    fn count(n: usize) -> f32 {
        n as f32
    }
}

impl Pooled for i64 {
    const LOWEST: i64 = i64::MIN;
    fn count(n: usize) -> i64 {
        n as i64
    }
}

/// The windows of a pooling: kernel, stride, padding and dilation per dimension.
struct Windows {
    kernel: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
    ceil_mode: bool,
}

/// The attribute `name` of `op` as a pair of sizes (one per image dimension), each at least
/// `least`: the windows of pooling and convolution.
pub(super) fn pair(a: &Attrs, op: &str, name: &str, least: i64) -> TResult<[usize; 2]> {
    match a.ints(name)?.as_slice() {
        &[p, q] if p >= least && q >= least => Ok([p as usize, q as usize]),
        other => Err(TensorError::runtime(format!(
            "{op}: {name} must be two ints of at least {least}, got {other:?}"
        ))),
    }
}

impl Windows {
    fn of(a: &Attrs, dilated: bool) -> TResult<Self> {
        let w = Windows {
            kernel: pair(a, "pooling", "kernel_size", 1)?,
            stride: pair(a, "pooling", "stride", 1)?,
            padding: pair(a, "pooling", "padding", 0)?,
            dilation: if dilated {
                pair(a, "pooling", "dilation", 1)?
            } else {
                [1, 1]
            },
            ceil_mode: a.flag("ceil_mode"),
        };
        for d in 0..2 {
            if w.padding[d] > w.kernel[d] / 2 {
                return Err(TensorError::runtime(format!(
                    "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and dilation={}",
                    w.padding[d], w.kernel[d], w.dilation[d]
                )));
            }
        }
        Ok(w)
    }

    /// The output length along dimension `d` of an input of `size`, as torch works it out.
    fn out_len(&self, size: usize, d: usize) -> Option<usize> {
        let (k, s, p, dil) = (
            self.kernel[d],
            self.stride[d],
            self.padding[d],
            self.dilation[d],
        );
        let span = dil * (k - 1) + 1;
        let room = (size + 2 * p).checked_sub(span)?;
        let mut out = if self.ceil_mode {
            room.div_ceil(s)
        } else {
            room / s
        } + 1;
        // In ceil mode the last window must start inside the input or its left padding.
        if self.ceil_mode && (out - 1) * s >= size + p {
            out -= 1;
        }
        Some(out)
    }
}

fn planes(shape: &[usize], op: &str) -> TResult<[usize; 4]> {
    match *shape {
        [n, c, h, w] => Ok([n, c, h, w]),
        _ => Err(TensorError::runtime(format!(
            "{op}: expected a 4-D input (batch, channels, height, width), got {}",
            shape_str(shape)
        ))),
    }
}

fn float_only(dtype: DType, op: &str) -> TResult<()> {
    if matches!(dtype, DType::Float32 | DType::Float64) {
        Ok(())
    } else {
        Err(TensorError::runtime(format!(
            "{op} is not implemented for {}",
            dtype.name()
        )))
    }
}

fn meta(x: &Meta, w: &Windows, op: &str, ints: bool) -> TResult<Meta> {
    let [n, c, h, wd] = planes(&x.shape, op)?;
    if !(ints && x.dtype == DType::Int64) {
        float_only(x.dtype, op)?;
    }
    match (w.out_len(h, 0), w.out_len(wd, 1)) {
        (Some(oh), Some(ow)) if oh > 0 && ow > 0 => Ok(Meta {
            shape: vec![n, c, oh, ow],
            dtype: x.dtype,
        }),
        _ => Err(TensorError::runtime(format!(
            "{op}: the input of size {} is too small for a window of {}x{}",
            shape_str(&x.shape),
            w.kernel[0],
            w.kernel[1]
        ))),
    }
}

/// The input positions a window covers along one dimension, and its extent clipped to the
/// padded input (what torch divides by when the padding counts).
type Span = (Vec<usize>, usize);

fn window_spans(w: &Windows, size: usize, out: usize, d: usize) -> Vec<Span> {
    (0..out)
        .map(|o| {
            let start = (o * w.stride[d]) as isize - w.padding[d] as isize;
            let end = (start + ((w.kernel[d] - 1) * w.dilation[d] + 1) as isize)
                .min((size + w.padding[d]) as isize);
            let inside = (0..w.kernel[d])
                .map(|i| start + (i * w.dilation[d]) as isize)
                .filter(|&p| p >= 0 && (p as usize) < size)
                .map(|p| p as usize)
                .collect();
            (inside, (end - start) as usize)
        })
        .collect()
}

/// `adaptive_avg_pool2d`'s windows: output `i` of `out` covers `floor(i * size / out)` up to
/// `ceil((i + 1) * size / out)`.
fn adaptive_spans(size: usize, out: usize) -> Vec<Span> {
    (0..out)
        .map(|i| {
            let (start, end) = (i * size / out, ((i + 1) * size).div_ceil(out));
            ((start..end).collect(), end - start)
        })
        .collect()
}

fn pooled<T: Pooled>(
    x: &ArrayD<T>,
    w: &Windows,
    reduce: impl Fn(&[T], usize) -> T,
) -> TResult<ArrayD<T>> {
    let [_, _, h, wd] = planes(x.shape(), "pooling")?;
    let (oh, ow) = (
        w.out_len(h, 0).expect("checked by inference"),
        w.out_len(wd, 1).expect("checked by inference"),
    );
    Ok(over_windows(
        x,
        &window_spans(w, h, oh, 0),
        &window_spans(w, wd, ow, 1),
        reduce,
    ))
}

/// Each plane reduced over each window: `reduce(values inside, padded count)`.
fn over_windows<T: Pooled>(
    x: &ArrayD<T>,
    rows: &[Span],
    cols: &[Span],
    reduce: impl Fn(&[T], usize) -> T,
) -> ArrayD<T> {
    let shape = x.shape();
    let (n, c, h, wd) = (shape[0], shape[1], shape[2], shape[3]);
    let x = x.as_standard_layout();
    let x = x.as_slice().expect("standard layout");
    let mut out = Vec::with_capacity(n * c * rows.len() * cols.len());
    let mut values = Vec::new();
    for plane in x.chunks(h * wd).take(n * c) {
        for (in_rows, row_extent) in rows {
            for (in_cols, col_extent) in cols {
                values.clear();
                for &r in in_rows {
                    values.extend(in_cols.iter().map(|&k| plane[r * wd + k]));
                }
                out.push(reduce(&values, row_extent * col_extent));
            }
        }
    }
    ArrayD::from_shape_vec(IxDyn(&[n, c, rows.len(), cols.len()]), out).expect("one per window")
}

/// The largest value; a NaN wins, as in torch.
fn max_of<T: Pooled>(values: &[T], _: usize) -> T {
    let mut best = T::LOWEST;
    for &v in values {
        #[allow(clippy::eq_op)]
        if v != v {
            return v;
        }
        if v > best {
            best = v;
        }
    }
    best
}

/// The sum in order, divided by the window's extent in the padded input or by the count of
/// what it covers inside.
fn mean_of<T: Pooled>(values: &[T], padded_count: usize, include_pad: bool) -> T {
    let sum = values.iter().fold(T::zero(), |acc, &v| acc + v);
    sum / T::count(if include_pad {
        padded_count
    } else {
        values.len()
    })
}

fn adaptive_size(a: &Attrs) -> TResult<[usize; 2]> {
    pair(a, "pooling", "output_size", 1)
}

fn adaptive<T: Pooled>(x: &ArrayD<T>, out: [usize; 2]) -> ArrayD<T> {
    let (h, w) = (x.shape()[2], x.shape()[3]);
    over_windows(
        x,
        &adaptive_spans(h, out[0]),
        &adaptive_spans(w, out[1]),
        |v, _| mean_of(v, 0, false),
    )
}
