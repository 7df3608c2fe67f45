//! What `symtrace.explain` returns: the graphs a call captured, their ops and guards, and
//! each graph break with its reason, location and hint; printed as TorchDynamo prints its
//! `ExplainOutput`.

use rustpython_vm::types::Representable;
use rustpython_vm::{Py, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};

use crate::translate::explain::ExplainLog;

#[pyclass(module = "symtrace", name = "ExplainOutput")]
#[derive(Debug, PyPayload)]
pub struct PyExplainOutput {
    pub(super) log: ExplainLog,
}

#[pyclass(with(Representable))]
impl PyExplainOutput {
    #[pygetset]
    fn graph_count(zelf: &Py<Self>) -> usize {
        zelf.log.graphs.len()
    }
    #[pygetset]
    fn graph_break_count(zelf: &Py<Self>) -> usize {
        zelf.log.breaks.len()
    }
    #[pygetset]
    fn op_count(zelf: &Py<Self>) -> usize {
        zelf.log.graphs.iter().map(|g| g.ops.len()).sum()
    }
    #[pygetset]
    fn ops_per_graph(zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
        let strs = |v: &[String]| -> PyObjectRef {
            vm.ctx
                .new_list(
                    v.iter()
                        .map(|s| vm.ctx.new_str(s.as_str()).into())
                        .collect(),
                )
                .into()
        };
        vm.ctx
            .new_list(zelf.log.graphs.iter().map(|g| strs(&g.ops)).collect())
            .into()
    }
    #[pygetset]
    fn out_guards(zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
        vm.ctx
            .new_list(
                zelf.log
                    .graphs
                    .iter()
                    .flat_map(|g| g.guards.iter())
                    .map(|s| vm.ctx.new_str(s.as_str()).into())
                    .collect(),
            )
            .into()
    }
    #[pygetset]
    fn graphs(zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
        vm.ctx
            .new_list(
                zelf.log
                    .graphs
                    .iter()
                    .map(|g| vm.ctx.new_str(g.text.as_str()).into())
                    .collect(),
            )
            .into()
    }
    #[pygetset]
    fn inlined(zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
        vm.ctx
            .new_list(
                zelf.log
                    .graphs
                    .iter()
                    .flat_map(|g| g.inlined.iter())
                    .map(|s| vm.ctx.new_str(s.as_str()).into())
                    .collect(),
            )
            .into()
    }
    /// Each recompile during the call: the function, and why each of its entries did not fit
    /// (the guard that failed, with what it expected and what it saw).
    #[pygetset]
    fn recompile_reasons(zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
        vm.ctx
            .new_list(
                zelf.log
                    .recompiles
                    .iter()
                    .map(|r| vm.ctx.new_str(r.as_str()).into())
                    .collect(),
            )
            .into()
    }

    /// Each a dict: reason, location (file:line), function, and the ops and guards the
    /// translation still held when it gave up (after rolling back any inlined call).
    #[pygetset]
    fn break_reasons(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
        let strs = |v: &[String]| -> PyObjectRef {
            vm.ctx
                .new_list(
                    v.iter()
                        .map(|s| vm.ctx.new_str(s.as_str()).into())
                        .collect(),
                )
                .into()
        };
        let mut out = Vec::new();
        for b in &zelf.log.breaks {
            let d = vm.ctx.new_dict();
            d.set_item("reason", vm.ctx.new_str(b.reason.as_str()).into(), vm)?;
            d.set_item("location", vm.ctx.new_str(b.location.as_str()).into(), vm)?;
            d.set_item("function", vm.ctx.new_str(b.function.as_str()).into(), vm)?;
            d.set_item("ops_left", strs(&b.ops_left), vm)?;
            d.set_item("guards_left", strs(&b.guards_left), vm)?;
            d.set_item("id", vm.ctx.new_str(b.id.as_str()).into(), vm)?;
            d.set_item("hint", vm.ctx.new_str(b.hint.as_str()).into(), vm)?;
            d.set_item("resumed", vm.ctx.new_bool(b.resumed).into(), vm)?;
            d.set_item("kind", vm.ctx.new_str(b.kind).into(), vm)?;
            out.push(d.into());
        }
        Ok(vm.ctx.new_list(out).into())
    }
    #[pymethod]
    fn __str__(zelf: &Py<Self>) -> String {
        explain_text(&zelf.log)
    }
}

impl Representable for PyExplainOutput {
    fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
        Ok(format!(
            "<symtrace.ExplainOutput: {} graphs, {} breaks>",
            zelf.log.graphs.len(),
            zelf.log.breaks.len()
        ))
    }
}

/// The readable form of an explanation, after TorchDynamo's `ExplainOutput.__str__`.
pub fn explain_text(log: &ExplainLog) -> String {
    let mut s = format!(
        "Graph Count: {}\nGraph Break Count: {}\nOp Count: {}\n",
        log.graphs.len(),
        log.breaks.len(),
        log.graphs.iter().map(|g| g.ops.len()).sum::<usize>()
    );
    s.push_str("Break Reasons:\n");
    for (i, b) in log.breaks.iter().enumerate() {
        s.push_str(&format!(
            "  Break Reason {}:\n    Reason: [{}] {}\n    User Stack: {} in {}\n    Hint: {}\n",
            i + 1,
            b.id,
            b.reason,
            b.location,
            b.function,
            b.hint
        ));
    }
    s.push_str("Ops per Graph:\n");
    for (i, g) in log.graphs.iter().enumerate() {
        s.push_str(&format!("  Ops {} ({}):\n", i + 1, g.function));
        for op in &g.ops {
            s.push_str(&format!("    {op}\n"));
        }
    }
    s.push_str("Out Guards:\n");
    for g in &log.graphs {
        for guard in &g.guards {
            s.push_str(&format!("  {guard}\n"));
        }
    }
    s
}
