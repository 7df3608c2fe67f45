//! Numbers drawn from Python's `random` module (`random.random()`, `random.uniform(a, b)`,
//! `random.randint(a, b)`...) or from a `random.Random` of the program's (`rng.gauss(1.0,
//! 0.1)`): a layer dropped at random, a scale jittered per call. As
//! TorchDynamo does, the replacement makes the draws itself, first, in the program's order,
//! each into a local of its own (`Source::Draw`); the simulation holds each as a deferred
//! number of unknown value (`Var::Num`), which tensor arithmetic takes as a graph input. A use
//! that needs its value (a branch, an index, a size) breaks there: no guard can read a number
//! drawn after the guards have run. Nothing else moves the generator between the draws and
//! the graph, so drawing them first draws the same numbers.
//!
//! Drawn first, they are drawn even where the program would have stopped before drawing
//! them: a graph whose ops may raise on the data (an index out of range: the frame then runs
//! as written, and draws again), or a replayed effect that may fail after them. Such a frame
//! is translated again with the draws breaking (`Specialization::python_draws_break`).

use std::rc::Rc;

use rustpython_vm::builtins::PyInt;
use rustpython_vm::bytecode::Opcode;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::bytecode::builder::Builder;
use crate::graph::Graph;
use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::Var;
use crate::translate::values::numbers::{Num, NumExpr};

/// The functions of `random` whose draws the replacement makes, with whether each gives an
/// int (otherwise a float). Their arguments are plain numbers.
const DRAWS: &[(&str, bool)] = &[
    ("random", false),
    ("uniform", false),
    ("gauss", false),
    ("normalvariate", false),
    ("expovariate", false),
    ("randint", true),
    ("randrange", true),
];

/// A call the replacement makes first: `function(*args)`, stored into `draw_slot(k)`. A
/// draw, or the lookup of an `lru_cache` whose result is a tensor (`values::cached_calls`),
/// made first for the same reasons and under the same conditions.
#[derive(Clone, Debug)]
pub struct DrawCall {
    /// Where the function is read, its identity guarded.
    pub function: Source,
    pub args: Vec<PyObjectRef>,
}

/// The replacement's local that holds draw `k`.
pub fn draw_slot(k: usize) -> String {
    format!("__symtrace_draw_{k}")
}

/// Ops whose kernels cannot fail on a graph's data once the guards hold (the shapes and
/// dtypes they were recorded with): a graph of only these never makes its frame run as
/// written after the replacement drew. Indexing by tensors, scatters, integer division and
/// powers, sampling and factories of computed sizes are not among them, nor any op added
/// later. Basic indexing (`index`: ints, slices, `None`) and `narrow` raise on shapes alone,
/// which the guards check, or for a dynamic graph `dynamic::fits`, before the replacement
/// runs.
const SURE_OPS: &[&str] = &[
    "abs",
    "acos",
    "acosh",
    "adaptive_avg_pool2d",
    "add",
    "argmax",
    "argmin",
    "argsort",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "avg_pool2d",
    "cat",
    "ceil",
    "clamp",
    "clone",
    "conv2d",
    "cos",
    "cosh",
    "cumprod",
    "cumsum",
    "div",
    "dot",
    "eq",
    "erf",
    "exp",
    "exp2",
    "expand",
    "expm1",
    "floor",
    "ge",
    "gt",
    "index",
    "invert",
    "le",
    "linear",
    "log",
    "log10",
    "log1p",
    "log2",
    "log_softmax",
    "logical_and",
    "logical_or",
    "logical_xor",
    "lt",
    "masked_fill",
    "matmul",
    "max",
    "max_pool2d",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mul",
    "narrow",
    "ne",
    "neg",
    "permute",
    "prod",
    "rand",
    "randn",
    "relu",
    "reshape",
    "round",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "softmax",
    "sqrt",
    "squeeze",
    "stack",
    "sub",
    "sum",
    "tan",
    "tanh",
    "to",
    "transpose",
    "tril",
    "triu",
    "trunc",
    "unsqueeze",
    "var",
    "where",
];

/// Why draws made first could be draws the program never makes: `graph` has an op that may
/// raise on its data, or a replayed effect may fail (`may_fail`). `None`: they cannot.
pub fn draws_unsure(graph: &Graph, may_fail: bool) -> Option<&'static str> {
    if graph
        .nodes
        .iter()
        .any(|n| !SURE_OPS.contains(&n.op.as_str()))
    {
        return Some("a graph with an op that may raise on its data");
    }
    may_fail.then_some("an effect to replay that may fail")
}

/// Each draw called and stored into its local: the first thing the replacement does.
pub fn emit_draws(b: &mut Builder<'_>, draws: &[DrawCall]) -> SimResult<()> {
    for (k, d) in draws.iter().enumerate() {
        d.function.emit_load(b)?;
        b.emit(Opcode::PushNull, 0);
        for a in &d.args {
            b.load_const(a.clone());
        }
        b.emit(Opcode::Call, d.args.len() as u32);
        let slot = b.slot(&draw_slot(k)).ok_or_else(|| {
            Unsupported::new(Kind::Internal, "code generation: no slot for a draw")
        })?;
        b.emit(Opcode::StoreFast, slot);
    }
    Ok(())
}

impl State<'_> {
    /// A call of one of `random`'s functions (`DRAWS`), read from the frame: the draw made
    /// by the replacement, a deferred number here. `None` for another callable.
    pub(crate) fn python_draw(
        &mut self,
        callable: &Var,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Var::Lazy(_, source) = callable else {
            return Ok(None);
        };
        // A function of the module (a method of its hidden generator), or a method of a
        // `random.Random` of the program's, read by `generator_method` (its guards made).
        let module_draw = DRAWS.iter().copied().find(|(name, _)| {
            crate::translate::loaded_modules::loaded_attr("random", name, vm)
                .is_some_and(|d| d.is(f))
        });
        let own_draw = match source {
            Source::Attr(owner, name) if module_draw.is_none() => {
                let generator = f.get_attr("__self__", vm).ok();
                DRAWS
                    .iter()
                    .copied()
                    .find(|(n, _)| n == name)
                    .filter(|_| generator.is_some_and(|g| is_generator(&g, vm)))
                    .map(|d| (d, owner))
            }
            _ => None,
        };
        let Some((name, int)) = module_draw.or(own_draw.map(|(d, _)| d)) else {
            return Ok(None);
        };
        if self.spec.python_draws_break {
            return unsupported(
                Kind::SideEffect,
                format!(
                    "random.{name}() where drawing it first could draw what the program does \
                     not (a graph that may raise, or an effect that may fail, after it)"
                ),
            );
        }
        if !kwargs.is_empty() {
            return unsupported(
                Kind::Call,
                format!("random.{name}() with keyword arguments"),
            );
        }
        let mut plain = Vec::with_capacity(args.len());
        for a in args {
            let o = self.plain_obj(a, "an argument of a random draw")?;
            let t = &vm.ctx.types;
            if !o.class().is(t.int_type) && !o.class().is(t.float_type) {
                return unsupported(
                    Kind::Call,
                    format!("random.{name}() of a {}", o.class().name()),
                );
            }
            plain.push(o);
        }
        if own_draw.is_none() {
            self.guard(source, Check::is(f.clone()));
        }
        let k = self.templating.draws.len();
        self.templating.draws.push(DrawCall {
            function: source.clone(),
            args: plain.clone(),
        });
        // What it stands for until the replacement draws it: a number of its type, which
        // nothing may rely on (a use that would is refused: `Source::has_draw`).
        let value: PyObjectRef = if int {
            match plain.first().and_then(|a| a.downcast_ref::<PyInt>()) {
                Some(i) => vm.ctx.new_int(i.as_bigint().clone()).into(),
                None => vm.ctx.new_int(0).into(),
            }
        } else {
            vm.ctx.new_float(0.5).into()
        };
        log::debug!(target: crate::log_targets::GRAPH, "random.{name}() drawn by the replacement as {}", Source::Draw(k));
        Ok(Some(Var::Num(Rc::new(Num {
            value: value.clone(),
            expr: NumExpr::Read(value, Source::Draw(k)),
            ops: 0,
        }))))
    }
}

impl State<'_> {
    /// `rng.random` and the other draws of a `random.Random` the program made (exactly that
    /// class, its methods not replaced on the instance): a bound method read from the
    /// instance where the replacement reads it again, which `python_draw` takes as a draw of
    /// that generator (`None`: not such a read).
    pub(crate) fn generator_method(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
        name: &str,
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let replaced = o
            .dict()
            .is_some_and(|d| d.get_item_opt(name, vm).ok().flatten().is_some());
        if !DRAWS.iter().any(|(n, _)| *n == name) || !is_generator(o, vm) || replaced {
            return Ok(None);
        }
        let Ok(method) = o.get_attr(&vm.ctx.new_str(name), vm) else {
            return Ok(None);
        };
        self.guard(source, Check::type_is(o.class().to_owned()));
        // An attribute of the instance of that name would be what the program calls.
        self.guard(&source.clone().instance_dict().key(name), Check::Absent);
        Ok(Some(Var::Lazy(method, source.clone().attr(name))))
    }
}

/// Whether `o` is exactly a `random.Random` (not a subclass, which may draw otherwise).
fn is_generator(o: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> bool {
    crate::translate::loaded_modules::loaded_attr("random", "Random", vm)
        .is_some_and(|class| o.class().is(&class))
}

/// Why a use of a drawn number is refused.
pub fn drawn_value_needed() -> Unsupported {
    Unsupported::new(
        Kind::DataDependent,
        "a number drawn from the random module, used where its value is needed (a branch, an \
         index, a size): it is drawn only when the replacement runs",
    )
}
