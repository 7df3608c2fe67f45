//! A number that changes per call, given to a tensor op where a 0-d tensor of the other
//! operand's dtype takes its place exactly (`where(c, x, t)`, `x.clamp(-t, t)`,
//! `x.masked_fill(m, t)`, `x > t`, `x[i] = t`, with `t` a simulated time or a schedule's value): the number
//! becomes a 0-d input of the graph, made from it on each call as the op would convert it
//! (`State::number_input`), instead of a constant guarded by value. Only where the tensor is
//! a float tensor whose dtype the number keeps (torch's weak scalar rule), so that the op's
//! result dtype and values are the scalar's.

use rustpython_vm::{AsObject, PyObjectRef};

use crate::graph::sizes::SymAttr;
use crate::tensor::{Attr, Attrs, DType, Scalar};
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::numbers::NumExpr;

/// The ops, by the name the simulation gives them, and where they take such a scalar: by
/// position (counting the tensor a method is called on) and by keyword.
const SCALAR_PARAMS: &[(&str, &[usize], &[&str])] = &[
    ("symtrace.where", &[1, 2], &[]),
    ("symtrace.clamp", &[1, 2], &["min", "max"]),
    ("symtrace.clip", &[1, 2], &["min", "max"]),
    ("Tensor.clamp", &[1, 2], &["min", "max"]),
    ("Tensor.clip", &[1, 2], &["min", "max"]),
    ("Tensor.masked_fill", &[2], &["value"]),
];

/// The ops that fill a tensor with a number, and the position of the fill (see
/// `State::full_of_input`).
const FILLS: &[(&str, usize)] = &[
    ("symtrace.full", 1),
    ("symtrace.full_like", 1),
    ("Tensor.new_full", 2),
];

/// The factory of a tensor from data (`as_tensor` and `Tensor.new_tensor` call it): of one
/// number that changes per call (`st.tensor(self.step)`, `x.new_tensor(lr)`), a 0-d input
/// (see `State::tensor_of_input`).
const TENSOR_OF_NUMBER: &str = "symtrace.tensor";

/// Whether `f`, about to be called, is one of these ops (`symtrace.where`, the tensor
/// method `clamp`...): the numbers among its arguments are not forced before the call.
pub fn takes_scalars(f: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> bool {
    use crate::tensor::PyTensor;
    use rustpython_vm::PyPayload;
    let Some(name) = f.get_attr("__name__", vm).ok().and_then(|n| {
        n.downcast_ref::<rustpython_vm::builtins::PyStr>()
            .map(|s| s.to_string_lossy().into_owned())
    }) else {
        return false;
    };
    let ours = |owner: &str| {
        let what = format!("{owner}.{name}");
        SCALAR_PARAMS.iter().any(|(w, _, _)| *w == what)
            || FILLS.iter().any(|(w, _)| *w == what)
            || what == TENSOR_OF_NUMBER
    };
    let is = |o: Option<PyObjectRef>| o.is_some_and(|o| o.is(f));
    (ours("Tensor") && is(PyTensor::class(&vm.ctx).get_attr(vm.ctx.intern_str(name.as_str()))))
        || (ours("symtrace") && native_of_symtrace(f, vm))
}

/// The `dtype=` among `kwargs`: `Some(None)` where none is given (or `None` is), `None`
/// where what is given is not a dtype.
fn given_dtype(
    kwargs: &[(String, Var)],
    vm: &rustpython_vm::VirtualMachine,
) -> Option<Option<DType>> {
    match kwargs.iter().find(|(k, _)| k == "dtype").map(|(_, v)| v) {
        Some(Var::Obj(d)) if vm.is_none(d) => Some(None),
        Some(Var::Obj(d) | Var::Lazy(d, _)) => {
            Some(Some(d.downcast_ref::<crate::tensor::PyDType>()?.dtype))
        }
        Some(_) => None,
        None => Some(None),
    }
}

/// Whether `f` is a native function of the `symtrace` module (`symtrace.where` may be a
/// wrapper written in Python that calls it).
fn native_of_symtrace(f: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> bool {
    f.class().is(vm.ctx.types.builtin_function_or_method_type)
        && f.get_attr("__module__", vm).ok().is_some_and(|m| {
            m.downcast_ref::<rustpython_vm::builtins::PyStr>()
                .is_some_and(|m| m.to_string_lossy() == "symtrace")
        })
}

impl State<'_> {
    /// `args` and `kwargs` of the op `what` with each number that changes per call, at a
    /// scalar parameter, replaced by a 0-d graph input (see the module). Unchanged where the
    /// op takes none.
    pub(super) fn scalars_as_inputs(
        &mut self,
        what: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<(Vec<Var>, Vec<(String, Var)>)> {
        let Some((_, positions, names)) = SCALAR_PARAMS.iter().find(|(w, _, _)| *w == what) else {
            return Ok((args, kwargs));
        };
        // The float tensor whose dtype the inputs take: the first fake among the arguments
        // that is not a mask.
        let dtype = args
            .iter()
            .chain(kwargs.iter().map(|(_, v)| v))
            .filter_map(|a| self.is_fake(a).then(|| self.tensor_dtype(a)).flatten())
            .find(|d| d.is_float());
        let Some(dtype) = dtype else {
            return Ok((args, kwargs));
        };
        let mut args = args;
        for &p in positions.iter() {
            if let Some(a) = args.get(p).cloned()
                && let Some(t) = self.scalar_input(&a, dtype)?
            {
                args[p] = t;
            }
        }
        let mut kwargs = kwargs;
        for (k, v) in kwargs.iter_mut() {
            if names.contains(&k.as_str())
                && let Some(t) = self.scalar_input(v, dtype)?
            {
                *v = t;
            }
        }
        Ok((args, kwargs))
    }

    /// `full_like(x, v)`, `x.new_full(size, v)` or `full(size, v)` with a number `v` that
    /// changes per call and that the result's dtype keeps: the tensor made with the fill 1,
    /// times `v` as a 0-d input of that dtype (exact: `1 * v` is `v`, NaN, the infinities
    /// and -0.0 too). `None`: not such a call.
    pub(super) fn full_of_input(
        &mut self,
        what: &str,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some(&(_, at)) = FILLS.iter().find(|(w, _)| *w == what) else {
            return Ok(None);
        };
        if kwargs
            .iter()
            .any(|(k, _)| !matches!(k.as_str(), "dtype" | "device" | "fill_value"))
        {
            return Ok(None);
        }
        let by_keyword = kwargs.iter().position(|(k, _)| k == "fill_value");
        let fill = match (args.get(at), by_keyword) {
            (Some(v), None) => v.clone(),
            (None, Some(i)) if args.len() == at => kwargs[i].1.clone(),
            _ => return Ok(None),
        };
        let value = match &fill {
            Var::Num(n) if !n.has_size() => n.value.clone(),
            Var::Lazy(o, _) => o.clone(),
            _ => return Ok(None),
        };
        let t = &vm.ctx.types;
        let one: PyObjectRef = if value.class().is(t.float_type) {
            vm.ctx.new_float(1.0).into()
        } else if value.class().is(t.int_type) {
            vm.ctx.new_int(1).into()
        } else {
            return Ok(None);
        };
        // The result's dtype: given, the tensor's, or the fill's (the default float type
        // for a float, read and so guarded by the call below).
        let Some(dtype) = given_dtype(kwargs, vm) else {
            return Ok(None);
        };
        let dtype = match (dtype, what) {
            (Some(d), _) => d,
            (None, "symtrace.full") if value.class().is(t.float_type) => {
                crate::tensor::dtype::default_float()
            }
            (None, "symtrace.full") => DType::Int64,
            (None, _) => match args.first().and_then(|a| self.tensor_dtype(a)) {
                Some(d) => d,
                None => return Ok(None),
            },
        };
        let Some(scalar) = self.scalar_input(&fill, dtype)? else {
            return Ok(None);
        };
        let mut args = args.to_vec();
        let mut kwargs = kwargs.to_vec();
        match by_keyword {
            Some(i) => kwargs[i].1 = Var::Obj(one),
            None => args[at] = Var::Obj(one),
        }
        let ones = match self.symbolic_call(what, f, &args, &kwargs)? {
            Some(ones) => ones,
            None => self.native_call_as_is(f, args, kwargs, what, false)?,
        };
        if self.tensor_dtype(&ones) != Some(dtype) {
            return Ok(None);
        }
        self.binary(
            rustpython_vm::bytecode::BinaryOperator::Multiply,
            &ones,
            &scalar,
        )
        .map(Some)
    }

    /// `st.tensor(v)` (`dtype=` given or not) of a number `v` that changes per call: a 0-d
    /// input of the dtype the factory gives it (an int's int64, a float's the default float
    /// type, or the one given where it keeps the value: an int or float into a float type,
    /// an int into int64), times 1 so that the tensor is one of its own, not the input. Of a
    /// list or tuple of numbers among which such a one (`st.tensor([h, w])`), the stack of
    /// their 0-d tensors. `None`: not such a call.
    pub(crate) fn tensor_of_input(
        &mut self,
        what: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let (TENSOR_OF_NUMBER, [data]) = (what, args) else {
            return Ok(None);
        };
        if kwargs
            .iter()
            .any(|(k, _)| !matches!(k.as_str(), "dtype" | "device"))
        {
            return Ok(None);
        }
        let (items, stacked) = match data {
            Var::List(l) => (l.borrow().clone(), true),
            Var::Tuple(t) => (t.to_vec(), true),
            // A caller's list or tuple of numbers (`st.tensor(lengths)`): its items as read
            // one by one, its type and length guarded.
            Var::Lazy(o, source)
                if o.class().is(vm.ctx.types.list_type)
                    || o.class().is(vm.ctx.types.tuple_type) =>
            {
                match self.lazy_items(o, source)? {
                    Some(items) => (items, true),
                    None => return Ok(None),
                }
            }
            other => (vec![other.clone()], false),
        };
        let t = &vm.ctx.types;
        let number = |o: &PyObjectRef| o.class().is(t.int_type) || o.class().is(t.float_type);
        let mut values = Vec::with_capacity(items.len());
        for item in &items {
            match item {
                Var::Num(n) if !n.has_size() || Self::is_size(item) => values.push(n.value.clone()),
                Var::Lazy(o, _) | Var::Obj(o) if number(o) => values.push(o.clone()),
                _ => return Ok(None),
            }
        }
        if values.is_empty() {
            return Ok(None);
        }
        let given = kwargs.iter().find(|(k, _)| k == "dtype").map(|(_, v)| v);
        let Some(dtype) = given_dtype(kwargs, vm) else {
            return Ok(None);
        };
        let dtype = match dtype {
            Some(d) => d,
            None if values.iter().any(|v| v.class().is(t.float_type)) => {
                crate::tensor::dtype::default_float()
            }
            None => DType::Int64,
        };
        if !(dtype.is_float() || dtype == DType::Int64) {
            return Ok(None);
        }
        let mut scalars = Vec::with_capacity(items.len());
        let mut varying = false;
        for item in &items {
            // A size that changes per call (`st.tensor([len(s) for s in seqs])`): a 0-d
            // tensor the graph makes at each call's sizes.
            let sized = self.sized(item)?;
            if let Some(t) = self.size_scalar(&sized, dtype)? {
                scalars.push(Some(t));
                varying = true;
                continue;
            }
            match self.scalar_input(item, dtype)? {
                Some(s) => {
                    varying = true;
                    scalars.push(Some(s));
                }
                None => scalars.push(None),
            }
        }
        if !varying {
            return Ok(None);
        }
        if let Some(Var::Lazy(d, s)) = given {
            self.guard(s, crate::translate::guards::guard::Check::is(d.clone()));
        }
        let one = Var::Obj(vm.ctx.new_int(1).into());
        let Some(factory) = crate::translate::loaded_modules::loaded_attr("symtrace", "tensor", vm)
        else {
            return Ok(None);
        };
        let mut parts = Vec::with_capacity(items.len());
        for (item, scalar) in items.iter().zip(scalars) {
            let part = match scalar {
                Some(s) => s,
                // A number that does not change per call: a constant of the graph.
                None => {
                    let o = self.obj(item)?;
                    let dtype = Var::Obj(crate::tensor::dtype_object(dtype, vm));
                    let kw = vec![("dtype".to_owned(), dtype)];
                    self.native_call_as_is(&factory, vec![Var::Obj(o)], kw, what, false)?
                }
            };
            parts.push(self.binary(
                rustpython_vm::bytecode::BinaryOperator::Multiply,
                &part,
                &one,
            )?);
        }
        if !stacked {
            return Ok(parts.pop());
        }
        let Some(stack) = crate::translate::loaded_modules::loaded_attr("symtrace", "stack", vm)
        else {
            return Ok(None);
        };
        self.native_call_as_is(
            &stack,
            vec![Var::tuple(parts)],
            Vec::new(),
            "symtrace.stack",
            false,
        )
        .map(Some)
    }

    /// `a op b` of a float tensor and a deferred number (`x > self.t` after `self.t += dt`),
    /// or of an int64 tensor and a deferred int: the number as a 0-d graph input of the
    /// tensor's dtype, as eager compares them (the number rounded to that dtype first). A
    /// number read from the frame is such an input already (`number_operand`).
    pub(crate) fn compared_scalars(&mut self, a: &Var, b: &Var) -> SimResult<(Var, Var)> {
        // A float tensor, or an int64 one beside an int (`arange(n) < self.pos`: exact in
        // int64), traced or made from constants.
        let float_fake = |s: &Self, v: &Var| {
            let constant =
                matches!(v, Var::Obj(o) if o.downcast_ref::<crate::tensor::PyTensor>().is_some());
            (s.is_fake(v) || constant)
                .then(|| s.tensor_dtype(v))
                .flatten()
                .filter(|d| d.is_float() || *d == DType::Int64)
        };
        if matches!(b, Var::Num(_))
            && let Some(dtype) = float_fake(self, a)
            && let Some(t) = self.scalar_input(b, dtype)?
        {
            return Ok((a.clone(), t));
        }
        if matches!(a, Var::Num(_))
            && let Some(dtype) = float_fake(self, b)
            && let Some(t) = self.scalar_input(a, dtype)?
        {
            return Ok((t, b.clone()));
        }
        Ok((a.clone(), b.clone()))
    }

    /// A number that changes per call stored into a float or int64 tensor (`t.fill_(T)`,
    /// `t[:, 0] = self.step`): a 0-d input of the target's dtype, which the store converts
    /// as it converts the number (`None`: the value is stored as it is, a constant).
    pub(super) fn store_input(&mut self, target: &Var, value: &Var) -> SimResult<Option<Var>> {
        if !matches!(value, Var::Num(_) | Var::Lazy(..)) {
            return Ok(None);
        }
        let Some(dtype) = self
            .tensor_dtype(target)
            .filter(|d| d.is_float() || *d == DType::Int64)
        else {
            return Ok(None);
        };
        let value = self.sized(value)?;
        self.scalar_input(&value, dtype)
    }

    /// `v` as a 0-d graph input of `dtype`, when it is a number that changes per call which
    /// `dtype` keeps (an int or a float next to a float tensor).
    fn scalar_input(&mut self, v: &Var, dtype: DType) -> SimResult<Option<Var>> {
        let vm = self.vm;
        // A size (`arange(T) < T - 1`): made by the graph at each call's sizes.
        if let Some(t) = self.size_scalar(v, dtype)? {
            return Ok(Some(t));
        }
        let t = &vm.ctx.types;
        let number = |o: &PyObjectRef| o.class().is(t.int_type) || o.class().is(t.float_type);
        let (value, source): (PyObjectRef, Source) = match v {
            Var::Num(n) if !n.has_size() && self.varies_per_call(n) => match n.as_source() {
                Some(s) if !s.has_draw() => (n.value.clone(), s),
                _ => return Ok(None),
            },
            Var::Lazy(o, s)
                if number(o) && self.spec.number_is_input(s, o.class().is(t.float_type)) =>
            {
                (o.clone(), s.clone())
            }
            _ => return Ok(None),
        };
        let scalar = if let Some(f) = value.downcast_ref::<rustpython_vm::builtins::PyFloat>() {
            Scalar::Float(f.to_f64())
        } else {
            match value
                .downcast_ref::<rustpython_vm::builtins::PyInt>()
                .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
            {
                Some(i) => Scalar::Int(i),
                None => return Ok(None),
            }
        };
        if crate::tensor::dtype::weak_scalar_dtype(scalar, dtype) != dtype {
            return Ok(None);
        }
        if let Scalar::Int(i) = scalar
            && dtype.is_float()
            && i.unsigned_abs() > (1u64 << 24)
        {
            // Exactly representable in any float dtype, as the op's own conversion is.
            return Ok(None);
        }
        Ok(Some(Var::Tensor(
            self.number_input(&value, &source, dtype)?,
        )))
    }

    /// `v` when it is a size that changes per call (`T - 1`, `len(s)`): a 0-d tensor of
    /// `dtype` the graph makes at each call's sizes. `None` for any other value, or a size
    /// a float `dtype` would not hold exactly.
    fn size_scalar(&mut self, v: &Var, dtype: DType) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Var::Num(n) = v else {
            return Ok(None);
        };
        let NumExpr::Size(e) = &n.expr else {
            return Ok(None);
        };
        let Some(hint) = n
            .value
            .downcast_ref::<rustpython_vm::builtins::PyInt>()
            .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
        else {
            return Ok(None);
        };
        if dtype.is_float() && hint.unsigned_abs() > (1u64 << 24) {
            return Ok(None);
        }
        let attrs = Attrs::new()
            .with("shape", Attr::Ints(Vec::new()))
            .with("value", Attr::Int(hint))
            .with("dtype", Attr::DType(dtype));
        let sym = vec![SymAttr::Int("value".into(), e.clone())];
        self.factory_var("full", attrs, sym).map(Some)
    }
}
