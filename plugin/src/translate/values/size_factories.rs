//! `arange`, `zeros`, `ones` and `full` of sizes that may change from call to call (`st.full((T, T),
//! float("-inf"))`, `st.ones(T, T).tril()`): a `full` node whose shape is worked out per
//! call, as `arange`'s bounds are, where the function would make a constant of this call's
//! sizes.

use rustpython_vm::builtins::{PyFloat, PyInt};
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::function::{FuncArgs, KwArgs};
use rustpython_vm::{AsObject, PyObjectRef, PyPayload};

use crate::graph::recorder;
use crate::graph::sizes::{SizeExpr, SymAttr};
use crate::tensor::{Attr, Attrs, DType, PyDType, PyTensor, Scalar};
use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported};
use crate::translate::values::Var;

impl State<'_> {
    /// `symtrace.arange(...)` over ints, one of them a size that may change: a node that
    /// makes it per call.
    pub(super) fn symbolic_arange(
        &mut self,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let mut dtype = DType::Int64;
        for (k, v) in kwargs {
            let o = match (k.as_str(), v) {
                ("dtype", Var::Obj(_) | Var::Lazy(..)) => self.obj(v)?,
                ("device", _) => {
                    let d = self.plain_obj(v, "a device")?;
                    if !names_cpu(&d) {
                        return Ok(None);
                    }
                    continue;
                }
                _ => return Ok(None),
            };
            match o.downcast_ref::<PyDType>() {
                Some(d) => dtype = d.dtype,
                None => return Ok(None),
            }
        }
        let Some(mut parts) = self.size_operands(args)? else {
            return Ok(None);
        };
        match parts.len() {
            1 => parts.insert(0, (SizeExpr::Const(0), 0)),
            2 | 3 => {}
            _ => return Ok(None),
        }
        if parts.len() == 2 {
            parts.push((SizeExpr::Const(1), 1));
        }
        if parts[2].1 == 0 {
            return Ok(None); // it raises: the general path says so
        }
        let attrs = Attrs::new()
            .with("start", Attr::Int(parts[0].1))
            .with("end", Attr::Int(parts[1].1))
            .with("step", Attr::Int(parts[2].1))
            .with("dtype", Attr::DType(dtype));
        let [s, e, st] = <[_; 3]>::try_from(parts).expect("three parts");
        let sym = vec![
            SymAttr::Int("start".into(), s.0),
            SymAttr::Int("end".into(), e.0),
            SymAttr::Int("step".into(), st.0),
        ];
        self.factory_var("arange", attrs, sym).map(Some)
    }

    /// `symtrace.<name>(*args, **kwargs)` (`zeros`, `ones`, `full`) where a size may change:
    /// the node that makes it per call (`None`: not such a call; the caller runs it as
    /// usual, forcing the sizes).
    pub(super) fn symbolic_full(
        &mut self,
        name: &str,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        // `full(size=..., fill_value=...)` spelled with keywords: as positionals.
        let mut args = args.to_vec();
        let mut kwargs = kwargs.to_vec();
        if name == "full" {
            for key in ["size", "fill_value"] {
                if let Some(at) = kwargs.iter().position(|(k, _)| k == key) {
                    let wanted = usize::from(key == "fill_value");
                    if args.len() != wanted {
                        return Ok(None);
                    }
                    args.push(kwargs.remove(at).1);
                }
            }
        }
        let (args, kwargs) = (args.as_slice(), kwargs.as_slice());
        // A `device=` is checked by the function itself, run below on this call's sizes.
        if kwargs.iter().any(|(k, _)| k != "dtype" && k != "device") {
            return Ok(None);
        }
        // A shape of constants (`full((2,), T)`) is one constant tuple.
        let sequence = |v: &Var| crate::translate::values::sizes::shape_sequence(v, vm);
        let (dims, value) = match (name, args) {
            ("full", [shape, value]) if sequence(shape) => (self.items(shape)?, Some(value)),
            ("zeros" | "ones", [shape]) if sequence(shape) => (self.items(shape)?, None),
            ("zeros" | "ones", dims) => (dims.to_vec(), None),
            _ => return Ok(None),
        };
        let Some(exprs) = self.size_operands(&dims)? else {
            return Ok(None);
        };
        // The dtype and the fill as the function makes them from this call's sizes (the
        // default dtype read, and guarded, as it reads it).
        let hints: Vec<PyObjectRef> = exprs
            .iter()
            .map(|(_, h)| vm.ctx.new_int(*h).into())
            .collect();
        let mut positional = vec![vm.ctx.new_tuple(hints).into()];
        // A fill that is itself a size (`full((B,), T, dtype=long)`, lengths for a mask) is
        // worked out per call too, where its value would be a constant of this call.
        let mut fill_size = None;
        let fill = match value {
            Some(v) => match self.int_fill(v)? {
                Some((expr, h)) => {
                    positional.push(vm.ctx.new_int(h).into());
                    fill_size = Some(expr);
                    Some(Attr::Int(h))
                }
                None => {
                    let v = self.plain_obj(v, "a fill value")?;
                    positional.push(v.clone());
                    fill_attr(&v)
                }
            },
            None => Some(Attr::Int(i64::from(name == "ones"))),
        };
        let Some(fill) = fill else {
            return Ok(None);
        };
        let Some(dtype) = self.dtype_made(f, positional, kwargs)? else {
            return Ok(None);
        };
        let attrs = Attrs::new()
            .with("shape", Attr::Ints(exprs.iter().map(|(_, h)| *h).collect()))
            .with("value", fill)
            .with("dtype", Attr::DType(dtype));
        let mut sym = vec![SymAttr::Ints(
            "shape".into(),
            exprs.into_iter().map(|(e, _)| e).collect(),
        )];
        sym.extend(fill_size.map(|e| SymAttr::Int("value".into(), e)));
        self.factory_var("full", attrs, sym).map(Some)
    }

    /// A fill value that is an int the graph may take per call (a size, a dynamic int):
    /// its expression and this call's value; `None` for anything else (a float, a bool, a
    /// constant), which the fill keeps as a constant.
    fn int_fill(&mut self, v: &Var) -> SimResult<Option<(SizeExpr, i64)>> {
        let vm = self.vm;
        let Var::Num(n) = v else {
            return Ok(None);
        };
        if !n.value.class().is(vm.ctx.types.int_type) {
            return Ok(None);
        }
        Ok(match self.size_operand(v)? {
            Some((SizeExpr::Const(_), _)) | None => None,
            some => some,
        })
    }
}

impl State<'_> {
    /// `eye(n, m=n, dtype=)` of sizes that may change: a node making it per call.
    pub(super) fn symbolic_eye(
        &mut self,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        if !(1..=2).contains(&args.len())
            || kwargs.iter().any(|(k, _)| k != "dtype" && k != "device")
        {
            return Ok(None);
        }
        let Some(exprs) = self.size_operands(args)? else {
            return Ok(None);
        };
        let hints: Vec<PyObjectRef> = exprs
            .iter()
            .map(|(_, h)| vm.ctx.new_int(*h).into())
            .collect();
        let Some(dtype) = self.dtype_made(f, hints, kwargs)? else {
            return Ok(None);
        };
        let (n, m) = (
            exprs[0].clone(),
            exprs.get(1).cloned().unwrap_or_else(|| exprs[0].clone()),
        );
        let attrs = Attrs::new()
            .with("n", Attr::Int(n.1))
            .with("m", Attr::Int(m.1))
            .with("dtype", Attr::DType(dtype));
        let sym = vec![SymAttr::Int("n".into(), n.0), SymAttr::Int("m".into(), m.0)];
        self.factory_var("eye", attrs, sym).map(Some)
    }

    /// A size that changes from call to call as an operand of a tensor's arithmetic
    /// (`loss.sum() / x.shape[0]`, `t * (T - 1)`): a 0-d tensor that the graph makes per call
    /// from the size, of the type the number computes in next to the tensor (a float
    /// tensor's own, as for a number read from the frame, `number_input`), where the size
    /// would be a constant that a call of another size misses (an int or bool tensor's
    /// with an int64 one: the same results and dtypes as with the number, `/` included).
    pub(super) fn size_tensor_operand(
        &mut self,
        op: BinaryOperator,
        expr: &SizeExpr,
        value: &PyObjectRef,
        other: &Var,
        number_first: bool,
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some(hint) = value
            .downcast_ref::<PyInt>()
            .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
        else {
            return Ok(None);
        };
        let Some(tensor_dtype) = self.tensor_dtype(other) else {
            return Ok(None);
        };
        let dtype = crate::tensor::dtype::weak_scalar_dtype(Scalar::Int(hint), tensor_dtype);
        let attrs = Attrs::new()
            .with("shape", Attr::Ints(Vec::new()))
            .with("value", Attr::Int(hint))
            .with("dtype", Attr::DType(dtype));
        let sym = vec![SymAttr::Int("value".into(), expr.clone())];
        let size = self.factory_var("full", attrs, sym)?;
        let (x, y) = match number_first {
            true => (size, other.clone()),
            false => (other.clone(), size),
        };
        self.binary(op, &x, &y).map(Some)
    }
}

impl State<'_> {
    /// `zeros_like(t)` or `ones_like(t)` of a tensor whose sizes may change: `zeros(t.shape,
    /// dtype=t.dtype)` (or `ones`), made per call at its sizes.
    pub(super) fn symbolic_like(
        &mut self,
        name: &str,
        t: &Var,
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let (Some(sizes), Some(dtype)) = (self.symbolic_sizes(t)?, self.tensor_dtype(t)) else {
            return Ok(None);
        };
        let base = if name == "zeros_like" {
            "zeros"
        } else {
            "ones"
        };
        let f = crate::translate::loaded_modules::loaded_attr("symtrace", base, vm).ok_or_else(
            || Unsupported::new(Kind::Internal, format!("symtrace.{base} is missing")),
        )?;
        // No dtype, or `dtype=None`, is the tensor's.
        let mut kwargs: Vec<(String, Var)> = kwargs
            .iter()
            .filter(|(k, v)| !(k == "dtype" && matches!(v, Var::Obj(o) if vm.is_none(o))))
            .cloned()
            .collect();
        if !kwargs.iter().any(|(k, _)| k == "dtype") {
            let dtype = crate::tensor::dtype_object(dtype, vm);
            kwargs.push(("dtype".to_owned(), Var::Obj(dtype)));
        }
        let shape = Var::Tuple(std::rc::Rc::new(sizes));
        self.symbolic_full(base, &f, &[shape], &kwargs)
    }

    /// `symtrace.linspace(start, end, steps)` for a number of steps that may change: a node
    /// that makes it per call (`None`: not such a call; the caller runs it as usual).
    pub(super) fn symbolic_linspace(
        &mut self,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        if args.len() > 3 {
            return Ok(None);
        }
        let mut parts: Vec<Option<Var>> = args.iter().cloned().map(Some).collect();
        parts.resize(3, None);
        for (k, v) in kwargs {
            let at = match k.as_str() {
                "start" => 0,
                "end" => 1,
                "steps" => 2,
                "dtype" | "device" => continue,
                _ => return Ok(None),
            };
            if parts[at].replace(v.clone()).is_some() {
                return Ok(None); // given twice: the function says so
            }
        }
        let [Some(start), Some(end), Some(steps)] =
            <[Option<Var>; 3]>::try_from(parts).unwrap_or([None, None, None])
        else {
            return Ok(None);
        };
        let Some((expr, hint)) = self.size_operand(&steps)? else {
            return Ok(None);
        };
        let (start, end) = (
            self.plain_obj(&start, "linspace's start")?,
            self.plain_obj(&end, "linspace's end")?,
        );
        let number = |o: &PyObjectRef| match fill_attr(o) {
            Some(Attr::Int(i)) => Some(i as f64),
            Some(Attr::Float(x)) => Some(x),
            _ => None,
        };
        let (Some(a), Some(b)) = (number(&start), number(&end)) else {
            return Ok(None);
        };
        // The function run as called, at this call's steps: its dtype (the default dtype
        // read, and guarded, as it reads it), its checks (a device, the arguments' names).
        let mut positional = Vec::with_capacity(args.len());
        for a in args {
            positional.push(self.now(a)?);
        }
        let mut named = Vec::with_capacity(kwargs.len());
        for (k, v) in kwargs {
            named.push((k.clone(), self.now(v)?));
        }
        let named = named.into_iter().collect::<KwArgs>();
        let Some(dtype) = called_dtype(f, FuncArgs::new(positional, named), vm) else {
            return Ok(None);
        };
        let attrs = Attrs::new()
            .with("start", Attr::Float(a))
            .with("end", Attr::Float(b))
            .with("steps", Attr::Int(hint))
            .with("dtype", Attr::DType(dtype));
        let sym = vec![SymAttr::Int("steps".into(), expr)];
        self.factory_var("linspace", attrs, sym).map(Some)
    }
}

impl State<'_> {
    /// A fake made by a factory node whose `sym` attributes are worked out per call.
    pub(super) fn factory_var(
        &mut self,
        op: &str,
        attrs: Attrs,
        sym: Vec<SymAttr>,
    ) -> SimResult<Var> {
        let fake = recorder::with(|r| r.factory(op, attrs, sym))
            .map_err(|e| Unsupported::new(Kind::Raises, e.message))?;
        let t = PyTensor::new(fake).into_ref(&self.vm.ctx);
        self.keep_alive(&t);
        Ok(Var::Tensor(t))
    }

    /// `v` as an object at this call's values: a size that may change as its value now,
    /// without checking it (the node made with it works it out per call).
    fn now(&mut self, v: &Var) -> SimResult<PyObjectRef> {
        match &self.sized(v)? {
            Var::Num(n)
                if matches!(n.expr, crate::translate::values::numbers::NumExpr::Size(_)) =>
            {
                Ok(n.value.clone())
            }
            other => self.obj(other),
        }
    }
}

impl State<'_> {
    /// The dtype of the tensor the factory `f` makes from this call's values (`None`: it
    /// made none, or raised): the dtype its node then makes at every call's sizes, as the
    /// function works it out (a default dtype read, a fill's type).
    fn dtype_made(
        &mut self,
        f: &PyObjectRef,
        positional: Vec<PyObjectRef>,
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<crate::tensor::DType>> {
        let mut named = Vec::new();
        for (k, v) in kwargs {
            named.push((k.clone(), self.obj(v)?));
        }
        let named: KwArgs = named.into_iter().collect();
        Ok(called_dtype(f, FuncArgs::new(positional, named), self.vm))
    }
}

/// The dtype of the tensor `f(*args)` returns (`None`: none, or it raised).
fn called_dtype(
    f: &PyObjectRef,
    args: FuncArgs,
    vm: &rustpython_vm::VirtualMachine,
) -> Option<crate::tensor::DType> {
    f.call(args, vm)
        .ok()
        .and_then(|t| t.downcast_ref::<PyTensor>().map(|t| t.read().dtype()))
}

/// A fill value as the `full` op takes it: a bool, an int that fits, or a float.
fn fill_attr(v: &PyObjectRef) -> Option<Attr> {
    let vm_bool = v
        .downcast_ref::<rustpython_vm::builtins::PyBool>()
        .is_some();
    if vm_bool {
        let i = v.downcast_ref::<PyInt>()?;
        return Some(Attr::Bool(!i.as_bigint().eq(&0.into())));
    }
    if let Some(i) = v.downcast_ref::<PyInt>() {
        return i64::try_from(i.as_bigint()).ok().map(Attr::Int);
    }
    v.downcast_ref::<PyFloat>().map(|x| Attr::Float(x.to_f64()))
}

/// Whether `o` names the CPU, the one device symtrace computes on (`device=` of a factory).
pub(super) fn names_cpu(o: &PyObjectRef) -> bool {
    o.downcast_ref::<crate::tensor::PyDevice>().is_some()
        || o.downcast_ref::<rustpython_vm::builtins::PyStr>()
            .and_then(|s| s.to_str())
            .is_some_and(|s| matches!(s, "cpu" | "cpu:0"))
}
