//! The builtins of numbers (`min`, `max`, `float`, `int`, `pow`, `divmod`, `abs`, `round`, and
//! truth) of
//! a number that may change per call: of a size, a size worked out per call (`sizes`,
//! `size_rounding`); of a number read from the frame, a deferred number the replacement
//! computes again (`numbers`); so that neither fixes the values it comes from.

use std::rc::Rc;

use rustpython_vm::AsObject;
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::types::PyComparisonOp;

use crate::graph::size_floats::Rounding;
use crate::translate::math_functions::MathFn;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::size_floats::FloatFn;

impl State<'_> {
    /// `if k:` of a number that changes per call (computed in the call, or read from the
    /// frame: a global count of registrations) is `k != 0` (for a float too: NaN is true,
    /// -0.0 false), its outcome guarded, not its value; of a size (`if T % k:`), its outcome
    /// checked per call. `None`: not such a number.
    pub(super) fn number_truth(&mut self, v: &Var) -> SimResult<Option<bool>> {
        let t = &self.vm.ctx.types;
        match v {
            Var::Num(_) => {}
            Var::Lazy(o, _) if o.class().is(t.int_type) || o.class().is(t.float_type) => {}
            _ => return Ok(None),
        }
        let zero = Var::Obj(self.vm.ctx.new_int(0).into());
        if let Some(r) = self.number_condition(PyComparisonOp::Ne, v, &zero)? {
            return Ok(Some(r));
        }
        self.size_compare(PyComparisonOp::Ne, v, &zero)
    }

    /// `name(*args)` kept as a size or a deferred number; `None`: not such a call (the
    /// numbers are then forced, as any call forces them).
    pub(super) fn number_builtin(
        &mut self,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        if !kwargs.is_empty() {
            return Ok(None);
        }
        let vm = self.vm;
        match name {
            "min" | "max" => match self.size_function(name, args)? {
                Some(r) => Ok(Some(r)),
                None => self.deferred_extreme(name, args),
            },
            "float" => match self.size_float_call(FloatFn::Float, args)? {
                Some(r) => Ok(Some(r)),
                None => self.deferred_math(MathFn::Float, args),
            },
            "int" => match self.size_rounded(Rounding::Trunc, args)? {
                Some(r) => Ok(Some(r)),
                None => self.deferred_math(MathFn::Int, args),
            },
            // `pow(a, b)` is `a ** b`; `divmod(a, b)` of numbers is `(a // b, a % b)`: as the
            // operators, so that a number that changes per call stays one.
            "pow" if args.len() == 2 => self
                .binary(BinaryOperator::Power, &args[0], &args[1])
                .map(Some),
            "divmod" if args.len() == 2 && args.iter().all(|a| self.num_operand(a).is_some()) => {
                let q = self.binary(BinaryOperator::FloorDivide, &args[0], &args[1])?;
                let r = self.binary(BinaryOperator::Remainder, &args[0], &args[1])?;
                Ok(Some(Var::Tuple(Rc::new(vec![q, r]))))
            }
            "abs" => self.deferred_math(MathFn::Abs, args),
            "round" => {
                if let Some(r) = self.size_rounded(Rounding::HalfEven, args)? {
                    return Ok(Some(r));
                }
                if let Some(r) = self.deferred_math(MathFn::RoundToInt, args)? {
                    return Ok(Some(r));
                }
                match args {
                    [x, Var::Obj(digits)] if digits.class().is(vm.ctx.types.int_type) => {
                        match digits.try_to_value::<i64>(vm) {
                            Ok(digits) => self.deferred_math(MathFn::Round(digits), &[x.clone()]),
                            Err(_) => Ok(None),
                        }
                    }
                    _ => Ok(None),
                }
            }
            _ => Ok(None),
        }
    }
}
