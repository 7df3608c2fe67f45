//! Operators on sequences: `+` of two lists or two tuples (made during the simulation, or a
//! caller's), `+=` on a list (a caller's extended in place, through its shadow), and `*` of
//! a list or tuple by an int; comparisons of tuples holding sizes that change from call to
//! call (`h.shape == x.shape`), item by item as Python compares them. Anything else is left
//! to the other operators (or raises TypeError there, as it would).

use rustpython_vm::AsObject;
use rustpython_vm::builtins::PyInt;
use rustpython_vm::bytecode::{BinaryOperator, ComparisonOperator};

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::Var;
use crate::translate::values::operators::{is_inplace, not_inplace};

impl State<'_> {
    /// `a op b` when both are sequences this file computes; `None` otherwise.
    pub(super) fn sequence_binary(
        &mut self,
        op: BinaryOperator,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        // Sequences made during the simulation, and a caller's lists and tuples: `+` only of
        // two lists or two tuples (anything else raises TypeError, or is another type's
        // operator), `*` by an int.
        let list_like = |v: &Var| match v {
            Var::List(_) => true,
            Var::Lazy(o, _) => o.class().is(vm.ctx.types.list_type),
            _ => false,
        };
        let tuple_like = |v: &Var| tuple_like(v, vm);
        match (not_inplace(op), a, b) {
            (BinaryOperator::Add, _, _) if !is_inplace(op) && list_like(a) && list_like(b) => {
                let mut items = self.items(a)?;
                items.extend(self.items(b)?);
                return Ok(Some(Var::list(items)));
            }
            (BinaryOperator::Multiply, _, _) if !is_inplace(op) => {
                let (seq, n) = if list_like(a) || tuple_like(a) {
                    (a, b)
                } else {
                    (b, a)
                };
                if (list_like(seq) || tuple_like(seq))
                    && matches!(n, Var::Obj(_) | Var::Lazy(..) | Var::Num(_))
                    && let Some(times) = self.repeat_count(n)?
                {
                    let items = self.items(seq)?;
                    if items.len().saturating_mul(times) > crate::translate::state::MAX_UNROLL {
                        return unsupported(Kind::Limit, "a sequence repeated into too many items");
                    }
                    let repeated: Vec<Var> = (0..times).flat_map(|_| items.clone()).collect();
                    return Ok(Some(if list_like(seq) {
                        Var::list(repeated)
                    } else {
                        Var::tuple(repeated)
                    }));
                }
            }
            (BinaryOperator::Add, Var::List(x), _) if is_inplace(op) => {
                let items = self.items(b)?;
                x.borrow_mut().extend(items);
                return Ok(Some(a.clone()));
            }
            // `log += items` extends the caller's list in place: it stays the same object.
            (BinaryOperator::Add, Var::Lazy(..), _)
                if is_inplace(op)
                    && let Some((o, source)) = self.caller_list(a) =>
            {
                self.caller_list_method(&o, &source, "extend", vec![b.clone()], Vec::new())?;
                return Ok(Some(a.clone()));
            }
            (BinaryOperator::Add, Var::Tuple(_), _) | (BinaryOperator::Add, _, Var::Tuple(_))
                if tuple_like(a) && tuple_like(b) =>
            {
                let mut items = self.items(a)?;
                items.extend(self.items(b)?);
                return Ok(Some(Var::tuple(items)));
            }
            _ => {}
        }
        Ok(None)
    }

    /// How many times `seq * n` repeats `seq`: `n` an int (or a bool), negative as zero;
    /// `None` for any other `n` (whose operator, or a TypeError, is not this one).
    fn repeat_count(&mut self, n: &Var) -> SimResult<Option<usize>> {
        let n = self.plain_obj(n, "a repeat count")?;
        let vm = self.vm;
        if !(n.class().is(vm.ctx.types.int_type) || n.class().is(vm.ctx.types.bool_type)) {
            return Ok(None);
        }
        let n = n
            .downcast_ref::<PyInt>()
            .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
            .ok_or_else(|| Unsupported::new(Kind::Limit, "a repeat count too large"))?;
        Ok(Some(n.max(0) as usize))
    }

    /// `a op b` of two tuples one of which holds a size that changes from call to call, as
    /// Python compares tuples: item by item up to the first pair that differs, each
    /// comparison of sizes checked per call rather than forcing the sizes to this call's
    /// values; `None` when not such a comparison.
    pub(super) fn sequence_compare(
        &mut self,
        op: ComparisonOperator,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let tuple_like = |v: &Var| tuple_like(v, vm);
        if !(tuple_like(a) && tuple_like(b))
            || !(self.contains_symbolic(a) || self.contains_symbolic(b))
        {
            return Ok(None);
        }
        let (xs, ys) = (self.items(a)?, self.items(b)?);
        // Sizes and ints only: a float's `nan` would make Python's identity shortcut matter.
        let int_like = |v: &Var| match v {
            Var::Num(_) => Self::is_size(v),
            Var::Obj(o) | Var::Lazy(o, _) => o.class().is(vm.ctx.types.int_type),
            _ => false,
        };
        if !xs.iter().chain(&ys).all(int_like) {
            return Ok(None);
        }
        let equality = matches!(op, ComparisonOperator::Equal | ComparisonOperator::NotEqual);
        if equality && xs.len() != ys.len() {
            let r = matches!(op, ComparisonOperator::NotEqual);
            return Ok(Some(Var::Obj(vm.ctx.new_bool(r).into())));
        }
        for (x, y) in xs.iter().zip(&ys) {
            let same = self.compare(ComparisonOperator::Equal, x, y)?;
            if self.truth(&same)? {
                continue;
            }
            return Ok(Some(match op {
                ComparisonOperator::Equal => Var::Obj(vm.ctx.new_bool(false).into()),
                ComparisonOperator::NotEqual => Var::Obj(vm.ctx.new_bool(true).into()),
                _ => self.compare(op, x, y)?,
            }));
        }
        // Equal as far as the shorter goes: the lengths decide.
        let (n, m) = (xs.len(), ys.len());
        let r = match op {
            ComparisonOperator::Equal => n == m,
            ComparisonOperator::NotEqual => n != m,
            ComparisonOperator::Less => n < m,
            ComparisonOperator::LessOrEqual => n <= m,
            ComparisonOperator::Greater => n > m,
            ComparisonOperator::GreaterOrEqual => n >= m,
        };
        Ok(Some(Var::Obj(vm.ctx.new_bool(r).into())))
    }
}

/// A tuple made in the call, or an exact tuple of the caller's (not a named tuple).
fn tuple_like(v: &Var, vm: &rustpython_vm::VirtualMachine) -> bool {
    match v {
        Var::Tuple(_) => true,
        Var::Obj(o) | Var::Lazy(o, _) => o.class().is(vm.ctx.types.tuple_type),
        _ => false,
    }
}
