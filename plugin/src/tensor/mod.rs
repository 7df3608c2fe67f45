//! symtrace's tensor: an n-dimensional array of bool, int64, float32 or float64 (on ndarray),
//! the op registry that describes every operation once, and the ops themselves.

pub mod data;
pub mod dtype;
pub mod error;
pub mod format;
pub mod index;
pub mod meta_id;
pub mod object;
pub mod ops;
pub mod random;
pub mod registry;
pub mod shape;

pub use data::{Scalar, TensorData};
pub use dtype::DType;
pub use error::{ErrorKind, TResult, TensorError};
pub use object::{PyDType, PyTensor};
pub use registry::{Arity, Attr, Attrs, Meta, OpDef, OpRegistry, registry};

#[cfg(test)]
mod tests;
