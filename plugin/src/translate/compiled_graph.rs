//! A captured graph as a Python callable, `symtrace.CompiledGraph`: what the replacement code
//! calls on every cache hit, with the roots of its inputs (`graph_call`); it returns the lone
//! output itself or the tuple of the outputs.

use std::sync::Arc;

use rustpython_vm::function::FuncArgs;
use rustpython_vm::types::{Callable, Representable};
use rustpython_vm::{Py, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};
use smallvec::SmallVec;

use crate::graph::Graph;
use crate::tensor::{PyTensor, TensorData};
use crate::translate::graph_call::GraphCall;

#[pyclass(module = "symtrace", name = "CompiledGraph")]
#[derive(Debug, PyPayload)]
pub struct CompiledGraph {
    pub graph: Arc<Graph>,
    pub call: Arc<GraphCall>,
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

    fn run(&self, roots: &[PyObjectRef], vm: &VirtualMachine) -> PyResult {
        let mut held = SmallVec::new();
        let objects = self
            .call
            .gather(roots, &mut held, vm)
            .map_err(|e| vm.new_type_error(format!("a compiled graph: {e}")))?;
        // Plain loops rather than collecting `Result`s: this runs on every cache hit.
        let mut locks: SmallVec<[_; 8]> = SmallVec::with_capacity(objects.len());
        for o in &objects {
            match o.downcast_ref::<PyTensor>() {
                Some(t) => locks.push(t.read()),
                None => {
                    return Err(vm.new_type_error(format!(
                        "a compiled graph takes tensors, not {}",
                        o.class().name()
                    )));
                }
            }
        }
        let mut refs: SmallVec<[&TensorData; 8]> = SmallVec::with_capacity(locks.len());
        for lock in &locks {
            refs.push(&**lock);
        }
        let outs = crate::tensor::registry::guarded("a compiled graph", || self.graph.run(&refs))
            .map_err(|e| e.into_exception(vm))?;
        drop(refs);
        drop(locks);
        let mut items = outs.into_iter().map(|d| PyTensor::new(d).into_pyobject(vm));
        if !self.call.returns_tuple
            && let Some(only) = items.next()
        {
            return Ok(only);
        }
        Ok(vm.ctx.new_tuple(items.collect()).into())
    }
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
