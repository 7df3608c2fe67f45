//! The arguments that tensor methods and functions share, parsed as torch names them.

use rustpython_vm::function::{ArgIntoFloat, OptionalArg};
use rustpython_vm::{FromArgs, PyObjectRef};

use crate::tensor::{Attr, Attrs};

#[derive(FromArgs)]
pub(super) struct ReduceArgs {
    #[pyarg(any, default)]
    pub(super) dim: Option<i64>,
    #[pyarg(any, default = false)]
    pub(super) keepdim: bool,
}

impl ReduceArgs {
    pub(super) fn attrs(&self) -> Attrs {
        Attrs::new()
            .with("dim", self.dim.map_or(Attr::None, Attr::Int))
            .with("keepdim", Attr::Bool(self.keepdim))
    }
}

#[derive(FromArgs)]
pub(super) struct DimArg {
    #[pyarg(any)]
    pub(super) dim: i64,
}

#[derive(FromArgs)]
pub(super) struct JoinArgs {
    #[pyarg(any)]
    pub(super) tensors: PyObjectRef,
    #[pyarg(any, default = 0)]
    pub(super) dim: i64,
}

#[derive(FromArgs)]
pub(super) struct TransposeArgs {
    #[pyarg(any)]
    pub(super) dim0: i64,
    #[pyarg(any)]
    pub(super) dim1: i64,
}

#[derive(FromArgs)]
pub(super) struct ClampArgs {
    #[pyarg(any, default)]
    pub(super) min: Option<ArgIntoFloat>,
    #[pyarg(any, default)]
    pub(super) max: Option<ArgIntoFloat>,
}

impl ClampArgs {
    pub(super) fn attrs(self) -> Attrs {
        let bound = |b: Option<ArgIntoFloat>| b.map_or(Attr::None, |f| Attr::Float(f.into_float()));
        Attrs::new()
            .with("min", bound(self.min))
            .with("max", bound(self.max))
    }
}

#[derive(FromArgs)]
pub(super) struct DTypeKw {
    #[pyarg(any, optional)]
    pub(super) dtype: OptionalArg<PyObjectRef>,
}
