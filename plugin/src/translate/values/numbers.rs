//! Deferred numbers: a counter the frame reads, increments and stores back (`G['calls'] += 1`,
//! `self.steps += 1`, `d['n'] += 1`) is not a constant of the translation. Arithmetic that
//! cannot raise (`+`, `-`, `*` on ints and floats) over numbers read from the frame gives a
//! `Num`: its value at trace time is known, but the replacement computes it again from the
//! same sources, so that nothing guards their values, only their types. A use that needs the
//! value (a comparison, a branch, an index, a call, a container) forces the number: its
//! sources are then guarded by value and it is a constant, as any number read from the frame.

use std::rc::Rc;

use rustpython_vm::builtins::{PyFloat, PyFunction, PyInt};
use rustpython_vm::bytecode::{BinaryOperator, Opcode};
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::guards::guard::{Check, compare_values};
use crate::translate::math_functions::MathFn;
use crate::translate::policy::Dynamic;
use crate::translate::source::{Arith, CompareOp, MAX_SHIFT, Source, small_exponent, small_int};
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::operators::binary_vm;

/// A number computed at trace time that the replacement computes again.
#[derive(Debug)]
pub struct Num {
    /// Its value at trace time (what a use that forces it sees).
    pub value: PyObjectRef,
    pub expr: NumExpr,
    /// Operators in it, an operand used twice counted twice (as the replacement computes
    /// it): bounded, so that a counter incremented in an unrolled loop becomes a constant
    /// rather than an expression as long as the loop, and numbers that each step computes
    /// from the two before (`a, b = b, a - q * b`) do not grow as the Fibonacci numbers.
    pub ops: usize,
}

/// The most operators a deferred number may be computed by.
const MAX_OPS: usize = 32;

#[derive(Debug)]
pub enum NumExpr {
    /// A number read from the frame; its type is guarded.
    Read(PyObjectRef, Source),
    Const(PyObjectRef),
    Op(BinaryOperator, Rc<Num>, Rc<Num>),
    /// A size that changes from call to call, computed by the graph (see `sizes`): never
    /// computed by the replacement, and forced where the replacement needs it.
    Size(crate::graph::sizes::SizeExpr),
    /// `float(n)` or `math.sqrt(n)` of a number computed from sizes (see `size_floats`).
    Apply(crate::translate::values::size_floats::FloatFn, Rc<Num>),
    /// `math.cos(n)`... of a number computed from the frame's (never from sizes): the
    /// replacement calls the function again (`deferred_math`).
    Math(MathFn, Rc<Num>),
}

impl Num {
    /// The numbers read from the frame it is computed from, with their sources.
    fn leaves<'a>(&'a self, out: &mut Vec<(&'a PyObjectRef, &'a Source)>) {
        match &self.expr {
            NumExpr::Read(o, s) => out.push((o, s)),
            NumExpr::Const(_) | NumExpr::Size(_) => {}
            NumExpr::Op(_, a, b) => {
                a.leaves(out);
                b.leaves(out);
            }
            NumExpr::Apply(_, a) | NumExpr::Math(_, a) => a.leaves(out),
        }
    }

    /// The source that computes it from the frame's values on entry.
    pub(crate) fn as_source(&self) -> Option<Source> {
        Some(match &self.expr {
            NumExpr::Read(_, s) => s.clone(),
            NumExpr::Const(o) => Source::object(o.clone()),
            NumExpr::Size(_) | NumExpr::Apply(..) => return None,
            NumExpr::Math(f, a) => Source::Math(*f, Box::new(a.as_source()?)),
            NumExpr::Op(op, a, b) => Source::Arith(
                Arith::of(*op)?,
                Box::new(a.as_source()?),
                Box::new(b.as_source()?),
            ),
        })
    }

    /// The source that computes it, when it is an int computed from ints of the frame's, one
    /// of which at least may change from call to call (per `spec`): sizes may be computed
    /// from it. The others (`start + length`, the length never changed) are computed again
    /// with it from their sources, their types guarded, as it is.
    pub fn dynamic_int(&self, spec: &crate::translate::policy::Specialization) -> Option<Source> {
        let mut leaves = Vec::new();
        self.leaves(&mut leaves);
        // Leaves are exact ints or floats (`num_operand`), so an int result is an exact int.
        let int = |o: &PyObjectRef| o.downcast_ref::<PyInt>().is_some();
        (int(&self.value)
            && leaves.iter().all(|(o, s)| int(o) && !s.has_draw())
            && leaves.iter().any(|(_, s)| spec.number_is_input(s, false)))
        .then(|| self.as_source())
        .flatten()
    }

    /// Whether none of the numbers it is computed from has changed from call to call yet
    /// (per `spec`, floats included): fixing it by its value costs no recompile so far.
    pub fn settled(&self, spec: &crate::translate::policy::Specialization) -> bool {
        let mut leaves = Vec::new();
        self.leaves(&mut leaves);
        leaves.iter().all(|(_, s)| !spec.number_is_input(s, false))
    }

    /// Whether a size that changes from call to call is part of it.
    pub fn has_size(&self) -> bool {
        match &self.expr {
            NumExpr::Size(_) => true,
            NumExpr::Op(_, a, b) => a.has_size() || b.has_size(),
            NumExpr::Apply(_, a) | NumExpr::Math(_, a) => a.has_size(),
            _ => false,
        }
    }
}

/// The operators a deferred number may be made by: on ints and floats, `+`, `-` and `*` never
/// raise (a float overflows to infinity), so computing it later, at the replay, changes no
/// behaviour. `%` and `//` only by a nonzero constant (`deferrable_division`);
/// `/` and `**` guarded to evaluate; `&`, `|`, `^` of ints, shifts by a small constant
/// (`deferred_binary`).
fn deferrable(op: BinaryOperator) -> Option<BinaryOperator> {
    Arith::of(op).map(Arith::operator)
}

/// Whether `x op y` for `%` or `//` cannot raise: an int by a nonzero constant int, or a float
/// by a nonzero constant float or an int that converts to a float exactly (no OverflowError;
/// an int by a float is not one: a large int does not convert).
fn deferrable_division(x: &Num, y: &Num) -> bool {
    let NumExpr::Const(c) = &y.expr else {
        return false;
    };
    let int_bits = c.downcast_ref::<PyInt>().map(|i| i.as_bigint().bits());
    if x.value.downcast_ref::<PyInt>().is_some() {
        return int_bits.is_some_and(|b| b != 0);
    }
    let nonzero_float = c
        .downcast_ref::<PyFloat>()
        .is_some_and(|f| f.to_f64() != 0.0);
    x.value.downcast_ref::<PyFloat>().is_some()
        && (nonzero_float || int_bits.is_some_and(|b| b != 0 && b <= 53))
}

/// Instructions that may take a deferred number as it is: they store it, move it, put it in
/// a tuple (whose items are forced where they are used: `obj` forces) or compute with it
/// (`binary` decides). Any other forces the numbers it pops.
pub fn keeps_numbers(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::PopTop
            | Opcode::Copy
            | Opcode::Swap
            | Opcode::StoreFast
            | Opcode::StoreFastLoadFast
            | Opcode::StoreFastStoreFast
            | Opcode::StoreGlobal
            | Opcode::StoreDeref
            | Opcode::StoreAttr
            | Opcode::BinaryOp
            // `-n` is `0 - n` or `n * -1.0` (the executor's `unary`).
            | Opcode::UnaryNegative
            // `~n` is `n ^ -1` (the executor's `unary`).
            | Opcode::UnaryInvert
            | Opcode::BuildTuple
            // A list's items are forced where they are used (`obj` forces), as a tuple's.
            | Opcode::BuildList
            | Opcode::ListAppend
            | Opcode::ReturnValue
            // A generator simulated with its consumer hands it the number as it is
            // (`tuple(d for d in x.shape)`).
            | Opcode::YieldValue
            // `n is None` / `if n is not None:`: a number is never None, whatever its value.
            | Opcode::PopJumpIfNone
            | Opcode::PopJumpIfNotNone
            // An f-string formats it again when the replacement runs (`deferred_text`).
            | Opcode::FormatSimple
            | Opcode::FormatWithSpec
            | Opcode::ConvertValue
    )
}

/// Instructions that may take a size that changes from call to call as it is, beyond
/// `keeps_numbers`: calls (a view or a slice takes it symbolically, anything else forces it
/// where it needs the value), comparisons (their outcome is checked), slices and lists.
fn keeps_sizes(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Call
            | Opcode::CallKw
            | Opcode::CompareOp
            | Opcode::BuildSlice
            | Opcode::BinarySlice
            | Opcode::BuildList
            | Opcode::ListAppend
            | Opcode::UnaryNegative
    )
}

impl State<'_> {
    /// `a op b` as a deferred number, when it can be one.
    pub fn deferred_binary(
        &mut self,
        op: BinaryOperator,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<Var>> {
        if self.spec.dynamic == Dynamic::Never {
            return Ok(None);
        }
        let Some(op) = deferrable(op) else {
            return Ok(None);
        };
        let (Some(x), Some(y)) = (self.num_operand(a), self.num_operand(b)) else {
            return Ok(None);
        };
        // Only what comes from the frame is worth deferring: constants fold.
        if matches!((&x.expr, &y.expr), (NumExpr::Const(_), NumExpr::Const(_))) {
            return Ok(None);
        }
        let division = matches!(Arith::of(op), Some(Arith::Mod | Arith::FloorDiv));
        // A divisor read from the frame that does not change per call (`step % self.every`)
        // is a constant of the translation, guarded by value.
        let y = match &y.expr {
            NumExpr::Read(o, s)
                if division
                    && o.class().is(self.vm.ctx.types.int_type)
                    && !self.spec.number_is_input(s, false) =>
            {
                let o = self.force_number(&y)?;
                Rc::new(Num {
                    value: o.clone(),
                    expr: NumExpr::Const(o),
                    ops: 0,
                })
            }
            _ => y,
        };
        if division && !deferrable_division(&x, &y) {
            return Ok(None);
        }
        // `/` and `**` may raise: deferred where a guard can evaluate them first (below),
        // a power only with a float operand or a small constant exponent (an int power
        // could grow without bound).
        let may_raise = matches!(Arith::of(op), Some(Arith::TrueDiv | Arith::Pow));
        let (vm, t) = (self.vm, &self.vm.ctx.types);
        let float = |o: &PyObjectRef| o.class().is(t.float_type);
        let int = |o: &PyObjectRef| o.class().is(t.int_type);
        let small_const =
            |n: &Num, max| matches!(&n.expr, NumExpr::Const(c) if small_int(c, max, vm));
        let allowed = match Arith::of(op) {
            Some(Arith::Pow) => {
                float(&x.value)
                    || float(&y.value)
                    || (int(&x.value)
                        && matches!(&y.expr, NumExpr::Const(c) if small_exponent(c, vm)))
            }
            // Bitwise operators of ints never raise; of a float they raise (TypeError).
            Some(Arith::And | Arith::Or | Arith::Xor) => int(&x.value) && int(&y.value),
            Some(Arith::LShift | Arith::RShift) => int(&x.value) && small_const(&y, MAX_SHIFT),
            _ => true,
        };
        if !allowed {
            return Ok(None);
        }
        let ops = 1 + x.ops + y.ops;
        if ops > MAX_OPS {
            return Ok(None);
        }
        let Ok(value) = binary_vm(op, &x.value, &y.value, self.vm) else {
            return Ok(None);
        };
        for n in [&x, &y] {
            // A drawn number's type is the draw's.
            if let NumExpr::Read(o, s) = &n.expr
                && !s.has_draw()
            {
                self.guard(s, Check::type_is(o.class().to_owned()));
            }
        }
        let num = Num {
            value,
            expr: NumExpr::Op(op, x, y),
            ops,
        };
        // A call where it would raise (a zero divisor, an overflow) fails this guard, which
        // evaluates it, instead of raising in the replacement, out of the program's order.
        if may_raise {
            let Some(source) = num.as_source().filter(|s| !s.has_draw()) else {
                return Ok(None);
            };
            self.guard(&source, Check::type_is(num.value.class().to_owned()));
        }
        Ok(Some(Var::Num(Rc::new(num))))
    }

    /// `math.<name>(v)` of a number computed from the frame's as a deferred number (`None`:
    /// not such a call; the number is forced). Where the function would raise on some call,
    /// a guard that evaluates it fails on that call instead (the frame then runs as written
    /// and raises in its own order).
    pub fn deferred_math(&mut self, f: MathFn, args: &[Var]) -> SimResult<Option<Var>> {
        let [arg] = args else {
            return Ok(None);
        };
        if self.spec.dynamic == Dynamic::Never {
            return Ok(None);
        }
        let Some(x) = self.num_operand(arg) else {
            return Ok(None);
        };
        // Of a number that has not changed from call to call yet, the value folds (guarded),
        // as before it changed: the replacement calls nothing for it.
        if matches!(x.expr, NumExpr::Const(_)) || x.ops >= MAX_OPS || !self.varies_per_call(&x) {
            return Ok(None);
        }
        let Some(value) = f.apply(&x.value, self.vm) else {
            return Ok(None);
        };
        let num = Num {
            value,
            expr: NumExpr::Math(f, x.clone()),
            ops: x.ops + 1,
        };
        let Some(source) = num.as_source().filter(|s| !s.has_draw()) else {
            return Ok(None);
        };
        if let NumExpr::Read(o, s) = &x.expr {
            self.guard(s, Check::type_is(o.class().to_owned()));
        }
        self.guard(&source, Check::type_is(num.value.class().to_owned()));
        Ok(Some(Var::Num(Rc::new(num))))
    }

    /// `v` as an operand of a deferred number: an int or a float (exactly, not a subclass,
    /// not a bool), read from the frame, deferred already, or a constant.
    pub(crate) fn num_operand(&self, v: &Var) -> Option<Rc<Num>> {
        let t = &self.vm.ctx.types;
        let is_number = |o: &PyObjectRef| o.class().is(t.int_type) || o.class().is(t.float_type);
        match v {
            Var::Num(n) if n.has_size() => None,
            Var::Num(n) => Some(n.clone()),
            Var::Lazy(o, s) if is_number(o) => Some(Rc::new(Num {
                value: o.clone(),
                expr: NumExpr::Read(o.clone(), s.clone()),
                ops: 0,
            })),
            Var::Obj(o) if is_number(o) => Some(Rc::new(Num {
                value: o.clone(),
                expr: NumExpr::Const(o.clone()),
                ops: 0,
            })),
            _ => None,
        }
    }

    /// The value of a deferred number, now relied upon: the numbers it is computed from are
    /// guarded by value.
    pub fn force_number(&mut self, n: &Num) -> SimResult<PyObjectRef> {
        match &n.expr {
            NumExpr::Read(_, s) if s.has_draw() => {
                return Err(crate::translate::values::python_draws::drawn_value_needed());
            }
            NumExpr::Read(o, s) => {
                let (o, s) = (o.clone(), s.clone());
                self.obj(&Var::Lazy(o, s))?;
            }
            NumExpr::Const(_) => {}
            NumExpr::Size(e) => self.force_size(e, &n.value)?,
            NumExpr::Op(_, a, b) => {
                self.force_number(a)?;
                self.force_number(b)?;
            }
            NumExpr::Apply(_, a) | NumExpr::Math(_, a) => {
                self.force_number(a)?;
            }
        }
        Ok(n.value.clone())
    }

    /// `v`, with a deferred number forced into its value.
    pub fn forced(&mut self, v: &Var) -> SimResult<Var> {
        match v {
            Var::Num(n) => Ok(Var::Obj(self.force_number(n)?)),
            other => Ok(other.clone()),
        }
    }

    /// Force the deferred numbers among the `popped` values on top of `stack`, unless the
    /// instruction keeps them.
    pub fn force_popped(&mut self, op: Opcode, stack: &mut [Var], popped: usize) -> SimResult<()> {
        let none = |v: &Var| matches!(v, Var::Obj(o) if self.vm.is_none(o));
        let from = stack.len().saturating_sub(popped);
        // Only deferred numbers are forced: the checks below (a callee's name read on each
        // call) are for instructions that pop one.
        let no_number = !stack[from..].iter().any(|v| matches!(v, Var::Num(_)));
        if no_number || keeps_numbers(op) || (op == Opcode::IsOp && stack[from..].iter().any(none))
        {
            return Ok(());
        }
        // `print(n)` prints it when the replacement runs (`deferred_print`); `object.__setattr__`
        // stores it as an attribute store does (a module's `__setattr__` ends in it), and
        // `isinstance` needs only its type.
        let object_setattr = |f: &PyObjectRef| {
            let t = self.vm.ctx.types.object_type;
            t.get_attr(self.vm.ctx.intern_str("__setattr__"))
                .is_some_and(|s| s.is(f))
        };
        if matches!(op, Opcode::Call | Opcode::CallKw)
            && let Some(Var::Lazy(f, _) | Var::Obj(f)) = stack.get(from)
            && (matches!(
                self.builtin_name(f).as_deref(),
                Some(
                    "print"
                        | "isinstance"
                        | "min"
                        | "max"
                        | "float"
                        | "int"
                        | "round"
                        | "abs"
                        | "pow"
                        | "divmod"
                )
            ) || object_setattr(f)
                || MathFn::of_function(f, self.vm).is_some()
                || crate::translate::values::scalar_inputs::takes_scalars(f, self.vm))
        {
            return Ok(());
        }
        // `t.mul(n)` and the other methods that are an operator: kept, as by the operator.
        if op == Opcode::Call
            && let Some(Var::Obj(method) | Var::Lazy(method, _)) = stack.get(from)
            && crate::translate::values::number_operands::method_operator(method, self.vm).is_some()
        {
            return Ok(());
        }
        // `items.append(n)`, `items.insert(k, n)` on a list: kept as its item.
        if op == Opcode::Call
            && let Some(Var::Method(owner, "append" | "insert")) = stack.get(from)
            && (matches!(**owner, Var::List(_))
                || matches!(&**owner, Var::Lazy(o, _) if o.class().is(self.vm.ctx.types.list_type)))
        {
            return Ok(());
        }
        // A function written in Python is simulated inline: its frame forces what it needs.
        let python = |v: &Var| match v {
            Var::Func(_) => true,
            Var::Lazy(f, _) | Var::Obj(f) => f.downcast_ref::<PyFunction>().is_some(),
            _ => false,
        };
        if matches!(op, Opcode::Call | Opcode::CallKw) && stack.get(from).is_some_and(python) {
            return Ok(());
        }
        // STORE_SUBSCR stores its deepest operand, the value, and keeps an int key that may
        // change per call (`buf[self.pos % n] = v`): a tensor's store resolves it per call
        // (`symbolic_key`), any other container forces it.
        let keeps = keeps_sizes(op) || op == Opcode::StoreSubscr;
        let from = if op == Opcode::StoreSubscr {
            (from + 1).min(stack.len())
        } else {
            from
        };
        // BUILD_MAP takes keys and values in turn: a key is a constant, a value is kept as
        // a list's item is.
        let map = op == Opcode::BuildMap;
        for (k, v) in stack[from..].iter_mut().enumerate() {
            let keeps = if map { k % 2 == 1 } else { keeps };
            // A comparison or membership test of a number that changes per call guards its
            // outcome (`number_condition`), whatever the number's type.
            let condition = matches!(
                op,
                Opcode::CompareOp
                    | Opcode::ContainsOp
                    | Opcode::ToBool
                    | Opcode::PopJumpIfFalse
                    | Opcode::PopJumpIfTrue
            );
            // The truth of a size (`if T % k:`) is its outcome checked per call, as `!= 0`.
            let truth = matches!(
                op,
                Opcode::ToBool | Opcode::PopJumpIfFalse | Opcode::PopJumpIfTrue
            );
            if let Var::Num(n) = v
                && !(keeps && (n.has_size() || n.dynamic_int(&self.spec).is_some()))
                && !(condition && self.varies_per_call(n))
                && !(truth && n.has_size())
            {
                let n = n.clone();
                *v = Var::Obj(self.force_number(&n)?);
            }
        }
        Ok(())
    }
}

/// Numbers read from the frame that may change per call (see
/// `Specialization::number_is_input`): graph inputs next to tensors, conditions guarded
/// instead of values.
impl State<'_> {
    /// `a op b` for a number read from the frame that may change per call (see
    /// `Specialization::number_is_input`) and a constant number: the outcome is guarded, not
    /// the number's value (`if lr > 0`, `if i == 0`).
    pub(crate) fn number_condition(
        &mut self,
        op: PyComparisonOp,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<bool>> {
        let vm = self.vm;
        let t = &vm.ctx.types;
        let is_number = |o: &PyObjectRef| o.class().is(t.int_type) || o.class().is(t.float_type);
        // A number read from the frame that has not changed from call to call yet, compared
        // with one that does (`self.step > self.warmup`, `min(self.decay, (1 + n) / (10 +
        // n))`), is a constant of the translation: a float too, as an attribute's is to
        // TorchDynamo, though a float is an input of the graph where it meets tensors.
        let fixed = |v: &Var| matches!(v, Var::Lazy(o, s) if is_number(o) && !self.spec.number_is_input(s, false));
        let varies = |v: &Var| {
            matches!(v, Var::Num(n) if !n.has_size())
                || (matches!(v, Var::Lazy(o, _) if is_number(o)) && !fixed(v))
        };
        let (a, b) = match (a, b) {
            (x, y) if varies(x) && fixed(y) => (x.clone(), Var::Obj(self.obj(y)?)),
            (x, y) if fixed(x) && varies(y) => (Var::Obj(self.obj(x)?), y.clone()),
            (x, y) => (x.clone(), y.clone()),
        };
        let (value, source, rhs, op) = match (&a, &b) {
            (Var::Lazy(v, s), Var::Obj(c)) if is_number(v) && is_number(c) => (v, s, c, op),
            (Var::Obj(c), Var::Lazy(v, s)) if is_number(v) && is_number(c) => {
                (v, s, c, op.swapped())
            }
            (Var::Num(n), Var::Obj(c)) if is_number(c) => {
                return self.deferred_condition(op, n, c);
            }
            (Var::Obj(c), Var::Num(n)) if is_number(c) => {
                return self.deferred_condition(op.swapped(), n, c);
            }
            _ => return self.deferred_relation(op, &a, &b),
        };
        if !self
            .spec
            .number_is_input(source, value.class().is(t.float_type))
        {
            return Ok(None);
        }
        let Some(r) = compare_values(value, rhs, op, vm) else {
            return Ok(None);
        };
        let (value, source, rhs) = (value.clone(), source.clone(), rhs.clone());
        self.guard(&source, Check::type_is(value.class().to_owned()));
        self.guard(&source, Check::Compare(op, rhs, r));
        Ok(Some(r))
    }

    /// `a op b` where both sides may change per call (`min(step ** -0.5, step * warmup **
    /// -1.5)`, a Noam schedule's two arms): the outcome is guarded on the comparison itself,
    /// which the guard computes from the frame's values on entry, not on the values (each
    /// side's numbers have their types guarded where they were read). `None`: not such a
    /// comparison.
    fn deferred_relation(
        &mut self,
        op: PyComparisonOp,
        a: &Var,
        b: &Var,
    ) -> SimResult<Option<bool>> {
        let (Some((va, sa)), Some((vb, sb))) = (self.relation_side(a), self.relation_side(b))
        else {
            return Ok(None);
        };
        if sa.has_draw() || sb.has_draw() {
            return Err(crate::translate::values::python_draws::drawn_value_needed());
        }
        let Some(r) = compare_values(&va, &vb, op, self.vm) else {
            return Ok(None);
        };
        let relation = Source::Compare(CompareOp(op), Box::new(sa), Box::new(sb));
        self.guard(&relation, Check::EqBool(r));
        Ok(Some(r))
    }

    /// A side of `deferred_relation`: a number computed in the call from the frame's, or one
    /// read from the frame that may change per call (its type guarded), with its source.
    fn relation_side(&mut self, v: &Var) -> Option<(PyObjectRef, Source)> {
        let t = &self.vm.ctx.types;
        match v {
            Var::Num(n) if !n.has_size() && self.varies_per_call(n) => {
                Some((n.value.clone(), n.as_source()?))
            }
            Var::Lazy(o, s)
                if (o.class().is(t.int_type) || o.class().is(t.float_type))
                    && self.spec.number_is_input(s, false) =>
            {
                let (o, s) = (o.clone(), s.clone());
                self.guard(&s, Check::type_is(o.class().to_owned()));
                Some((o, s))
            }
            _ => None,
        }
    }

    /// `min(a, b, ...)` or `max(...)` of numbers among which one that may change per call:
    /// chosen as Python chooses (an item replaces the one kept when it is strictly less, or
    /// greater), each comparison's outcome guarded, not the numbers' values (`min(0.999,
    /// (1 + step) / (10 + step))`, an EMA's warm-up). `None`: not such a call.
    pub fn deferred_extreme(&mut self, name: &str, args: &[Var]) -> SimResult<Option<Var>> {
        let op = match name {
            "min" => PyComparisonOp::Lt,
            _ => PyComparisonOp::Gt,
        };
        let vm = self.vm;
        let t = &vm.ctx.types;
        // A number that may change per call: computed in the call, or read from the frame
        // (`min(pos, n)` with an int argument `pos`).
        let varies = |a: &Var| match a {
            Var::Num(n) => !n.has_size(),
            Var::Lazy(o, s) => {
                (o.class().is(t.int_type) || o.class().is(t.float_type))
                    && self.spec.number_is_input(s, o.class().is(t.float_type))
            }
            _ => false,
        };
        let plain = |o: &PyObjectRef| o.class().is(t.int_type) || o.class().is(t.float_type);
        if args.len() < 2 || !args.iter().any(varies) {
            return Ok(None);
        }
        let mut kept = args[0].clone();
        for item in &args[1..] {
            // Two constants (`min(n, 3, 5)` past `n`) compare now.
            let outcome = match (item, &kept) {
                (Var::Obj(a), Var::Obj(b)) if plain(a) && plain(b) => compare_values(a, b, op, vm),
                _ => self.number_condition(op, item, &kept)?,
            };
            match outcome {
                Some(true) => kept = item.clone(),
                Some(false) => {}
                None => return Ok(None),
            }
        }
        Ok(Some(kept))
    }

    /// Guards that each number `n` is computed from keeps its type (an exact int stays
    /// one): what a replay that computes `n` again relies on, beyond any guard on its value.
    pub(crate) fn guard_leaf_types(&mut self, n: &Num) {
        let mut leaves = Vec::new();
        n.leaves(&mut leaves);
        let leaves: Vec<_> = leaves
            .into_iter()
            .map(|(o, s)| (o.class().to_owned(), s.clone()))
            .collect();
        for (class, source) in leaves {
            self.guard(&source, Check::type_is(class));
        }
    }

    /// Whether the deferred number is computed from a number read from the frame that may
    /// change per call (see `Specialization::number_is_input`): `step / T` with a counter
    /// `step`, whatever `T` does (the replacement reads both).
    pub(crate) fn varies_per_call(&self, n: &Num) -> bool {
        let mut leaves = Vec::new();
        n.leaves(&mut leaves);
        let float = |o: &PyObjectRef| o.class().is(self.vm.ctx.types.float_type);
        leaves
            .iter()
            .any(|(o, s)| self.spec.number_is_input(s, float(o)))
    }

    /// `n op rhs` for a deferred number computed from numbers that may change per call
    /// (`self.step % 2 == 0` after `self.step += 1`): the outcome is guarded on the
    /// expression, which the guard computes from the same values on entry (the types of
    /// the numbers it is computed from are guarded where it was made).
    fn deferred_condition(
        &mut self,
        op: PyComparisonOp,
        n: &Num,
        rhs: &PyObjectRef,
    ) -> SimResult<Option<bool>> {
        let vm = self.vm;
        if n.has_size() {
            return Ok(None);
        }
        if !self.varies_per_call(n) {
            return Ok(None);
        }
        let Some(source) = n.as_source() else {
            return Ok(None);
        };
        if source.has_draw() {
            return Err(crate::translate::values::python_draws::drawn_value_needed());
        }
        let Some(r) = compare_values(&n.value, rhs, op, vm) else {
            return Ok(None);
        };
        self.guard(&source, Check::Compare(op, rhs.clone(), r));
        Ok(Some(r))
    }
}
