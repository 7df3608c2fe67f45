//! One translation: simulate a frame about to run, and turn what it did into a graph, the
//! guards it relied on, and the replacement code that runs the graph.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use rustpython_vm::builtins::PyCode;
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::{PyObjectRef, PyRef, VirtualMachine};

use super::codegen::{Template, generate};
use super::executor::{SimFrame, Slot};
use super::graph::{Graph, Value};
use super::graph_call::GraphCall;
use super::guard::GuardSet;
use super::recorder;
use super::source::Source;
use super::tracer::{SimResult, Tracer, Unsupported, unsupported};
use super::var::{CellState, Globals, Var, is_literal};
use crate::tensor::python::symtrace::PyTensor;

/// A translated frame, ready to be cached.
pub struct Translation {
    pub guards: GuardSet,
    pub graph: Arc<Graph>,
    /// How the replacement code calls the graph.
    pub call: Arc<GraphCall>,
    /// The replacement code (not yet verified).
    pub code: PyRef<PyCode>,
    pub inlined: Vec<String>,
}

/// Why there is no translation.
pub struct Failure {
    pub why: Unsupported,
    /// Ops and guards the translation held when it stopped (after any rollback).
    pub ops_left: Vec<String>,
    pub guards_left: Vec<String>,
    /// The simulation ended, but there was no graph to run.
    pub empty: bool,
}

/// What a finished simulation gives code generation.
struct Simulated {
    template: Template,
    position: crate::bytecode::Position,
}

/// Translate the frame in `view`. `graph_global` is the name the compiled graph will have in
/// the frame's globals; `keep_empty` generates code even when nothing was captured.
#[allow(clippy::result_large_err)] // a failure is rare and carries what explain reports
pub fn translate(view: &FrameView<'_>, vm: &VirtualMachine, graph_global: &str, keep_empty: bool) -> Result<Translation, Failure> {
    let Some(recording) = recorder::start() else {
        return Err(failure(Unsupported { reason: "a translation is already under way on this thread".into(), location: None }, false));
    };
    let mut tracer = Tracer::new(vm);
    let simulated = simulate(&mut tracer, view);
    let (ops_left, guards_left) = (
        recorder::with(|r| r.graph.nodes.iter().map(|n| n.op.clone()).collect::<Vec<_>>()),
        tracer.guards.iter().map(ToString::to_string).collect::<Vec<_>>(),
    );
    let result = match simulated {
        Ok(r) => r,
        Err(why) => {
            drop(recording);
            return Err(Failure { why, ops_left, guards_left, empty: false });
        }
    };
    let mut graph = recording.finish();
    graph.prune();
    let empty = graph.nodes.is_empty() && graph.outputs.iter().all(|v| !matches!(v, Value::Const(_)));
    if empty && !keep_empty {
        return Err(Failure {
            why: Unsupported { reason: "no tensor operation to capture (empty graph)".into(), location: None },
            ops_left,
            guards_left,
            empty: true,
        });
    }
    let has_graph = !graph.outputs.is_empty();
    let call = GraphCall::new(&tracer.inputs, graph.outputs.len(), vm);
    let code = generate(view.code(), has_graph.then_some((graph_global, &call, graph.outputs.len())), &result.template, result.position, vm)
        .map_err(|e| failure(Unsupported { reason: format!("code generation: {e}"), location: None }, false))?;
    Ok(Translation { guards: GuardSet::new(tracer.guards), graph: Arc::new(graph), call: Arc::new(call), code, inlined: tracer.inlined })
}

fn failure(why: Unsupported, empty: bool) -> Failure {
    Failure { why, ops_left: Vec::new(), guards_left: Vec::new(), empty }
}

fn simulate(tracer: &mut Tracer<'_>, view: &FrameView<'_>) -> SimResult<Simulated> {
    let vm = tracer.vm;
    let code = view.code().to_owned();
    let globals = Globals { dict: view.globals().to_owned(), owner: None };
    let closure = code
        .freevars
        .iter()
        .map(|name| {
            let source = Source::Free(name.as_str().to_owned());
            let value = source.resolve(view, vm).map(|v| Var::Lazy(v, source));
            Rc::new(RefCell::new(CellState { value, existing: true }))
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
    let returned = tracer.run(&mut frame)?;
    let mut outputs: Vec<Value> = Vec::new();
    let mut index: HashMap<Value, usize> = HashMap::new();
    let template = build(tracer, &returned.value, &mut outputs, &mut index)?;
    recorder::with(|r| r.graph.outputs = outputs);
    Ok(Simulated { template, position: returned.position })
}

/// The template of a returned value; tensor outputs are numbered in `outputs`.
fn build(tracer: &mut Tracer<'_>, v: &Var, outputs: &mut Vec<Value>, index: &mut HashMap<Value, usize>) -> SimResult<Template> {
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
        Var::Obj(o) if o.downcast_ref::<PyTensor>().is_some() => {
            // A tensor computed from constants: a new tensor on every call, as eagerly.
            let data = o.downcast_ref::<PyTensor>().expect("tensor").data.read().clone();
            let c = recorder::with(|r| r.graph.constant(data));
            Template::Out(out(c, outputs))
        }
        Var::Tensor(t) => match tracer.value_of(t) {
            Some(Value::Input(i)) => Template::Load(tracer.inputs[i].clone()),
            Some(value) => Template::Out(out(value, outputs)),
            None => return unsupported("returns a tensor the graph does not know"),
        },
        Var::Tuple(items) => Template::Tuple(items.iter().map(|i| build(tracer, i, outputs, index)).collect::<SimResult<_>>()?),
        Var::List(items) => {
            let items = items.borrow().clone();
            Template::List(items.iter().map(|i| build(tracer, i, outputs, index)).collect::<SimResult<_>>()?)
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
        Var::Obj(o) => return unsupported(format!("returns a {} made during the call", class_name(o))),
        other => return unsupported(format!("returns a {}", other.kind())),
    })
}

fn class_name(o: &PyObjectRef) -> String {
    o.class().name().to_string()
}
