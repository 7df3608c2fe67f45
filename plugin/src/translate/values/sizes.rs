//! Sizes that change from call to call. While a graph with dynamic dimensions is recorded, a
//! size the program reads from a tensor whose sizes vary (`B, T, C = x.size()`, `len(x)`,
//! `x.shape[1]`) is a deferred number whose expression reads the graph's values
//! (`graph::sizes`). Arithmetic on it (`B * T`, `C // n_head`) stays an expression; a view,
//! a reshape, a slice, `narrow`, `arange`, `zeros`, `ones` or `full` takes it as an attribute
//! worked out for each call; a comparison checks its outcome (`T <= block_size`), not the value. Any other use
//! forces it: its value is checked, and a call of another size misses the entry.

use std::rc::Rc;

use rustpython_vm::builtins::PyInt;
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload, PyRef};

use crate::graph::sizes::{SizeCheck, SizeCmp, SizeExpr, SizeOp, SymAttr};
use crate::graph::{Value, recorder};
use crate::tensor::{PyTensor, size_reads};
use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported};
use crate::translate::values::Var;
use crate::translate::values::numbers::{Num, NumExpr};

impl State<'_> {
    /// A size as a value of the simulation: a deferred number when it may change from call
    /// to call, an int otherwise.
    pub(super) fn size_var(&self, expr: Option<SizeExpr>, hint: usize) -> Var {
        let value = self.vm.ctx.new_int(hint).into();
        match expr {
            Some(expr) => Var::Num(Rc::new(Num {
                value,
                expr: NumExpr::Size(expr),
                ops: 0,
            })),
            None => Var::Obj(value),
        }
    }

    /// The fake `t` stands for, when its sizes may change from call to call.
    pub(super) fn varying_fake(&mut self, t: &Var) -> SimResult<Option<PyRef<PyTensor>>> {
        if !self.is_fake(t) {
            return Ok(None);
        }
        let o = self.obj(t)?;
        let Ok(fake) = o.downcast::<PyTensor>() else {
            return Ok(None);
        };
        // Read first: a view read after its base's update is made again, which records.
        let data = fake.read();
        let varying = recorder::with(|r| r.is_varying(&data));
        drop(data);
        Ok(varying.then_some(fake))
    }

    /// The sizes of `t` as values, when some may change from call to call.
    pub(crate) fn symbolic_sizes(&mut self, t: &Var) -> SimResult<Option<Vec<Var>>> {
        let Some(fake) = self.varying_fake(t)? else {
            return Ok(None);
        };
        let data = fake.read();
        // Read from the recorded meta: not a size read of the program's (`size_reads`).
        let shape = recorder::with(|r| r.value_of(&data).map(|v| r.graph.meta(v).shape));
        let Some(shape) = shape else {
            return Ok(None);
        };
        let exprs: Vec<Option<SizeExpr>> =
            recorder::with(|r| (0..shape.len()).map(|d| r.size_expr(&data, d)).collect());
        Ok(Some(
            exprs
                .into_iter()
                .zip(shape)
                .map(|(e, n)| self.size_var(e, n))
                .collect(),
        ))
    }

    /// `x.size()`, `x.size(d)`, `x.shape`, `len(x)`, `x.numel()` of a tensor whose sizes may
    /// change: deferred numbers (`None`: not such a read).
    pub(crate) fn symbolic_meta(&mut self, name: &str, args: &[Var]) -> SimResult<Option<Var>> {
        let Some(t) = args.first() else {
            return Ok(None);
        };
        if !matches!(name, "size" | "shape" | "__len__" | "len" | "numel") {
            return Ok(None);
        }
        let Some(sizes) = self.symbolic_sizes(t)? else {
            return Ok(None);
        };
        Ok(match (name, &args[1..]) {
            ("size" | "shape", []) => Some(Var::Tuple(Rc::new(sizes))),
            ("size", [Var::Obj(d)]) => {
                let d = d
                    .downcast_ref::<PyInt>()
                    .and_then(|d| d.try_to_primitive::<i64>(self.vm).ok());
                match d.and_then(|d| crate::tensor::shape::normalize_dim(d, sizes.len()).ok()) {
                    Some(d) if d < sizes.len() => Some(sizes[d].clone()),
                    _ => None,
                }
            }
            ("__len__" | "len", []) => sizes.first().cloned(),
            ("numel", []) => {
                let mut n = Var::Obj(self.vm.ctx.new_int(1).into());
                for s in &sizes {
                    n = match self.size_binary(BinaryOperator::Multiply, &n, s)? {
                        Some(v) => v,
                        None => return Ok(None),
                    };
                }
                Some(n)
            }
            _ => None,
        })
    }

    /// `v` as an operand of a size: a size, an int (exactly: not a bool), or an int read from
    /// the frame (then guarded by value).
    pub(super) fn size_operand(&mut self, v: &Var) -> SimResult<Option<(SizeExpr, i64)>> {
        let vm = self.vm;
        let int = |o: &PyObjectRef| {
            o.class()
                .is(vm.ctx.types.int_type)
                .then(|| o.downcast_ref::<PyInt>()?.try_to_primitive::<i64>(vm).ok())
                .flatten()
        };
        Ok(match v {
            Var::Num(n) => match &n.expr {
                NumExpr::Size(e) => int(&n.value).map(|h| (e.clone(), h)),
                _ if n.has_size() => self.counted_size(n)?,
                _ => match (n.dynamic_int(&self.spec), int(&n.value)) {
                    (Some(source), Some(h)) => self.int_item(v, &n.value, &source, h)?,
                    // Fixed by its value, as a call's own arguments are before the call
                    // (`force_popped`); inside a tuple of sizes (`view(*x.shape[:-1], h, d
                    // // h)`) it is met here first.
                    (None, Some(h)) => {
                        self.force_number(n)?;
                        Some((SizeExpr::Const(h), h))
                    }
                    _ => None,
                },
            },
            Var::Obj(o) => int(o).map(|i| (SizeExpr::Const(i), i)),
            Var::Lazy(o, source) if int(o).is_some() => {
                let h = int(o).expect("an int");
                match self.spec.number_is_input(source, false) {
                    true => self.int_item(v, o, source, h)?,
                    false => {
                        self.obj(v)?;
                        Some((SizeExpr::Const(h), h))
                    }
                }
            }
            _ => None,
        })
    }

    /// The int `v` as a graph input that sizes are computed from.
    fn int_item(
        &mut self,
        v: &Var,
        o: &PyObjectRef,
        source: &crate::translate::source::Source,
        hint: i64,
    ) -> SimResult<Option<(SizeExpr, i64)>> {
        let fake = self.size_int_input(v, o, source)?;
        let data = fake.read();
        let e = recorder::with(|r| r.int_input(&data, hint));
        drop(data);
        Ok(e.map(|e| (e, hint)))
    }

    /// Whether `v` is a size that may change from call to call, or an int of the frame's
    /// that may, which sizes are computed from.
    pub(crate) fn is_symbolic(&self, v: &Var) -> bool {
        let vm = self.vm;
        match v {
            Var::Lazy(o, source) => {
                o.class().is(vm.ctx.types.int_type) && self.spec.number_is_input(source, false)
            }
            Var::Num(n) => n.has_size() || n.dynamic_int(&self.spec).is_some(),
            Var::SymSlice(_) => true,
            _ => false,
        }
    }

    pub(super) fn contains_symbolic(&self, v: &Var) -> bool {
        // A list that holds itself is walked no further (and goes where `obj` refuses it).
        let Ok(_level) = crate::translate::nesting::Level::enter() else {
            return true;
        };
        match v {
            Var::Tuple(items) => items.iter().any(|i| self.contains_symbolic(i)),
            Var::List(items) => items.borrow().iter().any(|i| self.contains_symbolic(i)),
            other => self.is_symbolic(other),
        }
    }

    /// Whether `v` is a size that may change from call to call.
    /// An int computed from such a size and numbers read from the frame (`self.seen +
    /// len(x)`, see `size_counters`) counts as one: where a size is needed, its numbers are
    /// fixed by value.
    pub(crate) fn is_size(v: &Var) -> bool {
        matches!(v, Var::Num(n) if n.has_size() && n.value.downcast_ref::<PyInt>().is_some())
    }

    /// `a op b` on sizes (`+ - * // %`), when one of them is a size that may change.
    pub(crate) fn size_binary(
        &mut self,
        op: BinaryOperator,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<Var>> {
        use BinaryOperator as B;
        if !Self::is_size(a) && !Self::is_size(b) {
            return Ok(None);
        }
        if let Some(n) = self.size_counter_binary(op, a, b)? {
            return Ok(Some(n));
        }
        let op = match op {
            B::Add | B::InplaceAdd => SizeOp::Add,
            B::Subtract | B::InplaceSubtract => SizeOp::Sub,
            B::Multiply | B::InplaceMultiply => SizeOp::Mul,
            B::FloorDivide | B::InplaceFloorDivide => SizeOp::FloorDiv,
            B::Remainder | B::InplaceRemainder => SizeOp::Mod,
            _ => return Ok(None),
        };
        self.size_op(op, a, b)
    }

    /// Both operands of a sizes' operator or comparison (`None` if one is not an int).
    #[allow(clippy::type_complexity)]
    fn size_pair(
        &mut self,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<((SizeExpr, i64), (SizeExpr, i64))>> {
        Ok(match (self.size_operand(a)?, self.size_operand(b)?) {
            (Some(x), Some(y)) => Some((x, y)),
            _ => None,
        })
    }

    fn size_op(&mut self, op: SizeOp, a: &Var, b: &Var) -> SimResult<Option<Var>> {
        let Some(((x, hx), (y, hy))) = self.size_pair(a, b)? else {
            return Ok(None);
        };
        // By zero it raises: the general path forces the operands and reports it.
        let Some(hint) = op.apply(hx, hy) else {
            return Ok(None);
        };
        let expr = match (&x, &y) {
            (SizeExpr::Const(_), SizeExpr::Const(_)) => None,
            _ => Some(SizeExpr::Bin(op, Box::new(x), Box::new(y))),
        };
        Ok(Some(match usize::try_from(hint) {
            Ok(h) => self.size_var(expr, h),
            // A negative result is no size; it stays an expression all the same.
            Err(_) => Var::Num(Rc::new(Num {
                value: self.vm.ctx.new_int(hint).into(),
                expr: NumExpr::Size(expr.unwrap_or(SizeExpr::Const(hint))),
                ops: 0,
            })),
        }))
    }

    /// `-a`, `min(a, b, ...)` or `max(...)` of numbers or of a tuple or list of them
    /// (`max(x.shape)`), with a size that may change (`None`: not such a call).
    pub(crate) fn size_function(&mut self, name: &str, args: &[Var]) -> SimResult<Option<Var>> {
        let op = match name {
            "neg" => {
                let [a] = args else { return Ok(None) };
                if !Self::is_size(a) {
                    return Ok(None);
                }
                return self.size_op(SizeOp::Sub, &self.int_var(0), a);
            }
            "min" => SizeOp::Min,
            "max" => SizeOp::Max,
            _ => return Ok(None),
        };
        match args {
            [Var::Tuple(items)] => self.size_fold(op, None, items),
            [Var::List(items)] => self.size_fold(op, None, &items.borrow().clone()),
            [_, _, ..] => self.size_fold(op, None, args),
            _ => Ok(None),
        }
    }

    /// `start op items[0] op items[1] ...` (the first item without `start`), where one of
    /// them is a size that may change (`None`: none is, or a step is not arithmetic of sizes).
    pub(crate) fn size_fold(
        &mut self,
        op: SizeOp,
        start: Option<Var>,
        items: &[Var],
    ) -> SimResult<Option<Var>> {
        if !items.iter().any(Self::is_size) {
            return Ok(None);
        }
        let mut rest = items.iter();
        let Some(mut acc) = start.or_else(|| rest.next().cloned()) else {
            return Ok(None);
        };
        for item in rest {
            match self.size_op(op, &acc, item)? {
                Some(v) => acc = v,
                None => return Ok(None),
            }
        }
        Ok(Some(acc))
    }

    /// `a op b` with a size that may change: its outcome is checked before each call, not
    /// the size (`None`: not such a comparison).
    pub(crate) fn size_compare(
        &mut self,
        op: PyComparisonOp,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<bool>> {
        if !Self::is_size(a) && !Self::is_size(b) {
            return Ok(None);
        }
        let Some(((x, hx), (y, hy))) = self.size_pair(a, b)? else {
            return Ok(None);
        };
        let cmp = match op {
            PyComparisonOp::Eq => SizeCmp::Eq,
            PyComparisonOp::Ne => SizeCmp::Ne,
            PyComparisonOp::Lt => SizeCmp::Lt,
            PyComparisonOp::Le => SizeCmp::Le,
            PyComparisonOp::Gt => SizeCmp::Gt,
            PyComparisonOp::Ge => SizeCmp::Ge,
        };
        let outcome = cmp.holds(hx, hy);
        self.check_sizes(SizeCheck {
            lhs: x,
            cmp,
            rhs: y,
            outcome,
        })?;
        Ok(Some(outcome))
    }

    /// Rely on a comparison of sizes: checked before each call of the entry.
    pub(crate) fn check_sizes(&mut self, check: SizeCheck) -> SimResult<()> {
        if !recorder::active() {
            return Err(Unsupported::new(
                Kind::Internal,
                "a size relied upon after the graph was recorded",
            ));
        }
        recorder::with(|r| r.check(check));
        Ok(())
    }

    /// The value of a size, now relied upon: checked equal to it before each call.
    pub(crate) fn force_size(&mut self, expr: &SizeExpr, value: &PyObjectRef) -> SimResult<()> {
        let hint = value
            .downcast_ref::<PyInt>()
            .and_then(|i| i.try_to_primitive::<i64>(self.vm).ok())
            .ok_or_else(|| Unsupported::new(Kind::Internal, "a size that is not an int"))?;
        self.check_sizes(SizeCheck {
            lhs: expr.clone(),
            cmp: SizeCmp::Eq,
            rhs: SizeExpr::Const(hint),
            outcome: true,
        })
    }

    /// A size-taking tensor function or method called with sizes that may change, or on a
    /// tensor whose sizes may: `view`/`reshape`, `narrow`, `arange`. It runs on the sizes'
    /// values; its node then takes the sizes as attributes worked out per call (`None`: not
    /// such a call, the caller runs it as usual, forcing any size).
    pub(super) fn symbolic_call_positional(
        &mut self,
        what: &str,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let name = what.rsplit('.').next().unwrap_or(what);
        if let Some(v) = self.symbolic_meta(name, args)? {
            return Ok(Some(v));
        }
        let varying = match args.first() {
            Some(t) if self.is_tensor(t) => self.varying_fake(t)?.is_some(),
            _ => false,
        };
        if !varying
            && !args.iter().any(|a| self.contains_symbolic(a))
            && !kwargs.iter().any(|(_, v)| self.contains_symbolic(v))
        {
            return Ok(None);
        }
        match (name, args) {
            ("view" | "reshape" | "expand", [t, dims @ ..])
                if kwargs.is_empty() && self.is_tensor(t) =>
            {
                let dims = match dims {
                    [one] if shape_sequence(one, self.vm) => self.items(one)?,
                    _ => dims.to_vec(),
                };
                let Some(exprs) = self.size_operands(&dims)? else {
                    return Ok(None);
                };
                let (t, lifted) = self.in_graph(t)?;
                let mut call = vec![t];
                call.extend(exprs.iter().map(|(_, h)| self.int_var(*h)));
                let sym = SymAttr::Ints("shape".into(), exprs.into_iter().map(|e| e.0).collect());
                match lifted {
                    true => recorder::unfolded(|| {
                        self.run_symbolic(f, (call, Vec::new()), what, sym, &dims)
                    }),
                    false => self.run_symbolic(f, (call, Vec::new()), what, sym, &dims),
                }
                .map(Some)
            }
            // A node that draws per call at this call's sizes (`rand(*x.shape)` in dropout).
            ("rand" | "randn", dims) if what.starts_with("symtrace.") => {
                let dims = match dims {
                    [one] if shape_sequence(one, self.vm) => self.items(one)?,
                    _ => dims.to_vec(),
                };
                let Some(exprs) = self.size_operands(&dims)? else {
                    return Ok(None);
                };
                let call = exprs.iter().map(|(_, h)| self.int_var(*h)).collect();
                let sym = SymAttr::Ints("shape".into(), exprs.into_iter().map(|e| e.0).collect());
                self.run_symbolic(f, (call, kwargs.to_vec()), what, sym, &dims)
                    .map(Some)
            }
            ("narrow", [t, dim, start, length]) if kwargs.is_empty() && self.is_tensor(t) => {
                let bounds = [start.clone(), length.clone()];
                let Some(exprs) = self.size_operands(&bounds)? else {
                    return Ok(None);
                };
                let call = vec![
                    t.clone(),
                    dim.clone(),
                    self.int_var(exprs[0].1),
                    self.int_var(exprs[1].1),
                ];
                let [(s, _), (l, _)] = <[_; 2]>::try_from(exprs).expect("two bounds");
                let sym = SymAttr::Int("start".into(), s);
                let r = self.run_symbolic(f, (call, Vec::new()), what, sym, &bounds)?;
                let reads = size_reads::mark();
                if self.attach_more(&r, SymAttr::Int("length".into(), l), &bounds)? {
                    size_reads::forget_since(reads);
                }
                Ok(Some(r))
            }
            ("flatten", [t, rest @ ..]) if varying && self.is_tensor(t) => {
                self.symbolic_flatten(t, rest, kwargs)
            }
            ("arange", _) if what.starts_with("symtrace.") => self.symbolic_arange(args, kwargs),
            ("linspace", _) if what.starts_with("symtrace.") => {
                self.symbolic_linspace(f, args, kwargs)
            }
            ("zeros" | "ones" | "full", _) if what.starts_with("symtrace.") => {
                self.symbolic_full(name, f, args, kwargs)
            }
            ("zeros_like" | "ones_like", [t]) if varying && what.starts_with("symtrace.") => {
                self.symbolic_like(name, t, kwargs)
            }
            ("split" | "chunk", [t, ..]) if varying => self.split_along(what, f, args, kwargs),
            ("eye", _) if what == "symtrace.eye" => self.symbolic_eye(f, args, kwargs),
            ("tril" | "triu", [t, rest @ ..]) if self.is_tensor(t) => {
                // A mask shifted by sizes (`tril(S - T)`: the last T queries of S keys).
                let d = match (rest, kwargs) {
                    ([d], []) => d.clone(),
                    ([], [(k, d)]) if k == "diagonal" => d.clone(),
                    _ => return Ok(None),
                };
                if !self.contains_symbolic(&d) {
                    return Ok(None);
                }
                let Some((expr, hint)) = self.size_operand(&d)? else {
                    return Ok(None);
                };
                let (t, lifted) = self.in_graph(t)?;
                let call = (vec![t, self.int_var(hint)], Vec::new());
                let sym = SymAttr::Int("diagonal".into(), expr);
                let used = [d];
                match lifted {
                    true => recorder::unfolded(|| self.run_symbolic(f, call, what, sym, &used)),
                    false => self.run_symbolic(f, call, what, sym, &used),
                }
                .map(Some)
            }
            ("call_op", _)
                if what.starts_with("symtrace.")
                    && kwargs.iter().any(|(_, v)| self.contains_symbolic(v)) =>
            {
                self.symbolic_op_attrs(what, f, args, kwargs)
            }
            _ => Ok(None),
        }
    }

    /// `t` as a value of the graph: a tensor made here from constants stands for a constant
    /// node (a new fake; `t` is left as it is), so that a view of it by sizes that change is
    /// a node that takes them (`st.ones(1, C).expand(B, C)`); whether it was lifted so.
    pub(super) fn in_graph(&mut self, t: &Var) -> SimResult<(Var, bool)> {
        let p = match t {
            Var::Tensor(p) => p.clone(),
            Var::Obj(o) => match o.clone().downcast::<PyTensor>() {
                Ok(p) => p,
                Err(_) => return Ok((t.clone(), false)),
            },
            _ => return Ok((t.clone(), false)),
        };
        if self.value_of(&p).is_some() {
            return Ok((t.clone(), false));
        }
        let data = p.read().clone();
        let stand_in = recorder::with(|r| {
            let c = r.graph.constant(data);
            r.stand_in(c)
        });
        let Some(stand_in) = stand_in else {
            return Ok((t.clone(), false));
        };
        let fake = PyTensor::new(stand_in).into_ref(&self.vm.ctx);
        self.keep_alive(&fake);
        Ok((Var::Tensor(fake), true))
    }

    pub(super) fn int_var(&self, i: i64) -> Var {
        Var::Obj(self.vm.ctx.new_int(i).into())
    }

    /// Each of `vs` as an operand of a size (`None` if one is not an int).
    pub(super) fn size_operands(&mut self, vs: &[Var]) -> SimResult<Option<Vec<(SizeExpr, i64)>>> {
        let mut out = Vec::with_capacity(vs.len());
        for v in vs {
            match self.size_operand(v)? {
                Some(e) => out.push(e),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// Run `f(*args, **kwargs)` (`call`) on the sizes' values and give its node `sym`; if the
    /// node's attributes are not what `sym` works out to at these sizes, the sizes in `used`
    /// are forced instead.
    fn run_symbolic(
        &mut self,
        f: &PyObjectRef,
        call: (Vec<Var>, Vec<(String, Var)>),
        what: &str,
        sym: SymAttr,
        used: &[Var],
    ) -> SimResult<Var> {
        let reads = size_reads::mark();
        let r = self.native_call_as_is(f, call.0, call.1, what, false)?;
        if self.attach_more(&r, sym, used)? {
            size_reads::forget_since(reads);
        }
        Ok(r)
    }

    /// Add `sym` to the symbolic attributes of the node that made `r` (`true`), or force
    /// `used` (`false`).
    pub(super) fn attach_more(&mut self, r: &Var, sym: SymAttr, used: &[Var]) -> SimResult<bool> {
        let attached = match r {
            Var::Tensor(t) => {
                let data = t.read();
                let attached = recorder::with(|rec| {
                    let mut all = rec.sym_of(&data);
                    all.push(sym);
                    let made_by = match rec.value_of(&data) {
                        Some(Value::Node(j)) => {
                            let node = &rec.graph.nodes[j];
                            Some((node.op.clone(), node.attrs.clone(), all.clone()))
                        }
                        _ => None,
                    };
                    rec.attach(&data, all).then_some(made_by)
                });
                // A view just made: its step made again in the graph (a refresh, a write-back
                // into its base) takes the same per-call attributes (`ViewLink::note_last_step`).
                if let (Some(Some((op, attrs, sym))), Some(link)) = (&attached, t.view_link()) {
                    link.note_last_step(op, attrs, std::sync::Arc::new(sym.clone()));
                }
                attached.is_some()
            }
            _ => false,
        };
        if !attached {
            for v in used {
                self.forced(v)?;
            }
        }
        Ok(attached)
    }
}

/// Whether `v` is a shape given as one sequence (`x.view((B, -1))`, a constant tuple too).
pub(super) fn shape_sequence(v: &Var, vm: &rustpython_vm::VirtualMachine) -> bool {
    let t = &vm.ctx.types;
    match v {
        Var::Tuple(_) | Var::List(_) => true,
        Var::Obj(o) => o.class().is(t.tuple_type) || o.class().is(t.list_type),
        _ => false,
    }
}
