//! Graph breaks inside loops. Resuming in the middle of a loop would nest one resume call per
//! iteration, so a loop whose body breaks is split instead (as SOT does): its body becomes a
//! function of its own, the *body function*, that takes the frame's locals (and the item of a
//! `for` loop), runs one iteration and returns `(tag, value, *locals)`, where the tag says
//! how the iteration ended: the next iteration, a `return`, or a jump out of the loop. The
//! loop itself runs as written in the *driver*, a resume function of the original at the
//! loop's head whose body is replaced by the call and the dispatch on the tag. The body
//! function is an ordinary function to the hook: each call is translated (and cached), and
//! the break inside it is an ordinary break, no longer inside a loop. After the loop the
//! driver calls a resume function for the rest of the frame, translated in turn.
//!
//! A call cannot pass an unbound local, so the driver starts with every local that is unbound
//! at the head bound to a marker object, and the functions after the loop delete the locals
//! that still hold it; a local the body deletes (`except E as e` ends in `del e`) is bound to
//! the marker instead. The marker is never seen by the user's code: a body that might read
//! such a local (the compiler emits `LOAD_FAST_CHECK` there) is not split.
//!
//! The body's exception handlers (an except block, a `with` block's exit, a comprehension's
//! cleanup) are placed by the compiler after the function's code; reached only through the
//! body's handlers, they go with the body function (`handler_region`). A loop inside a `try`
//! or `with` block is split too: in the body function, an exception for that block's handler
//! ends the iteration (`Exit::Raise`, with the iteration's locals), and the driver raises it
//! again under the handler.

use rustpython_vm::VirtualMachine;
use rustpython_vm::bytecode::Opcode;
use rustpython_vm::eval_hook::FrameView;

use super::loop_code::{Driver, body_code, driver_code};
use super::resume::{Purpose, ResumeShape};
use super::{BreakKind, BreakPolicy, GraphBreak, located_at};
use crate::bytecode::Instr;
use crate::bytecode::analysis::{Loop, deleted_slots, handler_region, innermost, uses_stack_below};
use crate::graph::recorder;
use crate::translate::codegen::BreakPlan;
use crate::translate::convert_frame::{Translation, break_translation, initial_frame};
use crate::translate::executor::{Stop, TopOutcome};
use crate::translate::state::{Kind, SimResult, State, Unsupported};
use crate::translate::templates::{Template, frame_state};

fn refused(message: &str) -> Unsupported {
    Unsupported::new(Kind::Internal, message)
}

/// How an iteration of the body function ended (its tag is the index in `Exits::kinds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The next iteration (the end of the body, or `continue`).
    Next,
    /// `return`: the value is the second item.
    Return,
    /// A jump out of the loop to this instruction of the original (`break`, a `while` loop's
    /// condition, ...).
    Leave(usize),
    /// An exception for the handler around the loop (`Loop::outer`): the value.
    Raise,
}

/// Every way out of the loop's body.
pub struct Exits {
    pub kinds: Vec<Exit>,
}

impl Exits {
    pub fn tag(&self, e: Exit) -> usize {
        self.kinds
            .iter()
            .position(|k| *k == e)
            .expect("every exit is listed")
    }
}

/// Why the loop cannot be split, if it cannot. `bound[slot]`: the local is bound at the head;
/// `region`: the loop's handler blocks (`handler_region`).
pub fn refusal(body: &[Instr], lp: &Loop, region: &[usize], bound: &[bool]) -> Option<Unsupported> {
    if lp.is_for {
        let exhausted = body[lp.head].target?;
        if body.get(exhausted).map(|x| x.op) != Some(Opcode::EndFor)
            || body.get(exhausted + 1).map(|x| x.op) != Some(Opcode::PopIter)
        {
            return Some(refused("a for loop that does not end in END_FOR, POP_ITER"));
        }
    }
    let in_body = |i: usize| (lp.start() <= i && i <= lp.end) || region.binary_search(&i).is_ok();
    // A local deleted anywhere in the frame (the loop may be entered again after it, from an
    // enclosing loop) may hold the marker in the body function.
    let deleted = deleted_slots(body);
    for (i, x) in body.iter().enumerate() {
        let inside = in_body(i);
        // The body's handlers come with it; a try or with around the loop would not cover
        // the body function.
        if x.handler
            .is_some_and(|h| inside != in_body(h.target) && !(inside && Some(h) == lp.outer))
        {
            return Some(refused(
                "the loop's handlers cover code outside it, or it jumps into them",
            ));
        }
        if !lp.contains(i)
            && !region.contains(&i)
            && x.target.is_some_and(|t| in_body(t) && t != lp.head)
        {
            return Some(refused("a jump into the loop's body"));
        }
        if !inside {
            continue;
        }
        match x.op {
            Opcode::LoadFastCheck
                if !bound.get(x.arg as usize).copied().unwrap_or(false)
                    || deleted.contains(&(x.arg as usize)) =>
            {
                return Some(refused("the loop may read a local before assigning it"));
            }
            // Only the compiler's `name = None; del name` (after `except E as name`): a delete
            // of a local that may be unbound raises, where binding the marker would not.
            Opcode::DeleteFast
                if i == 0 || body[i - 1].op != Opcode::StoreFast || body[i - 1].arg != x.arg =>
            {
                return Some(refused("the loop deletes a local"));
            }
            Opcode::YieldValue | Opcode::Send | Opcode::ReturnGenerator | Opcode::GetAwaitable => {
                return Some(refused("the loop yields"));
            }
            _ => {}
        }
    }
    None
}

/// The exits of the loop's body.
pub fn exits(body: &[Instr], lp: &Loop, region: &[usize]) -> Exits {
    let mut kinds = vec![Exit::Next, Exit::Return];
    if lp.outer.is_some() {
        kinds.push(Exit::Raise);
    }
    for x in body[lp.start()..=lp.end]
        .iter()
        .chain(region.iter().map(|&i| &body[i]))
    {
        if let Some(t) = x.target
            && !lp.contains(t)
            && !region.contains(&t)
            && !kinds.contains(&Exit::Leave(t))
        {
            kinds.push(Exit::Leave(t));
        }
    }
    Exits { kinds }
}

/// Simulate again up to the head of the innermost loop around the instruction that failed
/// (at `index`), and split the loop there (see the module): the graph so far, then the loop
/// run as written by its driver, which calls the loop's body as a function per iteration.
/// `ops_at_failure`: ops the first simulation had captured when it failed.
pub(crate) fn translate_loop_break(
    view: &FrameView<'_>,
    vm: &VirtualMachine,
    graph_global: &str,
    index: usize,
    ops_at_failure: usize,
    why: Unsupported,
    policy: &BreakPolicy<'_>,
    spec: &crate::translate::policy::Specialization,
) -> SimResult<Translation> {
    let recording = recorder::start().ok_or_else(|| {
        Unsupported::new(
            Kind::Internal,
            "a translation is already under way on this thread",
        )
    })?;
    let mut state = State::new(vm, spec.clone());
    let mut frame = initial_frame(&mut state, view)?;
    let body = frame.body().to_vec();
    let lp: Loop =
        innermost(&body, index).ok_or_else(|| Unsupported::new(Kind::Internal, "no loop"))?;
    match state.run_top(&mut frame, Stop::AtFirst(lp.head)) {
        Ok(TopOutcome::Stopped) => {}
        _ => {
            return Err(Unsupported::new(
                Kind::Internal,
                "the simulation did not reach the loop's head",
            ));
        }
    }
    let in_body = ops_at_failure.saturating_sub(recorder::with(|r| r.graph.nodes.len()));
    let code = view.code();
    let saved = frame_state(&mut state, &frame, frame.stack.len(), code.varnames.len())?;
    let bound: Vec<bool> = saved.locals.iter().map(Option::is_some).collect();
    let region = handler_region(&body, &lp).map_err(|e| Unsupported::new(Kind::Internal, e))?;
    let depths = crate::bytecode::verify::stack_depths(&body)
        .map_err(|e| Unsupported::new(Kind::Internal, e.to_string()))?;
    let head_depth = depths[lp.head]
        .ok_or_else(|| Unsupported::new(Kind::Internal, "the loop's head is unreachable"))?
        as usize;
    if head_depth != frame.stack.len() {
        return Err(Unsupported::new(
            Kind::Internal,
            "the stack at the loop's head is not what the simulation found",
        ));
    }
    let not_split = if in_body < policy.min_graph_size {
        Some(Unsupported::new(
            Kind::Limit,
            format!(
                "the loop's body captures {in_body} ops before the break, fewer than \
                 min_graph_size ({})",
                policy.min_graph_size
            ),
        ))
    } else {
        refusal(&body, &lp, &region, &bound).or_else(|| {
            uses_stack_below(&body, &lp, &region, head_depth)
                .map(|why| Unsupported::new(Kind::Internal, why))
        })
    };
    if let Some(not_split) = not_split {
        // Simulated again, to the head of the outermost loop.
        drop((saved, state, recording));
        let before = BeforeLoop {
            view,
            graph_global,
            index,
            why,
            policy,
            spec,
            vm,
        };
        return break_before_loop(before, not_split);
    }
    let exits = exits(&body, &lp, &region);
    let resumes = policy.resumes;
    let globals = view.globals();
    let marker = resumes.unbound_marker(vm);
    let mut maybe_unbound: Vec<usize> = bound
        .iter()
        .enumerate()
        .filter(|(_, b)| !**b)
        .map(|(i, _)| i)
        .collect();
    maybe_unbound.extend(deleted_slots(&body));
    maybe_unbound.sort_unstable();
    maybe_unbound.dedup();
    let body_purpose = Purpose::LoopBody {
        head: lp.head,
        bound: bound.clone(),
    };
    let body_global = resumes.bound_function(code, body_purpose.clone(), globals, vm, || {
        body_code(code, &body, &lp, &region, head_depth, &exits, &marker, vm)
    })?;
    // In a frame with cells, each function is a closure over the frame's (`closure_cells`).
    let closure = |purpose: Purpose| {
        resumes
            .made_code(code, purpose)
            .filter(|c| !c.freevars.is_empty())
    };
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
            let name = resumes.function_for(code, &body, &shape, globals, vm)?;
            after.push((exit, name, closure(Purpose::Resume(shape))));
        }
    }
    let stack: Vec<bool> = saved.kept.iter().map(Option::is_none).collect();
    let line = body[lp.head].position.line.unwrap_or(0);
    let driver_name = format!("loop_in_{}_at_{line}", code.obj_name.as_str());
    let driver = Driver {
        body_global: &body_global,
        body_closure: closure(body_purpose),
        after,
        depths: &depths,
        maybe_unbound: &maybe_unbound,
        region: &region,
        marker: &marker,
        name: &driver_name,
    };
    let driver_purpose = Purpose::LoopDriver {
        head: lp.head,
        bound,
        stack,
    };
    let driver_global =
        resumes.bound_function(code, driver_purpose.clone(), globals, vm, || {
            driver_code(
                code,
                &body,
                &lp,
                &exits,
                &saved.kept.iter().map(Option::is_none).collect::<Vec<_>>(),
                &driver,
                vm,
            )
        })?;

    let mut graph = recording.finish();
    graph.prune();
    let position = body[lp.head].position;
    let nop = Instr::nop_at(position);
    let locals = saved
        .locals
        .into_iter()
        .map(|l| Some(l.unwrap_or_else(|| Template::Const(marker.clone()))))
        .collect();
    let plan = BreakPlan {
        resume_global: &driver_global,
        locals,
        kept: saved.kept,
        consumed: Vec::new(),
        replayed: nop,
        pushed: Vec::new(),
        handler: None,
        closure: closure(driver_purpose),
    };
    let graph_break = GraphBreak {
        after_nothing: None,
        kind: BreakKind::Loop,
        reason: located_at(why, code, &body[index]),
    };
    break_translation(
        code,
        state,
        graph,
        graph_global,
        &saved.replays,
        &plan,
        position,
        graph_break,
        vm,
    )
}

/// A loop that is not split, and the frame around it.
struct BeforeLoop<'a, 'v> {
    view: &'a FrameView<'v>,
    graph_global: &'a str,
    /// The instruction that failed inside the loop, and why.
    index: usize,
    why: Unsupported,
    policy: &'a BreakPolicy<'a>,
    spec: &'a crate::translate::policy::Specialization,
    vm: &'a VirtualMachine,
}

/// Where the loop is not split (its body is too small to be worth a function per iteration,
/// or cannot be one), the graph still keeps the tensor work before it (at least
/// `min_graph_size` ops): the replacement runs it, then a resume function from the head of
/// the outermost loop around the failing instruction runs the loops and what follows as
/// written (that function's own translation stops at the same loop, with nothing before it).
fn break_before_loop(at: BeforeLoop<'_, '_>, not_split: Unsupported) -> SimResult<Translation> {
    let BeforeLoop {
        view,
        graph_global,
        index,
        why,
        policy,
        spec,
        vm,
    } = at;
    let Some(recording) = recorder::start() else {
        return Err(not_split);
    };
    let mut state = State::new(vm, spec.clone());
    let mut frame = initial_frame(&mut state, view)?;
    let body = frame.body().to_vec();
    let Some(lp) = crate::bytecode::analysis::outermost(&body, index) else {
        return Err(not_split);
    };
    if !matches!(
        state.run_top(&mut frame, Stop::AtFirst(lp.head)),
        Ok(TopOutcome::Stopped)
    ) {
        return Err(not_split);
    }
    let code = view.code();
    let depths = crate::bytecode::verify::stack_depths(&body)
        .map_err(|e| Unsupported::new(Kind::Internal, e.to_string()))?;
    if depths.get(lp.head).copied().flatten() != Some(frame.stack.len() as i64) {
        return Err(not_split);
    }
    let saved = frame_state(&mut state, &frame, frame.stack.len(), code.varnames.len())?;
    let mut graph = recording.finish();
    graph.prune();
    // As small a graph as the body's is not worth the break either.
    if graph.nodes.len() < policy.min_graph_size {
        return Err(not_split);
    }
    let vm = state.vm;
    let code = view.code();
    let shape = ResumeShape {
        resume_at: lp.head,
        stack: saved.kept.iter().map(Option::is_none).collect(),
        unbound: saved.unbound_slots(),
        maybe_unbound: Vec::new(),
    };
    let resumes = policy.resumes;
    let resume_global = resumes.function_for(code, &body, &shape, view.globals(), vm)?;
    let position = body[lp.head].position;
    let nop = Instr::nop_at(position);
    let plan = BreakPlan {
        resume_global: &resume_global,
        locals: saved.locals,
        kept: saved.kept,
        consumed: Vec::new(),
        replayed: nop,
        pushed: Vec::new(),
        handler: None,
        closure: resumes
            .code_for(code, &shape)
            .filter(|c| !c.freevars.is_empty()),
    };
    let graph_break = GraphBreak {
        after_nothing: None,
        kind: BreakKind::BeforeLoop,
        reason: located_at(why, code, &body[index]),
    };
    log::debug!(target: crate::log_targets::GRAPH_BREAKS, "{}: the loop at line {} is not split: {not_split}", code.qualname.as_str(), position.line.unwrap_or(0));
    break_translation(
        code,
        state,
        graph,
        graph_global,
        &saved.replays,
        &plan,
        position,
        graph_break,
        vm,
    )
}
