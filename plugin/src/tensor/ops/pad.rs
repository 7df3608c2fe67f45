//! `pad`: a constant border around the last dimensions (`F.pad(x, (left, right, top,
//! bottom, ...), value=v)`: the pairs go from the last dimension backwards, as torch's).
//! The widths are the program's constants, never sizes of the input: a graph recorded at one
//! size runs at another.

use ndarray::{ArrayD, IxDyn, Slice};

use crate::tensor::data::{Element, Scalar, TensorData};
use crate::tensor::error::{TResult, TensorError, shape_str};
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};

pub fn ops() -> Vec<OpDef> {
    vec![OpDef::new(
        "pad",
        Arity::Exactly(1),
        |m: &[Meta], a: &Attrs| {
            Ok(Meta {
                shape: padded_shape(&m[0].shape, &widths(a)?)?,
                dtype: m[0].dtype,
            })
        },
        |t: &[&TensorData], a: &Attrs| {
            let w = widths(a)?;
            let shape = padded_shape(t[0].shape(), &w)?;
            let value = Scalar::Float(a.opt_float("value")?.unwrap_or(0.0));
            Ok(crate::each_dtype!(t[0], x => padded(x, &w, &shape, value).into()))
        },
    )]
}

/// The (before, after) widths of each padded dimension, the last dimension first.
fn widths(a: &Attrs) -> TResult<Vec<(usize, usize)>> {
    let pads = a.ints("pads")?;
    if pads.len() % 2 != 0 || pads.iter().any(|&p| p < 0) {
        return Err(TensorError::runtime(format!(
            "pad: expected pairs of non-negative widths (left, right, top, bottom, ...), got {pads:?}"
        )));
    }
    Ok(pads
        .chunks(2)
        .map(|p| (p[0] as usize, p[1] as usize))
        .collect())
}

fn padded_shape(shape: &[usize], widths: &[(usize, usize)]) -> TResult<Vec<usize>> {
    if widths.len() > shape.len() {
        return Err(TensorError::runtime(format!(
            "Padding length too large: {} widths for a tensor of shape {}",
            2 * widths.len(),
            shape_str(shape)
        )));
    }
    let mut out = shape.to_vec();
    for (k, (before, after)) in widths.iter().enumerate() {
        out[shape.len() - 1 - k] += before + after;
    }
    Ok(out)
}

fn padded<T: Element>(
    x: &ArrayD<T>,
    widths: &[(usize, usize)],
    shape: &[usize],
    value: Scalar,
) -> ArrayD<T> {
    let mut out = ArrayD::from_elem(IxDyn(shape), T::from_scalar(value));
    let ndim = x.ndim();
    out.slice_each_axis_mut(|axis| {
        let d = axis.axis.index();
        let before = (ndim - 1)
            .checked_sub(d)
            .and_then(|k| widths.get(k))
            .map_or(0, |w| w.0);
        Slice::from(before..before + x.shape()[d])
    })
    .assign(x);
    out
}
