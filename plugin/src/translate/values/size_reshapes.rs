//! Calls that cut a tensor whose sizes change into another shape: `flatten` (the reshape
//! it is, to sizes worked out per call) and `split`/`chunk` (along a dimension that changes,
//! pieces worked out per call and their number checked; along one that keeps its size, the
//! pieces' bounds hold as they are). `sizes.rs` dispatches to them.

use rustpython_vm::builtins::PyInt;
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload};

use crate::graph::recorder;
use crate::graph::sizes::SizeExpr;
use crate::tensor::{PyTensor, size_reads};
use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported};
use crate::translate::values::Var;

impl State<'_> {
    /// `t.flatten(start_dim, end_dim)` of a tensor whose sizes may change: the reshape it
    /// is, to the sizes worked out per call (the flattened group their product).
    pub(super) fn symbolic_flatten(
        &mut self,
        t: &Var,
        rest: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let mut bounds = [0i64, -1];
        let named = kwargs.iter().map(|(k, v)| match k.as_str() {
            "start_dim" => Some((0, v)),
            "end_dim" => Some((1, v)),
            _ => None,
        });
        for given in rest.iter().enumerate().map(Some).chain(named) {
            let Some((at, v)) = given.filter(|(at, _)| *at < 2) else {
                return Ok(None);
            };
            // A dimension read from the frame (`self.start_dim`) is a constant, guarded.
            let v = match v {
                Var::Lazy(o, _) if o.class().is(vm.ctx.types.int_type) => Var::Obj(self.obj(v)?),
                other => other.clone(),
            };
            match plain_int(&v, vm) {
                Some(n) => bounds[at] = n,
                None => return Ok(None),
            }
        }
        let Some(sizes) = self.symbolic_sizes(t)? else {
            return Ok(None);
        };
        let n = sizes.len();
        let dims = crate::tensor::shape::normalize_dim;
        let (Ok(s), Ok(e)) = (dims(bounds[0], n), dims(bounds[1], n)) else {
            return Ok(None);
        };
        if n == 0 || s > e {
            // What the native call raises or gives.
            return Ok(None);
        }
        let mut group = sizes[s].clone();
        for d in &sizes[s + 1..=e] {
            group = self.binary(BinaryOperator::Multiply, &group, d)?;
        }
        let mut call = vec![t.clone()];
        call.extend_from_slice(&sizes[..s]);
        call.push(group);
        call.extend_from_slice(&sizes[e + 1..]);
        let reshape = PyTensor::class(&vm.ctx)
            .get_attr(vm.ctx.intern_str("reshape"))
            .ok_or_else(|| Unsupported::new(Kind::Internal, "Tensor.reshape is missing"))?;
        self.symbolic_call("Tensor.reshape", &reshape, &call, &[])
    }

    /// `split` or `chunk` of a tensor whose sizes may change: the pieces' bounds depend on
    /// the size of the dimension split alone, which is checked; they hold at every call that
    /// passes the check.
    pub(super) fn split_along(
        &mut self,
        what: &str,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let dim = match (args.get(2), kwargs) {
            (Some(d), []) => d.clone(),
            (None, [(k, d)]) if k == "dim" => d.clone(),
            (None, []) => self.int_var(0),
            _ => return Ok(None),
        };
        let Some((SizeExpr::Const(dim), _)) = self.size_operand(&dim)? else {
            return Ok(None);
        };
        let Some(fake) = self.varying_fake(&args[0])? else {
            return Ok(None);
        };
        if what.ends_with("split")
            && let Some(sections @ (Var::List(_) | Var::Tuple(_))) = args.get(1)
            && self.contains_symbolic(sections)
        {
            let sections = self.items(sections)?;
            return self.split_sections(&args[0], dim, &sections);
        }
        let Ok(d) = crate::tensor::shape::normalize_dim(dim, fake.read().ndim()) else {
            return Ok(None);
        };
        // Asked of the fake itself, its size from the recorded meta (not a size read of the
        // program's, `size_reads`, which would keep the graph static).
        let data = fake.read();
        let split = recorder::with(|r| {
            let size = r.value_of(&data).map(|v| r.graph.meta(v).shape[d]);
            Some((r.size_expr(&data, d)?, size?))
        });
        drop(data);
        let count = match args.get(1) {
            Some(c) if !matches!(c, Var::List(_) | Var::Tuple(_)) => self.size_operand(c)?,
            _ => None,
        };
        if let Some((_, size)) = split
            && size > 0
            && let Some((SizeExpr::Const(count), _)) = count
            && count > 0
        {
            let by = if what.ends_with("chunk") {
                Pieces::Chunks(count)
            } else {
                Pieces::Of(count)
            };
            return self.split_evenly(&args[0], dim, d, by);
        }
        // The pieces' bounds hold for this size alone (`None`: a dimension that does not
        // change).
        if let Some((e, size)) = split {
            self.force_size(&e, &self.vm.ctx.new_int(size).into())?;
        }
        let reads = size_reads::mark();
        let r = self.native_call_as_is(f, args.to_vec(), kwargs.to_vec(), what, false)?;
        let pieces = match &r {
            Var::Tuple(items) => items.to_vec(),
            _ => return Ok(Some(r)),
        };
        let pinned = pieces.iter().all(|p| match p {
            Var::Tensor(t) => {
                let data = t.read();
                recorder::with(|rec| rec.pin(&data))
            }
            _ => false,
        });
        if pinned {
            size_reads::forget_since(reads);
        }
        Ok(Some(r))
    }
}

impl State<'_> {
    /// `t.split([a, n - a], dim)`, sections that are sizes changing from call to call: each
    /// piece the `narrow` it is, its start and length worked out per call, the sections'
    /// sum checked to be the dimension's size (eager raises otherwise).
    fn split_sections(&mut self, t: &Var, dim: i64, sections: &[Var]) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some(sizes) = self.symbolic_sizes(t)? else {
            return Ok(None);
        };
        let Ok(d) = crate::tensor::shape::normalize_dim(dim, sizes.len()) else {
            return Ok(None);
        };
        let narrow = PyTensor::class(&vm.ctx)
            .get_attr(vm.ctx.intern_str("narrow"))
            .ok_or_else(|| Unsupported::new(Kind::Internal, "Tensor.narrow is missing"))?;
        let mut start = self.int_var(0);
        let mut pieces = Vec::with_capacity(sections.len());
        for length in sections {
            let call = [
                t.clone(),
                self.int_var(d as i64),
                start.clone(),
                length.clone(),
            ];
            let Some(piece) = self.symbolic_call("Tensor.narrow", &narrow, &call, &[])? else {
                return Ok(None);
            };
            pieces.push(piece);
            start = match self.size_binary(BinaryOperator::Add, &start, length)? {
                Some(s) => s,
                None => self.binary(BinaryOperator::Add, &start, length)?,
            };
        }
        let whole =
            self.size_compare(rustpython_vm::types::PyComparisonOp::Eq, &start, &sizes[d])?;
        if whole != Some(true) {
            return Err(Unsupported::new(
                Kind::Raises,
                "split_with_sizes expects the sections to sum to the dimension's size (RuntimeError)",
            ));
        }
        Ok(Some(Var::tuple(pieces)))
    }
}

/// How `split_evenly` cuts: `chunk(k)` into `k` pieces of `ceil(n / k)`, or `split(c)`
/// into pieces of `c`; the last piece takes what is left.
enum Pieces {
    Chunks(i64),
    Of(i64),
}

impl State<'_> {
    /// `chunk(k)` or `split(c)` along a dimension whose size `n` changes: the piece size
    /// worked out per call (`c`, or `ceil(n / k)` for a chunk), the number of pieces
    /// (`ceil(n / c)`) checked to be this call's, and each piece the `narrow` it is
    /// (`split_sections`): one graph serves every size cut into as many pieces (a GLU's
    /// `chunk(2)` every size from 2 up), where the size itself was fixed before.
    fn split_evenly(&mut self, t: &Var, dim: i64, d: usize, by: Pieces) -> SimResult<Option<Var>> {
        use BinaryOperator::{Add, FloorDivide, Multiply, Subtract};
        let Some(sizes) = self.symbolic_sizes(t)? else {
            return Ok(None);
        };
        let n = sizes[d].clone();
        let int = |s: &Self, i: i64| s.int_var(i);
        let piece = match by {
            Pieces::Of(c) => int(self, c),
            Pieces::Chunks(k) => {
                let (k_less, k) = (int(self, k - 1), int(self, k));
                let up = self.size_sum(Add, &n, &k_less)?;
                self.size_sum(FloorDivide, &up, &k)?
            }
        };
        let one = int(self, 1);
        let less = self.size_sum(Subtract, &piece, &one)?;
        let up = self.size_sum(Add, &n, &less)?;
        let count = self.size_sum(FloorDivide, &up, &piece)?;
        let Some((_, pieces)) = self.size_operand(&count)? else {
            return Ok(None);
        };
        let fixed = int(self, pieces);
        if self.size_compare(rustpython_vm::types::PyComparisonOp::Eq, &count, &fixed)?
            != Some(true)
        {
            return Ok(None);
        }
        let whole_pieces = int(self, pieces - 1);
        let before = self.size_sum(Multiply, &piece, &whole_pieces)?;
        let last = self.size_sum(Subtract, &n, &before)?;
        let mut sections = vec![piece; pieces as usize - 1];
        sections.push(last);
        self.split_sections(t, dim, &sections)
    }

    /// `a op b` of sizes, or of a size and an int.
    fn size_sum(&mut self, op: BinaryOperator, a: &Var, b: &Var) -> SimResult<Var> {
        match self.size_binary(op, a, b)? {
            Some(v) => Ok(v),
            None => self.binary(op, a, b),
        }
    }
}

/// An int given as a constant (exactly an int, not a bool).
fn plain_int(v: &Var, vm: &rustpython_vm::VirtualMachine) -> Option<i64> {
    match v {
        Var::Obj(o) if o.class().is(vm.ctx.types.int_type) => {
            o.downcast_ref::<PyInt>()?.try_to_primitive::<i64>(vm).ok()
        }
        _ => None,
    }
}
