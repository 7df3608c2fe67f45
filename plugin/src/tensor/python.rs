//! The `symtrace` Python module: the `Tensor` type, the dtypes, and the functions, all
//! computing through the op registry. Importable with or without `--plugin` (the `rustpython`
//! binary and the embedding example register it).

/// The module's definition, for `InterpreterBuilder::add_native_module`.
pub fn module_def(ctx: &rustpython_vm::Context) -> &'static rustpython_vm::builtins::PyModuleDef {
    symtrace::module_def(ctx)
}

#[rustpython_vm::pymodule]
pub mod symtrace {
    use rustpython_vm::builtins::{
        PyBaseExceptionRef, PyFloat, PyInt, PyList, PySlice, PyStr, PyTuple, PyTupleRef,
    };
    use rustpython_vm::common::lock::{PyRwLock, PyRwLockReadGuard};
    use rustpython_vm::function::PyComparisonValue;
    use rustpython_vm::function::{ArgIntoFloat, Either, FuncArgs, KwArgs, OptionalArg, PosArgs};
    use rustpython_vm::protocol::{PyMappingMethods, PyNumberMethods, PySequenceMethods};
    use rustpython_vm::types::{
        AsMapping, AsNumber, AsSequence, Callable, Comparable, Iterable, PyComparisonOp,
        Representable,
    };
    use rustpython_vm::{
        AsObject, Py, PyObject, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine,
        atomic_func,
    };
    use rustpython_vm::{FromArgs, pyclass};

    use crate::tensor::data::{Scalar, TensorData};
    use crate::tensor::dtype::{DType, weak_scalar_dtype};
    use crate::tensor::error::{ErrorKind, TensorError};
    use crate::tensor::index::{self, Index, Select};
    use crate::tensor::registry::{Attr, Attrs, registry};
    use crate::tensor::{format, random};

    fn py_err(e: TensorError, vm: &VirtualMachine) -> PyBaseExceptionRef {
        match e.kind {
            ErrorKind::Value => vm.new_value_error(e.message),
            ErrorKind::Type => vm.new_type_error(e.message),
            ErrorKind::Index => vm.new_index_error(e.message),
            ErrorKind::ZeroDivision => vm.new_zero_division_error(e.message),
            ErrorKind::Runtime => vm.new_runtime_error(e.message),
        }
    }

    // ---- dtypes ----

    #[pyattr]
    #[pyclass(module = "symtrace", name = "dtype")]
    #[derive(Debug, PyPayload)]
    pub struct PyDType {
        pub dtype: DType,
    }

    #[pyclass(with(Representable, Comparable))]
    impl PyDType {
        #[pygetset]
        fn name(zelf: &Py<Self>) -> &'static str {
            zelf.dtype.name()
        }
        #[pygetset]
        fn is_floating_point(zelf: &Py<Self>) -> bool {
            zelf.dtype.is_float()
        }
    }

    impl Representable for PyDType {
        fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
            Ok(format!("symtrace.{}", zelf.dtype.name()))
        }
    }

    impl Comparable for PyDType {
        fn cmp(
            zelf: &Py<Self>,
            other: &PyObject,
            op: PyComparisonOp,
            _vm: &VirtualMachine,
        ) -> PyResult<PyComparisonValue> {
            let Some(other) = other.downcast_ref::<PyDType>() else {
                return Ok(PyComparisonValue::NotImplemented);
            };
            Ok(match op {
                PyComparisonOp::Eq => (zelf.dtype == other.dtype).into(),
                PyComparisonOp::Ne => (zelf.dtype != other.dtype).into(),
                _ => PyComparisonValue::NotImplemented,
            })
        }
    }

    /// The module's own dtype object, so that `t.dtype is symtrace.float32`.
    fn dtype_object(d: DType, vm: &VirtualMachine) -> PyResult {
        let module = vm.import("symtrace", 0)?;
        module.get_attr(d.name(), vm)
    }

    #[pyattr]
    fn float32(vm: &VirtualMachine) -> PyRef<PyDType> {
        PyDType {
            dtype: DType::Float32,
        }
        .into_ref(&vm.ctx)
    }
    #[pyattr]
    fn float64(vm: &VirtualMachine) -> PyRef<PyDType> {
        PyDType {
            dtype: DType::Float64,
        }
        .into_ref(&vm.ctx)
    }
    #[pyattr]
    fn int64(vm: &VirtualMachine) -> PyRef<PyDType> {
        PyDType {
            dtype: DType::Int64,
        }
        .into_ref(&vm.ctx)
    }
    #[pyattr(name = "bool")]
    fn bool_(vm: &VirtualMachine) -> PyRef<PyDType> {
        PyDType { dtype: DType::Bool }.into_ref(&vm.ctx)
    }

    fn opt_dtype(obj: &OptionalArg<PyObjectRef>, vm: &VirtualMachine) -> PyResult<Option<DType>> {
        match obj {
            OptionalArg::Missing => Ok(None),
            OptionalArg::Present(o) if vm.is_none(o) => Ok(None),
            OptionalArg::Present(o) => match o.downcast_ref::<PyDType>() {
                Some(d) => Ok(Some(d.dtype)),
                None => Err(vm.new_type_error(format!(
                    "dtype must be a symtrace dtype, not {}",
                    o.class().name()
                ))),
            },
        }
    }

    // ---- Python values <-> tensors ----

    fn scalar_of(obj: &PyObject, vm: &VirtualMachine) -> PyResult<Option<Scalar>> {
        if obj.class().is(vm.ctx.types.bool_type) {
            return Ok(Some(Scalar::Bool(obj.is(&vm.ctx.true_value))));
        }
        if let Some(i) = obj.downcast_ref::<PyInt>() {
            let v: i64 = i
                .try_to_primitive(vm)
                .map_err(|_| vm.new_overflow_error("Python int too large for int64"))?;
            return Ok(Some(Scalar::Int(v)));
        }
        if let Some(f) = obj.downcast_ref::<PyFloat>() {
            return Ok(Some(Scalar::Float(f.to_f64())));
        }
        Ok(None)
    }

    /// Nested lists/tuples of numbers (or tensors) → shape and elements.
    fn flatten(
        obj: &PyObject,
        depth: usize,
        shape: &mut Vec<usize>,
        out: &mut Vec<Scalar>,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        if let Some(s) = scalar_of(obj, vm)? {
            if depth != shape.len() {
                return Err(vm.new_value_error(format!(
                    "expected a sequence at depth {depth}, got a number"
                )));
            }
            out.push(s);
            return Ok(());
        }
        if let Some(t) = obj.downcast_ref::<PyTensor>() {
            let data = t.read();
            let sub = data.shape();
            if depth + sub.len() > shape.len() && depth == shape.len() && out.is_empty() {
                shape.extend_from_slice(sub);
            }
            if shape.len() != depth + sub.len() || shape[depth..] != *sub {
                return Err(vm.new_value_error("nested tensors of different shapes".to_owned()));
            }
            out.extend(data.to_scalars());
            return Ok(());
        }
        let items: Vec<PyObjectRef> = if let Some(l) = obj.downcast_ref::<PyList>() {
            l.borrow_vec().to_vec()
        } else if let Some(t) = obj.downcast_ref::<PyTuple>() {
            t.as_slice().to_vec()
        } else {
            return Err(
                vm.new_type_error(format!("cannot make a tensor of a {}", obj.class().name()))
            );
        };
        if depth == shape.len() {
            if !out.is_empty() {
                return Err(vm.new_value_error(format!(
                    "expected a number at depth {depth}, got a sequence"
                )));
            }
            shape.push(items.len());
        } else if shape[depth] != items.len() {
            return Err(vm.new_value_error(format!(
                "expected a sequence of length {} at dimension {depth}, got {}",
                shape[depth],
                items.len()
            )));
        }
        for item in &items {
            flatten(item, depth + 1, shape, out, vm)?;
        }
        Ok(())
    }

    fn data_of(obj: &PyObject, dtype: Option<DType>, vm: &VirtualMachine) -> PyResult<TensorData> {
        if let Some(t) = obj.downcast_ref::<PyTensor>() {
            let d = t.read().clone();
            return Ok(match dtype {
                Some(dt) => d.cast(dt),
                None => d,
            });
        }
        let mut shape = Vec::new();
        let mut values = Vec::new();
        flatten(obj, 0, &mut shape, &mut values, vm)?;
        let inferred = values
            .iter()
            .map(|s| s.dtype())
            .max()
            .unwrap_or(DType::Float64);
        TensorData::from_scalars(&shape, &values, dtype.unwrap_or(inferred))
            .map_err(|e| py_err(e, vm))
    }

    fn to_py(s: Scalar, vm: &VirtualMachine) -> PyObjectRef {
        match s {
            Scalar::Bool(b) => vm.ctx.new_bool(b).into(),
            Scalar::Int(i) => vm.ctx.new_int(i).into(),
            Scalar::Float(f) => vm.ctx.new_float(f).into(),
        }
    }

    fn tolist(shape: &[usize], items: &[Scalar], vm: &VirtualMachine) -> PyObjectRef {
        match shape {
            [] => to_py(items[0], vm),
            [n, rest @ ..] => {
                let chunk = if *n == 0 { 0 } else { items.len() / n };
                let list: Vec<PyObjectRef> = (0..*n)
                    .map(|i| tolist(rest, &items[i * chunk..(i + 1) * chunk], vm))
                    .collect();
                vm.ctx.new_list(list).into()
            }
        }
    }

    // ---- the Tensor type ----

    #[pyattr]
    #[pyclass(module = "symtrace", name = "Tensor")]
    #[derive(Debug, PyPayload)]
    pub struct PyTensor {
        data: PyRwLock<TensorData>,
        /// The number (`meta_id::intern`) of the meta this tensor was last found to have, or 0.
        meta_id: std::sync::atomic::AtomicU32,
    }

    impl PyTensor {
        pub fn new(data: TensorData) -> Self {
            Self {
                data: PyRwLock::new(data),
                meta_id: std::sync::atomic::AtomicU32::new(0),
            }
        }
        pub fn read(&self) -> rustpython_vm::common::lock::PyRwLockReadGuard<'_, TensorData> {
            self.data.read()
        }
        /// The data, to replace: the remembered meta is forgotten first.
        pub fn write(&self) -> rustpython_vm::common::lock::PyRwLockWriteGuard<'_, TensorData> {
            let guard = self.data.write();
            self.meta_id.store(0, std::sync::atomic::Ordering::Release);
            guard
        }
        /// Whether the tensor has `meta`, whose number is `id`. Once found under the lock, the
        /// answer is remembered until the data is replaced; it is stored while the read lock is
        /// held, so a writer's reset always comes after it.
        #[inline]
        pub fn has_meta(&self, id: u32, meta: &crate::tensor::Meta) -> bool {
            use std::sync::atomic::Ordering;
            if self.meta_id.load(Ordering::Acquire) == id {
                return true;
            }
            let d = self.data.read();
            let has = meta.describes(&d);
            if has && id != u32::MAX {
                self.meta_id.store(id, Ordering::Release);
            }
            has
        }
        fn wrap(r: Result<TensorData, TensorError>, vm: &VirtualMachine) -> PyResult<PyTensor> {
            r.map(PyTensor::new).map_err(|e| py_err(e, vm))
        }
        fn to_f64(&self, vm: &VirtualMachine) -> PyResult<f64> {
            Ok(self.read().item().map_err(|e| py_err(e, vm))?.as_f64())
        }
        fn to_i64(&self, vm: &VirtualMachine) -> PyResult<i64> {
            Ok(self.read().item().map_err(|e| py_err(e, vm))?.as_i64())
        }
        fn len(&self, vm: &VirtualMachine) -> PyResult<usize> {
            let d = self.read();
            d.shape()
                .first()
                .copied()
                .ok_or_else(|| vm.new_type_error("len() of a 0-d tensor".to_owned()))
        }
        fn op(&self, name: &str, attrs: Attrs, vm: &VirtualMachine) -> PyResult<PyTensor> {
            let d = self.read();
            Self::wrap(registry().call(name, &[&d], &attrs), vm)
        }
    }

    /// An operand: a tensor's data, read in place (ops never copy their inputs), or a tensor
    /// made for the call from a Python number or list.
    enum Operand<'a> {
        Borrowed(PyRwLockReadGuard<'a, TensorData>),
        Owned(TensorData),
    }

    impl core::ops::Deref for Operand<'_> {
        type Target = TensorData;
        fn deref(&self) -> &TensorData {
            match self {
                Operand::Borrowed(g) => g,
                Operand::Owned(t) => t,
            }
        }
    }

    fn tensor_dtype(x: &PyObject) -> Option<DType> {
        x.downcast_ref::<PyTensor>().map(|t| t.read().dtype())
    }

    /// `x` as an operand; a Python number next to a tensor of type `other` is weakly typed (it
    /// takes the tensor's type unless its kind is higher), a number alone takes its own type.
    fn operand<'a>(
        x: &'a PyObject,
        other: Option<DType>,
        vm: &VirtualMachine,
    ) -> PyResult<Option<Operand<'a>>> {
        if let Some(t) = x.downcast_ref::<PyTensor>() {
            return Ok(Some(Operand::Borrowed(t.read())));
        }
        if let Some(s) = scalar_of(x, vm)? {
            let dtype = other.map_or(s.dtype(), |o| weak_scalar_dtype(s.dtype(), o));
            return Ok(Some(Operand::Owned(TensorData::full(&[], s, dtype))));
        }
        if x.downcast_ref::<PyList>().is_some() || x.downcast_ref::<PyTuple>().is_some() {
            return data_of(x, None, vm).map(|d| Some(Operand::Owned(d)));
        }
        Ok(None)
    }

    /// Run `f` on both operands of a binary operator; `None` when one is not tensor-like. The
    /// types are read before any lock is held, and `x op x` reads its tensor once.
    fn with_operands<R>(
        a: &PyObject,
        b: &PyObject,
        vm: &VirtualMachine,
        f: impl FnOnce(&TensorData, &TensorData) -> PyResult<R>,
    ) -> PyResult<Option<R>> {
        let (da, db) = (tensor_dtype(a), tensor_dtype(b));
        let Some(x) = operand(a, db, vm)? else {
            return Ok(None);
        };
        if b.is(a) {
            return f(&x, &x).map(Some);
        }
        let Some(y) = operand(b, da, vm)? else {
            return Ok(None);
        };
        f(&x, &y).map(Some)
    }

    fn binary_slot(
        name: &'static str,
        a: &PyObject,
        b: &PyObject,
        vm: &VirtualMachine,
    ) -> PyResult {
        let result = with_operands(a, b, vm, |x, y| {
            PyTensor::wrap(registry().call(name, &[x, y], &Attrs::new()), vm)
        })?;
        Ok(match result {
            Some(t) => t.into_pyobject(vm),
            None => vm.ctx.not_implemented(),
        })
    }

    /// `a op= b`: computed, then stored into `a` in its own type and shape.
    fn inplace_slot(
        name: &'static str,
        a: &PyObject,
        b: &PyObject,
        vm: &VirtualMachine,
    ) -> PyResult {
        let Some(target) = a.downcast_ref::<PyTensor>() else {
            return Ok(vm.ctx.not_implemented());
        };
        let computed = with_operands(a, b, vm, |x, y| {
            Ok((
                registry()
                    .call(name, &[x, y], &Attrs::new())
                    .map_err(|e| py_err(e, vm))?,
                x.dtype(),
                x.shape().to_vec(),
            ))
        })?;
        let Some((result, dtype, shape)) = computed else {
            return Ok(vm.ctx.not_implemented());
        };
        if DType::promote(dtype, result.dtype()) != dtype {
            return Err(vm.new_type_error(format!(
                "the {} result of {name} cannot be stored in place into a {} tensor",
                result.dtype().name(),
                dtype.name()
            )));
        }
        if result.shape() != shape.as_slice() {
            return Err(vm.new_value_error(format!(
                "the result of shape {} does not fit in place into a tensor of shape {}",
                crate::tensor::error::shape_str(result.shape()),
                crate::tensor::error::shape_str(&shape)
            )));
        }
        *target.write() = result.to_dtype(dtype).into_owned();
        Ok(a.to_owned())
    }

    fn unary_slot(name: &'static str, a: &PyObject, vm: &VirtualMachine) -> PyResult {
        let t = a.downcast_ref::<PyTensor>().expect("slot of Tensor");
        Ok(t.op(name, Attrs::new(), vm)?.into_pyobject(vm))
    }

    #[derive(FromArgs)]
    struct ReduceArgs {
        #[pyarg(any, default)]
        dim: Option<i64>,
        #[pyarg(any, default = false)]
        keepdim: bool,
    }

    impl ReduceArgs {
        fn attrs(&self) -> Attrs {
            Attrs::new()
                .with("dim", self.dim.map_or(Attr::None, Attr::Int))
                .with("keepdim", Attr::Bool(self.keepdim))
        }
    }

    #[derive(FromArgs)]
    struct DimArg {
        #[pyarg(any)]
        dim: i64,
    }

    #[derive(FromArgs)]
    struct JoinArgs {
        #[pyarg(any)]
        tensors: PyObjectRef,
        #[pyarg(any, default = 0)]
        dim: i64,
    }

    #[derive(FromArgs)]
    struct TransposeArgs {
        #[pyarg(any)]
        dim0: i64,
        #[pyarg(any)]
        dim1: i64,
    }

    #[derive(FromArgs)]
    struct ClampArgs {
        #[pyarg(any, default)]
        min: Option<ArgIntoFloat>,
        #[pyarg(any, default)]
        max: Option<ArgIntoFloat>,
    }

    impl ClampArgs {
        fn attrs(self) -> Attrs {
            let bound =
                |b: Option<ArgIntoFloat>| b.map_or(Attr::None, |f| Attr::Float(f.into_float()));
            Attrs::new()
                .with("min", bound(self.min))
                .with("max", bound(self.max))
        }
    }

    fn ints_of(args: &[PyObjectRef], vm: &VirtualMachine) -> PyResult<Vec<i64>> {
        // f(2, 3) and f((2, 3)) alike
        let items: Vec<PyObjectRef> = match args {
            [one]
                if one.downcast_ref::<PyTuple>().is_some()
                    || one.downcast_ref::<PyList>().is_some() =>
            {
                vm.extract_elements_with(one, Ok)?
            }
            _ => args.to_vec(),
        };
        items
            .iter()
            .map(|o| o.try_index(vm)?.try_to_primitive::<i64>(vm))
            .collect()
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
            zelf.op(
                "permute",
                Attrs::new().with("dims", Attr::Ints((0..n).rev().collect())),
                vm,
            )
        }
        #[pymethod]
        fn numel(zelf: &Py<Self>) -> usize {
            zelf.read().numel()
        }
        #[pymethod]
        fn dim(zelf: &Py<Self>) -> usize {
            zelf.read().ndim()
        }
        #[pymethod]
        fn item(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult {
            Ok(to_py(zelf.read().item().map_err(|e| py_err(e, vm))?, vm))
        }
        #[pymethod]
        fn tolist(zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
            let d = zelf.read();
            tolist(d.shape(), &d.to_scalars(), vm)
        }
        #[pymethod]
        fn clone(zelf: &Py<Self>) -> PyTensor {
            PyTensor::new(zelf.read().clone())
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
        fn reshape(
            zelf: &Py<Self>,
            shape: PosArgs<PyObjectRef>,
            vm: &VirtualMachine,
        ) -> PyResult<PyTensor> {
            zelf.op(
                "reshape",
                Attrs::new().with("shape", Attr::Ints(ints_of(&shape.into_vec(), vm)?)),
                vm,
            )
        }
        #[pymethod]
        fn transpose(zelf: &Py<Self>, a: TransposeArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
            zelf.op(
                "transpose",
                Attrs::new()
                    .with("dim0", Attr::Int(a.dim0))
                    .with("dim1", Attr::Int(a.dim1)),
                vm,
            )
        }
        #[pymethod]
        fn permute(
            zelf: &Py<Self>,
            dims: PosArgs<PyObjectRef>,
            vm: &VirtualMachine,
        ) -> PyResult<PyTensor> {
            zelf.op(
                "permute",
                Attrs::new().with("dims", Attr::Ints(ints_of(&dims.into_vec(), vm)?)),
                vm,
            )
        }
        #[pymethod]
        fn unsqueeze(zelf: &Py<Self>, a: DimArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
            zelf.op("unsqueeze", Attrs::new().with("dim", Attr::Int(a.dim)), vm)
        }
        #[pymethod]
        fn squeeze(
            zelf: &Py<Self>,
            dim: OptionalArg<Option<i64>>,
            vm: &VirtualMachine,
        ) -> PyResult<PyTensor> {
            let dim = dim.flatten().map_or(Attr::None, Attr::Int);
            zelf.op("squeeze", Attrs::new().with("dim", dim), vm)
        }
        #[pymethod]
        fn sum(zelf: &Py<Self>, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
            zelf.op("sum", args.attrs(), vm)
        }
        #[pymethod]
        fn mean(zelf: &Py<Self>, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
            zelf.op("mean", args.attrs(), vm)
        }
        #[pymethod]
        fn max(zelf: &Py<Self>, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
            zelf.op("max", args.attrs(), vm)
        }
        #[pymethod]
        fn min(zelf: &Py<Self>, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
            zelf.op("min", args.attrs(), vm)
        }
        #[pymethod]
        fn argmax(zelf: &Py<Self>, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
            zelf.op("argmax", args.attrs(), vm)
        }
        #[pymethod]
        fn argmin(zelf: &Py<Self>, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
            zelf.op("argmin", args.attrs(), vm)
        }
        #[pymethod]
        fn softmax(zelf: &Py<Self>, a: DimArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
            zelf.op("softmax", Attrs::new().with("dim", Attr::Int(a.dim)), vm)
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
        fn clamp(zelf: &Py<Self>, args: ClampArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
            zelf.op("clamp", args.attrs(), vm)
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
        /// torch's `x.where(cond, other)`: `x` where `cond`, else `other`.
        #[pymethod(name = "where")]
        fn where_method(
            zelf: PyRef<Self>,
            cond: PyObjectRef,
            other: PyObjectRef,
            vm: &VirtualMachine,
        ) -> PyResult<PyTensor> {
            where_(cond, zelf.into(), other, vm)
        }
        #[pymethod]
        fn matmul(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
            binary_slot("matmul", zelf.as_object(), &other, vm)
        }
        #[pymethod]
        fn dot(zelf: PyRef<Self>, other: PyObjectRef, vm: &VirtualMachine) -> PyResult {
            binary_slot("dot", zelf.as_object(), &other, vm)
        }
        #[pymethod]
        fn __str__(zelf: &Py<Self>) -> String {
            format::str(&zelf.read())
        }
    }

    fn index_of(
        t: &TensorData,
        needle: &PyObject,
        vm: &VirtualMachine,
    ) -> PyResult<(Vec<Index>, Option<TensorData>)> {
        if let Some(x) = needle.downcast_ref::<PyTensor>() {
            return Ok((vec![], Some(x.read().clone())));
        }
        if needle.downcast_ref::<PyList>().is_some() {
            return Ok((vec![], Some(data_of(needle, None, vm)?)));
        }
        let items: Vec<PyObjectRef> = match needle.downcast_ref::<PyTuple>() {
            Some(tuple) => tuple.as_slice().to_vec(),
            None => vec![needle.to_owned()],
        };
        let shape = t.shape();
        let mut out = Vec::new();
        let mut dim = 0;
        let consumed = items
            .iter()
            .filter(|i| !vm.is_none(i) && !i.is(&vm.ctx.ellipsis))
            .count();
        for item in &items {
            if vm.is_none(item) {
                out.push(Index::NewAxis);
            } else if item.is(&vm.ctx.ellipsis) {
                out.push(Index::Ellipsis);
                dim += shape.len().saturating_sub(consumed);
            } else if let Some(s) = item.downcast_ref::<PySlice>() {
                let len = shape.get(dim).copied().unwrap_or(0);
                let r = vm.call_method(s.as_object(), "indices", (len,))?;
                let v: Vec<i64> =
                    vm.extract_elements_with(&r, |o| o.try_index(vm)?.try_to_primitive::<i64>(vm))?;
                out.push(Index::Slice(v[0], v[1], v[2]));
                dim += 1;
            } else if let Ok(i) = item.try_index(vm) {
                out.push(Index::Int(i.try_to_primitive::<i64>(vm)?));
                dim += 1;
            } else {
                return Err(vm.new_index_error(format!(
                    "a tensor is indexed by ints, slices, None, ..., a bool tensor or an int tensor, not {}",
                    item.class().name()
                )));
            }
        }
        Ok((out, None))
    }

    fn select<'a>(
        basic: Vec<Index>,
        by: &'a Option<TensorData>,
        vm: &VirtualMachine,
    ) -> PyResult<Select<'a>> {
        Ok(match by {
            None => Select::Basic(basic),
            Some(t) if t.dtype() == DType::Bool => Select::Mask(t),
            Some(t) if t.dtype() == DType::Int64 => Select::Take(t),
            Some(t) => {
                return Err(vm.new_index_error(format!(
                    "a tensor index must be bool or int64, not {}",
                    t.dtype().name()
                )));
            }
        })
    }

    fn getitem(zelf: &PyTensor, needle: &PyObject, vm: &VirtualMachine) -> PyResult {
        let d = zelf.read();
        let (basic, by) = index_of(&d, needle, vm)?;
        let sel = select(basic, &by, vm)?;
        Ok(PyTensor::wrap(
            crate::tensor::registry::guarded("indexing", || index::get(&d, &sel)),
            vm,
        )?
        .into_pyobject(vm))
    }

    fn setitem(
        zelf: &PyTensor,
        needle: &PyObject,
        value: &PyObject,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let value = match scalar_of(value, vm)? {
            Some(s) => TensorData::scalar(s),
            None => data_of(value, None, vm)?,
        };
        let mut d = zelf.write();
        let (basic, by) = index_of(&d, needle, vm)?;
        let sel = select(basic, &by, vm)?;
        crate::tensor::registry::guarded("item assignment", || index::set(&mut d, &sel, &value))
            .map_err(|e| py_err(e, vm))
    }

    impl AsMapping for PyTensor {
        fn as_mapping() -> &'static PyMappingMethods {
            static AS_MAPPING: PyMappingMethods = PyMappingMethods {
                length: atomic_func!(|m, vm| PyTensor::mapping_downcast(m).len(vm)),
                subscript: atomic_func!(|m, needle, vm| getitem(
                    PyTensor::mapping_downcast(m),
                    needle,
                    vm
                )),
                ass_subscript: atomic_func!(|m, needle, value, vm| match value {
                    Some(value) => setitem(PyTensor::mapping_downcast(m), needle, &value, vm),
                    None => Err(vm.new_type_error("tensor elements cannot be deleted".to_owned())),
                }),
            };
            &AS_MAPPING
        }
    }

    impl AsSequence for PyTensor {
        fn as_sequence() -> &'static PySequenceMethods {
            static AS_SEQUENCE: PySequenceMethods = PySequenceMethods {
                length: atomic_func!(|s, vm| PyTensor::sequence_downcast(s).len(vm)),
                ..PySequenceMethods::NOT_IMPLEMENTED
            };
            &AS_SEQUENCE
        }
    }

    impl Iterable for PyTensor {
        fn iter(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult {
            let n = zelf.len(vm)?;
            let rows: Vec<PyObjectRef> = (0..n)
                .map(|i| getitem(&zelf, vm.ctx.new_int(i).as_object(), vm))
                .collect::<PyResult<_>>()?;
            vm.ctx
                .new_list(rows)
                .as_object()
                .get_iter(vm)
                .map(Into::into)
        }
    }

    impl Representable for PyTensor {
        fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
            Ok(format::repr(&zelf.read()))
        }
    }

    impl Comparable for PyTensor {
        fn slot_richcompare(
            zelf: &PyObject,
            other: &PyObject,
            op: PyComparisonOp,
            vm: &VirtualMachine,
        ) -> PyResult<Either<PyObjectRef, PyComparisonValue>> {
            let name = match op {
                PyComparisonOp::Lt => "lt",
                PyComparisonOp::Le => "le",
                PyComparisonOp::Eq => "eq",
                PyComparisonOp::Ne => "ne",
                PyComparisonOp::Gt => "gt",
                PyComparisonOp::Ge => "ge",
            };
            let result = binary_slot(name, zelf, other, vm)?;
            Ok(if result.is(&vm.ctx.not_implemented) {
                Either::B(PyComparisonValue::NotImplemented)
            } else {
                Either::A(result)
            })
        }
        fn cmp(
            _zelf: &Py<Self>,
            _other: &PyObject,
            _op: PyComparisonOp,
            _vm: &VirtualMachine,
        ) -> PyResult<PyComparisonValue> {
            unreachable!("slot_richcompare is overridden")
        }
    }

    impl AsNumber for PyTensor {
        fn as_number() -> &'static PyNumberMethods {
            static AS_NUMBER: PyNumberMethods = PyNumberMethods {
                add: Some(|a, b, vm| binary_slot("add", a, b, vm)),
                subtract: Some(|a, b, vm| binary_slot("sub", a, b, vm)),
                multiply: Some(|a, b, vm| binary_slot("mul", a, b, vm)),
                true_divide: Some(|a, b, vm| binary_slot("div", a, b, vm)),
                floor_divide: Some(|a, b, vm| binary_slot("floordiv", a, b, vm)),
                remainder: Some(|a, b, vm| binary_slot("mod", a, b, vm)),
                power: Some(|a, b, c, vm| {
                    if !vm.is_none(c) {
                        return Err(vm.new_type_error(
                            "pow() with a modulus is not supported for tensors".to_owned(),
                        ));
                    }
                    binary_slot("pow", a, b, vm)
                }),
                matrix_multiply: Some(|a, b, vm| binary_slot("matmul", a, b, vm)),
                and: Some(|a, b, vm| binary_slot("logical_and", a, b, vm)),
                or: Some(|a, b, vm| binary_slot("logical_or", a, b, vm)),
                xor: Some(|a, b, vm| binary_slot("logical_xor", a, b, vm)),
                inplace_add: Some(|a, b, vm| inplace_slot("add", a, b, vm)),
                inplace_subtract: Some(|a, b, vm| inplace_slot("sub", a, b, vm)),
                inplace_multiply: Some(|a, b, vm| inplace_slot("mul", a, b, vm)),
                inplace_true_divide: Some(|a, b, vm| inplace_slot("div", a, b, vm)),
                inplace_floor_divide: Some(|a, b, vm| inplace_slot("floordiv", a, b, vm)),
                inplace_remainder: Some(|a, b, vm| inplace_slot("mod", a, b, vm)),
                inplace_and: Some(|a, b, vm| inplace_slot("logical_and", a, b, vm)),
                inplace_or: Some(|a, b, vm| inplace_slot("logical_or", a, b, vm)),
                negative: Some(|a, vm| unary_slot("neg", a.obj, vm)),
                absolute: Some(|a, vm| unary_slot("abs", a.obj, vm)),
                invert: Some(|a, vm| unary_slot("invert", a.obj, vm)),
                positive: Some(|a, _vm| Ok(a.obj.to_owned())),
                boolean: Some(|a, vm| {
                    let t = a.obj.downcast_ref::<PyTensor>().expect("slot of Tensor");
                    let item = t.read().item().map_err(|_| {
                        vm.new_value_error(
                            "the truth value of a tensor with more than one element is ambiguous"
                                .to_owned(),
                        )
                    })?;
                    Ok(item.as_bool())
                }),
                float: Some(|a, vm| {
                    let t = a.obj.downcast_ref::<PyTensor>().expect("slot of Tensor");
                    Ok(vm.ctx.new_float(t.to_f64(vm)?).into())
                }),
                int: Some(|a, vm| {
                    let t = a.obj.downcast_ref::<PyTensor>().expect("slot of Tensor");
                    Ok(vm.ctx.new_int(t.to_i64(vm)?).into())
                }),
                ..PyNumberMethods::NOT_IMPLEMENTED
            };
            &AS_NUMBER
        }
    }

    // ---- functions ----

    fn new_tensor(r: Result<TensorData, TensorError>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        PyTensor::wrap(r, vm)
    }

    #[pyfunction]
    fn tensor(data: PyObjectRef, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let dt = opt_dtype(&kw.dtype, vm)?;
        Ok(PyTensor::new(data_of(&data, dt, vm)?))
    }

    #[derive(FromArgs)]
    struct DTypeKw {
        #[pyarg(any, optional)]
        dtype: OptionalArg<PyObjectRef>,
    }

    fn check_size(shape: &[usize], vm: &VirtualMachine) -> PyResult<()> {
        crate::tensor::shape::check_size(shape).map_err(|e| py_err(e, vm))
    }

    fn shape_of(args: &[PyObjectRef], vm: &VirtualMachine) -> PyResult<Vec<usize>> {
        let shape = ints_of(args, vm)?
            .into_iter()
            .map(|d| {
                usize::try_from(d)
                    .map_err(|_| vm.new_value_error(format!("negative dimension {d}")))
            })
            .collect::<PyResult<Vec<usize>>>()?;
        check_size(&shape, vm)?;
        Ok(shape)
    }

    #[pyfunction]
    fn zeros(shape: PosArgs<PyObjectRef>, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let dt = opt_dtype(&kw.dtype, vm)?.unwrap_or(DType::Float64);
        Ok(PyTensor::new(TensorData::full(
            &shape_of(&shape.into_vec(), vm)?,
            Scalar::Int(0),
            dt,
        )))
    }

    #[pyfunction]
    fn ones(shape: PosArgs<PyObjectRef>, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let dt = opt_dtype(&kw.dtype, vm)?.unwrap_or(DType::Float64);
        Ok(PyTensor::new(TensorData::full(
            &shape_of(&shape.into_vec(), vm)?,
            Scalar::Int(1),
            dt,
        )))
    }

    #[pyfunction]
    fn full(
        shape: PyObjectRef,
        value: PyObjectRef,
        kw: DTypeKw,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let v = scalar_of(&value, vm)?
            .ok_or_else(|| vm.new_type_error("full() needs a number as its value".to_owned()))?;
        let dt = opt_dtype(&kw.dtype, vm)?.unwrap_or(v.dtype());
        Ok(PyTensor::new(TensorData::full(
            &shape_of(&[shape], vm)?,
            v,
            dt,
        )))
    }

    #[pyfunction]
    fn zeros_like(t: PyRef<PyTensor>, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let d = t.read();
        let dt = opt_dtype(&kw.dtype, vm)?.unwrap_or(d.dtype());
        Ok(PyTensor::new(TensorData::full(
            d.shape(),
            Scalar::Int(0),
            dt,
        )))
    }

    #[pyfunction]
    fn ones_like(t: PyRef<PyTensor>, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let d = t.read();
        let dt = opt_dtype(&kw.dtype, vm)?.unwrap_or(d.dtype());
        Ok(PyTensor::new(TensorData::full(
            d.shape(),
            Scalar::Int(1),
            dt,
        )))
    }

    #[pyfunction]
    fn arange(args: FuncArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let dtype = args.kwargs.get("dtype").cloned();
        let nums: Vec<Scalar> = args
            .args
            .iter()
            .map(|a| {
                scalar_of(a, vm)?
                    .ok_or_else(|| vm.new_type_error("arange() takes numbers".to_owned()))
            })
            .collect::<PyResult<_>>()?;
        let (start, end, step) = match nums.as_slice() {
            [e] => (Scalar::Int(0), *e, Scalar::Int(1)),
            [s, e] => (*s, *e, Scalar::Int(1)),
            [s, e, st] => (*s, *e, *st),
            _ => {
                return Err(
                    vm.new_type_error("arange(end) or arange(start, end[, step])".to_owned())
                );
            }
        };
        if step.as_f64() == 0.0 {
            return Err(vm.new_value_error("arange() step must not be zero".to_owned()));
        }
        let inferred = [start, end, step]
            .iter()
            .map(|s| s.dtype())
            .max()
            .unwrap()
            .max(DType::Int64);
        let dt = opt_dtype(
            &dtype.map_or(OptionalArg::Missing, OptionalArg::Present),
            vm,
        )?
        .unwrap_or(inferred);
        let n = ((end.as_f64() - start.as_f64()) / step.as_f64())
            .ceil()
            .max(0.0) as usize;
        check_size(&[n], vm)?;
        let values: Vec<Scalar> = (0..n)
            .map(|i| {
                if inferred == DType::Int64 {
                    Scalar::Int(start.as_i64() + i as i64 * step.as_i64())
                } else {
                    Scalar::Float(start.as_f64() + i as f64 * step.as_f64())
                }
            })
            .collect();
        new_tensor(TensorData::from_scalars(&[n], &values, dt), vm)
    }

    #[pyfunction]
    fn linspace(
        start: ArgIntoFloat,
        end: ArgIntoFloat,
        steps: usize,
        kw: DTypeKw,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let (start, end) = (start.into_float(), end.into_float());
        let dt = opt_dtype(&kw.dtype, vm)?.unwrap_or(DType::Float64);
        check_size(&[steps], vm)?;
        let values: Vec<Scalar> = (0..steps)
            .map(|i| {
                Scalar::Float(if steps == 1 {
                    start
                } else {
                    start + (end - start) * i as f64 / (steps - 1) as f64
                })
            })
            .collect();
        new_tensor(TensorData::from_scalars(&[steps], &values, dt), vm)
    }

    #[pyfunction]
    fn eye(
        n: usize,
        m: OptionalArg<usize>,
        kw: DTypeKw,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let m = m.unwrap_or(n);
        check_size(&[n, m], vm)?;
        let dt = opt_dtype(&kw.dtype, vm)?.unwrap_or(DType::Float64);
        let values: Vec<Scalar> = (0..n * m)
            .map(|k| Scalar::Int(i64::from(k / m == k % m)))
            .collect();
        new_tensor(TensorData::from_scalars(&[n, m], &values, dt), vm)
    }

    #[pyfunction]
    fn manual_seed(seed: u64) {
        random::manual_seed(seed);
    }

    fn random_tensor(
        shape: &[PyObjectRef],
        kw: DTypeKw,
        normal: bool,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let shape = shape_of(shape, vm)?;
        let dt = opt_dtype(&kw.dtype, vm)?.unwrap_or(DType::Float64);
        let n = shape.iter().product();
        let v = if normal {
            random::normal(n)
        } else {
            random::uniform(n)
        };
        let values: Vec<Scalar> = v.into_iter().map(Scalar::Float).collect();
        new_tensor(TensorData::from_scalars(&shape, &values, dt), vm)
    }

    #[pyfunction]
    fn rand(shape: PosArgs<PyObjectRef>, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        random_tensor(&shape.into_vec(), kw, false, vm)
    }

    #[pyfunction]
    fn randn(shape: PosArgs<PyObjectRef>, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        random_tensor(&shape.into_vec(), kw, true, vm)
    }

    fn as_data(x: &PyObject, vm: &VirtualMachine) -> PyResult<TensorData> {
        match scalar_of(x, vm)? {
            Some(s) => Ok(TensorData::scalar(s)),
            None => data_of(x, None, vm),
        }
    }

    /// `call_op(name, *tensors, **attrs)`: any registered op, the application's own included.
    #[pyfunction]
    fn call_op(
        name: PyRef<PyStr>,
        inputs: PosArgs<PyObjectRef>,
        attrs: KwArgs<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let datas: Vec<TensorData> = inputs
            .iter()
            .map(|x| as_data(x, vm))
            .collect::<PyResult<_>>()?;
        let mut a = Attrs::new();
        for (k, v) in attrs.into_iter() {
            let attr = if vm.is_none(&v) {
                Attr::None
            } else if let Some(d) = v.downcast_ref::<PyDType>() {
                Attr::DType(d.dtype)
            } else if let Some(s) = scalar_of(&v, vm)? {
                match s {
                    Scalar::Bool(b) => Attr::Bool(b),
                    Scalar::Int(i) => Attr::Int(i),
                    Scalar::Float(f) => Attr::Float(f),
                }
            } else {
                Attr::Ints(ints_of(&[v], vm)?)
            };
            a = a.with(&k.to_string(), attr);
        }
        let refs: Vec<&TensorData> = datas.iter().collect();
        new_tensor(registry().call(&name.to_string_lossy(), &refs, &a), vm)
    }

    #[pyfunction]
    fn op_names(vm: &VirtualMachine) -> PyObjectRef {
        vm.ctx
            .new_list(
                registry()
                    .names()
                    .into_iter()
                    .map(|n| vm.ctx.new_str(n).into())
                    .collect(),
            )
            .into()
    }

    fn unary_fn(name: &str, x: &PyObject, attrs: Attrs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let d = operand(x, None, vm)?.ok_or_else(|| {
            vm.new_type_error(format!(
                "{name}() needs a tensor or a number, not {}",
                x.class().name()
            ))
        })?;
        new_tensor(registry().call(name, &[&d], &attrs), vm)
    }

    #[pyfunction]
    fn exp(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("exp", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn log(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("log", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn sqrt(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("sqrt", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn tanh(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("tanh", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn sigmoid(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("sigmoid", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn relu(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("relu", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn sin(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("sin", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn cos(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("cos", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn clamp(x: PyObjectRef, args: ClampArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("clamp", &x, args.attrs(), vm)
    }
    #[pyfunction]
    fn softmax(x: PyObjectRef, a: DimArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn(
            "softmax",
            &x,
            Attrs::new().with("dim", Attr::Int(a.dim)),
            vm,
        )
    }
    #[pyfunction]
    fn log_softmax(x: PyObjectRef, a: DimArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn(
            "log_softmax",
            &x,
            Attrs::new().with("dim", Attr::Int(a.dim)),
            vm,
        )
    }
    #[pyfunction]
    fn sum(x: PyObjectRef, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("sum", &x, args.attrs(), vm)
    }
    #[pyfunction]
    fn mean(x: PyObjectRef, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("mean", &x, args.attrs(), vm)
    }
    #[pyfunction]
    fn max(x: PyObjectRef, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("max", &x, args.attrs(), vm)
    }
    #[pyfunction]
    fn min(x: PyObjectRef, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("min", &x, args.attrs(), vm)
    }
    #[pyfunction]
    fn abs(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("abs", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn argmax(x: PyObjectRef, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("argmax", &x, args.attrs(), vm)
    }
    #[pyfunction]
    fn argmin(x: PyObjectRef, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("argmin", &x, args.attrs(), vm)
    }

    fn binary_fn(name: &'static str, a: &PyObject, b: &PyObject, vm: &VirtualMachine) -> PyResult {
        let r = binary_slot(name, a, b, vm)?;
        if r.is(&vm.ctx.not_implemented) {
            return Err(vm.new_type_error(format!("{name} needs tensors or numbers")));
        }
        Ok(r)
    }

    #[pyfunction]
    fn maximum(a: PyObjectRef, b: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("maximum", &a, &b, vm)
    }
    #[pyfunction]
    fn minimum(a: PyObjectRef, b: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("minimum", &a, &b, vm)
    }
    #[pyfunction]
    fn matmul(a: PyObjectRef, b: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("matmul", &a, &b, vm)
    }
    #[pyfunction]
    fn dot(a: PyObjectRef, b: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("dot", &a, &b, vm)
    }

    #[pyfunction(name = "where")]
    fn where_(
        cond: PyObjectRef,
        a: PyObjectRef,
        b: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        // The condition is read before the operands take their locks (it may be one of them).
        let c = as_data(&cond, vm)?;
        with_operands(&a, &b, vm, |x, y| {
            new_tensor(registry().call("where", &[&c, x, y], &Attrs::new()), vm)
        })?
        .ok_or_else(|| vm.new_type_error("where() needs tensors or numbers".to_owned()))
    }

    fn join(name: &str, args: JoinArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let objs: Vec<PyObjectRef> = vm.extract_elements_with(&args.tensors, Ok)?;
        if objs.is_empty() {
            return Err(vm.new_value_error(format!("{name}() needs at least one tensor")));
        }
        // Tensors are read in place (as every op reads them), other items converted.
        let items: Vec<Operand<'_>> = objs
            .iter()
            .map(|o| match o.downcast_ref::<PyTensor>() {
                Some(t) => Ok(Operand::Borrowed(t.read())),
                None => as_data(o, vm).map(Operand::Owned),
            })
            .collect::<PyResult<_>>()?;
        let refs: Vec<&TensorData> = items.iter().map(|o| &**o).collect();
        new_tensor(
            registry().call(name, &refs, &Attrs::new().with("dim", Attr::Int(args.dim))),
            vm,
        )
    }

    #[pyfunction]
    fn cat(args: JoinArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        join("cat", args, vm)
    }
    #[pyfunction]
    fn stack(args: JoinArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        join("stack", args, vm)
    }

    // ---- compiled graphs ----

    /// A captured graph as a Python callable: the translator's replacement code calls it with
    /// the frame's input tensors and gets the output tensors back as a tuple.
    #[pyattr]
    #[pyclass(module = "symtrace", name = "CompiledGraph")]
    #[derive(Debug, PyPayload)]
    pub struct PyCompiledGraph {
        pub graph: std::sync::Arc<crate::translate::Graph>,
        pub call: std::sync::Arc<crate::translate::graph_call::GraphCall>,
    }

    #[pyclass(with(Callable, Representable))]
    impl PyCompiledGraph {
        #[pygetset]
        fn code(zelf: &Py<Self>) -> String {
            zelf.graph.to_string()
        }

        /// Replacement code calls its graph on every cache hit: the vectorcall slot takes the
        /// arguments as they are, without building `FuncArgs`.
        #[extend_class]
        fn extend_class(
            _ctx: &rustpython_vm::Context,
            class: &Py<rustpython_vm::builtins::PyType>,
        ) {
            class
                .slots
                .vectorcall
                .store(Some(|zelf, args, nargs, kwnames, vm| {
                    let zelf = zelf
                        .downcast_ref::<PyCompiledGraph>()
                        .expect("the slot of CompiledGraph");
                    if kwnames.is_some_and(|k| !k.is_empty()) {
                        return Err(vm.new_type_error(
                            "a compiled graph takes no keyword arguments".to_owned(),
                        ));
                    }
                    zelf.run(&args[..nargs], vm)
                }));
        }

        fn run(&self, roots: &[PyObjectRef], vm: &VirtualMachine) -> PyResult {
            let mut held = smallvec::SmallVec::new();
            let objects = self
                .call
                .gather(roots, &mut held, vm)
                .map_err(|e| vm.new_type_error(format!("a compiled graph: {e}")))?;
            // Plain loops rather than collecting `Result`s: this runs on every cache hit.
            let mut locks: smallvec::SmallVec<[_; 8]> =
                smallvec::SmallVec::with_capacity(objects.len());
            for o in &objects {
                match o.downcast_ref::<PyTensor>() {
                    Some(t) => locks.push(t.read()),
                    None => {
                        return Err(vm.new_type_error(format!(
                            "a compiled graph takes tensors, not {}",
                            o.class().name()
                        )));
                    }
                }
            }
            let mut refs: smallvec::SmallVec<[&TensorData; 8]> =
                smallvec::SmallVec::with_capacity(locks.len());
            for lock in &locks {
                refs.push(&**lock);
            }
            let outs =
                crate::tensor::registry::guarded("a compiled graph", || self.graph.run(&refs))
                    .map_err(|e| py_err(e, vm))?;
            drop(refs);
            drop(locks);
            let mut items = outs.into_iter().map(|d| PyTensor::new(d).into_pyobject(vm));
            if !self.call.returns_tuple
                && let Some(only) = items.next()
            {
                return Ok(only);
            }
            Ok(vm.ctx.new_tuple(items.collect()).into())
        }
    }

    impl Callable for PyCompiledGraph {
        type Args = FuncArgs;
        fn call(zelf: &Py<Self>, args: Self::Args, vm: &VirtualMachine) -> PyResult {
            if !args.kwargs.is_empty() {
                return Err(
                    vm.new_type_error("a compiled graph takes no keyword arguments".to_owned())
                );
            }
            zelf.run(&args.args, vm)
        }
    }

    impl Representable for PyCompiledGraph {
        fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
            Ok(format!(
                "<symtrace.CompiledGraph: {} inputs, {} nodes, {} outputs>",
                zelf.graph.inputs.len(),
                zelf.graph.nodes.len(),
                zelf.graph.outputs.len()
            ))
        }
    }

    // ---- tracing: compile, disable, reset, explain, stats (logic in crate::api) ----

    #[pyattr]
    #[pyclass(module = "symtrace", name = "CompiledFunction")]
    #[derive(Debug, PyPayload)]
    pub struct PyCompiledFunction {
        func: PyObjectRef,
        fullgraph: bool,
    }

    #[pyclass(with(Callable, Representable))]
    impl PyCompiledFunction {
        #[pygetset]
        fn __wrapped__(zelf: &Py<Self>) -> PyObjectRef {
            zelf.func.clone()
        }
    }

    impl Callable for PyCompiledFunction {
        type Args = FuncArgs;
        fn call(zelf: &Py<Self>, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
            crate::api::call_traced(&zelf.func, args, zelf.fullgraph, vm)
        }
    }

    impl Representable for PyCompiledFunction {
        fn repr_str(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<String> {
            Ok(format!(
                "<symtrace.compile({}, fullgraph={})>",
                zelf.func.repr(vm)?.to_string_lossy(),
                if zelf.fullgraph { "True" } else { "False" }
            ))
        }
    }

    #[pyattr]
    #[pyclass(module = "symtrace", name = "Compiler")]
    #[derive(Debug, PyPayload)]
    pub struct PyCompiler {
        fullgraph: bool,
    }

    #[pyclass(with(Callable))]
    impl PyCompiler {}

    impl Callable for PyCompiler {
        type Args = (PyObjectRef,);
        fn call(zelf: &Py<Self>, (func,): Self::Args, vm: &VirtualMachine) -> PyResult {
            Ok(PyCompiledFunction {
                func,
                fullgraph: zelf.fullgraph,
            }
            .into_pyobject(vm))
        }
    }

    #[derive(FromArgs)]
    struct CompileArgs {
        #[pyarg(positional, default)]
        func: Option<PyObjectRef>,
        #[pyarg(named, default = false)]
        fullgraph: bool,
    }

    /// `compile(fn)`, `@compile`, `@compile(fullgraph=True)`: `fn` runs traced.
    #[pyfunction]
    fn compile(args: CompileArgs, vm: &VirtualMachine) -> PyObjectRef {
        match args.func {
            Some(func) if !vm.is_none(&func) => PyCompiledFunction {
                func,
                fullgraph: args.fullgraph,
            }
            .into_pyobject(vm),
            _ => PyCompiler {
                fullgraph: args.fullgraph,
            }
            .into_pyobject(vm),
        }
    }

    #[pyattr]
    #[pyclass(module = "symtrace", name = "DisabledFunction")]
    #[derive(Debug, PyPayload)]
    pub struct PyDisabledFunction {
        func: PyObjectRef,
    }

    #[pyclass(with(Callable))]
    impl PyDisabledFunction {
        #[pygetset]
        fn __wrapped__(zelf: &Py<Self>) -> PyObjectRef {
            zelf.func.clone()
        }
    }

    impl Callable for PyDisabledFunction {
        type Args = FuncArgs;
        fn call(zelf: &Py<Self>, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
            crate::api::call_untraced(&zelf.func, args, vm)
        }
    }

    /// `disable(fn)`: `fn` and what it calls run untraced.
    #[pyfunction]
    fn disable(func: PyObjectRef, vm: &VirtualMachine) -> PyObjectRef {
        PyDisabledFunction { func }.into_pyobject(vm)
    }

    /// Drop every translation (and every skip); the counters start again from zero.
    #[pyfunction]
    fn reset(vm: &VirtualMachine) {
        crate::api::translator(vm).reset();
    }

    #[pyfunction]
    fn stats(vm: &VirtualMachine) -> PyObjectRef {
        let d = vm.ctx.new_dict();
        for (k, v) in crate::api::translator(vm).stats.snapshot() {
            d.set_item(k, vm.ctx.new_int(v).into(), vm)
                .expect("str keys");
        }
        d.into()
    }

    #[pyattr]
    #[pyclass(module = "symtrace", name = "ExplainOutput")]
    #[derive(Debug, PyPayload)]
    pub struct PyExplainOutput {
        log: crate::translate::translator::ExplainLog,
    }

    #[pyclass(with(Representable))]
    impl PyExplainOutput {
        #[pygetset]
        fn graph_count(zelf: &Py<Self>) -> usize {
            zelf.log.graphs.len()
        }
        #[pygetset]
        fn graph_break_count(zelf: &Py<Self>) -> usize {
            zelf.log.breaks.len()
        }
        #[pygetset]
        fn op_count(zelf: &Py<Self>) -> usize {
            zelf.log.graphs.iter().map(|g| g.ops.len()).sum()
        }
        #[pygetset]
        fn ops_per_graph(zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
            let strs = |v: &[String]| -> PyObjectRef {
                vm.ctx
                    .new_list(
                        v.iter()
                            .map(|s| vm.ctx.new_str(s.as_str()).into())
                            .collect(),
                    )
                    .into()
            };
            vm.ctx
                .new_list(zelf.log.graphs.iter().map(|g| strs(&g.ops)).collect())
                .into()
        }
        #[pygetset]
        fn out_guards(zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
            vm.ctx
                .new_list(
                    zelf.log
                        .graphs
                        .iter()
                        .flat_map(|g| g.guards.iter())
                        .map(|s| vm.ctx.new_str(s.as_str()).into())
                        .collect(),
                )
                .into()
        }
        #[pygetset]
        fn graphs(zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
            vm.ctx
                .new_list(
                    zelf.log
                        .graphs
                        .iter()
                        .map(|g| vm.ctx.new_str(g.text.as_str()).into())
                        .collect(),
                )
                .into()
        }
        #[pygetset]
        fn inlined(zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
            vm.ctx
                .new_list(
                    zelf.log
                        .graphs
                        .iter()
                        .flat_map(|g| g.inlined.iter())
                        .map(|s| vm.ctx.new_str(s.as_str()).into())
                        .collect(),
                )
                .into()
        }
        /// Each a dict: reason, location (file:line), function, and the ops and guards the
        /// translation still held when it gave up (after rolling back any inlined call).
        #[pygetset]
        fn break_reasons(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
            let strs = |v: &[String]| -> PyObjectRef {
                vm.ctx
                    .new_list(
                        v.iter()
                            .map(|s| vm.ctx.new_str(s.as_str()).into())
                            .collect(),
                    )
                    .into()
            };
            let mut out = Vec::new();
            for b in &zelf.log.breaks {
                let d = vm.ctx.new_dict();
                d.set_item("reason", vm.ctx.new_str(b.reason.as_str()).into(), vm)?;
                d.set_item("location", vm.ctx.new_str(b.location.as_str()).into(), vm)?;
                d.set_item("function", vm.ctx.new_str(b.function.as_str()).into(), vm)?;
                d.set_item("ops_left", strs(&b.ops_left), vm)?;
                d.set_item("guards_left", strs(&b.guards_left), vm)?;
                d.set_item("id", vm.ctx.new_str(b.id.as_str()).into(), vm)?;
                d.set_item("hint", vm.ctx.new_str(b.hint.as_str()).into(), vm)?;
                d.set_item("resumed", vm.ctx.new_bool(b.resumed).into(), vm)?;
                out.push(d.into());
            }
            Ok(vm.ctx.new_list(out).into())
        }
        #[pymethod]
        fn __str__(zelf: &Py<Self>) -> String {
            crate::api::explain_text(&zelf.log)
        }
    }

    impl Representable for PyExplainOutput {
        fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
            Ok(format!(
                "<symtrace.ExplainOutput: {} graphs, {} breaks>",
                zelf.log.graphs.len(),
                zelf.log.breaks.len()
            ))
        }
    }

    /// `explain(fn, *args, **kwargs)`: run `fn` traced from a clean cache; what was captured.
    #[pyfunction]
    fn explain(mut args: FuncArgs, vm: &VirtualMachine) -> PyResult<PyExplainOutput> {
        if args.args.is_empty() {
            return Err(vm.new_type_error("explain() takes the function to run".to_owned()));
        }
        let func = args.args.remove(0);
        let log = crate::api::explain(&func, args, vm)?;
        Ok(PyExplainOutput { log })
    }
}
