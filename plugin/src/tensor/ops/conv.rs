//! `conv2d`: a 2-D convolution over a batch of images (`nn.Conv2d`, `F.conv2d`; `Conv1d` is
//! one with an image one row high), as torch computes it: cross-correlation, with stride,
//! zero padding, dilation and groups. Each image of each group is unrolled into columns
//! (im2col) and multiplied by the group's filters with the matrix product of `linalg`. The
//! attributes are never sizes of the input: a graph recorded at one image size runs at another.

use std::mem::MaybeUninit;

use ndarray::{ArrayD, ArrayView2, IxDyn};

use super::linalg::product_into;
use super::pool::pair;
use super::product::{Product, threaded, written};
use crate::tensor::data::{Element, TensorData};
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError, shape_str};
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};

pub fn ops() -> Vec<OpDef> {
    vec![OpDef::new(
        "conv2d",
        Arity::AtLeast(2),
        |m: &[Meta], a: &Attrs| {
            let geometry = Geometry::of(&m[0].shape, &m[1].shape, m.get(2), a)?;
            if m[0].dtype != m[1].dtype || m.get(2).is_some_and(|b| b.dtype != m[0].dtype) {
                return Err(TensorError::runtime(format!(
                    "conv2d: the input ({}) and the weight and bias must have the same dtype",
                    m[0].dtype.name()
                )));
            }
            if !matches!(m[0].dtype, DType::Float32 | DType::Float64) {
                return Err(TensorError::runtime(format!(
                    "conv2d is not implemented for {}",
                    m[0].dtype.name()
                )));
            }
            Ok(Meta {
                shape: geometry.out_shape().to_vec(),
                dtype: m[0].dtype,
            })
        },
        |t: &[&TensorData], a: &Attrs| {
            let g = Geometry::of(t[0].shape(), t[1].shape(), None, a)?;
            Ok(match (t[0], t[1], t.get(2)) {
                (TensorData::Float64(x), TensorData::Float64(w), b) => {
                    conv(x, w, b.map(|b| f64s(b)), &g).into()
                }
                (TensorData::Float32(x), TensorData::Float32(w), b) => {
                    conv(x, w, b.map(|b| f32s(b)), &g).into()
                }
                _ => unreachable!("checked by inference"),
            })
        },
    )]
}

fn f64s(t: &TensorData) -> &ArrayD<f64> {
    match t {
        TensorData::Float64(b) => b,
        _ => unreachable!("checked by inference"),
    }
}

fn f32s(t: &TensorData) -> &ArrayD<f32> {
    match t {
        TensorData::Float32(b) => b,
        _ => unreachable!("checked by inference"),
    }
}

/// The sizes of one convolution: input `(n, c, h, w)`, filters `(o, c / groups, kh, kw)`.
struct Geometry {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    o: usize,
    kh: usize,
    kw: usize,
    groups: usize,
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
    oh: usize,
    ow: usize,
}

impl Geometry {
    fn of(x: &[usize], wt: &[usize], bias: Option<&Meta>, a: &Attrs) -> TResult<Self> {
        let (stride, padding, dilation) = (
            pair(a, "conv2d", "stride", 1)?,
            pair(a, "conv2d", "padding", 0)?,
            pair(a, "conv2d", "dilation", 1)?,
        );
        let groups = a.int("groups")?;
        if groups < 1 {
            return Err(TensorError::runtime("non-positive groups is not supported"));
        }
        let groups = groups as usize;
        let (&[n, c, h, w], &[o, cg, kh, kw]) = (x, wt) else {
            return Err(TensorError::runtime(format!(
                "conv2d: expected a 4-D input (batch, channels, height, width) and a 4-D weight, got input of size {} and weight of size {}",
                shape_str(x),
                shape_str(wt)
            )));
        };
        if c != cg * groups || o % groups != 0 {
            return Err(TensorError::runtime(format!(
                "Given groups={groups}, weight of size {}, expected input{} to have {} channels, but got {c} channels instead",
                shape_str(wt),
                shape_str(x),
                cg * groups
            )));
        }
        if let Some(b) = bias
            && b.shape != [o]
        {
            return Err(TensorError::runtime(format!(
                "Given weight of size {}, expected bias to be 1-dimensional with {o} elements, but got bias of size {} instead",
                shape_str(wt),
                shape_str(&b.shape)
            )));
        }
        let extent = |size: usize, pad: usize, k: usize, dil: usize, s: usize| {
            let span = dil * (k.max(1) - 1) + 1;
            (size + 2 * pad).checked_sub(span).map(|r| r / s + 1)
        };
        let oh = extent(h, padding[0], kh, dilation[0], stride[0]);
        let ow = extent(w, padding[1], kw, dilation[1], stride[1]);
        let (Some(oh), Some(ow)) = (oh, ow) else {
            return Err(TensorError::runtime(format!(
                "Calculated padded input size per channel: ({} x {}). Kernel size: ({kh} x {kw}). Kernel size can't be greater than actual input size",
                h + 2 * padding[0],
                w + 2 * padding[1]
            )));
        };
        Ok(Geometry {
            n,
            c,
            h,
            w,
            o,
            kh,
            kw,
            groups,
            stride,
            padding,
            dilation,
            oh,
            ow,
        })
    }

    fn out_shape(&self) -> [usize; 4] {
        [self.n, self.o, self.oh, self.ow]
    }
}

fn conv<T: Element + Product>(
    x: &ArrayD<T>,
    w: &ArrayD<T>,
    bias: Option<&ArrayD<T>>,
    g: &Geometry,
) -> ArrayD<T> {
    let x = x.as_standard_layout();
    let w = w.as_standard_layout();
    let (x, w) = (
        x.as_slice().expect("standard layout"),
        w.as_slice().expect("standard layout"),
    );
    let cg = g.c / g.groups;
    let og = g.o / g.groups;
    let rows = cg * g.kh * g.kw;
    let cols = g.oh * g.ow;
    let mut unrolled = vec![T::zero(); rows * cols];
    let threads = threaded(g.n * g.o * rows * cols);
    let write = |out: &mut [MaybeUninit<T>]| {
        for (image, out) in out.chunks_mut(g.o * cols).enumerate() {
            for (group, out) in out.chunks_mut(og * cols).enumerate() {
                let first = (image * g.c + group * cg) * g.h * g.w;
                unroll(&x[first..first + cg * g.h * g.w], cg, g, &mut unrolled);
                let filters = &w[group * og * rows..(group + 1) * og * rows];
                let a = ArrayView2::from_shape((og, rows), filters).expect("og × rows");
                let b = ArrayView2::from_shape((rows, cols), &unrolled).expect("rows × cols");
                product_into(a, b, out, threads);
            }
        }
    };
    // SAFETY: the chunks cover the output, and each product writes its whole chunk.
    let mut out = unsafe { written(g.n * g.o * cols, write) };
    if let Some(bias) = bias {
        for (k, plane) in out.chunks_mut(cols).enumerate() {
            let b = bias[k % g.o];
            plane.iter_mut().for_each(|v| *v = *v + b);
        }
    }
    ArrayD::from_shape_vec(IxDyn(&g.out_shape()), out).expect("shape of the geometry")
}

/// The columns of one image's channels of one group: row `(channel, i, j)` holds, for each
/// output position, the input element the filter's tap `(i, j)` meets there (zero in the
/// padding).
fn unroll<T: Product>(image: &[T], channels: usize, g: &Geometry, out: &mut [T]) {
    let cols = g.oh * g.ow;
    let mut row = 0;
    for c in 0..channels {
        let plane = &image[c * g.h * g.w..(c + 1) * g.h * g.w];
        for i in 0..g.kh {
            for j in 0..g.kw {
                let dst = &mut out[row * cols..(row + 1) * cols];
                for y in 0..g.oh {
                    let r = (y * g.stride[0] + i * g.dilation[0]) as isize - g.padding[0] as isize;
                    let line = &mut dst[y * g.ow..(y + 1) * g.ow];
                    if r < 0 || r as usize >= g.h {
                        line.fill(T::zero());
                        continue;
                    }
                    let src = &plane[r as usize * g.w..(r as usize + 1) * g.w];
                    for (xo, v) in line.iter_mut().enumerate() {
                        let s =
                            (xo * g.stride[1] + j * g.dilation[1]) as isize - g.padding[1] as isize;
                        *v = if s < 0 || s as usize >= g.w {
                            T::zero()
                        } else {
                            src[s as usize]
                        };
                    }
                }
                row += 1;
            }
        }
    }
}
