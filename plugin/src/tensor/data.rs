//! The tensor value: an n-dimensional ndarray of one of the four element types. Everything
//! here is pure Rust; the Python type wraps it (`python.rs`) and the ops compute on it.

use std::borrow::Cow;

use ndarray::{ArrayD, IxDyn};

use super::dtype::DType;
use super::error::{TResult, TensorError, shape_str};

#[derive(Clone, Debug, PartialEq)]
pub enum TensorData {
    Bool(ArrayD<bool>),
    Int64(ArrayD<i64>),
    Float32(ArrayD<f32>),
    Float64(ArrayD<f64>),
}

/// Run `$body` with `$a` bound to the array of whatever type `$t` holds.
#[macro_export]
#[doc(hidden)]
macro_rules! each_dtype {
    ($t:expr, $a:ident => $body:expr) => {
        match $t {
            $crate::tensor::TensorData::Bool($a) => $body,
            $crate::tensor::TensorData::Int64($a) => $body,
            $crate::tensor::TensorData::Float32($a) => $body,
            $crate::tensor::TensorData::Float64($a) => $body,
        }
    };
}

/// An element, whatever its type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl Scalar {
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => f64::from(u8::from(b)),
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }
    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => i64::from(b),
            Scalar::Int(i) => i,
            Scalar::Float(f) => f as i64,
        }
    }
    pub fn as_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
        }
    }
    /// The type a Python number of this kind has on its own (NumPy's, with floats of the
    /// default float type).
    pub fn dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::Int64,
            Scalar::Float(_) => super::dtype::default_float(),
        }
    }
}

/// Element conversions between the four types (C casts, as NumPy's `astype`).
pub trait Element: Copy + Send + Sync + 'static {
    const DTYPE: DType;
    fn from_scalar(s: Scalar) -> Self;
    fn to_scalar(self) -> Scalar;
}

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn from_scalar(s: Scalar) -> Self {
        s.as_bool()
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
}
impl Element for i64 {
    const DTYPE: DType = DType::Int64;
    fn from_scalar(s: Scalar) -> Self {
        s.as_i64()
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Int(self)
    }
}
impl Element for f32 {
    const DTYPE: DType = DType::Float32;
    fn from_scalar(s: Scalar) -> Self {
        s.as_f64() as f32
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Float(f64::from(self))
    }
}
impl Element for f64 {
    const DTYPE: DType = DType::Float64;
    fn from_scalar(s: Scalar) -> Self {
        s.as_f64()
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Float(self)
    }
}

/// A float element type's arrays taken from and put into a tensor's data (what a lowered
/// graph and the `recurrence` op compute over).
pub trait FloatData: Sized {
    /// The array of this type a tensor holds, if it holds this type.
    fn array(t: &TensorData) -> Option<&ArrayD<Self>>;
    fn wrap(a: ArrayD<Self>) -> TensorData;
    /// The array a tensor of this type holds, taken out of it.
    fn unwrap(t: TensorData) -> Option<ArrayD<Self>>;
}

macro_rules! float_data {
    ($t:ty, $variant:ident) => {
        impl FloatData for $t {
            fn array(t: &TensorData) -> Option<&ArrayD<$t>> {
                match t {
                    TensorData::$variant(a) => Some(a),
                    _ => None,
                }
            }
            fn wrap(a: ArrayD<$t>) -> TensorData {
                TensorData::$variant(a)
            }
            fn unwrap(t: TensorData) -> Option<ArrayD<$t>> {
                match t {
                    TensorData::$variant(a) => Some(a),
                    _ => None,
                }
            }
        }
    };
}
float_data!(f32, Float32);
float_data!(f64, Float64);

impl TensorData {
    pub fn dtype(&self) -> DType {
        match self {
            TensorData::Bool(_) => DType::Bool,
            TensorData::Int64(_) => DType::Int64,
            TensorData::Float32(_) => DType::Float32,
            TensorData::Float64(_) => DType::Float64,
        }
    }

    /// Its sizes (a read a tracer may watch: `size_reads`).
    pub fn shape(&self) -> &[usize] {
        super::size_reads::note(each_dtype!(self, a => a.as_ptr() as usize));
        each_dtype!(self, a => a.shape())
    }

    /// Its sizes, read without a tracer noting it: for code that accounts for the read
    /// itself (a comparison of sizes it records instead).
    pub fn unwatched_shape(&self) -> &[usize] {
        each_dtype!(self, a => a.shape())
    }

    /// Its rank: no size is read.
    pub fn ndim(&self) -> usize {
        each_dtype!(self, a => a.ndim())
    }

    pub fn numel(&self) -> usize {
        super::size_reads::note(each_dtype!(self, a => a.as_ptr() as usize));
        each_dtype!(self, a => a.len())
    }

    /// A tensor of `shape` filled with `value` converted to `dtype`.
    pub fn full(shape: &[usize], value: Scalar, dtype: DType) -> TensorData {
        let dim = IxDyn(shape);
        match dtype {
            DType::Bool => TensorData::Bool(ArrayD::from_elem(dim, value.as_bool())),
            DType::Int64 => TensorData::Int64(ArrayD::from_elem(dim, value.as_i64())),
            DType::Float32 => TensorData::Float32(ArrayD::from_elem(dim, value.as_f64() as f32)),
            DType::Float64 => TensorData::Float64(ArrayD::from_elem(dim, value.as_f64())),
        }
    }

    /// Elements in row-major order and a shape; the count must match.
    pub fn from_scalars(shape: &[usize], values: &[Scalar], dtype: DType) -> TResult<TensorData> {
        fn build<T: Element>(shape: &[usize], values: &[Scalar]) -> TResult<ArrayD<T>> {
            ArrayD::from_shape_vec(
                IxDyn(shape),
                values.iter().map(|v| T::from_scalar(*v)).collect(),
            )
            .map_err(|_| {
                TensorError::runtime(format!(
                    "{} elements do not fill shape {}",
                    values.len(),
                    shape_str(shape)
                ))
            })
        }
        Ok(match dtype {
            DType::Bool => TensorData::Bool(build(shape, values)?),
            DType::Int64 => TensorData::Int64(build(shape, values)?),
            DType::Float32 => TensorData::Float32(build(shape, values)?),
            DType::Float64 => TensorData::Float64(build(shape, values)?),
        })
    }

    pub fn scalar(value: Scalar) -> TensorData {
        TensorData::full(&[], value, value.dtype())
    }

    /// The elements in row-major order.
    pub fn to_scalars(&self) -> Vec<Scalar> {
        each_dtype!(self, a => a.iter().map(|v| v.to_scalar()).collect())
    }

    /// The single element of a tensor with one element.
    pub fn item(&self) -> TResult<Scalar> {
        if self.numel() != 1 {
            return Err(TensorError::runtime(format!(
                "only a tensor with one element can be converted to a Python scalar, not one of shape {}",
                shape_str(self.shape())
            )));
        }
        Ok(self.to_scalars()[0])
    }

    /// This tensor in `dtype`: borrowed when it has that type already (kernels call this on
    /// every operand, so the common case copies nothing).
    pub fn to_dtype(&self, dtype: DType) -> Cow<'_, TensorData> {
        if self.dtype() == dtype {
            Cow::Borrowed(self)
        } else {
            Cow::Owned(self.cast(dtype))
        }
    }

    /// Whether the elements lie in row-major order, so that views can be reshaped in place.
    pub fn is_standard_layout(&self) -> bool {
        each_dtype!(self, a => a.is_standard_layout())
    }

    /// A copy in `dtype` (a plain copy when the type is the same).
    pub fn cast(&self, dtype: DType) -> TensorData {
        if self.dtype() == dtype {
            return self.clone();
        }
        fn conv<S: Element, T: Element>(a: &ArrayD<S>) -> ArrayD<T> {
            a.mapv(|v| T::from_scalar(v.to_scalar()))
        }
        match dtype {
            DType::Bool => TensorData::Bool(each_dtype!(self, a => conv(a))),
            DType::Int64 => TensorData::Int64(each_dtype!(self, a => conv(a))),
            DType::Float32 => TensorData::Float32(each_dtype!(self, a => conv(a))),
            DType::Float64 => TensorData::Float64(each_dtype!(self, a => conv(a))),
        }
    }

    pub fn as_f64_array(&self) -> ArrayD<f64> {
        match self.cast(DType::Float64) {
            TensorData::Float64(a) => a,
            _ => unreachable!("cast to float64"),
        }
    }
}

impl From<ArrayD<bool>> for TensorData {
    fn from(a: ArrayD<bool>) -> Self {
        TensorData::Bool(a)
    }
}
impl From<ArrayD<i64>> for TensorData {
    fn from(a: ArrayD<i64>) -> Self {
        TensorData::Int64(a)
    }
}
impl From<ArrayD<f32>> for TensorData {
    fn from(a: ArrayD<f32>) -> Self {
        TensorData::Float32(a)
    }
}
impl From<ArrayD<f64>> for TensorData {
    fn from(a: ArrayD<f64>) -> Self {
        TensorData::Float64(a)
    }
}
