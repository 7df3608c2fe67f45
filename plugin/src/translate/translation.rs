//! One translation: simulate a frame about to run, and turn what it did into a graph, the
//! guards it relied on, and the replacement code that runs the graph.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use rustpython_vm::builtins::PyCode;
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::{AsObject, PyObjectRef, PyRef, VirtualMachine};

use super::codegen::{BreakPlan, HandlerPlan, Replay, Template, generate, generate_break};
use super::executor::{SimFrame, Slot, Stop, TopOutcome};
use super::graph_break::{
    self, BreakKind, Purpose, ResumeCache, ResumeShape, not_breakable, replayed,
};
use super::graph_call::GraphCall;
use super::guard::GuardSet;
use super::loop_break::{self, Driver, Exit, Loop};
use super::side_effects::Effect;
use super::source::Source;
use super::tracer::{SimResult, Tracer, Unsupported, unsupported};
use super::var::{CellState, Globals, Var, is_literal};
use crate::graph::recorder;
use crate::graph::{Graph, Value};
use crate::tensor::PyTensor;

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
}

/// Where and why a translation breaks its graph and resumes.
pub struct GraphBreak {
    pub kind: BreakKind,
    /// Why the instruction could not be simulated.
    pub reason: Unsupported,
}

/// Why there is no translation.
pub struct Failure {
    pub why: Unsupported,
    /// Ops and guards the translation held when it stopped (after any rollback).
    pub ops_left: Vec<String>,
    pub guards_left: Vec<String>,
    /// The simulation ended, but there was no graph to run.
    pub empty: bool,
    /// Instructions of the frame itself started when the simulation stopped: the last is the
    /// one that could not be simulated (0 when it never ran).
    pub top_steps: usize,
}

/// What a finished simulation gives code generation.
struct Simulated {
    template: Template,
    /// The frame raises what `template` makes, instead of returning it.
    raises: bool,
    replays: Vec<Replay>,
    position: crate::bytecode::Position,
}

/// How a frame that cannot be simulated whole may break (absent: it fails instead).
pub struct BreakPolicy<'a> {
    pub resumes: &'a ResumeCache,
    /// Ops a loop's body must capture before its break for the body to be split off and
    /// translated per iteration (below it, the frame runs as written).
    pub min_graph_size: usize,
}

/// Translate the frame in `view`. `graph_global` is the name the compiled graph will have in
/// the frame's globals; `keep_empty` generates code even when nothing was captured; with a
/// break policy, an instruction that cannot be simulated breaks the graph where it can (see
/// `graph_break` and `loop_break`) instead of failing the frame.
#[allow(clippy::result_large_err)] // a failure is rare and carries what explain reports
pub fn translate(
    view: &FrameView<'_>,
    vm: &VirtualMachine,
    graph_global: &str,
    keep_empty: bool,
    breaks: Option<&BreakPolicy<'_>>,
) -> Result<Translation, Failure> {
    match (translate_whole(view, vm, graph_global, keep_empty), breaks) {
        (Err(failure), Some(policy)) if !failure.empty && failure.top_steps > 0 => {
            let broken = match translate_with_break(
                view,
                vm,
                graph_global,
                failure.top_steps - 1,
                failure.why.clone(),
                policy.resumes,
            ) {
                Err(NoBreak::InLoop(index)) => translate_loop_break(
                    view,
                    vm,
                    graph_global,
                    index,
                    failure.ops_left.len(),
                    failure.why.clone(),
                    policy,
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
    /// The instruction is inside a loop (see `loop_break`).
    InLoop(usize),
    Because(String),
}

impl From<String> for NoBreak {
    fn from(why: String) -> Self {
        NoBreak::Because(why)
    }
}

impl From<&str> for NoBreak {
    fn from(why: &str) -> Self {
        NoBreak::Because(why.to_owned())
    }
}

/// The whole frame as one graph.
#[allow(clippy::result_large_err)]
fn translate_whole(
    view: &FrameView<'_>,
    vm: &VirtualMachine,
    graph_global: &str,
    keep_empty: bool,
) -> Result<Translation, Failure> {
    let Some(recording) = recorder::start() else {
        return Err(failure(
            Unsupported {
                reason: "a translation is already under way on this thread".into(),
                location: None,
            },
            false,
        ));
    };
    let mut tracer = Tracer::new(vm);
    let simulated = simulate(&mut tracer, view);
    let (ops_left, guards_left) = (
        recorder::with(|r| {
            r.graph
                .nodes
                .iter()
                .map(|n| n.op.clone())
                .collect::<Vec<_>>()
        }),
        tracer
            .guards
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
    );
    let result = match simulated {
        Ok(r) => r,
        Err(why) => {
            drop(recording);
            return Err(Failure {
                why,
                ops_left,
                guards_left,
                empty: false,
                top_steps: tracer.top_steps,
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
            why: Unsupported {
                reason: "no tensor operation to capture (empty graph)".into(),
                location: None,
            },
            ops_left,
            guards_left,
            empty: true,
            top_steps: tracer.top_steps,
        });
    }
    let has_graph = !graph.outputs.is_empty();
    let call = GraphCall::new(&tracer.inputs, graph.outputs.len(), vm);
    let code = generate(
        view.code(),
        has_graph.then_some((graph_global, &call, graph.outputs.len())),
        &result.replays,
        &result.template,
        result.raises,
        result.position,
        vm,
    )
    .map_err(|e| {
        failure(
            Unsupported {
                reason: format!("code generation: {e}"),
                location: None,
            },
            false,
        )
    })?;
    Ok(Translation {
        guards: GuardSet::new(tracer.guards),
        graph: Arc::new(graph),
        call: Arc::new(call),
        code,
        inlined: tracer.inlined,
        graph_break: None,
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
    resumes: &ResumeCache,
) -> Result<Translation, NoBreak> {
    let recording = recorder::start().ok_or("a translation is already under way on this thread")?;
    let mut tracer = Tracer::new(vm);
    let mut frame = initial_frame(&mut tracer, view).map_err(|e| e.reason)?;
    match tracer.run_top(&mut frame, Stop::BeforeStep(stop_before)) {
        Ok(TopOutcome::Stopped) => {}
        _ => return Err("the second simulation did not reach the failing instruction".into()),
    }
    let code = view.code();
    let index = frame.body_pc().ok_or("stopped in the prologue")?;
    let body = frame.body().to_vec();
    if let Some(why) = not_breakable(code, &body, index) {
        return Err(
            if loop_break::innermost(&body, index).is_some() && why == graph_break::IN_LOOP {
                NoBreak::InLoop(index)
            } else {
                NoBreak::Because(why)
            },
        );
    }
    let x = &body[index];
    let popped = x.op.stack_effect_info(x.arg).popped() as usize;
    let split = frame
        .stack
        .len()
        .checked_sub(popped)
        .ok_or("the stack is shorter than the instruction pops")?;
    let state = frame_state(&mut tracer, &frame, split, code.varnames.len())?;
    let mut graph = recording.finish();
    graph.prune();
    if graph.nodes.is_empty() {
        return Err("no tensor work before it".into());
    }

    let (replayed, pushed) = replayed(x);
    let shape = ResumeShape {
        resume_at: index + 1,
        stack: state
            .kept
            .iter()
            .map(Option::is_none)
            .chain(pushed.iter().copied())
            .collect(),
        unbound: state
            .locals
            .iter()
            .enumerate()
            .filter(|(_, l)| l.is_none())
            .map(|(i, _)| i)
            .collect(),
        maybe_unbound: Vec::new(),
    };
    let resume_global = resumes.function_for(code, &body, &shape, view.globals(), vm)?;
    let handler_global = match &x.handler {
        Some(h) => {
            let kept: Vec<bool> = state.kept.iter().map(Option::is_none).collect();
            let shape = graph_break::handler_shape(h, &kept, shape.unbound.clone())?;
            Some((
                h,
                resumes.handler_function_for(code, &body, &shape, view.globals(), vm)?,
            ))
        }
        None => None,
    };
    let handler = handler_global.as_ref().map(|(h, name)| HandlerPlan {
        handler_global: name,
        depth: h.depth as usize,
        push_lasti: h.push_lasti,
    });
    let plan = BreakPlan {
        resume_global: &resume_global,
        locals: state.locals,
        kept: state.kept,
        consumed: state.consumed,
        replayed,
        pushed,
        handler,
    };
    let graph_break = GraphBreak {
        kind: BreakKind::of(x),
        reason: at_break(why, code, x),
    };
    Ok(break_translation(
        code,
        tracer,
        graph,
        graph_global,
        &state.replays,
        &plan,
        x.position,
        graph_break,
        vm,
    )?)
}

/// The translation that breaks as `plan` says, after running `graph` (when it has outputs).
#[allow(clippy::too_many_arguments)]
fn break_translation(
    code: &PyCode,
    tracer: Tracer<'_>,
    graph: Graph,
    graph_global: &str,
    replays: &[Replay],
    plan: &BreakPlan<'_>,
    position: crate::bytecode::Position,
    graph_break: GraphBreak,
    vm: &VirtualMachine,
) -> Result<Translation, String> {
    let call = GraphCall::new(&tracer.inputs, graph.outputs.len(), vm);
    let run_graph =
        (!graph.outputs.is_empty()).then_some((graph_global, &call, graph.outputs.len()));
    let code = generate_break(code, run_graph, replays, plan, position, vm)
        .map_err(|e| format!("code generation: {e}"))?;
    Ok(Translation {
        guards: GuardSet::new(tracer.guards),
        graph: Arc::new(graph),
        call: Arc::new(call),
        code,
        inlined: tracer.inlined,
        graph_break: Some(graph_break),
    })
}

/// Simulate again up to the head of the innermost loop around the instruction that failed
/// (at `index`), and split the loop there (see `loop_break`): the graph so far, then the loop
/// run as written by its driver, which calls the loop's body as a function per iteration.
/// `ops_at_failure`: ops the first simulation had captured when it failed.
fn translate_loop_break(
    view: &FrameView<'_>,
    vm: &VirtualMachine,
    graph_global: &str,
    index: usize,
    ops_at_failure: usize,
    why: Unsupported,
    policy: &BreakPolicy<'_>,
) -> Result<Translation, String> {
    let recording = recorder::start().ok_or("a translation is already under way on this thread")?;
    let mut tracer = Tracer::new(vm);
    let mut frame = initial_frame(&mut tracer, view).map_err(|e| e.reason)?;
    let body = frame.body().to_vec();
    let lp: Loop = loop_break::innermost(&body, index).ok_or("no loop")?;
    match tracer.run_top(&mut frame, Stop::AtFirst(lp.head)) {
        Ok(TopOutcome::Stopped) => {}
        _ => return Err("the simulation did not reach the loop's head".into()),
    }
    let in_body = ops_at_failure.saturating_sub(recorder::with(|r| r.graph.nodes.len()));
    if in_body < policy.min_graph_size {
        return Err(format!(
            "the loop's body captures {in_body} ops before the break, fewer than min_graph_size ({})",
            policy.min_graph_size
        ));
    }
    let code = view.code();
    let state = frame_state(&mut tracer, &frame, frame.stack.len(), code.varnames.len())?;
    let bound: Vec<bool> = state.locals.iter().map(Option::is_some).collect();
    let region = loop_break::handler_region(&body, &lp)?;
    let depths = crate::bytecode::verify::stack_depths(&body).map_err(|e| e.to_string())?;
    let head_depth = depths[lp.head].ok_or("the loop's head is unreachable")? as usize;
    if let Some(why) = loop_break::refusal(code, &body, &lp, &region, &bound)
        .or_else(|| loop_break::uses_stack_below(&body, &lp, &region, head_depth))
    {
        return Err(why);
    }
    if head_depth != frame.stack.len() {
        return Err("the stack at the loop's head is not what the simulation found".into());
    }
    let exits = loop_break::exits(&body, &lp, &region);
    let resumes = policy.resumes;
    let globals = view.globals();
    let marker = resumes.unbound_marker(vm);
    let mut maybe_unbound: Vec<usize> = bound
        .iter()
        .enumerate()
        .filter(|(_, b)| !**b)
        .map(|(i, _)| i)
        .collect();
    maybe_unbound.extend(loop_break::deleted_slots(&body, &lp, &region));
    maybe_unbound.sort_unstable();
    maybe_unbound.dedup();
    let body_global = resumes.bound_function(
        code,
        Purpose::LoopBody {
            head: lp.head,
            bound: bound.clone(),
        },
        globals,
        vm,
        || loop_break::body_code(code, &body, &lp, &region, head_depth, &exits, &marker, vm),
    )?;
    // Where the stack is empty after the loop, the rest of the frame is a resume function.
    let mut leaves: Vec<(Option<usize>, usize)> = exits
        .kinds
        .iter()
        .filter_map(|k| {
            if let Exit::Leave(t) = k {
                Some((Some(*t), *t))
            } else {
                None
            }
        })
        .collect();
    if lp.is_for
        && let Some(e) = body[lp.head].target
    {
        leaves.push((None, e + 2));
    }
    let mut after = Vec::new();
    for (exit, at) in leaves {
        if depths.get(at).copied().flatten() == Some(0) {
            let shape = ResumeShape {
                resume_at: at,
                stack: Vec::new(),
                unbound: Vec::new(),
                maybe_unbound: maybe_unbound.clone(),
            };
            after.push((
                exit,
                resumes.function_for(code, &body, &shape, globals, vm)?,
            ));
        }
    }
    let stack: Vec<bool> = state.kept.iter().map(Option::is_none).collect();
    let line = body[lp.head].position.line.unwrap_or(0);
    let driver_name = format!("loop_in_{}_at_{line}", code.obj_name.as_str());
    let driver = Driver {
        body_global: &body_global,
        after,
        depths: &depths,
        maybe_unbound: &maybe_unbound,
        region: &region,
        marker: &marker,
        name: &driver_name,
    };
    let driver_global = resumes.bound_function(
        code,
        Purpose::LoopDriver {
            head: lp.head,
            bound,
            stack,
        },
        globals,
        vm,
        || {
            loop_break::driver_code(
                code,
                &body,
                &lp,
                &exits,
                &state.kept.iter().map(Option::is_none).collect::<Vec<_>>(),
                &driver,
                vm,
            )
        },
    )?;

    let mut graph = recording.finish();
    graph.prune();
    let position = body[lp.head].position;
    let nop = crate::bytecode::Instr {
        op: rustpython_vm::bytecode::Opcode::Nop,
        arg: 0,
        target: None,
        handler: None,
        position,
        offset: 0,
    };
    let locals = state
        .locals
        .into_iter()
        .map(|l| Some(l.unwrap_or_else(|| Template::Const(marker.clone()))))
        .collect();
    let plan = BreakPlan {
        resume_global: &driver_global,
        locals,
        kept: state.kept,
        consumed: Vec::new(),
        replayed: nop,
        pushed: Vec::new(),
        handler: None,
    };
    let graph_break = GraphBreak {
        kind: BreakKind::Loop,
        reason: at_break(why, code, &body[index]),
    };
    break_translation(
        code,
        tracer,
        graph,
        graph_global,
        &state.replays,
        &plan,
        position,
        graph_break,
        vm,
    )
}

/// The frame's state at a break, as templates: what the replacement passes on.
struct BreakState {
    replays: Vec<Replay>,
    /// Every local in slot order (`None`: unbound).
    locals: Vec<Option<Template>>,
    /// The stack under `split`, and from it (`None`: a NULL).
    kept: Vec<Option<Template>>,
    consumed: Vec<Option<Template>>,
}

/// Templates of the frame's locals and stack (split at `split`) and of the recorded side
/// effects; the tensors among them become the graph's outputs.
fn frame_state(
    tracer: &mut Tracer<'_>,
    frame: &SimFrame,
    split: usize,
    nlocals: usize,
) -> Result<BreakState, String> {
    if frame.handling_exception() {
        return Err("inside an except or finally block handling an exception".into());
    }
    let n_effects = tracer.effects.log.len();
    held_once(
        tracer
            .effects
            .log
            .iter()
            .flat_map(Effect::values)
            .chain(frame.stack.iter())
            .chain(frame.slots[..nlocals].iter().filter_map(|s| match s {
                Slot::Val(v) => Some(v),
                _ => None,
            })),
    )?;
    let mut outputs: Vec<Value> = Vec::new();
    let mut numbered: HashMap<Value, usize> = HashMap::new();
    let replays = replays(tracer, &mut outputs, &mut numbered).map_err(|e| e.reason)?;
    let mut template = |tracer: &mut Tracer<'_>, v: &Var| -> Result<Option<Template>, String> {
        match v {
            Var::Null => Ok(None),
            v => {
                let t = build(tracer, v, &mut outputs, &mut numbered).map_err(|e| e.reason)?;
                fresh_after(tracer, n_effects, &t).map_err(|e| e.reason)?;
                Ok(Some(t))
            }
        }
    };
    let mut locals = Vec::with_capacity(nlocals);
    for slot in &frame.slots[..nlocals] {
        locals.push(match slot {
            Slot::Empty => None,
            Slot::Val(v) => Some(template(tracer, v)?.ok_or("a local holds NULL")?),
            Slot::Cell(_) => return Err("a local is a cell".into()),
        });
    }
    let stack = frame.stack.clone();
    let kept = stack[..split]
        .iter()
        .map(|v| template(tracer, v))
        .collect::<Result<Vec<_>, _>>()?;
    let consumed = stack[split..]
        .iter()
        .map(|v| template(tracer, v))
        .collect::<Result<Vec<_>, _>>()?;
    recorder::with(|r| r.graph.outputs = outputs);
    Ok(BreakState {
        replays,
        locals,
        kept,
        consumed,
    })
}

/// The reason of a break, located at the breaking instruction of the translated frame (a call
/// that failed inline names where inside it failed).
fn at_break(why: Unsupported, code: &PyCode, x: &crate::bytecode::Instr) -> Unsupported {
    let here = super::tracer::Location {
        file: code.source_path().as_str().to_owned(),
        line: x.position.line.unwrap_or(0).max(0) as u32,
        function: code.qualname.as_str().to_owned(),
    };
    let reason = match &why.location {
        Some(inner) if inner.function != here.function || inner.line != here.line => format!(
            "{} (in {}, {}:{})",
            why.reason, inner.function, inner.file, inner.line
        ),
        _ => why.reason,
    };
    Unsupported {
        reason,
        location: Some(here),
    }
}

/// Fails when a list or dict made during the simulation is reachable twice from `values` (the
/// frame's state, what side effects store): rebuilt from templates, the two would become two
/// objects.
fn held_once<'a>(values: impl Iterator<Item = &'a Var>) -> Result<(), String> {
    let mut seen = Vec::new();
    values
        .into_iter()
        .try_for_each(|v| mutable_containers(v, &mut seen))
}

/// Fails when a list or dict made during the simulation is reachable twice from the frame's
/// state: rebuilt from templates, the two would become two objects.
fn mutable_containers(v: &Var, seen: &mut Vec<usize>) -> Result<(), String> {
    let mut note = |p: usize| {
        if seen.contains(&p) {
            return Err("a list, dict or iterator made during the call is held twice".to_owned());
        }
        seen.push(p);
        Ok(())
    };
    match v {
        Var::List(l) => {
            note(Rc::as_ptr(l) as usize)?;
            l.borrow()
                .iter()
                .try_for_each(|x| mutable_containers(x, seen))
        }
        Var::Dict(d) => {
            note(Rc::as_ptr(d) as usize)?;
            d.borrow()
                .iter()
                .try_for_each(|(_, x)| mutable_containers(x, seen))
        }
        Var::Tuple(items) => items.iter().try_for_each(|x| mutable_containers(x, seen)),
        Var::Iter(items) => {
            note(Rc::as_ptr(items) as usize)?;
            items
                .borrow()
                .iter()
                .try_for_each(|x| mutable_containers(x, seen))
        }
        _ => Ok(()),
    }
}

fn failure(why: Unsupported, empty: bool) -> Failure {
    Failure {
        why,
        ops_left: Vec::new(),
        guards_left: Vec::new(),
        empty,
        top_steps: 0,
    }
}

fn simulate(tracer: &mut Tracer<'_>, view: &FrameView<'_>) -> SimResult<Simulated> {
    let mut frame = initial_frame(tracer, view)?;
    let returned = match tracer.run_top(&mut frame, Stop::Never)? {
        TopOutcome::Returned(r) => r,
        TopOutcome::Stopped => return unsupported("stopped"),
    };
    let mut outputs: Vec<Value> = Vec::new();
    let mut index: HashMap<Value, usize> = HashMap::new();
    let replays = replays(tracer, &mut outputs, &mut index)?;
    let template = if returned.raised {
        raised_template(tracer, &returned.value, &mut outputs, &mut index)?
    } else {
        build(tracer, &returned.value, &mut outputs, &mut index)?
    };
    fresh_after(tracer, tracer.effects.log.len(), &template)?;
    held_once(
        tracer
            .effects
            .log
            .iter()
            .flat_map(Effect::values)
            .chain([&returned.value]),
    )
    .map_err(|e| Unsupported {
        reason: e,
        location: None,
    })?;
    recorder::with(|r| r.graph.outputs = outputs);
    Ok(Simulated {
        template,
        raises: returned.raised,
        replays,
        position: returned.position,
    })
}

/// The recorded side effects as the replacement replays them. Each value is built from what
/// the frame holds when the effect is replayed, so none may be read from what an earlier
/// effect changed.
fn replays(
    tracer: &mut Tracer<'_>,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Vec<Replay>> {
    let effects = tracer.effects.log.clone();
    let mut replays = Vec::with_capacity(effects.len());
    for (k, effect) in effects.iter().enumerate() {
        if let Some(target) = effect.target()
            && tracer.effects.stale(k, target)
        {
            return unsupported(format!(
                "a side effect on {target}, which an earlier one changed"
            ));
        }
        replays.push(effect.try_map(|v| {
            let t = build(tracer, v, outputs, index)?;
            fresh_after(tracer, k, &t)?;
            Ok(t)
        })?);
    }
    Ok(replays)
}

/// Fails when `t` loads a value that one of the first `after` side effects changed (a value
/// read before the effect and used after it: the replayed code would read the new one).
fn fresh_after(tracer: &Tracer<'_>, after: usize, t: &Template) -> SimResult<()> {
    match t {
        Template::Load(s) if tracer.effects.stale(after, s) => {
            unsupported(format!("{s} is used after a side effect changed it"))
        }
        Template::Tuple(items) | Template::List(items) => {
            items.iter().try_for_each(|i| fresh_after(tracer, after, i))
        }
        Template::Iter(items) => fresh_after(tracer, after, items),
        Template::New(_, args) => args.iter().try_for_each(|a| fresh_after(tracer, after, a)),
        Template::Dict(entries) => entries
            .iter()
            .try_for_each(|(_, v)| fresh_after(tracer, after, v)),
        _ => Ok(()),
    }
}

/// The frame about to run, as the simulation starts it: arguments lazy, with their sources.
fn initial_frame(tracer: &mut Tracer<'_>, view: &FrameView<'_>) -> SimResult<SimFrame> {
    let vm = tracer.vm;
    let code = view.code().to_owned();
    let globals = Globals {
        dict: view.globals().to_owned(),
        owner: None,
    };
    let closure = code
        .freevars
        .iter()
        .map(|name| {
            let source = Source::Free(name.as_str().to_owned());
            let value = source.resolve(view, vm).map(|v| Var::Lazy(v, source));
            Rc::new(RefCell::new(CellState {
                value,
                existing: true,
                home: Some(name.as_str().to_owned()),
            }))
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

/// The template of a returned value; tensor outputs are numbered in `outputs`.
fn build(
    tracer: &mut Tracer<'_>,
    v: &Var,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    let vm = tracer.vm;
    let mut out = |value: Value, outputs: &mut Vec<Value>| -> usize {
        *index.entry(value).or_insert_with(|| {
            outputs.push(value);
            outputs.len() - 1
        })
    };
    Ok(match v {
        Var::Lazy(_, s) => Template::Load(s.clone()),
        Var::Obj(o) if is_literal(o, vm) => Template::Const(o.clone()),
        // A slice of plain values: immutable (STORE_SLICE's key).
        Var::Obj(o)
            if o.downcast_ref::<rustpython_vm::builtins::PySlice>()
                .is_some()
                && super::var::is_plain(o, vm) =>
        {
            Template::Const(o.clone())
        }
        // A bare `object()`: a sentinel with no state (the simulation never makes one).
        Var::Obj(o) if o.class().is(vm.ctx.types.object_type) => Template::Const(o.clone()),
        // A method or function of a native type (`Tensor.item` taken for a call): immutable,
        // the same object on every call, held as a constant.
        Var::Obj(o)
            if o.class().is(vm.ctx.types.method_descriptor_type)
                || o.class().is(vm.ctx.types.builtin_function_or_method_type) =>
        {
            Template::Const(o.clone())
        }
        // A Python function found on a class (a method, `__exit__` on a `with` block's stack):
        // it existed before the call, and the constant is that object.
        Var::Obj(o)
            if o.downcast_ref::<rustpython_vm::builtins::PyFunction>()
                .is_some() =>
        {
            Template::Const(o.clone())
        }
        Var::Obj(o) if let Some(made) = tracer.made_exception(o) => {
            if made.raised {
                return unsupported(
                    "an exception that was raised, kept (made again, it would lose its __traceback__)",
                );
            }
            exception_template(tracer, &made.clone(), outputs, index)?
        }
        Var::Obj(o) if o.downcast_ref::<PyTensor>().is_some() => {
            // A tensor computed from constants: a new tensor on every call, as eagerly.
            let data = o.downcast_ref::<PyTensor>().expect("tensor").read().clone();
            let c = recorder::with(|r| r.graph.constant(data));
            Template::Out(out(c, outputs))
        }
        Var::Tensor(t) => match tracer.value_of(t) {
            Some(Value::Input(i)) => Template::Load(tracer.inputs[i].clone()),
            Some(value) => Template::Out(out(value, outputs)),
            None => return unsupported("returns a tensor the graph does not know"),
        },
        Var::Tuple(items) => Template::Tuple(
            items
                .iter()
                .map(|i| build(tracer, i, outputs, index))
                .collect::<SimResult<_>>()?,
        ),
        // An iterator the simulation made (a `for` loop's, at a loop split): what it has left
        // to give, iterated again. Only `FOR_ITER` sees it, so its type does not show.
        Var::Iter(items) => {
            let items = items.borrow().iter().cloned().collect::<Vec<_>>();
            Template::Iter(Box::new(Template::Tuple(
                items
                    .iter()
                    .map(|i| build(tracer, i, outputs, index))
                    .collect::<SimResult<_>>()?,
            )))
        }
        Var::List(items) => {
            let items = items.borrow().clone();
            Template::List(
                items
                    .iter()
                    .map(|i| build(tracer, i, outputs, index))
                    .collect::<SimResult<_>>()?,
            )
        }
        Var::Dict(entries) => {
            let entries = entries.borrow().clone();
            let mut t = Vec::new();
            for (k, val) in &entries {
                if !is_literal(k, vm) {
                    return unsupported("returns a dict with a non-constant key");
                }
                t.push((k.clone(), build(tracer, val, outputs, index)?));
            }
            Template::Dict(t)
        }
        Var::Obj(o) => {
            return unsupported(format!("returns a {} made during the call", class_name(o)));
        }
        other => return unsupported(format!("returns a {}", other.kind())),
    })
}

/// The template of the exception a frame raises out of itself (the replacement raises it,
/// and the VM gives it its traceback).
fn raised_template(
    tracer: &mut Tracer<'_>,
    v: &Var,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    match v {
        Var::Obj(o) if let Some(made) = tracer.made_exception(o) => {
            exception_template(tracer, &made.clone(), outputs, index)
        }
        other => build(tracer, other, outputs, index),
    }
}

/// `class(*args)`, for an exception the simulation made.
fn exception_template(
    tracer: &mut Tracer<'_>,
    made: &super::exceptions::MadeException,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    if made.chained {
        return unsupported(
            "an exception raised while another was handled (made again, it would lose its __context__)",
        );
    }
    let args = made
        .args
        .iter()
        .map(|a| build(tracer, a, outputs, index))
        .collect::<SimResult<_>>()?;
    Ok(Template::New(made.class.clone().into(), args))
}

fn class_name(o: &PyObjectRef) -> String {
    o.class().name().to_string()
}
