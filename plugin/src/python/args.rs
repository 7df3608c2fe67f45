//! The arguments that tensor methods and functions share, parsed as torch names them.

use rustpython_vm::function::{ArgIntoFloat, KwArgs, OptionalArg, PosArgs};
use rustpython_vm::{FromArgs, PyObjectRef, PyRef, PyResult, VirtualMachine};

use crate::tensor::{Attr, Attrs, PyTensor};

/// A `dim=` argument of a reduction: None (every dimension), an int, or a sequence of ints.
fn dims_attr(dim: &Option<PyObjectRef>, vm: &VirtualMachine) -> PyResult<Attr> {
    Ok(match dim {
        None => Attr::None,
        Some(d) if vm.is_none(d) => Attr::None,
        Some(d) => match d.try_index(vm) {
            Ok(i) => Attr::Int(i.try_to_primitive::<i64>(vm)?),
            Err(_) => Attr::Ints(super::convert::ints_of(std::slice::from_ref(d), vm)?),
        },
    })
}

#[derive(FromArgs)]
pub(super) struct ReduceArgs {
    #[pyarg(any, default)]
    pub(super) dim: Option<PyObjectRef>,
    #[pyarg(any, default = false)]
    pub(super) keepdim: bool,
}

impl ReduceArgs {
    pub(super) fn attrs(&self, vm: &VirtualMachine) -> PyResult<Attrs> {
        Ok(Attrs::new()
            .with("dim", dims_attr(&self.dim, vm)?)
            .with("keepdim", Attr::Bool(self.keepdim)))
    }
}

/// `sum` and `mean`: a reduction, and torch's `dtype=`, the type the input is cast to first.
#[derive(FromArgs)]
pub(super) struct ReduceToArgs {
    #[pyarg(flatten)]
    pub(super) reduce: ReduceArgs,
    #[pyarg(named, optional)]
    pub(super) dtype: OptionalArg<PyObjectRef>,
}

impl ReduceToArgs {
    /// The reduction `op` of `x`, cast first to the dtype asked for.
    pub(super) fn apply(&self, op: &str, x: &PyTensor, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let attrs = self.reduce.attrs(vm)?;
        match super::convert::opt_dtype(&self.dtype, vm)? {
            Some(dtype) => x
                .op("to", Attrs::new().with("dtype", Attr::DType(dtype)), vm)?
                .op(op, attrs, vm),
            None => x.op(op, attrs, vm),
        }
    }
}

/// `argsort(dim=-1, descending=False, stable=False)`: the sort is always stable.
#[derive(FromArgs)]
pub(super) struct ArgsortArgs {
    #[pyarg(any, default = -1)]
    pub(super) dim: i64,
    #[pyarg(any, default = false)]
    pub(super) descending: bool,
    /// Accepted as torch takes it; every sort here is stable.
    #[pyarg(named, default = false)]
    #[allow(dead_code)]
    pub(super) stable: bool,
}

impl ArgsortArgs {
    pub(super) fn attrs(&self) -> Attrs {
        Attrs::new()
            .with("dim", Attr::Int(self.dim))
            .with("descending", Attr::Bool(self.descending))
    }
}

/// `var(dim=None, unbiased=True, keepdim=False, *, correction=None)`, as torch takes it.
#[derive(FromArgs)]
pub(super) struct VarArgs {
    #[pyarg(any, default)]
    pub(super) dim: Option<PyObjectRef>,
    #[pyarg(any, default = true)]
    pub(super) unbiased: bool,
    #[pyarg(any, default = false)]
    pub(super) keepdim: bool,
    #[pyarg(named, default)]
    pub(super) correction: Option<i64>,
}

impl VarArgs {
    pub(super) fn attrs(&self, vm: &VirtualMachine) -> PyResult<Attrs> {
        let correction = self.correction.unwrap_or(i64::from(self.unbiased));
        Ok(Attrs::new()
            .with("dim", dims_attr(&self.dim, vm)?)
            .with("correction", Attr::Int(correction))
            .with("keepdim", Attr::Bool(self.keepdim)))
    }
}

#[derive(FromArgs)]
pub(super) struct SplitArgs {
    #[pyarg(any, optional)]
    split_size_or_sections: OptionalArg<PyObjectRef>,
    /// What `Tensor.split` names it.
    #[pyarg(named, optional)]
    split_size: OptionalArg<PyObjectRef>,
    #[pyarg(any, default = 0)]
    pub(super) dim: i64,
}

impl SplitArgs {
    /// The size of the pieces, or their sizes, by whichever name it was given.
    pub(super) fn sections(&self, vm: &VirtualMachine) -> PyResult<&PyObjectRef> {
        match (&self.split_size_or_sections, &self.split_size) {
            (OptionalArg::Present(s), OptionalArg::Missing)
            | (OptionalArg::Missing, OptionalArg::Present(s)) => Ok(s),
            (OptionalArg::Present(_), OptionalArg::Present(_)) => Err(vm.new_type_error(
                "split() got the split size twice (split_size_or_sections and split_size)",
            )),
            _ => Err(vm.new_type_error("split() missing required argument 'split_size'")),
        }
    }
}

/// `dim, index` of `gather` and `index_select`.
#[derive(FromArgs)]
pub(super) struct DimIndexArgs {
    #[pyarg(any)]
    pub(super) dim: i64,
    #[pyarg(any)]
    pub(super) index: PyRef<PyTensor>,
}

#[derive(FromArgs)]
pub(super) struct NarrowArgs {
    #[pyarg(any)]
    pub(super) dim: i64,
    #[pyarg(any)]
    pub(super) start: i64,
    #[pyarg(any)]
    pub(super) length: i64,
}

#[derive(FromArgs)]
pub(super) struct MaskedFillArgs {
    #[pyarg(any)]
    pub(super) mask: PyRef<PyTensor>,
    #[pyarg(any)]
    pub(super) value: PyObjectRef,
}

/// `squeeze`'s dimension: None (every dimension of size 1) or one.
#[derive(FromArgs)]
pub(super) struct SqueezeArgs {
    #[pyarg(any, default)]
    pub(super) dim: Option<i64>,
}

/// Sizes or dimensions given as `*args` (`x.view(2, 3)`, `x.view((2, 3))`), or as the one
/// keyword torch names them by (`x.reshape(shape=(2, 3))`, `x.permute(dims=(1, 0))`).
pub(super) fn ints_or_keyword(
    pos: PosArgs<PyObjectRef>,
    mut kw: KwArgs<PyObjectRef>,
    keyword: &str,
    method: &str,
    vm: &VirtualMachine,
) -> PyResult<Vec<PyObjectRef>> {
    let named = kw.pop_kwarg(keyword);
    if let Some((k, _)) = (&kw).into_iter().next() {
        return Err(vm.new_type_error(format!(
            "{method}() got an unexpected keyword argument '{k}'"
        )));
    }
    match (pos.into_vec(), named) {
        (pos, None) => Ok(pos),
        (pos, Some(v)) if pos.is_empty() => Ok(vec![v]),
        _ => Err(vm.new_type_error(format!(
            "{method}() got {keyword} both by position and as a keyword"
        ))),
    }
}

#[derive(FromArgs)]
pub(super) struct ChunkArgs {
    #[pyarg(any)]
    pub(super) chunks: i64,
    #[pyarg(any, default = 0)]
    pub(super) dim: i64,
}

#[derive(FromArgs)]
pub(super) struct FlattenArgs {
    #[pyarg(any, default = 0)]
    pub(super) start_dim: i64,
    #[pyarg(any, default = -1)]
    pub(super) end_dim: i64,
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
    pub(super) min: Option<PyObjectRef>,
    #[pyarg(any, default)]
    pub(super) max: Option<PyObjectRef>,
}

impl ClampArgs {
    /// The bounds as the op `clamp`'s attributes; `None` when either is a tensor (torch
    /// takes one: then the larger of `x` and `min`, and the smaller of that and `max`).
    pub(super) fn attrs(&self, vm: &VirtualMachine) -> PyResult<Option<Attrs>> {
        let mut attrs = Attrs::new();
        for (name, b) in [("min", &self.min), ("max", &self.max)] {
            let attr = match b {
                None => Attr::None,
                Some(o) if vm.is_none(o) => Attr::None,
                Some(o) if o.downcast_ref::<PyTensor>().is_some() => return Ok(None),
                Some(o) => Attr::Float(
                    <ArgIntoFloat as rustpython_vm::TryFromObject>::try_from_object(vm, o.clone())?
                        .into_float(),
                ),
            };
            attrs = attrs.with(name, attr);
        }
        Ok(Some(attrs))
    }
}

/// `full(size, fill_value)`, either by keyword as torch takes them.
#[derive(FromArgs)]
pub(super) struct FullArgs {
    #[pyarg(any)]
    pub(super) size: PyObjectRef,
    #[pyarg(any)]
    pub(super) fill_value: PyObjectRef,
}

#[derive(FromArgs)]
pub(super) struct DTypeKw {
    #[pyarg(any, optional)]
    pub(super) dtype: OptionalArg<PyObjectRef>,
    /// torch's `device=`: the CPU, the one device symtrace computes on.
    #[pyarg(named, optional)]
    pub(super) device: OptionalArg<PyObjectRef>,
}

impl DTypeKw {
    /// The dtype asked for, once the device is known to be the CPU.
    pub(super) fn dtype(&self, vm: &VirtualMachine) -> PyResult<Option<crate::tensor::DType>> {
        super::convert::check_device(&self.device, vm)?;
        super::convert::opt_dtype(&self.dtype, vm)
    }
}

/// `rand`/`randn`'s keywords: `DTypeKw`'s, and a `Generator` whose stream to draw from.
#[derive(FromArgs)]
pub(super) struct DrawKw {
    #[pyarg(flatten)]
    pub(super) kind: DTypeKw,
    #[pyarg(named, optional)]
    pub(super) generator: OptionalArg<PyObjectRef>,
}

impl DrawKw {
    /// The generator given, if one is (None is none).
    pub(super) fn generator(&self, vm: &VirtualMachine) -> Option<PyObjectRef> {
        self.generator
            .as_option()
            .filter(|g| !vm.is_none(g))
            .cloned()
    }
}

/// `tril`/`triu`'s `diagonal`, by position or by name, as torch takes it.
#[derive(FromArgs)]
pub(super) struct DiagonalArg {
    #[pyarg(any, default = 0)]
    pub(super) diagonal: i64,
}
