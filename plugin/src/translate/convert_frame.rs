//! One translation: simulate a frame about to run, and turn what it did into a graph, the
//! guards it relied on, and the replacement code that runs the graph.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use rustpython_vm::PyObject;
use rustpython_vm::PyRef;
use rustpython_vm::VirtualMachine;
use rustpython_vm::builtins::{PyCode, PyList, PyTuple};
use rustpython_vm::eval_hook::FrameView;

use crate::graph::recorder;
use crate::graph::{Graph, Value};
use crate::tensor::PyTensor;
use crate::translate::breaks::loop_split::translate_loop_break;
use crate::translate::breaks::resume::{Purpose, handler_shape};
use crate::translate::breaks::{
    AtFailure, BreakPolicy, GraphBreak, NotBreakable, ResumeShape, located_at, not_breakable,
    replayed, returns_right_after,
};
use crate::translate::codegen::{
    BreakPlan, HandlerPlan, generate, generate_break, returns_graph_result,
};
use crate::translate::executor::{SimFrame, Slot, Stop, TopOutcome, at_failure};
use crate::translate::graph_call::GraphCall;
use crate::translate::guards::{Guard, GuardSet};
use crate::translate::policy::Specialization;
use crate::translate::source::Source;
use crate::translate::state::{Kind, SimResult, State, Unsupported, unsupported};
use crate::translate::templates::{Replay, Template, frame_state, returned_template};
use crate::translate::values::{CellState, Globals, Var};

/// A translated frame, ready to be cached.
pub struct Translation {
    pub guards: GuardSet,
    pub graph: Arc<Graph>,
    /// How the replacement code calls the graph.
    pub call: Arc<GraphCall>,
    /// The replacement code (not yet verified).
    pub code: PyRef<PyCode>,
    pub inlined: Vec<String>,
    /// The graph break this translation ends in, if it does.
    pub graph_break: Option<GraphBreak>,
    /// The replacement code only calls the graph and returns its result
    /// (`codegen::returns_graph_result`).
    pub returns_graph_result: bool,
}

/// Why there is no translation.
pub struct Failure {
    pub why: Unsupported,
    /// Ops and guards the translation held when it stopped (after any rollback); calls the
    /// guards fit would fail the same way (see `cache::CodeState::as_written`).
    pub ops_left: Vec<String>,
    pub guards: Vec<Guard>,
    /// The simulation ended, but there was no graph to run.
    pub empty: bool,
    /// Instructions of the frame itself started when the simulation stopped: the last is the
    /// one that could not be simulated (0 when it never ran).
    pub top_steps: usize,
    /// The simulation met no tensor (no graph input, no op): no graph break can give a graph.
    pub tensorless: bool,
}

/// What a finished simulation gives code generation.
struct Simulated {
    template: Template,
    /// The frame raises what `template` makes, instead of returning it.
    raises: bool,
    replays: Vec<Replay>,
    position: crate::bytecode::Position,
}

/// Translate the frame in `view`. `graph_global` is the name the compiled graph will have in
/// the frame's globals; `keep_empty` generates code even when nothing was captured; with a
/// break policy, an instruction that cannot be simulated breaks the graph where it can (see
/// `breaks` and `breaks::loop_split`) instead of failing the frame.
#[allow(clippy::result_large_err)] // a failure is rare and carries what explain reports
pub fn translate(
    view: &FrameView<'_>,
    vm: &VirtualMachine,
    graph_global: &str,
    keep_empty: bool,
    breaks: Option<&BreakPolicy<'_>>,
    spec: &Specialization,
) -> Result<Translation, Failure> {
    UNSURE_PRINT.set(false);
    UNSURE_DRAWS.set(false);
    let translated = translate_as(view, vm, graph_global, keep_empty, breaks, spec);
    let again = Specialization {
        prints_break: spec.prints_break || UNSURE_PRINT.get(),
        python_draws_break: spec.python_draws_break || UNSURE_DRAWS.get(),
        ..spec.clone()
    };
    if translated.is_err()
        && (again.prints_break, again.python_draws_break)
            != (spec.prints_break, spec.python_draws_break)
    {
        return translate(view, vm, graph_global, keep_empty, breaks, &again);
    }
    translated
}

thread_local! {
    /// A translation failed because a replayed print could fail after random draws or a
    /// write-back (`draws_only_before_sure_replays`): tried again with prints breaking.
    static UNSURE_PRINT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// A translation failed because the numbers drawn from Python's `random` module first
    /// could be draws the program never makes (`values::python_draws`): tried again with
    /// the draws breaking.
    static UNSURE_DRAWS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[allow(clippy::result_large_err)]
fn translate_as(
    view: &FrameView<'_>,
    vm: &VirtualMachine,
    graph_global: &str,
    keep_empty: bool,
    breaks: Option<&BreakPolicy<'_>>,
    spec: &Specialization,
) -> Result<Translation, Failure> {
    match (
        translate_whole(view, vm, graph_global, keep_empty, spec),
        breaks,
    ) {
        (Err(failure), Some(policy))
            if !failure.empty
                && (!failure.tensorless || holds_tensor(view))
                && failure.top_steps > 0 =>
        {
            let broken = match translate_with_break(
                view,
                vm,
                graph_global,
                failure.top_steps - 1,
                failure.why.clone(),
                policy,
                spec,
            ) {
                Err(NoBreak::InLoop(index)) => translate_loop_break(
                    view,
                    vm,
                    graph_global,
                    index,
                    failure.ops_left.len(),
                    failure.why.clone(),
                    policy,
                    spec,
                ),
                Err(NoBreak::Because(why)) => Err(why),
                Ok(t) => Ok(t),
            };
            broken.map_err(|no_break| {
                log::debug!(target: crate::log_targets::GRAPH_BREAKS, "{}: no graph break at {}: {no_break}", view.code().qualname.as_str(), failure.why);
                failure
            })
        }
        (result, _) => result,
    }
}

/// Why a frame does not break where its simulation failed.
enum NoBreak {
    /// The instruction is inside a loop: split it (`loop_split`).
    InLoop(usize),
    Because(Unsupported),
}

impl From<Unsupported> for NoBreak {
    fn from(why: Unsupported) -> Self {
        NoBreak::Because(why)
    }
}

/// The whole frame as one graph.
#[allow(clippy::result_large_err)]
fn translate_whole(
    view: &FrameView<'_>,
    vm: &VirtualMachine,
    graph_global: &str,
    keep_empty: bool,
    spec: &Specialization,
) -> Result<Translation, Failure> {
    let Some(recording) = recorder::start() else {
        return Err(failure(
            Unsupported::new(
                Kind::Internal,
                "a translation is already under way on this thread",
            ),
            false,
        ));
    };
    let mut state = State::new(vm, spec.clone());
    // A frame handed a tensor (`forward(self, x)`, `Module.__call__(self, *args)`) is
    // translated whatever Python it runs before its first op (a module's `__call__` into a
    // block whose norm layer reaches `layer_norm` through three calls passed 256
    // instructions, and every layer of the block then ran as a graph of its own).
    state.needs_tensors = !keep_empty && !holds_tensor(view);
    let simulated = simulate(&mut state, view);
    let ops_left = recorder::with(|r| {
        r.graph
            .nodes
            .iter()
            .map(|n| n.op.clone())
            .collect::<Vec<_>>()
    });
    let result = match simulated {
        Ok(r) => r,
        Err(why) => {
            let tensorless =
                recorder::with(|r| r.graph.inputs.is_empty() && r.graph.nodes.is_empty());
            drop(recording);
            return Err(Failure {
                why,
                ops_left,
                guards: state.guards.clone(),
                empty: false,
                top_steps: state.top_steps,
                tensorless,
            });
        }
    };
    let mut graph = recording.finish();
    graph.prune();
    let empty =
        graph.nodes.is_empty() && graph.outputs.iter().all(|v| !matches!(v, Value::Const(_)));
    // A frame that raises out of its replacement shows the replacement's offset in its
    // traceback entry (tb_lasti): worth it only for a graph.
    if empty && (!keep_empty || result.raises) {
        return Err(Failure {
            why: Unsupported::new(
                Kind::EmptyGraph,
                "no tensor operation to capture (empty graph)",
            ),
            tensorless: graph.inputs.is_empty(),
            ops_left,
            guards: state.guards.clone(),
            empty: true,
            top_steps: state.top_steps,
        });
    }
    let has_graph = !graph.outputs.is_empty();
    draws_only_before_sure_replays(&graph, &result.replays, !state.templating.draws.is_empty())
        .map_err(|e| failure(e, false))?;
    state.finish_guards(&graph).map_err(|e| failure(e, false))?;
    let mut call = GraphCall::new(&state.inputs, graph.outputs.len(), vm);
    call.marked_outputs = state.templating.marked_outputs.clone();
    call.output_views = state.templating.output_views.clone();
    let graph_call = has_graph.then_some((graph_global, &call, graph.outputs.len()));
    // A cache hit that only runs the graph would skip the replacement's draws.
    let returns_graph_result =
        returns_graph_result(graph_call, &result.replays, &result.template, result.raises)
            && state.templating.draws.is_empty();
    let code = generate(
        view.code(),
        graph_call,
        &state.templating,
        &result.replays,
        &result.template,
        result.raises,
        result.position,
        vm,
    )
    .map_err(|e| failure(e, false))?;
    Ok(Translation {
        guards: GuardSet::new(state.guards),
        graph: Arc::new(graph),
        call: Arc::new(call),
        code,
        inlined: state.inlined,
        graph_break: None,
        returns_graph_result,
    })
}

/// Simulate again, stopping before the instruction that failed (the `stop_before`th of the
/// frame's own), and break there: the graph so far, then that instruction run as written, then
/// the resume function.
fn translate_with_break(
    view: &FrameView<'_>,
    vm: &VirtualMachine,
    graph_global: &str,
    stop_before: usize,
    why: Unsupported,
    policy: &BreakPolicy<'_>,
    spec: &Specialization,
) -> Result<Translation, NoBreak> {
    let resumes = policy.resumes;
    let recording = recorder::start().ok_or_else(|| {
        Unsupported::new(
            Kind::Internal,
            "a translation is already under way on this thread",
        )
    })?;
    let mut state = State::new(vm, spec.clone());
    let mut frame = initial_frame(&mut state, view)?;
    match state.run_top(&mut frame, Stop::BeforeStep(stop_before)) {
        Ok(TopOutcome::Stopped) => {}
        _ => {
            return Err(Unsupported::new(
                Kind::Internal,
                "the second simulation did not reach the failing instruction",
            )
            .into());
        }
    }
    let code = view.code();
    let index = frame
        .body_pc()
        .ok_or_else(|| Unsupported::new(Kind::Internal, "stopped in the prologue"))?;
    let body = frame.body().to_vec();
    match not_breakable(&body, index) {
        None => {}
        Some(NotBreakable::InLoop(_)) => return Err(NoBreak::InLoop(index)),
        Some(why) => return Err(why.to_unsupported().into()),
    }
    let x = &body[index];
    let popped = x.op.stack_effect_info(x.arg).popped() as usize;
    let split = frame.stack.len().checked_sub(popped).ok_or_else(|| {
        Unsupported::new(
            Kind::Internal,
            "the stack is shorter than the instruction pops",
        )
    })?;
    let saved = frame_state(&mut state, &frame, split, code.varnames.len())?;
    let mut graph = recording.finish();
    graph.prune();
    // Before any tensor work, a break pays only where the instruction runs as written once
    // and what follows can be simulated: not where a value the simulation does not model
    // (a deque) would stop the resume function again at its next use. A
    // requested break (`graph_break()`, here or in a call inlined here) is such a call.
    let worth_it = policy.after_nothing
        && matches!(
            why.kind,
            Kind::Call | Kind::SideEffect | Kind::Opcode | Kind::DataDependent | Kind::Requested
        )
        && !returns_right_after(&body, index);
    if graph.nodes.is_empty() && !worth_it {
        return Err(Unsupported::new(Kind::EmptyGraph, "no tensor work before it").into());
    }

    let (replayed, pushed) = replayed(x);
    let shape = ResumeShape {
        resume_at: index + 1,
        stack: saved
            .kept
            .iter()
            .map(Option::is_none)
            .chain(pushed.iter().copied())
            .collect(),
        unbound: saved.unbound_slots(),
        maybe_unbound: Vec::new(),
    };
    let resume_global = resumes.function_for(code, &body, &shape, view.globals(), vm)?;
    let handler_global = match &x.handler {
        Some(h) => {
            let kept: Vec<bool> = saved.kept.iter().map(Option::is_none).collect();
            let shape = handler_shape(h, &kept, shape.unbound.clone())?;
            let name = resumes.handler_function_for(code, &body, &shape, view.globals(), vm)?;
            let closure = resumes
                .made_code(code, Purpose::Handler(shape))
                .filter(|c| !c.freevars.is_empty());
            Some((h, name, closure))
        }
        None => None,
    };
    let handler = handler_global
        .as_ref()
        .map(|(h, name, closure)| HandlerPlan {
            handler_global: name,
            depth: h.depth as usize,
            push_lasti: h.push_lasti,
            closure: closure.clone(),
        });
    let plan = BreakPlan {
        resume_global: &resume_global,
        locals: saved.locals,
        kept: saved.kept,
        consumed: saved.consumed,
        replayed,
        pushed,
        handler,
        closure: resumes
            .code_for(code, &shape)
            .filter(|c| !c.freevars.is_empty()),
    };
    let graph_break = GraphBreak {
        after_nothing: graph
            .nodes
            .is_empty()
            .then(|| resumes.code_for(code, &shape))
            .flatten(),
        kind: match at_failure(x) {
            AtFailure::Break(kind) => kind,
            AtFailure::NoBreak => unreachable!("not_breakable refused it"),
        },
        reason: located_at(why, code, x),
    };
    Ok(break_translation(
        code,
        state,
        graph,
        graph_global,
        &saved.replays,
        &plan,
        x.position,
        graph_break,
        vm,
    )?)
}

/// The translation that breaks as `plan` says, after running `graph` (when it has outputs).
#[allow(clippy::too_many_arguments)]
pub(crate) fn break_translation(
    code: &PyCode,
    mut state: State<'_>,
    graph: Graph,
    graph_global: &str,
    replays: &[Replay],
    plan: &BreakPlan<'_>,
    position: crate::bytecode::Position,
    graph_break: GraphBreak,
    vm: &VirtualMachine,
) -> SimResult<Translation> {
    draws_only_before_sure_replays(&graph, replays, !state.templating.draws.is_empty())?;
    state.finish_guards(&graph)?;
    let mut call = GraphCall::new(&state.inputs, graph.outputs.len(), vm);
    call.marked_outputs = state.templating.marked_outputs.clone();
    call.output_views = state.templating.output_views.clone();
    let run_graph =
        (!graph.outputs.is_empty()).then_some((graph_global, &call, graph.outputs.len()));
    let code = generate_break(
        code,
        run_graph,
        &state.templating,
        replays,
        plan,
        position,
        vm,
    )?;
    Ok(Translation {
        guards: GuardSet::new(state.guards),
        graph: Arc::new(graph),
        call: Arc::new(call),
        code,
        inlined: state.inlined,
        graph_break: Some(graph_break),
        returns_graph_result: false,
    })
}

/// The graph runs before the side effects are replayed. It is pure, unless it draws random
/// numbers: then a replayed effect that may raise (`del data['a']` of a key gone since) would
/// raise after draws that the program, raising there, never makes. And a caller's tensor is
/// written back once, with its final value, where it was first written: before such a
/// deletion, it would carry the writes the program makes after it, which raising there it
/// never makes (`x.mul_(2); del data['a']; x[0] = 2`). Such a frame runs as written.
fn draws_only_before_sure_replays(
    graph: &Graph,
    replays: &[Replay],
    python_draws: bool,
) -> SimResult<()> {
    let first_unsure = replays.iter().position(Replay::may_fail);
    if python_draws
        && let Some(why) =
            crate::translate::values::python_draws::draws_unsure(graph, first_unsure.is_some())
    {
        // Where a print alone is unsure, it breaks rather than the draws.
        let print_alone = crate::translate::values::python_draws::draws_unsure(graph, false)
            .is_none()
            && first_unsure.is_some_and(|i| matches!(replays[i], Replay::Output { .. }));
        match print_alone {
            true => UNSURE_PRINT.set(true),
            false => UNSURE_DRAWS.set(true),
        }
        return Err(Unsupported::new(
            Kind::SideEffect,
            format!("numbers drawn from the random module first, with {why} after them"),
        ));
    }
    let Some(first_unsure) = first_unsure else {
        return Ok(());
    };
    let registry = crate::tensor::registry();
    let draws = graph.nodes.iter().any(|n| registry.draws(&n.op));
    let written = replays[..first_unsure]
        .iter()
        .any(|r| matches!(r, Replay::WriteBack { .. }));
    if (draws || written) && matches!(replays[first_unsure], Replay::Output { .. }) {
        UNSURE_PRINT.set(true);
    }
    if draws {
        return Err(Unsupported::new(
            Kind::SideEffect,
            "a graph that draws random numbers, with a deletion or a print to replay after it that may fail",
        ));
    }
    if written {
        return Err(Unsupported::new(
            Kind::SideEffect,
            "a tensor of the caller's written back before a deletion or a print to replay that may fail",
        ));
    }
    Ok(())
}

fn failure(why: Unsupported, empty: bool) -> Failure {
    Failure {
        tensorless: false,
        why,
        ops_left: Vec::new(),
        guards: Vec::new(),
        empty,
        top_steps: 0,
    }
}

fn simulate(state: &mut State<'_>, view: &FrameView<'_>) -> SimResult<Simulated> {
    let mut frame = initial_frame(state, view)?;
    let returned = match state.run_top(&mut frame, Stop::Never)? {
        TopOutcome::Returned(r) => r,
        TopOutcome::Stopped => return unsupported(Kind::Internal, "stopped"),
    };
    let (template, replays) = returned_template(state, &returned.value, returned.raised, &frame)?;
    Ok(Simulated {
        template,
        raises: returned.raised,
        replays,
        position: returned.position,
    })
}

/// The frame about to run, as the simulation starts it: arguments lazy, with their sources.
pub(crate) fn initial_frame(state: &mut State<'_>, view: &FrameView<'_>) -> SimResult<SimFrame> {
    let vm = state.vm;
    let code = view.code().to_owned();
    state.frame_globals = Some(view.globals().to_owned());
    let globals = Globals {
        dict: view.globals().to_owned(),
        owner: None,
    };
    let closure = code
        .freevars
        .iter()
        .map(|name| {
            let source = Source::Free(name.as_str().to_owned());
            let value = source
                .resolve(view, vm)
                .map(|v| Var::Lazy(v, source.clone()));
            let cell = Rc::new(RefCell::new(CellState {
                value,
                existing: true,
                home: Some(name.as_str().to_owned()),
            }));
            if let Some(object) = Source::CellOf(Box::new(source)).resolve(view, vm) {
                let name = name.as_str().to_owned();
                state.free_cells.push((name, object, cell.clone()));
            }
            cell
        })
        .collect();
    let mut frame = SimFrame::new(code.clone(), globals, closure)?;
    for name in code.varnames.iter() {
        if let Some(v) = view.get(name.as_str())
            && let Some(i) = frame.slot_of(name.as_str())
        {
            frame.slots[i] = Slot::Val(Var::Lazy(v, Source::Local(name.as_str().to_owned())));
        }
    }
    Ok(frame)
}

/// Whether the frame was given a tensor, itself or in a list or tuple.
pub fn holds_tensor(frame: &FrameView<'_>) -> bool {
    let tensor = |o: &PyObject| o.downcast_ref::<PyTensor>().is_some();
    (0..frame.nlocalsplus()).any(|i| {
        frame.local_ref(i).is_some_and(|o| {
            tensor(o)
                || o.downcast_ref::<PyTuple>()
                    .is_some_and(|t| t.iter().any(|x| tensor(x)))
                || o.downcast_ref::<PyList>()
                    .is_some_and(|l| l.borrow_vec().iter().any(|x| tensor(x)))
        })
    })
}
