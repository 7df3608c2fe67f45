//! The module's functions: tensors made from data, shapes and random numbers, every op as a
//! function (`exp(x)`, `softmax(x, dim)`, `where(c, a, b)`...), and `call_op` for any op the
//! registry holds.

#[rustpython_vm::pymodule(sub, name = "symtrace")]
pub(super) mod module {
    use rustpython_vm::builtins::PyStr;
    use rustpython_vm::function::{ArgIntoFloat, FuncArgs, KwArgs, OptionalArg, PosArgs};
    use rustpython_vm::{PyObject, PyObjectRef, PyRef, PyResult, VirtualMachine};

    use super::super::args::{
        ChunkArgs, ClampArgs, DTypeKw, DiagonalArg, DimArg, DimIndexArgs, DrawKw, FlattenArgs,
        FullArgs, JoinArgs, MaskedFillArgs, NarrowArgs, ReduceArgs, ReduceToArgs, SplitArgs,
        SqueezeArgs, TransposeArgs, VarArgs,
    };
    use super::super::convert::{
        check_size, data_of, ints_of, operand, opt_dtype, scalar_of, shape_of, with_operand_list,
    };
    use super::super::dtype::dtype_object;
    use super::super::tensor_protocols::{binary_fn, where_select};
    use crate::tensor::dtype::{default_float, set_default_float};
    use crate::tensor::{
        Attr, Attrs, DType, PyDType, PyTensor, Scalar, TensorData, TensorError, random, registry,
    };
    use rustpython_vm::builtins::PyTupleRef;

    fn new_tensor(r: Result<TensorData, TensorError>, vm: &VirtualMachine) -> PyResult<PyTensor> {
        PyTensor::wrap(r, vm)
    }

    #[pyfunction]
    fn tensor(data: PyObjectRef, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let dt = kw.dtype(vm)?;
        Ok(PyTensor::new(data_of(&data, dt, vm)?))
    }

    #[pyfunction]
    fn zeros(shape: PosArgs<PyObjectRef>, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let dt = kw.dtype(vm)?.unwrap_or_else(default_float);
        Ok(PyTensor::new(TensorData::full(
            &shape_of(&shape.into_vec(), vm)?,
            Scalar::Int(0),
            dt,
        )))
    }

    #[pyfunction]
    fn ones(shape: PosArgs<PyObjectRef>, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let dt = kw.dtype(vm)?.unwrap_or_else(default_float);
        Ok(PyTensor::new(TensorData::full(
            &shape_of(&shape.into_vec(), vm)?,
            Scalar::Int(1),
            dt,
        )))
    }

    #[pyfunction]
    fn full(args: FullArgs, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let (shape, value) = (args.size, args.fill_value);
        let v = scalar_of(&value, vm)?
            .ok_or_else(|| vm.new_type_error("full() needs a number as its value".to_owned()))?;
        let dt = kw.dtype(vm)?.unwrap_or(v.dtype());
        Ok(PyTensor::new(TensorData::full(
            &shape_of(&[shape], vm)?,
            v,
            dt,
        )))
    }

    #[pyfunction]
    fn zeros_like(t: PyRef<PyTensor>, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let d = t.read();
        let dt = kw.dtype(vm)?.unwrap_or(d.dtype());
        Ok(PyTensor::new(TensorData::full(
            d.shape(),
            Scalar::Int(0),
            dt,
        )))
    }

    #[pyfunction]
    fn ones_like(t: PyRef<PyTensor>, kw: DTypeKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let d = t.read();
        let dt = kw.dtype(vm)?.unwrap_or(d.dtype());
        Ok(PyTensor::new(TensorData::full(
            d.shape(),
            Scalar::Int(1),
            dt,
        )))
    }

    #[pyfunction]
    fn arange(args: FuncArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let dtype = args.kwargs.get("dtype").cloned();
        let device = args.kwargs.get("device").cloned();
        super::super::convert::check_device(
            &device.map_or(OptionalArg::Missing, OptionalArg::Present),
            vm,
        )?;
        let nums: Vec<Scalar> = args
            .args
            .iter()
            .map(|a| {
                scalar_of(a, vm)?
                    .ok_or_else(|| vm.new_type_error("arange() takes numbers".to_owned()))
            })
            .collect::<PyResult<_>>()?;
        // `start=`, `end=`, `step=` by keyword as torch takes them (`arange(start=0,
        // end=half)`): the positionals first, in that order.
        let named: Vec<(usize, Scalar)> = ["start", "end", "step"]
            .iter()
            .enumerate()
            .filter_map(|(i, k)| args.kwargs.get(*k).map(|v| (i, v)))
            .map(|(i, v)| {
                scalar_of(v, vm)?
                    .map(|s| (i, s))
                    .ok_or_else(|| vm.new_type_error("arange() takes numbers".to_owned()))
            })
            .collect::<PyResult<_>>()?;
        let (start, end, step) = match (nums.as_slice(), named.is_empty()) {
            ([e], true) => (Scalar::Int(0), *e, Scalar::Int(1)),
            ([s, e], true) => (*s, *e, Scalar::Int(1)),
            ([s, e, st], true) => (*s, *e, *st),
            (given, false) if given.len() < 3 => {
                let mut slots: [Option<Scalar>; 3] = [None; 3];
                // As torch: with a keyword, one positional is the start (`arange(5, step=2)`
                // has no end, a TypeError).
                for (i, v) in given.iter().enumerate() {
                    slots[i] = Some(*v);
                }
                for (i, v) in named {
                    if slots[i].replace(v).is_some() {
                        return Err(vm.new_type_error(
                            "arange() got multiple values for an argument".to_owned(),
                        ));
                    }
                }
                match slots {
                    [s, Some(e), st] => {
                        (s.unwrap_or(Scalar::Int(0)), e, st.unwrap_or(Scalar::Int(1)))
                    }
                    _ => {
                        return Err(vm.new_type_error("arange() needs an end".to_owned()));
                    }
                }
            }
            _ => {
                return Err(
                    vm.new_type_error("arange(end) or arange(start, end[, step])".to_owned())
                );
            }
        };
        if step.as_f64() == 0.0 {
            return Err(vm.new_runtime_error("arange() step must not be zero".to_owned()));
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
        if let (Scalar::Int(start), Scalar::Int(end), Scalar::Int(step)) = (start, end, step) {
            // Through the registry: a traced frame makes the same tensor at any size.
            let attrs = Attrs::new()
                .with("start", Attr::Int(start))
                .with("end", Attr::Int(end))
                .with("step", Attr::Int(step))
                .with("dtype", Attr::DType(dt));
            return new_tensor(registry().call("arange", &[], &attrs), vm);
        }
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

    /// torch's `linspace(start, end, steps)`, by position or by name.
    #[derive(rustpython_vm::FromArgs)]
    struct LinspaceArgs {
        #[pyarg(any)]
        start: ArgIntoFloat,
        #[pyarg(any)]
        end: ArgIntoFloat,
        #[pyarg(any)]
        steps: usize,
        #[pyarg(flatten)]
        kw: DTypeKw,
    }

    #[pyfunction]
    fn linspace(args: LinspaceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let LinspaceArgs {
            start,
            end,
            steps,
            kw,
        } = args;
        let (start, end) = (start.into_float(), end.into_float());
        let dt = kw.dtype(vm)?.unwrap_or_else(default_float);
        check_size(&[steps], vm)?;
        // Through the registry: a traced frame makes the same tensor at any number of steps.
        let attrs = Attrs::new()
            .with("start", Attr::Float(start))
            .with("end", Attr::Float(end))
            .with("steps", Attr::Int(steps as i64))
            .with("dtype", Attr::DType(dt));
        new_tensor(registry().call("linspace", &[], &attrs), vm)
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
        let dt = kw.dtype(vm)?.unwrap_or_else(default_float);
        let attrs = Attrs::new()
            .with("n", Attr::Int(n as i64))
            .with("m", Attr::Int(m as i64))
            .with("dtype", Attr::DType(dt));
        new_tensor(registry().call("eye", &[], &attrs), vm)
    }

    /// torch's `set_default_dtype`: the float type of new tensors and of float results
    /// computed from ints.
    #[pyfunction]
    fn set_default_dtype(d: PyRef<PyDType>, vm: &VirtualMachine) -> PyResult<()> {
        set_default_float(d.dtype).map_err(|e| vm.new_type_error(e))
    }

    #[pyfunction]
    fn get_default_dtype(vm: &VirtualMachine) -> PyResult {
        dtype_object(default_float(), vm)
    }

    #[pyfunction]
    fn manual_seed(seed: u64) {
        random::manual_seed(seed);
    }

    #[pyfunction]
    fn initial_seed() -> u64 {
        random::initial_seed()
    }

    /// The generator's state (`get_rng_state` in `serialization.py` makes it a tensor).
    #[pyfunction]
    fn _rng_state() -> u64 {
        random::state()
    }

    #[pyfunction]
    fn _set_rng_state(state: u64) {
        random::restore(state);
    }

    /// `rand`/`randn` through the registry: a recording makes it a node that draws when its
    /// graph runs, not when the frame is translated.
    fn random_tensor(
        shape: &[PyObjectRef],
        kw: DrawKw,
        normal: bool,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let shape = shape_of(shape, vm)?;
        let dt = kw.kind.dtype(vm)?.unwrap_or_else(default_float);
        let attrs = Attrs::new()
            .with(
                "shape",
                Attr::Ints(shape.iter().map(|&n| n as i64).collect()),
            )
            .with("dtype", Attr::DType(dt));
        let op = if normal { "randn" } else { "rand" };
        let Some(generator) = kw.generator(vm) else {
            return new_tensor(registry().call(op, &[], &attrs), vm);
        };
        // A Generator's stream (serialization.py's `Generator`: its state in `_state`) swapped
        // into the global generator for the draw, as `_drawing_from` does for the others.
        if crate::graph::recorder::active() {
            return Err(vm.new_runtime_error(format!(
                "{op}(generator=...) draws when the program runs, not inside a graph"
            )));
        }
        let state: u64 = generator
            .get_attr("_state", vm)
            .and_then(|s| s.try_into_value(vm))
            .map_err(|_| {
                vm.new_type_error(format!(
                    "{op}(): generator must be a symtrace.Generator, not {}",
                    generator.class().name()
                ))
            })?;
        let global = random::state();
        random::restore(state);
        let drawn = registry().call(op, &[], &attrs);
        let advanced = random::state();
        random::restore(global);
        generator.set_attr("_state", vm.ctx.new_int(advanced), vm)?;
        new_tensor(drawn, vm)
    }

    #[pyfunction]
    fn rand(shape: PosArgs<PyObjectRef>, kw: DrawKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        random_tensor(&shape.into_vec(), kw, false, vm)
    }

    #[pyfunction]
    fn randn(shape: PosArgs<PyObjectRef>, kw: DrawKw, vm: &VirtualMachine) -> PyResult<PyTensor> {
        random_tensor(&shape.into_vec(), kw, true, vm)
    }

    /// `call_op(name, *tensors, **attrs)`: any registered op, the application's own included.
    #[pyfunction]
    fn call_op(
        name: PyRef<PyStr>,
        inputs: PosArgs<PyObjectRef>,
        attrs: KwArgs<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
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
        // Tensors in place (a traced one is recorded as itself); numbers as themselves.
        let operands: Vec<(&PyObject, Option<DType>)> =
            inputs.iter().map(|x| (&**x, None)).collect();
        with_operand_list(&operands, vm, |d| {
            new_tensor(registry().call(&name.to_string_lossy(), d, &a), vm)
        })?
        .ok_or_else(|| vm.new_type_error("call_op() takes tensors, numbers and lists".to_owned()))
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
    fn floor(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("floor", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn ceil(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("ceil", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn trunc(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("trunc", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn sign(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("sign", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn sin(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("sin", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn cos(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("cos", &x, Attrs::new(), vm)
    }
    /// `linear(x, weight, bias=None)`: `x @ weight.T + bias`, one op.
    #[pyfunction]
    fn linear(
        x: PyObjectRef,
        weight: PyObjectRef,
        bias: OptionalArg<Option<PyObjectRef>>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        let mut operands: Vec<(&PyObject, Option<DType>)> = vec![(&*x, None), (&*weight, None)];
        let bias = bias.flatten();
        if let Some(b) = &bias {
            operands.push((&**b, None));
        }
        with_operand_list(&operands, vm, |d| {
            new_tensor(registry().call("linear", d, &Attrs::new()), vm)
        })?
        .ok_or_else(|| vm.new_type_error("linear() takes tensors".to_owned()))
    }

    #[pyfunction]
    fn erf(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("erf", &x, Attrs::new(), vm)
    }

    #[pyfunction]
    fn tril(x: PyRef<PyTensor>, d: DiagonalArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        x.op(
            "tril",
            Attrs::new().with("diagonal", Attr::Int(d.diagonal)),
            vm,
        )
    }

    #[pyfunction]
    fn triu(x: PyRef<PyTensor>, d: DiagonalArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        x.op(
            "triu",
            Attrs::new().with("diagonal", Attr::Int(d.diagonal)),
            vm,
        )
    }

    #[pyfunction]
    fn masked_fill(
        x: PyRef<PyTensor>,
        a: MaskedFillArgs,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        super::super::select::masked_fill(&x, &a.mask, &a.value, vm)
    }

    #[pyfunction]
    fn gather(x: PyRef<PyTensor>, a: DimIndexArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        super::super::select::with_index("gather", &x, a.dim, &a.index, vm)
    }

    #[pyfunction]
    fn index_select(
        x: PyRef<PyTensor>,
        a: DimIndexArgs,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        super::super::select::with_index("index_select", &x, a.dim, &a.index, vm)
    }

    #[pyfunction]
    fn narrow(x: PyRef<PyTensor>, a: NarrowArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        super::super::select::narrow(&x, a.dim, a.start, a.length, vm)
    }

    // The shape functions torch has beside its methods (`torch.flatten(x, 1)`): the methods.

    #[pyfunction]
    fn reshape(
        x: PyRef<PyTensor>,
        shape: PosArgs<PyObjectRef>,
        kw: KwArgs<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        PyTensor::reshape(&x, shape, kw, vm)
    }

    #[pyfunction]
    fn flatten(x: PyRef<PyTensor>, a: FlattenArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        PyTensor::flatten(&x, a, vm)
    }

    #[pyfunction]
    fn transpose(x: PyRef<PyTensor>, a: TransposeArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        PyTensor::transpose(&x, a, vm)
    }

    #[pyfunction]
    fn permute(
        x: PyRef<PyTensor>,
        dims: PosArgs<PyObjectRef>,
        kw: KwArgs<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        PyTensor::permute(&x, dims, kw, vm)
    }

    #[pyfunction]
    fn unsqueeze(x: PyRef<PyTensor>, a: DimArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        PyTensor::unsqueeze(&x, a, vm)
    }

    #[pyfunction]
    fn squeeze(x: PyRef<PyTensor>, a: SqueezeArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        PyTensor::squeeze(&x, a, vm)
    }

    #[pyfunction]
    fn split(x: PyRef<PyTensor>, a: SplitArgs, vm: &VirtualMachine) -> PyResult<PyTupleRef> {
        super::super::select::split(&x, a.sections(vm)?, a.dim, vm)
    }

    #[pyfunction]
    fn chunk(x: PyRef<PyTensor>, a: ChunkArgs, vm: &VirtualMachine) -> PyResult<PyTupleRef> {
        super::super::select::chunk(&x, a.chunks, a.dim, vm)
    }

    #[pyfunction]
    fn var(x: PyObjectRef, args: VarArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("var", &x, args.attrs(vm)?, vm)
    }

    #[pyfunction]
    fn clamp(x: PyObjectRef, args: ClampArgs, vm: &VirtualMachine) -> PyResult {
        crate::python::tensor_protocols::clamp(&x, args, vm)
    }
    #[pyfunction]
    fn cumsum(x: PyObjectRef, a: DimArg, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("cumsum", &x, Attrs::new().with("dim", Attr::Int(a.dim)), vm)
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
    fn sum(x: PyObjectRef, args: ReduceToArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        reduce_to("sum", &x, args, vm)
    }
    #[pyfunction]
    fn mean(x: PyObjectRef, args: ReduceToArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        reduce_to("mean", &x, args, vm)
    }

    /// `sum(x, ..., dtype=)` of a tensor (read in place: a traced one is known by its data)
    /// or of numbers (a tensor made of them first).
    fn reduce_to(
        name: &str,
        x: &PyObject,
        args: ReduceToArgs,
        vm: &VirtualMachine,
    ) -> PyResult<PyTensor> {
        match x.downcast_ref::<PyTensor>() {
            Some(t) => args.apply(name, t, vm),
            None => args.apply(name, &unary_fn("clone", x, Attrs::new(), vm)?, vm),
        }
    }
    #[pyfunction]
    fn max(x: PyObjectRef, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("max", &x, args.attrs(vm)?, vm)
    }
    #[pyfunction]
    fn min(x: PyObjectRef, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("min", &x, args.attrs(vm)?, vm)
    }
    #[pyfunction]
    fn abs(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("abs", &x, Attrs::new(), vm)
    }
    #[pyfunction]
    fn argmax(x: PyObjectRef, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("argmax", &x, args.attrs(vm)?, vm)
    }
    #[pyfunction]
    fn argmin(x: PyObjectRef, args: ReduceArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        unary_fn("argmin", &x, args.attrs(vm)?, vm)
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
    /// The remainder with the dividend's sign (C's `fmod`); a number beside a tensor takes
    /// its type, as with the operators.
    #[pyfunction]
    fn fmod(a: PyObjectRef, b: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        binary_fn("fmod", &a, &b, vm)
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
        where_select(&cond, &a, &b, vm)
    }

    fn join(name: &str, args: JoinArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        let objs: Vec<PyObjectRef> = vm.extract_elements_with(&args.tensors, Ok)?;
        if objs.is_empty() {
            return Err(vm.new_runtime_error(format!("{name}() needs at least one tensor")));
        }
        // Tensors are read in place (as every op reads them), other items converted.
        let operands: Vec<(&PyObject, Option<DType>)> = objs.iter().map(|o| (&**o, None)).collect();
        let attrs = Attrs::new().with("dim", Attr::Int(args.dim));
        with_operand_list(&operands, vm, |d| {
            new_tensor(registry().call(name, d, &attrs), vm)
        })?
        .ok_or_else(|| vm.new_type_error(format!("{name}() takes tensors, numbers and lists")))
    }

    #[pyfunction]
    fn cat(args: JoinArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        join("cat", args, vm)
    }
    #[pyfunction]
    fn stack(args: JoinArgs, vm: &VirtualMachine) -> PyResult<PyTensor> {
        join("stack", args, vm)
    }
}
