//! symtrace's tensor: an n-dimensional array of bool, int64, float32 or float64 (on ndarray),
//! the op registry that describes every operation once, and the ops themselves.

pub(crate) mod data;
pub(crate) mod dtype;
pub(crate) mod error;
pub(crate) mod format;
pub(crate) mod index;
pub(crate) mod layout;
pub(crate) mod meta_id;
pub(crate) mod object;
pub(crate) mod ops;
pub(crate) mod random;
pub(crate) mod registry;
pub(crate) mod shape;
pub mod size_reads;
pub(crate) mod view_link;

pub use data::{Scalar, TensorData};
pub use dtype::DType;
pub use error::{ErrorKind, TResult, TensorError};
pub use object::{PyDType, PyDevice, PyTensor, dtype_object};
pub use registry::{Arity, Attr, Attrs, Meta, OpDef, OpRegistry, registry};

#[cfg(test)]
mod tests;
