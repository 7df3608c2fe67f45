//! A captured graph as a Python callable, `symtrace.CompiledGraph`: what the replacement code
//! calls on every cache hit, with the roots of its inputs (`graph_call`); it returns the lone
//! output itself or the tuple of the outputs.

use std::ops::Deref;
use std::sync::Arc;

use rustpython_vm::builtins::{PyFloat, PyInt};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::types::{Callable, Representable};
use rustpython_vm::{
    AsObject, Py, PyObject, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass,
};
use smallvec::SmallVec;

use crate::graph::Graph;
use crate::tensor::{PyTensor, Scalar, TensorData};
use crate::translate::graph_call::GraphCall;
use crate::translate::view_outputs::ViewBase;

#[pyclass(module = "symtrace", name = "CompiledGraph")]
#[derive(Debug, PyPayload)]
pub struct CompiledGraph {
    pub graph: Arc<Graph>,
    pub call: Arc<GraphCall>,
    /// Whether the graph draws random numbers (the generator's state is put back if it
    /// raises).
    pub draws: bool,
    /// Called by replacement code, which tests for [`CompiledGraph::as_written`]: an error
    /// of the graph's ops returns it rather than raising.
    pub in_replacement: bool,
}

#[pyclass(with(Callable, Representable))]
impl CompiledGraph {
    #[pygetset]
    fn code(zelf: &Py<Self>) -> String {
        zelf.graph.to_string()
    }

    /// Replacement code calls its graph on every cache hit: the vectorcall slot takes the
    /// arguments as they are, without building `FuncArgs`.
    #[extend_class]
    fn extend_class(_ctx: &rustpython_vm::Context, class: &Py<rustpython_vm::builtins::PyType>) {
        class
            .slots
            .vectorcall
            .store(Some(|zelf, args, nargs, kwnames, vm| {
                let zelf = zelf
                    .downcast_ref::<CompiledGraph>()
                    .expect("the slot of CompiledGraph");
                if kwnames.is_some_and(|k| !k.is_empty()) {
                    return Err(
                        vm.new_type_error("a compiled graph takes no keyword arguments".to_owned())
                    );
                }
                zelf.run(&args[..nargs], vm)
            }));
    }

    /// The graph's result. Where it raises (an index out of range, found only in the data),
    /// the replacement has done nothing yet that the program could see: it returns
    /// [`CompiledGraph::as_written`], and the frame runs as written, raising where and after
    /// what the program does (side effects before the failing op, which the replacement
    /// replays only after the graph).
    fn run(&self, roots: &[PyObjectRef], vm: &VirtualMachine) -> PyResult {
        if !self.in_replacement {
            return run_graph(&self.graph, &self.call, roots, vm);
        }
        let rng = self.draws.then(crate::tensor::random::state);
        let mut held = SmallVec::new();
        let objects = self.call.gather(roots, &mut held, vm)?;
        run_on_inputs_or(&self.graph, &self.call, &objects, vm, |e| {
            if let Some(state) = rng {
                crate::tensor::random::restore(state);
            }
            log::info!(target: crate::log_targets::GRAPH_BREAKS, "a compiled graph raised {} at run time: the frame runs as written", e.class().name());
            Ok(Self::as_written(vm))
        })
    }

    /// A graph as a callable that raises what its ops raise.
    pub fn new(graph: Arc<Graph>, call: Arc<GraphCall>) -> Self {
        let draws = graph
            .nodes
            .iter()
            .any(|n| crate::tensor::registry().draws(&n.op));
        CompiledGraph {
            graph,
            call,
            draws,
            in_replacement: false,
        }
    }

    /// A graph for replacement code to call (see `in_replacement`).
    pub fn for_replacement(graph: Arc<Graph>, call: Arc<GraphCall>) -> Self {
        CompiledGraph {
            in_replacement: true,
            ..Self::new(graph, call)
        }
    }

    /// What a graph call returns, and its replacement then returns, for the frame to run as
    /// written (`EvalFrameHook::runs_as_written`): the class itself, which no graph returns.
    pub fn as_written(vm: &VirtualMachine) -> PyObjectRef {
        Self::class(&vm.ctx).to_owned().into()
    }

    /// Whether `result` is [`CompiledGraph::as_written`]: never before the class exists (no
    /// graph was made in this process).
    pub fn is_as_written(result: &PyObject) -> bool {
        use rustpython_vm::class::StaticType;
        Self::static_cell()
            .get()
            .is_some_and(|class| result.is(class.as_object()))
    }
}

/// Run `graph` on the inputs under `roots` (what the replacement code passes, or what the
/// cache passes straight from the frame when it returns the graph's result itself,
/// `translate::direct_call`): its lone output, or the tuple of its outputs.
pub fn run_graph<R: Deref<Target = PyObject>>(
    graph: &Graph,
    call: &GraphCall,
    roots: &[R],
    vm: &VirtualMachine,
) -> PyResult {
    let mut held = SmallVec::new();
    let objects = call.gather(roots, &mut held, vm)?;
    run_on_inputs(graph, call, &objects, vm)
}

/// Run `graph` on its input objects (tensors, and numbers for its number inputs): its lone
/// output, or (`call.returns_tuple`) the tuple of its outputs.
pub fn run_on_inputs(
    graph: &Graph,
    call: &GraphCall,
    objects: &[&PyObject],
    vm: &VirtualMachine,
) -> PyResult {
    run_on_inputs_or(graph, call, objects, vm, Err)
}

/// [`run_on_inputs`], with what an error of the graph's own ops (not of its inputs) becomes.
fn run_on_inputs_or(
    graph: &Graph,
    call: &GraphCall,
    objects: &[&PyObject],
    vm: &VirtualMachine,
    failed: impl FnOnce(rustpython_vm::builtins::PyBaseExceptionRef) -> PyResult,
) -> PyResult {
    if objects.len() != graph.inputs.len() {
        return Err(vm.new_type_error(format!(
            "a compiled graph takes {} inputs, got {}",
            graph.inputs.len(),
            objects.len()
        )));
    }
    // Plain loops rather than collecting `Result`s: this runs on every cache hit.
    let mut locks: SmallVec<[_; 8]> = SmallVec::with_capacity(objects.len());
    // Numbers that are graph inputs, made into the 0-d tensors the graph takes.
    let mut numbers: SmallVec<[TensorData; 2]> = SmallVec::new();
    // Whether every input is known to fit without reading its shape: a number is made for
    // its input's meta, and a tensor the guards have just checked remembers its meta's number.
    let ids = (!graph.dynamic).then(|| graph.input_meta_ids());
    let mut known = ids.is_some();
    for (i, o) in objects.iter().enumerate() {
        match o.downcast_ref::<PyTensor>() {
            Some(t) => {
                locks.push(Some(t.read()));
                known = known && ids.is_some_and(|ids| t.remembers_meta(ids[i]));
            }
            None => {
                numbers.push(number_input(graph, i, o, vm)?);
                locks.push(None);
            }
        }
    }
    let mut refs: SmallVec<[&TensorData; 8]> = SmallVec::with_capacity(locks.len());
    let mut next_number = numbers.iter();
    for lock in &locks {
        match lock {
            Some(l) => refs.push(&**l),
            None => refs.push(next_number.next().expect("one per number input")),
        }
    }
    let outs = match crate::tensor::registry::guarded("a compiled graph", || {
        if known {
            graph.run_checked(&refs)
        } else {
            graph.run(&refs)
        }
    }) {
        Ok(outs) => outs,
        Err(e) => return failed(e.into_exception(vm)),
    };
    if !call.output_views.is_empty() {
        let outs: Vec<TensorData> = outs.into_iter().collect();
        let steps = call.output_views.iter().map(|v| {
            let base = match v.base {
                ViewBase::Input(i) => refs[i],
                ViewBase::Output(j) => &outs[j],
            };
            v.steps_for(&refs, &outs, base)
        });
        let steps: Option<Vec<_>> = steps.collect();
        drop(refs);
        drop(locks);
        let Some(steps) = steps else {
            return Err(vm.new_runtime_error(
                "a compiled graph: the views among its outputs cannot be worked out for this call"
                    .to_owned(),
            ));
        };
        let items = with_views(outs, &steps, call, objects, vm);
        return Ok(match (call.returns_tuple, items.len()) {
            (false, 1) => items.into_iter().next().expect("one output"),
            _ => vm.ctx.new_tuple(items).into(),
        });
    }
    drop(refs);
    drop(locks);
    let mut items = outs.into_iter().enumerate().map(|(k, d)| {
        let t = PyTensor::new(d);
        if call.marked_outputs.contains(&k) {
            t.set_requires_grad_flag(true);
        }
        t.into_pyobject(vm)
    });
    if !call.returns_tuple
        && let Some(only) = items.next()
    {
        return Ok(only);
    }
    Ok(vm.ctx.new_tuple(items.collect()).into())
}

/// The outputs made of `outs`, those the program holds as views made views of the input or
/// output whose elements they are (`view_outputs`): the others first, as they may be bases.
fn with_views(
    outs: Vec<TensorData>,
    steps: &[Vec<(&'static str, crate::tensor::Attrs)>],
    call: &GraphCall,
    objects: &[&PyObject],
    vm: &VirtualMachine,
) -> Vec<rustpython_vm::PyObjectRef> {
    use crate::tensor::view_link::ViewLink;
    let mut data: Vec<Option<TensorData>> = outs.into_iter().map(Some).collect();
    let mut made: Vec<Option<rustpython_vm::PyRef<PyTensor>>> = vec![None; data.len()];
    let is_view = |k: usize| call.output_views.iter().any(|v| v.output == k);
    for (k, slot) in made.iter_mut().enumerate() {
        if !is_view(k) {
            let d = data[k].take().expect("each output once");
            *slot = Some(PyTensor::new(d).into_ref(&vm.ctx));
        }
    }
    for (v, steps) in call.output_views.iter().zip(steps) {
        let base = match v.base {
            ViewBase::Input(i) => objects[i].to_owned().downcast::<PyTensor>().ok(),
            ViewBase::Output(j) => made[j].clone(),
        };
        let Some(d) = data[v.output].take() else {
            continue;
        };
        let t = match base {
            Some(base) => PyTensor::with_link(d, ViewLink::with_steps(&base, steps)),
            None => PyTensor::new(d),
        };
        made[v.output] = Some(t.into_ref(&vm.ctx));
    }
    made.into_iter()
        .enumerate()
        .map(|(k, t)| {
            let t = t.expect("every output made");
            if call.marked_outputs.contains(&k) {
                t.set_requires_grad_flag(true);
            }
            t.into()
        })
        .collect()
}

/// Input `i`, a Python number, as the 0-d tensor the graph takes: converted to the input's
/// dtype as eager arithmetic converts a number next to a tensor.
fn number_input(
    graph: &Graph,
    i: usize,
    o: &PyObject,
    vm: &VirtualMachine,
) -> PyResult<TensorData> {
    let meta = &graph.inputs[i];
    let scalar = if let Some(f) = o.downcast_ref::<PyFloat>() {
        Scalar::Float(f.to_f64())
    } else if let Some(n) = o.downcast_ref::<PyInt>() {
        Scalar::Int(
            n.try_to_primitive::<i64>(vm)
                .map_err(|_| vm.new_overflow_error("Python int too large for int64"))?,
        )
    } else {
        return Err(vm.new_type_error(format!(
            "a compiled graph takes tensors and numbers, not {}",
            o.class().name()
        )));
    };
    if !meta.shape.is_empty() {
        return Err(vm.new_type_error(format!(
            "input {i} of a compiled graph is a tensor of shape {:?}, not a number",
            meta.shape
        )));
    }
    Ok(TensorData::full(&[], scalar, meta.dtype))
}

impl Callable for CompiledGraph {
    type Args = FuncArgs;
    fn call(zelf: &Py<Self>, args: Self::Args, vm: &VirtualMachine) -> PyResult {
        if !args.kwargs.is_empty() {
            return Err(vm.new_type_error("a compiled graph takes no keyword arguments".to_owned()));
        }
        zelf.run(&args.args, vm)
    }
}

impl Representable for CompiledGraph {
    fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
        Ok(format!(
            "<symtrace.CompiledGraph: {} inputs, {} nodes, {} outputs>",
            zelf.graph.inputs.len(),
            zelf.graph.nodes.len(),
            zelf.graph.outputs.len()
        ))
    }
}
