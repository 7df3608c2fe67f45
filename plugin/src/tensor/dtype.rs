//! Element types and NumPy's promotion rules between them.

use std::fmt;

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

    /// The type of a float result computed from this type (true division, exp, mean, ...).
    pub fn to_float(self) -> DType {
        if self.is_float() {
            self
        } else {
            DType::Float64
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "symtrace.{}", self.name())
    }
}

/// A Python number next to a tensor of type `tensor`: NumPy 2 treats it as "weak" (NEP 50), so
/// it takes the tensor's type unless its own kind is higher (a float next to an int tensor).
pub fn weak_scalar_dtype(scalar: DType, tensor: DType) -> DType {
    match (scalar, tensor) {
        (DType::Bool, t) => t,
        (DType::Int64, DType::Bool) => DType::Int64,
        (DType::Int64, t) => t,
        (_, t) if t.is_float() => t,
        (s, _) => s,
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
        assert_eq!(weak_scalar_dtype(Float64, Float32), Float32);
        assert_eq!(weak_scalar_dtype(Float64, Int64), Float64);
        assert_eq!(weak_scalar_dtype(Int64, Bool), Int64);
        assert_eq!(weak_scalar_dtype(Int64, Float32), Float32);
    }
}
