//! `symtrace.Tensor`'s Python methods and attributes, each computing through the op registry
//! (the type's payload is `tensor::PyTensor`; its operators and protocols are in
//! `tensor_protocols`).

use rustpython_vm::builtins::PyTupleRef;
use rustpython_vm::function::{KwArgs, OptionalArg, PosArgs};
use rustpython_vm::types::{AsMapping, AsNumber, AsSequence, Comparable, Iterable, Representable};
use rustpython_vm::{
    AsObject, Py, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, pyclass,
};

use super::args::{
    ArgsortArgs, ChunkArgs, ClampArgs, DiagonalArg, DimArg, DimIndexArgs, FlattenArgs,
    MaskedFillArgs, NarrowArgs, ReduceArgs, ReduceToArgs, SplitArgs, SqueezeArgs, TransposeArgs,
    VarArgs, ints_or_keyword,
};
use super::convert::{ints_of, to_py, tolist};
use super::dtype::dtype_object;
use super::select::{chunk, masked_fill, narrow, split, with_index};
use super::tensor_protocols::{binary_fn, binary_slot, where_select};
use crate::tensor::{
    Attr, Attrs, DType, PyDType, PyTensor, TensorData, TensorError, format, registry,
};

impl PyTensor {
    pub(super) fn wrap(
        r: Result<TensorData, TensorError>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        r.map(PyTensor::new).map_err(|e| e.into_exception(vm))
    }
    pub(super) fn to_f64(&self, vm: &VirtualMachine) -> PyResult<f64> {
        Ok(self
            .read()
            .item()
            .map_err(|e| e.into_exception(vm))?
            .as_f64())
    }
    pub(super) fn to_i64(&self, vm: &VirtualMachine) -> PyResult<i64> {
        Ok(self
            .read()
            .item()
            .map_err(|e| e.into_exception(vm))?
            .as_i64())
    }
    pub(super) fn len(&self, vm: &VirtualMachine) -> PyResult<usize> {
        let d = self.read();
        d.shape()
            .first()
            .copied()
            .ok_or_else(|| vm.new_type_error("len() of a 0-d tensor".to_owned()))
    }
    pub(super) fn op(&self, name: &str, attrs: Attrs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let d = self.read();
        Self::wrap(registry().call(name, &[&d], &attrs), vm)
    }
    /// `name` applied to `zelf`, giving a view of its elements (see `tensor::view_link`), as
    /// torch's view ops do; a reshape of elements out of their base's order is a copy, as
    /// torch's `reshape` of a non-contiguous tensor is.
    pub(super) fn view_op(
        zelf: &Py<Self>,
        name: &'static str,
        attrs: Attrs,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        if name == "reshape" && zelf.view_link().is_some_and(|l| !l.contiguous()) {
            return zelf.op(name, attrs, vm);
        }
        let data = {
            let d = zelf.read();
            registry()
                .call(name, &[&d], &attrs)
                .map_err(|e| e.into_exception(vm))?
        };
        Ok(PyTensor::new_view(data, &zelf.to_owned(), name, attrs))
    }
}

#[pyclass(with(AsNumber, Comparable, AsMapping, AsSequence, Iterable, Representable))]
impl PyTensor {
    #[pygetset]
    fn shape(zelf: &Py<Self>, vm: &VirtualMachine) -> PyTupleRef {
        let dims: Vec<PyObjectRef> = zelf
            .read()
            .shape()
            .iter()
            .map(|&d| vm.ctx.new_int(d).into())
            .collect();
        vm.ctx.new_tuple(dims)
    }
    #[pygetset]
    fn dtype(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult {
        dtype_object(zelf.read().dtype(), vm)
    }
    #[pygetset]
    fn ndim(zelf: &Py<Self>) -> usize {
        zelf.read().ndim()
    }
    #[pygetset(name = "T")]
    fn t(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let n = zelf.read().ndim() as i64;
        Self::view_op(
            zelf,
            "permute",
            Attrs::new().with("dims", Attr::Ints((0..n).rev().collect())),
            vm,
        )
    }
    #[pymethod]
    fn numel(zelf: &Py<Self>) -> usize {
        zelf.read().numel()
    }
    /// The CPU, where symtrace keeps every tensor.
    #[pygetset]
    fn device(_zelf: &Py<Self>) -> crate::tensor::PyDevice {
        crate::tensor::PyDevice
    }
    #[pygetset]
    fn is_cuda(_zelf: &Py<Self>) -> bool {
        false
    }
    #[pymethod]
    fn dim(zelf: &Py<Self>) -> usize {
        zelf.read().ndim()
    }
    #[pymethod]
    fn item(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult {
        Ok(to_py(
            zelf.read().item().map_err(|e| e.into_exception(vm))?,
            vm,
        ))
    }
    #[pymethod]
    fn tolist(zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
        let d = zelf.read();
        tolist(d.shape(), &d.to_scalars(), vm)
    }
    #[pymethod]
    fn clone(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("clone", Attrs::new(), vm)
    }
    /// Whether the tensor is marked as a parameter (symtrace has no autograd: the mark is what
    /// `symtrace.nn.Parameter` sets and what its `isinstance` reads).
    #[pygetset]
    fn requires_grad(zelf: &Py<Self>) -> bool {
        zelf.requires_grad_flag()
    }
    #[pygetset(setter)]
    fn set_requires_grad(zelf: &Py<Self>, value: bool) {
        zelf.set_requires_grad_flag(value);
    }
    #[pymethod]
    fn requires_grad_(zelf: PyRef<Self>, requires_grad: OptionalArg<bool>) -> PyRef<Self> {
        zelf.set_requires_grad_flag(requires_grad.unwrap_or(true));
        zelf
    }
    /// `size()`: the shape as a tuple; `size(dim)`: one dimension.
    #[pymethod]
    fn size(zelf: &Py<Self>, dim: OptionalArg<Option<i64>>, vm: &VirtualMachine) -> PyResult {
        let d = zelf.read();
        match dim.flatten() {
            None => Ok(Self::shape(zelf, vm).into()),
            Some(k) => {
                let k = crate::tensor::shape::normalize_dim(k, d.ndim())
                    .map_err(|e| e.into_exception(vm))?;
                Ok(vm
                    .ctx
                    .new_int(d.shape().get(k).copied().unwrap_or(1))
                    .into())
            }
        }
    }
    /// `view(*shape)`: a tensor's elements are always laid out row-major here, so every view
    /// torch allows is a reshape.
    #[pymethod]
    fn view(
        zelf: &Py<Self>,
        shape: PosArgs<PyObjectRef>,
        kw: KwArgs<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let shape = ints_or_keyword(shape, kw, "size", "view", vm)?;
        Self::reshape_to(zelf, &shape, vm)
    }
    /// The tensor itself, as torch returns a contiguous one; a copy of a view whose elements
    /// lie out of its base's order (a transpose's), as torch copies a non-contiguous one (an
    /// update of the result must not reach the base).
    #[pymethod]
    fn contiguous(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        if zelf.view_link().is_some_and(|l| !l.contiguous()) {
            return Ok(zelf.op("clone", Attrs::new(), vm)?.into_ref(&vm.ctx));
        }
        Ok(zelf)
    }
    #[pymethod]
    fn masked_fill(
        zelf: PyRef<Self>,
        a: MaskedFillArgs,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        masked_fill(&zelf, &a.mask, &a.value, vm)
    }
    #[pymethod]
    fn split(zelf: &Py<Self>, a: SplitArgs, vm: &VirtualMachine) -> PyResult<PyTupleRef> {
        split(zelf, a.sections(vm)?, a.dim, vm)
    }
    #[pymethod]
    fn chunk(zelf: &Py<Self>, a: ChunkArgs, vm: &VirtualMachine) -> PyResult<PyTupleRef> {
        chunk(zelf, a.chunks, a.dim, vm)
    }
    #[pymethod]
    fn narrow(zelf: &Py<Self>, a: NarrowArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        narrow(zelf, a.dim, a.start, a.length, vm)
    }
    #[pymethod]
    fn gather(zelf: &Py<Self>, a: DimIndexArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        with_index("gather", zelf, a.dim, &a.index, vm)
    }
    #[pymethod]
    fn index_select(zelf: &Py<Self>, a: DimIndexArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        with_index("index_select", zelf, a.dim, &a.index, vm)
    }
    #[pymethod]
    fn tril(zelf: &Py<Self>, d: DiagonalArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op(
            "tril",
            Attrs::new().with("diagonal", Attr::Int(d.diagonal)),
            vm,
        )
    }
    #[pymethod]
    fn triu(zelf: &Py<Self>, d: DiagonalArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op(
            "triu",
            Attrs::new().with("diagonal", Attr::Int(d.diagonal)),
            vm,
        )
    }
    #[pymethod]
    fn var(zelf: &Py<Self>, args: VarArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("var", args.attrs(vm)?, vm)
    }
    #[pymethod]
    fn erf(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("erf", Attrs::new(), vm)
    }
    #[pymethod]
    fn to(zelf: &Py<Self>, dtype: PyRef<PyDType>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op(
            "to",
            Attrs::new().with("dtype", Attr::DType(dtype.dtype)),
            vm,
        )
    }
    #[pymethod]
    fn float(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op(
            "to",
            Attrs::new().with("dtype", Attr::DType(DType::Float32)),
            vm,
        )
    }
    #[pymethod]
    fn double(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op(
            "to",
            Attrs::new().with("dtype", Attr::DType(DType::Float64)),
            vm,
        )
    }
    #[pymethod]
    fn long(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op(
            "to",
            Attrs::new().with("dtype", Attr::DType(DType::Int64)),
            vm,
        )
    }
    #[pymethod]
    pub(super) fn reshape(
        zelf: &Py<Self>,
        shape: PosArgs<PyObjectRef>,
        kw: KwArgs<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let shape = ints_or_keyword(shape, kw, "shape", "reshape", vm)?;
        Self::reshape_to(zelf, &shape, vm)
    }
    /// The tensor reshaped to `shape`, given as sizes or as one sequence of them.
    pub(super) fn reshape_to(
        zelf: &Py<Self>,
        shape: &[PyObjectRef],
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        Self::view_op(
            zelf,
            "reshape",
            Attrs::new().with("shape", Attr::Ints(ints_of(shape, vm)?)),
            vm,
        )
    }
    /// `flatten(start_dim=0, end_dim=-1)`: a reshape (traced, a reshape node).
    #[pymethod]
    pub(super) fn flatten(
        zelf: &Py<Self>,
        a: FlattenArgs,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let shape = crate::tensor::shape::flattened(zelf.read().shape(), a.start_dim, a.end_dim)
            .map_err(|e| e.into_exception(vm))?;
        let shape = shape.into_iter().map(|n| n as i64).collect();
        Self::view_op(
            zelf,
            "reshape",
            Attrs::new().with("shape", Attr::Ints(shape)),
            vm,
        )
    }
    #[pymethod]
    pub(super) fn transpose(
        zelf: &Py<Self>,
        a: TransposeArgs,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        Self::view_op(
            zelf,
            "transpose",
            Attrs::new()
                .with("dim0", Attr::Int(a.dim0))
                .with("dim1", Attr::Int(a.dim1)),
            vm,
        )
    }
    #[pymethod]
    pub(super) fn permute(
        zelf: &Py<Self>,
        dims: PosArgs<PyObjectRef>,
        kw: KwArgs<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let dims = ints_or_keyword(dims, kw, "dims", "permute", vm)?;
        Self::view_op(
            zelf,
            "permute",
            Attrs::new().with("dims", Attr::Ints(ints_of(&dims, vm)?)),
            vm,
        )
    }
    #[pymethod]
    pub(super) fn unsqueeze(zelf: &Py<Self>, a: DimArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        Self::view_op(
            zelf,
            "unsqueeze",
            Attrs::new().with("dim", Attr::Int(a.dim)),
            vm,
        )
    }
    #[pymethod]
    pub(super) fn squeeze(
        zelf: &Py<Self>,
        a: SqueezeArgs,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let dim = a.dim.map_or(Attr::None, Attr::Int);
        Self::view_op(zelf, "squeeze", Attrs::new().with("dim", dim), vm)
    }
    #[pymethod]
    fn sum(zelf: &Py<Self>, args: ReduceToArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        args.apply("sum", zelf, vm)
    }
    #[pymethod]
    fn mean(zelf: &Py<Self>, args: ReduceToArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        args.apply("mean", zelf, vm)
    }
    #[pymethod]
    fn max(zelf: &Py<Self>, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("max", args.attrs(vm)?, vm)
    }
    #[pymethod]
    fn min(zelf: &Py<Self>, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("min", args.attrs(vm)?, vm)
    }
    #[pymethod]
    fn argmax(zelf: &Py<Self>, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("argmax", args.attrs(vm)?, vm)
    }
    #[pymethod]
    fn argmin(zelf: &Py<Self>, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("argmin", args.attrs(vm)?, vm)
    }
    #[pymethod]
    fn softmax(zelf: &Py<Self>, a: DimArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("softmax", Attrs::new().with("dim", Attr::Int(a.dim)), vm)
    }
    #[pymethod]
    fn argsort(zelf: &Py<Self>, a: ArgsortArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("argsort", a.attrs(), vm)
    }
    #[pymethod]
    fn cumsum(zelf: &Py<Self>, a: DimArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("cumsum", Attrs::new().with("dim", Attr::Int(a.dim)), vm)
    }
    #[pymethod]
    fn log_softmax(zelf: &Py<Self>, a: DimArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op(
            "log_softmax",
            Attrs::new().with("dim", Attr::Int(a.dim)),
            vm,
        )
    }
    #[pymethod]
    fn clamp(zelf: &Py<Self>, args: ClampArgs, vm: &VirtualMachine) -> PyResult {
        super::tensor_protocols::clamp(zelf.as_object(), args, vm)
    }
    #[pymethod]
    fn exp(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("exp", Attrs::new(), vm)
    }
    #[pymethod]
    fn log(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("log", Attrs::new(), vm)
    }
    #[pymethod]
    fn sqrt(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("sqrt", Attrs::new(), vm)
    }
    #[pymethod]
    fn tanh(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("tanh", Attrs::new(), vm)
    }
    #[pymethod]
    fn sigmoid(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("sigmoid", Attrs::new(), vm)
    }
    #[pymethod]
    fn relu(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("relu", Attrs::new(), vm)
    }
    #[pymethod]
    fn floor(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("floor", Attrs::new(), vm)
    }
    #[pymethod]
    fn ceil(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("ceil", Attrs::new(), vm)
    }
    #[pymethod]
    fn trunc(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("trunc", Attrs::new(), vm)
    }
    #[pymethod]
    fn sign(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("sign", Attrs::new(), vm)
    }
    #[pymethod]
    fn sin(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("sin", Attrs::new(), vm)
    }
    #[pymethod]
    fn cos(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("cos", Attrs::new(), vm)
    }
    #[pymethod]
    fn abs(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("abs", Attrs::new(), vm)
    }
    #[pymethod]
    fn maximum(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("maximum", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn minimum(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("minimum", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn fmod(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("fmod", zelf.as_object(), &other, vm)
    }
    /// torch's `x.where(cond, other)`: `x` where `cond`, else `other`.
    #[pymethod(name = "where")]
    fn where_method(
        zelf: PyRef<Self>,
        cond: PyObjectRef,
        other: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        where_select(&cond, zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn matmul(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_slot("matmul", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn dot(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_slot("dot", zelf.as_object(), &other, vm)
    }
    /// torch's `expand(*sizes)`: new leading dimensions, and dimensions of 1 repeated. A copy
    /// here (torch gives a view of the same memory; symtrace's tensors own their elements).
    #[pymethod]
    fn expand(
        zelf: &Py<Self>,
        sizes: PosArgs<PyObjectRef>,
        kw: KwArgs<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let sizes = ints_of(&ints_or_keyword(sizes, kw, "size", "expand", vm)?, vm)?;
        zelf.op("expand", Attrs::new().with("shape", Attr::Ints(sizes)), vm)
    }
    #[pymethod]
    fn expand_as(
        zelf: &Py<Self>,
        other: PyRef<PyTensor>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let sizes = shape_ints(&other);
        zelf.op("expand", Attrs::new().with("shape", Attr::Ints(sizes)), vm)
    }
    /// torch's `repeat(*repeats)`: the tensor tiled, as an expand of a reshape, reshaped.
    #[pymethod]
    fn repeat(
        zelf: &Py<Self>,
        repeats: PosArgs<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let repeats = ints_of(&repeats.into_vec(), vm)?;
        let shape = shape_ints(zelf);
        if repeats.len() < shape.len() || repeats.iter().any(|&r| r < 0) {
            return Err(vm.new_runtime_error(format!(
                "repeat: {repeats:?} cannot repeat a tensor of {} dimensions",
                shape.len()
            )));
        }
        // Each dimension d with its repeat r becomes (1, d) expanded to (r, d), then r * d.
        let lead = repeats.len() - shape.len();
        let size = |i: usize| if i < lead { 1 } else { shape[i - lead] };
        let (mut split, mut tiled, mut out) = (Vec::new(), Vec::new(), Vec::new());
        for (i, &r) in repeats.iter().enumerate() {
            split.extend([1, size(i)]);
            tiled.extend([r, size(i)]);
            out.push(r * size(i));
        }
        let split = zelf.op("reshape", Attrs::new().with("shape", Attr::Ints(split)), vm)?;
        let tiled = split.op("expand", Attrs::new().with("shape", Attr::Ints(tiled)), vm)?;
        tiled.op("reshape", Attrs::new().with("shape", Attr::Ints(out)), vm)
    }
    /// torch's `detach`: a view of all the elements (its one step a `clone`, which holds no
    /// size: a tracer writes its update back at any call's sizes).
    #[pymethod]
    fn detach(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        Self::view_op(zelf, "clone", Attrs::new(), vm)
    }
    #[pymethod]
    fn view_as(zelf: &Py<Self>, other: PyRef<PyTensor>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let shape = shape_ints(&other);
        Self::view_op(
            zelf,
            "reshape",
            Attrs::new().with("shape", Attr::Ints(shape)),
            vm,
        )
    }
    #[pymethod]
    fn reshape_as(
        zelf: &Py<Self>,
        other: PyRef<PyTensor>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        Self::view_as(zelf, other, vm)
    }
    #[pymethod]
    fn type_as(zelf: &Py<Self>, other: PyRef<PyTensor>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let dtype = other.read().dtype();
        zelf.op("to", Attrs::new().with("dtype", Attr::DType(dtype)), vm)
    }
    /// torch's `unbind(dim=0)`: the slices along `dim`, that dimension removed.
    #[pymethod]
    fn unbind(zelf: &Py<Self>, dim: OptionalArg<i64>, vm: &VirtualMachine) -> PyResult<PyTupleRef> {
        let dim = dim.unwrap_or(0);
        // Only the size of `dim` is relied upon, and each `narrow` below checks it per call
        // in a dynamic graph (`graph::dynamic`): the other sizes may change.
        let n = {
            let d = zelf.read();
            let at = crate::tensor::shape::normalize_dim(dim, d.ndim())
                .map_err(|e| e.into_exception(vm))?;
            d.unwatched_shape()[at]
        };
        let slices = (0..n)
            .map(|i| {
                let one = narrow(zelf, dim, i as i64, 1, vm)?.into_ref(&vm.ctx);
                let gone = Self::view_op(
                    &one,
                    "squeeze",
                    Attrs::new().with("dim", Attr::Int(dim)),
                    vm,
                )?;
                Ok(gone.into_pyobject(vm))
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(vm.ctx.new_tuple(slices))
    }
    // The operators as methods (`x.add(y)`, `mask.eq(0)`), raising where the operator would
    // return NotImplemented.
    #[pymethod]
    fn add(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("add", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn sub(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("sub", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn mul(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("mul", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn div(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("div", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn pow(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("pow", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn eq(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("eq", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn ne(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("ne", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn lt(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("lt", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn le(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("le", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn gt(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("gt", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn ge(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("ge", zelf.as_object(), &other, vm)
    }
    #[pymethod]
    fn neg(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        zelf.op("neg", Attrs::new(), vm)
    }
    #[pymethod]
    fn __str__(zelf: &Py<Self>) -> String {
        format::str(&zelf.read())
    }
}

#[rustpython_vm::pymodule(sub, name = "symtrace")]
pub(super) mod module {
    use rustpython_vm::VirtualMachine;
    use rustpython_vm::builtins::PyTypeRef;

    use crate::tensor::PyTensor;

    #[pyattr(name = "Tensor")]
    fn tensor_class(vm: &VirtualMachine) -> PyTypeRef {
        crate::python::published::<PyTensor>(vm)
    }
}

/// A tensor's sizes as the ints a shape attribute holds.
fn shape_ints(t: &PyTensor) -> Vec<i64> {
    t.read().shape().iter().map(|&n| n as i64).collect()
}
