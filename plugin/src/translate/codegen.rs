//! Code generation: the replacement code of a translated frame. It loads the roots of the
//! graph's inputs from the frame (`graph_call`), calls the compiled graph (held in the frame's
//! globals under a generated name, as TorchDynamo's `__compiled_fn_N`), rebuilds the return
//! value from the graph's outputs, constants and values read from the frame (or returns what
//! the graph returned, when that is the result), and returns; side effects the simulation
//! recorded are replayed in order between the graph call and the result. It keeps
//! the original's file, names, flags and locals (arguments are copied into it by name), and
//! every instruction carries the position of the original's `return`.

use rustpython_vm::builtins::PyCode;
use rustpython_vm::bytecode::Opcode;
use rustpython_vm::{PyRef, VirtualMachine};

use crate::bytecode::builder::{BuildError, Builder};
use crate::bytecode::{CodeLayout, Handler, Instr, Position};
use crate::translate::breaks::closure_cells::{CellStore, emit_closure};
use crate::translate::function_templates::{CLOSURE, ClosureCell};
use crate::translate::graph_call::GraphCall;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{Kind, SimResult, Unsupported};
use crate::translate::templates::{Replay, Template, Templating};

/// The slot name of the graph's outputs: not a Python identifier, so it never collides.
const OUT: &str = "%graph_out";
/// The slot names of values loaded before the side effects are replayed (`Template::Early`).
const EARLY: &str = "%early";
const SHARED: &str = "%shared";
const SUBSCR: u32 = 26; // BinaryOperator::Subscr
/// The most instructions a replacement may have: far beyond any translated frame's, a bound
/// that stops a value whose expression grows without sharing (each step written out from
/// the two before) before it exhausts memory; the frame then runs as written.
const MAX_INSTRUCTIONS: usize = 1 << 20;

mod output_calls;

/// The replacement's bytecode as it is written: values loaded from sources, rebuilt from
/// templates, side effects replayed.
struct Codegen<'vm> {
    b: Builder<'vm>,
    /// The graph returns a tuple of its outputs (otherwise its one output).
    outputs_in_tuple: bool,
    /// Sources loaded before the side effects are replayed, by number.
    early: Vec<Source>,
    /// Whether each shared tuple (`Template::Shared`) is built yet: in the straight line of
    /// the replacement, the first place written is the first run.
    shared_built: Vec<bool>,
}

fn generated(r: Result<PyRef<PyCode>, BuildError>) -> SimResult<PyRef<PyCode>> {
    r.map_err(|e| Unsupported::new(Kind::Internal, format!("code generation: {e}")))
}

impl Codegen<'_> {
    fn slot(&self, n: &str) -> SimResult<u32> {
        self.b.slot(n).ok_or_else(|| {
            Unsupported::new(Kind::Internal, format!("code generation: no slot {n}"))
        })
    }

    fn load_int(&mut self, i: usize) {
        let vm = self.b.vm();
        self.b.load_const(vm.ctx.new_int(i).into());
    }

    /// Store into the replacement's own cells what the simulation left there. Every value is
    /// loaded before the first store: a template may read a cell as it was.
    fn store_cells(&mut self, stores: &[CellStore<Template>]) -> SimResult<()> {
        for store in stores {
            if let Some(t) = &store.value {
                self.build(t)?;
            }
        }
        for store in stores.iter().rev() {
            let slot = self.slot(&store.name)?;
            let op = match store.value {
                Some(_) => Opcode::StoreDeref,
                None => Opcode::DeleteDeref,
            };
            self.b.emit(op, slot);
        }
        Ok(())
    }

    /// Call the compiled graph named `g` in the globals with the roots of its inputs. Where
    /// the graph raised (`CompiledGraph::as_written`), nothing is done yet that the program
    /// could see: the replacement returns what the graph returned, and the frame runs as
    /// written. A replacement that returns the graph's result as it is needs no test.
    fn call_graph(&mut self, g: &str, call: &GraphCall, direct: bool) -> SimResult<()> {
        let i = self.b.name(g);
        self.b.emit(Opcode::LoadGlobal, (i << 1) | 1);
        for s in &call.roots {
            s.emit_load(&mut self.b)?;
        }
        self.b.emit(Opcode::Call, call.roots.len() as u32);
        if !direct {
            let ran = self.b.new_label();
            self.b.emit(Opcode::Copy, 1);
            self.b
                .load_const(crate::translate::CompiledGraph::as_written(self.b.vm()));
            self.b.emit(Opcode::IsOp, 0);
            self.b.jump(Opcode::PopJumpIfFalse, 0, ran);
            self.b.emit(Opcode::ReturnValue, 0);
            self.b.place(ran);
        }
        Ok(())
    }

    /// The object a side effect changes: as the simulation read it, before an earlier
    /// effect changed where it was read from.
    fn load_target(&mut self, target: &Source) -> SimResult<()> {
        match self.early.iter().position(|e| e == target) {
            Some(k) => {
                let slot = self.slot(&format!("{EARLY}{k}"))?;
                self.b.emit(Opcode::LoadFast, slot);
                Ok(())
            }
            None => target.emit_load(&mut self.b),
        }
    }

    /// Load each of `early` into its slot, before the side effects are replayed.
    fn load_early(&mut self) -> SimResult<()> {
        for (k, s) in self.early.clone().iter().enumerate() {
            s.emit_load(&mut self.b)?;
            let slot = self.slot(&format!("{EARLY}{k}"))?;
            self.b.emit(Opcode::StoreFast, slot);
        }
        Ok(())
    }

    /// Push `object.<name>` (a slot wrapper) and the NULL of a call.
    fn object_slot(&mut self, name: &str) -> SimResult<()> {
        let vm = self.b.vm();
        let f = vm
            .ctx
            .types
            .object_type
            .get_attr(vm.ctx.intern_str(name))
            .ok_or_else(|| Unsupported::new(Kind::Internal, format!("object.{name} is missing")))?;
        self.b.load_const(f);
        self.b.emit(Opcode::PushNull, 0);
        Ok(())
    }

    /// The side effects, in program order.
    fn replay(&mut self, effects: &[Replay]) -> SimResult<()> {
        for effect in effects {
            match effect {
                Effect::Method {
                    target,
                    method,
                    args,
                } => {
                    self.load_target(target)?;
                    let m = self.b.name(method);
                    self.b.emit(Opcode::LoadAttr, (m << 1) | 1);
                    for a in args {
                        self.build(a)?;
                    }
                    self.b.emit(Opcode::Call, args.len() as u32);
                    self.b.emit(Opcode::PopTop, 0);
                }
                Effect::SetItem { target, key, value } => {
                    self.build(value)?;
                    self.load_target(target)?;
                    self.build(key)?;
                    self.b.emit(Opcode::StoreSubscr, 0);
                }
                // `object.__setattr__` and `object.__delattr__`: what the simulation did (a
                // class's own `__setattr__` was simulated, and called this).
                Effect::SetAttr {
                    target,
                    name,
                    value,
                    on_class,
                } => {
                    if *on_class {
                        let vm = self.b.vm();
                        let set = vm
                            .ctx
                            .types
                            .type_type
                            .get_attr(vm.ctx.intern_str("__setattr__"))
                            .ok_or_else(|| {
                                Unsupported::new(Kind::Internal, "type.__setattr__ is missing")
                            })?;
                        self.b.load_const(set);
                        self.b.emit(Opcode::PushNull, 0);
                    } else {
                        self.object_slot("__setattr__")?;
                    }
                    self.load_target(target)?;
                    let vm = self.b.vm();
                    self.b.load_const(vm.ctx.new_str(name.as_str()).into());
                    self.build(value)?;
                    self.b.emit(Opcode::Call, 3);
                    self.b.emit(Opcode::PopTop, 0);
                }
                Effect::DelItem { target, key } => {
                    self.load_target(target)?;
                    self.build(key)?;
                    self.b.emit(Opcode::DeleteSubscr, 0);
                }
                Effect::DelAttr { target, name } => {
                    self.object_slot("__delattr__")?;
                    self.load_target(target)?;
                    let vm = self.b.vm();
                    self.b.load_const(vm.ctx.new_str(name.as_str()).into());
                    self.b.emit(Opcode::Call, 2);
                    self.b.emit(Opcode::PopTop, 0);
                }
                Effect::StoreGlobal {
                    owner: None,
                    name,
                    value: Some(value),
                } => {
                    self.build(value)?;
                    let n = self.b.name(name);
                    self.b.emit(Opcode::StoreGlobal, n);
                }
                Effect::StoreGlobal {
                    owner: None,
                    name,
                    value: None,
                } => {
                    let n = self.b.name(name);
                    self.b.emit(Opcode::DeleteGlobal, n);
                }
                Effect::StoreGlobal {
                    owner: Some(owner),
                    name,
                    value,
                } => {
                    if let Some(value) = value {
                        self.build(value)?;
                    }
                    self.load_target(owner)?;
                    let g = self.b.name("__globals__");
                    self.b.emit(Opcode::LoadAttr, g << 1);
                    let vm = self.b.vm();
                    self.b.load_const(vm.ctx.new_str(name.as_str()).into());
                    let op = match value {
                        Some(_) => Opcode::StoreSubscr,
                        None => Opcode::DeleteSubscr,
                    };
                    self.b.emit(op, 0);
                }
                Effect::StoreCell { name, value } => {
                    self.build(value)?;
                    let slot = self.slot(name)?;
                    self.b.emit(Opcode::StoreDeref, slot);
                }
                Effect::StoreClosureCell {
                    function,
                    index,
                    value,
                } => {
                    self.build(value)?;
                    self.load_target(function)?;
                    let closure = self.b.name("__closure__");
                    self.b.emit(Opcode::LoadAttr, closure << 1);
                    let vm = self.b.vm();
                    self.b.load_const(vm.ctx.new_int(*index).into());
                    self.b.emit(Opcode::BinaryOp, SUBSCR);
                    let contents = self.b.name("cell_contents");
                    self.b.emit(Opcode::StoreAttr, contents);
                }
                Effect::WriteBack { target, value } => {
                    self.build(value)?;
                    self.load_target(target)?;
                    let vm = self.b.vm();
                    self.b.load_const(vm.ctx.ellipsis.clone().into());
                    self.b.emit(Opcode::StoreSubscr, 0);
                }
                Effect::Output { call, args, kwargs } => self.output(call, args, kwargs)?,
            }
        }
        Ok(())
    }

    fn build(&mut self, t: &Template) -> SimResult<()> {
        if self.b.len() > MAX_INSTRUCTIONS {
            return Err(Unsupported::new(
                Kind::Limit,
                format!("a replacement of more than {MAX_INSTRUCTIONS} instructions"),
            ));
        }
        match t {
            Template::Load(s) | Template::Reload(s) => s.emit_load(&mut self.b)?,
            Template::Early(k) => {
                let slot = self.slot(&format!("{EARLY}{k}"))?;
                self.b.emit(Opcode::LoadFast, slot);
            }
            Template::Const(o) => {
                self.b.load_const(o.clone());
            }
            Template::Out(k) => {
                let slot = self.slot(OUT)?;
                self.b.emit(Opcode::LoadFast, slot);
                if self.outputs_in_tuple {
                    self.load_int(*k);
                    self.b.emit(Opcode::BinaryOp, SUBSCR);
                }
            }
            Template::Tuple(items) | Template::List(items) => {
                for i in items {
                    self.build(i)?;
                }
                let op = if matches!(t, Template::Tuple(_)) {
                    Opcode::BuildTuple
                } else {
                    Opcode::BuildList
                };
                self.b.emit(op, items.len() as u32);
            }
            Template::Instr(op, arg, parts) => {
                for p in parts {
                    self.build(p)?;
                }
                self.b.emit(*op, *arg);
            }
            Template::Iter(items) => {
                self.build(items)?;
                self.b.emit(Opcode::GetIter, 0);
            }
            Template::Dim(tensor, d) => {
                self.build(tensor)?;
                let shape = self.b.name("shape");
                self.b.emit(Opcode::LoadAttr, shape << 1);
                self.load_int(*d);
                self.b.emit(Opcode::BinaryOp, SUBSCR);
            }
            Template::Shared(k, t) => {
                let slot = self.slot(&format!("{SHARED}{k}"))?;
                if self.shared_built[*k] {
                    self.b.emit(Opcode::LoadFast, slot);
                } else {
                    self.build(t)?;
                    self.b.emit(Opcode::Copy, 1);
                    self.b.emit(Opcode::StoreFast, slot);
                    self.shared_built[*k] = true;
                }
            }
            Template::BinOp(op, a, b) => {
                self.build(a)?;
                self.build(b)?;
                self.b.emit(Opcode::BinaryOp, *op as u32);
            }
            Template::Text(parts) => {
                for (p, spec) in parts {
                    self.build(p)?;
                    match spec.as_deref() {
                        None => {}
                        Some("") => self.b.emit(Opcode::FormatSimple, 0),
                        Some(spec) => {
                            let vm = self.b.vm();
                            self.b.load_const(vm.ctx.new_str(spec).into());
                            self.b.emit(Opcode::FormatWithSpec, 0);
                        }
                    }
                }
                self.b.emit(Opcode::BuildString, parts.len() as u32);
            }
            Template::New(class, args) => {
                self.b.load_const(class.clone());
                self.b.emit(Opcode::PushNull, 0);
                for a in args {
                    self.build(a)?;
                }
                self.b.emit(Opcode::Call, args.len() as u32);
            }
            Template::Dict(entries) => {
                for (k, v) in entries {
                    self.b.load_const(k.clone());
                    self.build(v)?;
                }
                self.b.emit(Opcode::BuildMap, entries.len() as u32);
            }
            Template::Function {
                code,
                closure,
                attributes,
            } => {
                for (_, a) in attributes {
                    self.build(a)?;
                }
                if !closure.is_empty() {
                    for cell in closure {
                        match cell {
                            ClosureCell::Frame(name) => {
                                let slot = self.slot(name)?;
                                self.b.emit(Opcode::LoadFast, slot);
                            }
                            ClosureCell::Made(t) => self.build(t)?,
                        }
                    }
                    self.b.emit(Opcode::BuildTuple, closure.len() as u32);
                }
                self.b.load_const(code.clone());
                self.b.emit(Opcode::MakeFunction, 0);
                if !closure.is_empty() {
                    self.b.emit(Opcode::SetFunctionAttribute, CLOSURE);
                }
                for (flag, _) in attributes.iter().rev() {
                    self.b.emit(Opcode::SetFunctionAttribute, *flag);
                }
            }
            Template::Object(class, entries) => {
                let vm = self.b.vm();
                self.b
                    .load_const(crate::translate::object_templates::object_maker(vm));
                self.b.emit(Opcode::PushNull, 0);
                self.b.load_const(class.clone());
                for (k, v) in entries {
                    self.b.load_const(k.clone());
                    self.build(v)?;
                }
                self.b.emit(Opcode::BuildMap, entries.len() as u32);
                self.b.emit(Opcode::Call, 2);
            }
        }
        Ok(())
    }

    /// The handler's entry in the replacement: the stack is the resume call's callable and
    /// NULL, the `passed` values the handler's function takes (locals, then the handler's
    /// stack), the offset of the raising instruction when the handler wants it, and the
    /// exception. Call the handler's function with all but the first two, and return what it
    /// returns (or let what it raises out).
    fn landing_pad(&mut self, h: &HandlerPlan<'_>, passed: usize) -> SimResult<()> {
        let b = &mut self.b;
        if h.push_lasti {
            // An offset in the replacement means nothing in the handler's function, where
            // RERAISE would restore it: point at its first instruction instead.
            b.emit(Opcode::Swap, 2);
            b.emit(Opcode::PopTop, 0);
            b.emit(Opcode::LoadSmallInt, 0);
            b.emit(Opcode::Swap, 2);
        }
        b.emit(
            Opcode::BuildTuple,
            (passed + usize::from(h.push_lasti) + 1) as u32,
        );
        // resume, NULL, args -> args, NULL, resume -> args, NULL, handler -> handler, NULL, args
        // (a NULL is never popped: POP_TOP takes an object)
        b.emit(Opcode::Swap, 3);
        b.emit(Opcode::PopTop, 0);
        match &h.closure {
            Some(code) => emit_closure(&mut self.b, code)?,
            None => {
                let f = b.name(h.handler_global);
                b.emit(Opcode::LoadGlobal, f << 1);
            }
        }
        let b = &mut self.b;
        b.emit(Opcode::Swap, 3);
        b.emit(Opcode::PushNull, 0);
        b.emit(Opcode::CallFunctionEx, 0);
        b.emit(Opcode::ReturnValue, 0);
        Ok(())
    }
}

/// Whether `result` is exactly what the graph returns: its one output, or the tuple of all
/// its outputs in order (a fresh tuple either way, as the original would build).
fn is_graph_result(result: &Template, call: &GraphCall, n_outputs: usize) -> bool {
    match result {
        Template::Out(0) => !call.returns_tuple,
        Template::Tuple(items) => {
            call.returns_tuple
                && items.len() == n_outputs
                && items
                    .iter()
                    .enumerate()
                    .all(|(k, t)| matches!(t, Template::Out(j) if *j == k))
        }
        _ => false,
    }
}

/// Whether the replacement code only calls the graph and returns what it returns: no effect
/// to replay, nothing raised, the frame's result the graph's result.
pub fn returns_graph_result(
    graph: Option<(&str, &GraphCall, usize)>,
    effects: &[Replay],
    result: &Template,
    raises: bool,
) -> bool {
    !raises
        && effects.is_empty()
        && graph.is_some_and(|(_, call, n)| is_graph_result(result, call, n))
}

/// The replacement code for `original`: `graph` names the compiled graph in the frame's
/// globals, how it is called and how many outputs it has (absent when there is no graph to
/// run).
#[allow(clippy::too_many_arguments)]
pub fn generate(
    original: &PyCode,
    graph: Option<(&str, &GraphCall, usize)>,
    templating: &Templating,
    effects: &[Replay],
    result: &Template,
    raises: bool,
    position: Position,
    vm: &VirtualMachine,
) -> SimResult<PyRef<PyCode>> {
    let mut layout = CodeLayout::of(original);
    let direct = returns_graph_result(graph, effects, result, raises);
    if graph.is_some() && !direct {
        layout.varnames.push(vm.ctx.intern_str(OUT));
    }
    add_slots(&mut layout, templating, vm);
    let mut e = Codegen {
        b: Builder::new(layout, position, vm),
        outputs_in_tuple: graph.is_some_and(|(_, call, _)| call.returns_tuple),
        early: templating.early.clone(),
        shared_built: vec![false; templating.shared.len()],
    };
    e.b.emit(Opcode::Resume, 0);
    crate::translate::values::python_draws::emit_draws(&mut e.b, &templating.draws)?;
    if let Some((g, call, _)) = graph {
        e.call_graph(g, call, direct)?;
        if direct {
            e.b.emit(Opcode::ReturnValue, 0);
            return generated(e.b.finish());
        }
        let slot = e.slot(OUT)?;
        e.b.emit(Opcode::StoreFast, slot);
    }
    e.load_early()?;
    e.replay(effects)?;
    e.build(result)?;
    e.store_cells(&templating.cell_stores)?;
    if raises {
        e.b.emit(Opcode::RaiseVarargs, 1);
    } else {
        e.b.emit(Opcode::ReturnValue, 0);
    }
    generated(e.b.finish())
}

/// The replacement's own locals: the early loads' and the shared tuples'.
fn add_slots(layout: &mut CodeLayout, templating: &Templating, vm: &VirtualMachine) {
    let early = (0..templating.early.len()).map(|k| format!("{EARLY}{k}"));
    let shared = (0..templating.shared.len()).map(|k| format!("{SHARED}{k}"));
    let draws = (0..templating.draws.len()).map(crate::translate::values::python_draws::draw_slot);
    for name in early.chain(shared).chain(draws) {
        layout.varnames.push(vm.ctx.intern_str(name.as_str()));
    }
}

/// The replacement code of a frame that breaks (see `breaks`): what it passes the
/// resume function, each value as a template (`None`: an unbound local, or a NULL on the
/// stack).
pub struct BreakPlan<'a> {
    /// The resume function's name in the frame's globals.
    pub resume_global: &'a str,
    /// Every local of the original, in slot order.
    pub locals: Vec<Option<Template>>,
    /// The stack under what the breaking instruction consumes, bottom first.
    pub kept: Vec<Option<Template>>,
    /// What the breaking instruction consumes, bottom first.
    pub consumed: Vec<Option<Template>>,
    /// The breaking instruction as the replacement runs it (see `breaks::replayed`), and
    /// what the original leaves on the stack (`true`: a NULL, which the replacement does not push).
    pub replayed: Instr,
    pub pushed: Vec<bool>,
    /// Where an exception raised by the breaking instruction goes, when the original has a
    /// handler for it.
    pub handler: Option<HandlerPlan<'a>>,
    /// In a frame with cells: the resume function's code, made a closure over the
    /// replacement's cells (`breaks::closure_cells`).
    pub closure: Option<PyRef<PyCode>>,
}

/// The landing pad of a breaking instruction under an exception handler (a `try` or `with`
/// block): the exception and the stack the handler runs with go to a function that runs the
/// original's handler as written (`breaks::resume::handler_shape`).
pub struct HandlerPlan<'a> {
    /// That function's name in the frame's globals.
    pub handler_global: &'a str,
    /// The handler's stack depth in the original.
    pub depth: usize,
    pub push_lasti: bool,
    /// In a frame with cells: the function's code, made a closure over the replacement's
    /// cells, as the resume function is.
    pub closure: Option<PyRef<PyCode>>,
}

/// The replacement code for `original` that breaks: run the graph, load the resume function,
/// build the locals and the stack (all read before the breaking instruction runs, as the
/// original read them), run the instruction, and return what the resume function returns.
pub fn generate_break(
    original: &PyCode,
    graph: Option<(&str, &GraphCall, usize)>,
    templating: &Templating,
    effects: &[Replay],
    plan: &BreakPlan<'_>,
    position: Position,
    vm: &VirtualMachine,
) -> SimResult<PyRef<PyCode>> {
    let mut layout = CodeLayout::of(original);
    if graph.is_some() {
        layout.varnames.push(vm.ctx.intern_str(OUT));
    }
    add_slots(&mut layout, templating, vm);
    let mut e = Codegen {
        b: Builder::new(layout, position, vm),
        outputs_in_tuple: graph.is_some_and(|(_, call, _)| call.returns_tuple),
        early: templating.early.clone(),
        shared_built: vec![false; templating.shared.len()],
    };
    e.b.emit(Opcode::Resume, 0);
    crate::translate::values::python_draws::emit_draws(&mut e.b, &templating.draws)?;
    if let Some((g, call, _)) = graph {
        e.call_graph(g, call, false)?;
        let slot = e.slot(OUT)?;
        e.b.emit(Opcode::StoreFast, slot);
    }
    e.load_early()?;
    e.replay(effects)?;
    match &plan.closure {
        Some(code) => {
            emit_closure(&mut e.b, code)?;
            e.b.emit(Opcode::PushNull, 0);
        }
        None => {
            let r = e.b.name(plan.resume_global);
            e.b.emit(Opcode::LoadGlobal, (r << 1) | 1);
        }
    }
    let mut args = 0;
    for local in &plan.locals {
        match local {
            Some(t) => e.build(t)?,
            None => e.b.load_const(vm.ctx.none()),
        }
        args += 1;
    }
    for t in plan.kept.iter().flatten() {
        e.build(t)?;
        args += 1;
    }
    for item in &plan.consumed {
        match item {
            Some(t) => e.build(t)?,
            None => e.b.emit(Opcode::PushNull, 0),
        }
    }
    // What the handler's function takes: the locals and the original's stack up to the
    // handler's depth (its NULLs are not pushed). Under them: the resume function and its NULL.
    let passed = match &plan.handler {
        Some(h) => {
            let kept = plan.kept.get(..h.depth).ok_or_else(|| {
                Unsupported::new(
                    Kind::Internal,
                    "the handler's stack is deeper than the break's",
                )
            })?;
            Some(plan.locals.len() + kept.iter().flatten().count())
        }
        None => None,
    };
    e.store_cells(&templating.cell_stores)?;
    let x = &plan.replayed;
    e.b.position = x.position;
    e.b.emit(x.op, x.arg);
    e.b.position = position;
    let pad = e.b.new_label();
    if let (Some(h), Some(passed)) = (&plan.handler, passed) {
        let handler = Handler {
            target: 0,
            depth: (2 + passed) as u32,
            push_lasti: h.push_lasti,
        };
        e.b.set_handler(handler, pad);
    }
    args += plan.pushed.iter().filter(|null| !**null).count();
    e.b.emit(Opcode::Call, args as u32);
    e.b.emit(Opcode::ReturnValue, 0);
    if let (Some(h), Some(passed)) = (&plan.handler, passed) {
        e.b.place(pad);
        e.landing_pad(h, passed)?;
    }
    generated(e.b.finish())
}
