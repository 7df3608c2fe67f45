//! The functions of `math` that a deferred number may be made by (`math.cos(pi * step /
//! total)` of a counter: a learning-rate schedule's cosine, `math.floor(step / every)`),
//! `float` (`float(step) / warmup`, as schedules written for torch spell it), `int`
//! (`int(step * ratio)`), `round` (`round(n / k)`, and to a constant number of digits,
//! `round(lr, 6)`, as a log line keeps it) and `abs`. The replacement calls the same
//! function on the same number, so the value is Python's own; where Python would raise (a
//! domain error, an overflow) a guard that evaluates it first fails instead, and the frame
//! runs as written.

use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

/// One of `math`'s functions of one float, or the builtin `float`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
    /// `float(n)`: raises OverflowError for an int too large for a float.
    Float,
    /// `round(n, ndigits)` with a constant int `ndigits`.
    Round(i64),
    /// `round(n)`: an int, halves to even; raises for an infinity or a NaN.
    RoundToInt,
    /// `int(n)`: an int as it is, a float truncated; raises for an infinity or a NaN.
    Int,
    /// `abs(n)` (`if abs(weight) < 0.5`).
    Abs,
    Sqrt,
    Exp,
    Log,
    Log2,
    Log10,
    Cos,
    Sin,
    Tan,
    Tanh,
    Atan,
    /// `math.floor`, `math.ceil`, `math.trunc`: ints; raise for an infinity or a NaN.
    Floor,
    Ceil,
    Trunc,
}

impl MathFn {
    const ALL: [MathFn; 13] = [
        MathFn::Sqrt,
        MathFn::Exp,
        MathFn::Log,
        MathFn::Log2,
        MathFn::Log10,
        MathFn::Cos,
        MathFn::Sin,
        MathFn::Tan,
        MathFn::Tanh,
        MathFn::Atan,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Trunc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MathFn::Float => "float",
            MathFn::Round(_) | MathFn::RoundToInt => "round",
            MathFn::Int => "int",
            MathFn::Abs => "abs",
            MathFn::Sqrt => "sqrt",
            MathFn::Exp => "exp",
            MathFn::Log => "log",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Cos => "cos",
            MathFn::Sin => "sin",
            MathFn::Tan => "tan",
            MathFn::Tanh => "tanh",
            MathFn::Atan => "atan",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Trunc => "trunc",
        }
    }

    /// The function of `math` named `name`.
    pub fn of(name: &str) -> Option<MathFn> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The function of `math` that a deferred number may be made by that `f` is, if any.
    pub fn of_function(f: &PyObjectRef, vm: &VirtualMachine) -> Option<MathFn> {
        let (module, name) = crate::translate::loaded_modules::module_function(f, vm)?;
        (module == "math").then(|| MathFn::of(&name)).flatten()
    }

    /// `math.<name>` (once `math` is loaded), or the builtin `float`, `round` or `abs`.
    pub fn function(self, vm: &VirtualMachine) -> Option<PyObjectRef> {
        match self {
            MathFn::Float => Some(vm.ctx.types.float_type.to_owned().into()),
            MathFn::Int => Some(vm.ctx.types.int_type.to_owned().into()),
            MathFn::Round(_) | MathFn::RoundToInt => vm.builtins.get_attr("round", vm).ok(),
            MathFn::Abs => vm.builtins.get_attr("abs", vm).ok(),
            _ => crate::translate::loaded_modules::loaded_attr("math", self.name(), vm),
        }
    }

    /// The constant arguments after the number (`round`'s digits).
    pub fn constants(self, vm: &VirtualMachine) -> Vec<PyObjectRef> {
        match self {
            MathFn::Round(digits) => vec![vm.ctx.new_int(digits).into()],
            _ => Vec::new(),
        }
    }

    /// How a source shows the call: `math.cos(...)`, `float(...)`.
    pub fn shown(self) -> String {
        match self {
            MathFn::Float => "float".to_owned(),
            MathFn::Int => "int".to_owned(),
            MathFn::RoundToInt => "round".to_owned(),
            MathFn::Abs => "abs".to_owned(),
            MathFn::Round(digits) => format!("round[{digits}]"),
            f => format!("math.{}", f.name()),
        }
    }

    /// `math.<name>(x)` of an int or a float (exactly), as Python computes it; `None` where
    /// it raises. Only the interpreter's own function runs.
    pub fn apply(self, x: &PyObjectRef, vm: &VirtualMachine) -> Option<PyObjectRef> {
        let t = &vm.ctx.types;
        if !(x.class().is(t.int_type) || x.class().is(t.float_type)) {
            return None;
        }
        let mut args = vec![x.clone()];
        args.extend(self.constants(vm));
        self.function(vm)?.call(args, vm).ok()
    }

    /// The call of this function on `x` as a template: the number, then the constants.
    pub fn template(
        self,
        x: crate::translate::templates::Template,
        vm: &VirtualMachine,
    ) -> Option<crate::translate::templates::Template> {
        use crate::translate::templates::Template;
        let mut args = vec![x];
        args.extend(self.constants(vm).into_iter().map(Template::Const));
        Some(Template::New(self.function(vm)?, args))
    }
}
