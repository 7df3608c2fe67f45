//! A cache hit whose replacement code would only call the graph and return what it returns
//! (`codegen::returns_graph_result`): the hook runs the graph itself and hands the VM the
//! frame's result (`FrameAction::Return`), so no replacement frame is made, filled by name, run
//! through its five instructions and released. On the tiny forward passes of
//! `benches/translate.py` that frame was about a tenth of a cache hit.
//!
//! The result is exactly what the replacement frame would return: the graph reads the same
//! roots, found as the replacement's loads find them. A call is direct only when every root is
//! a plain local slot of the frame (an argument: a frame's other locals are unbound when it
//! starts; `LOAD_FAST`) or a global (`LOAD_GLOBAL`, which the guards have found in the
//! globals). Below the roots the graph reads what the guards have just read: items, keys,
//! instance dictionaries, and attributes guarded to be instance-dictionary entries of a class
//! guarded unchanged, so no Python code runs.
//!
//! The inputs themselves are, where they can be, the values the guards have just read
//! (`GuardReads`): each is a node of the guard program, so the graph reads nothing again. An
//! input whose node's value the program itself keeps alive (an object the guards compare with)
//! is read from the roots instead, after the entry's lock is let go.
//!
//! When the graph fails (an error in a kernel, a number too large for its input), the frame
//! runs as written instead: the graph is pure (a random op or any other side effect ends a
//! graph) and so are the reads, so nothing observable has happened yet, and the original code
//! raises what the program raises without the plugin, from the instruction that raises it (a
//! traceback shows the same entry, down to the caret under `x * n`), or, where the graph
//! failed and the program would not have, computes the program's own result.

use std::sync::{Arc, OnceLock};

use rustpython_vm::builtins::{PyCode, PyStrInterned};
use rustpython_vm::bytecode::{CO_FAST_CELL, CO_FAST_FREE};
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyRef, VirtualMachine};
use smallvec::SmallVec;

use crate::graph::Graph;
use crate::translate::compiled_graph::{run_graph, run_on_inputs};
use crate::translate::graph_call::GraphCall;
use crate::translate::guards::program::{GuardProgram, GuardReads};
use crate::translate::source::Source;

pub struct DirectCall {
    graph: Arc<Graph>,
    call: Arc<GraphCall>,
    /// The entry's replacement code, run when a root is unbound (`Instead::Replacement`): held
    /// here so that a hit takes no reference to it otherwise.
    pub replacement: PyRef<PyCode>,
    roots: SmallVec<[Root; 4]>,
    /// Per graph input, the guard program's node that reads it (`None`: one has none that
    /// outlives the program), found on the first hit.
    input_nodes: OnceLock<Option<SmallVec<[usize; 8]>>>,
}

/// What runs when a direct call gives no result.
#[derive(Debug, PartialEq, Eq)]
pub enum Instead {
    /// The replacement frame: a root was unbound, which its loads report as the original's do.
    Replacement,
    /// The original code: the graph failed (see the module's comment).
    Original,
}

/// Where a root is read from.
enum Root {
    /// A slot of the original frame.
    Slot(usize),
    /// An entry of the frame's globals.
    Global(&'static PyStrInterned),
}

impl DirectCall {
    /// The direct call of a translation of `code` whose replacement (`replacement`) only calls
    /// its graph and returns the graph's result, if its inputs allow one (see the module's
    /// comment).
    pub fn new(
        graph: &Arc<Graph>,
        call: &Arc<GraphCall>,
        replacement: &PyRef<PyCode>,
        code: &PyCode,
        vm: &VirtualMachine,
    ) -> Option<Self> {
        let names = code.localsplus_names();
        let roots = call
            .roots
            .iter()
            .map(|root| match root {
                Source::Local(name) => names
                    .iter()
                    .position(|n| n.as_str() == name)
                    .filter(|&i| code.localspluskinds[i] & (CO_FAST_CELL | CO_FAST_FREE) == 0)
                    .map(Root::Slot),
                Source::Global(name) => Some(Root::Global(vm.ctx.intern_str(name.as_str()))),
                _ => None,
            })
            .collect::<Option<_>>()?;
        Some(DirectCall {
            graph: graph.clone(),
            call: call.clone(),
            replacement: replacement.clone(),
            roots,
            input_nodes: OnceLock::new(),
        })
    }

    /// The graph's inputs as the entry's guards, which hold, have just read them into
    /// `reads` with `program`; `None` when one has no node or was not read.
    pub fn inputs<'r>(
        &self,
        program: &GuardProgram,
        reads: &'r GuardReads<'_>,
    ) -> Option<SmallVec<[&'r PyObject; 8]>> {
        let nodes = self.input_nodes.get_or_init(|| {
            self.call
                .sources
                .iter()
                .map(|s| program.input_node(s))
                .collect()
        });
        nodes
            .as_ref()?
            .iter()
            // SAFETY: `input_node` gives only anchored nodes, whose values outlive the program.
            .map(|&n| unsafe { reads.get(n) })
            .collect()
    }

    /// The frame's result, or what runs instead. `inputs`: the graph's inputs as the guards
    /// read them, if known (`inputs`); otherwise they are read from the roots.
    pub fn run(
        &self,
        frame: &FrameView<'_>,
        inputs: Option<&[&PyObject]>,
        vm: &VirtualMachine,
    ) -> Result<PyObjectRef, Instead> {
        let result = match inputs {
            Some(inputs) => run_on_inputs(&self.graph, &self.call, inputs, vm),
            None => self.run_from_roots(frame, vm).ok_or(Instead::Replacement)?,
        };
        result.map_err(|e| {
            log::debug!(target: crate::log_targets::GRAPH, "{}: the graph failed ({}); the frame runs as written", frame.describe(), e.as_object().class().name());
            Instead::Original
        })
    }

    /// The graph run on the inputs under its roots; `None` when a root is unbound.
    fn run_from_roots(
        &self,
        frame: &FrameView<'_>,
        vm: &VirtualMachine,
    ) -> Option<rustpython_vm::PyResult> {
        let mut globals: SmallVec<[PyObjectRef; 2]> = SmallVec::new();
        for root in &self.roots {
            if let Root::Global(name) = root {
                globals.push(frame.globals().get_item_opt(*name, vm).ok().flatten()?);
            }
        }
        let mut next_global = globals.iter();
        let roots = self
            .roots
            .iter()
            .map(|root| match root {
                Root::Slot(i) => frame.local_ref(*i),
                Root::Global(_) => next_global.next().map(|g| &**g),
            })
            .collect::<Option<SmallVec<[&PyObject; 4]>>>()?;
        Some(run_graph(&self.graph, &self.call, &roots, vm))
    }
}
