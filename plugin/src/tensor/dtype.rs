//! Element types and NumPy's promotion rules between them.

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};

/// The element type of a tensor, ordered by promotion: bool < int64 < float32 < float64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    Int64,
    Float32,
    Float64,
}

impl DType {
    pub const ALL: [DType; 4] = [DType::Bool, DType::Int64, DType::Float32, DType::Float64];

    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Int64 => "int64",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::Float32 | DType::Float64)
    }

    /// The type both operands of a binary operation are converted to (`numpy.result_type`):
    /// int64 with float32 gives float64, as in NumPy.
    pub fn promote(a: DType, b: DType) -> DType {
        match (a.max(b), a.min(b)) {
            (DType::Float32, DType::Int64) => DType::Float64,
            (hi, _) => hi,
        }
    }

    /// The type of a float result computed from this type (true division, exp, mean, ...):
    /// a float type stays, others take the default float type.
    pub fn to_float(self) -> DType {
        if self.is_float() {
            self
        } else {
            default_float()
        }
    }

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(c: u8) -> DType {
        DType::ALL[c as usize]
    }
}

/// The float type of tensors made from Python floats, of factories called without a dtype,
/// and of float results computed from ints (torch's `set_default_dtype`): float64 unless
/// set. Process-wide, as in torch; a translation guards the value it was made under.
static DEFAULT_FLOAT: AtomicU8 = AtomicU8::new(DType::Float64 as u8);

thread_local! {
    /// Whether `default_float` was read on this thread since `take_default_float_read`: a
    /// translation that read it (inferring a float result from ints, a factory without a
    /// dtype) guards its value.
    static DEFAULT_FLOAT_READ: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

pub fn default_float() -> DType {
    DEFAULT_FLOAT_READ.with(|r| r.set(true));
    DType::from_code(DEFAULT_FLOAT.load(Ordering::Relaxed))
}

/// Whether the default float type was read on this thread since the last call.
pub fn take_default_float_read() -> bool {
    DEFAULT_FLOAT_READ.with(|r| r.replace(false))
}

/// Set the default float type; only float32 and float64 are float types.
pub fn set_default_float(d: DType) -> Result<(), String> {
    if !d.is_float() {
        return Err(format!(
            "only floating-point types are supported as the default type, not {}",
            d.name()
        ));
    }
    DEFAULT_FLOAT.store(d.code(), Ordering::Relaxed);
    Ok(())
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "symtrace.{}", self.name())
    }
}

/// A Python number next to a tensor of type `tensor`: NumPy 2 treats it as "weak" (NEP 50), so
/// it takes the tensor's type unless its own kind is higher (a float next to an int tensor,
/// which takes the default float type). Only the number's kind matters.
pub fn weak_scalar_dtype(scalar: crate::tensor::Scalar, tensor: DType) -> DType {
    use crate::tensor::Scalar;
    match (scalar, tensor) {
        (Scalar::Bool(_), t) => t,
        (Scalar::Int(_), DType::Bool) => DType::Int64,
        (Scalar::Int(_), t) => t,
        (Scalar::Float(_), t) if t.is_float() => t,
        (Scalar::Float(_), _) => default_float(),
    }
}

#[cfg(test)]
mod tests {
    use super::DType::*;
    use super::*;

    #[test]
    fn promotion_follows_numpy() {
        assert_eq!(DType::promote(Bool, Int64), Int64);
        assert_eq!(DType::promote(Int64, Float32), Float64);
        assert_eq!(DType::promote(Float32, Bool), Float32);
        assert_eq!(DType::promote(Float32, Float64), Float64);
        use crate::tensor::Scalar;
        assert_eq!(weak_scalar_dtype(Scalar::Float(0.5), Float32), Float32);
        assert_eq!(weak_scalar_dtype(Scalar::Float(0.5), Int64), Float64);
        assert_eq!(weak_scalar_dtype(Scalar::Int(1), Bool), Int64);
        assert_eq!(weak_scalar_dtype(Scalar::Int(1), Float32), Float32);
    }
}
