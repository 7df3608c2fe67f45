//! One cached translation of a code object: the replacement, its graph and guards; whether a
//! call fits it; how a translation becomes one (verified, its graph published).

use std::sync::Arc;

use rustpython_vm::builtins::{PyCode, PyDict};
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::{AsObject, Py, PyPayload, PyRef, VirtualMachine};

use crate::bytecode::verify;
use crate::graph::Graph;
use crate::translate::convert_frame::Failure;
use crate::translate::direct_call::DirectCall;
use crate::translate::explain::{self, BreakRecord, CapturedGraph};
use crate::translate::guards::guard::{Check, Guard, GuardSet};
use crate::translate::guards::program::GuardReads;
use crate::translate::source::Source;
use crate::translate::state::{Kind, Unsupported};

/// The most entries one code object keeps, over all the buckets of `in_bucket_of`.
pub const MAX_ENTRIES: usize = 64;

/// How many of `entries` count against the recompile limit for this call. A method shared by
/// many classes (`Module.__call__`, a base class's `forward`) keeps one bucket per class of
/// `self`, as TorchDynamo counts recompiles per `ID_MATCH` bucket: the shapes one module class
/// is called with do not use up the entries another class's calls would make. An entry that
/// does not check the class of `self` is in every bucket. Other functions keep one bucket (a
/// function called with many types translates at most the limit's number of times).
pub fn in_bucket_of(entries: &[Entry], frame: &FrameView<'_>) -> usize {
    sets_in_bucket_of(entries.iter().map(|e| &e.guards), frame)
}

/// Of guard sets (an entry's, or a failed translation's), those in the bucket of `frame`.
pub fn sets_in_bucket_of<'a>(
    sets: impl ExactSizeIterator<Item = &'a GuardSet>,
    frame: &FrameView<'_>,
) -> usize {
    // A code object with an argument has its first local.
    if frame.code().arg_count == 0 || frame.local_name(0).as_str() != "self" {
        return sets.len();
    }
    let Some(first) = frame.local_ref(0) else {
        return sets.len();
    };
    let other_class = |g: &Guard| {
        matches!(&g.source, Source::Local(n) if n == "self")
            && matches!(&g.check, Check::TypeIs(t) if !t.is(first.class().as_object()))
    };
    sets.filter(|s| !s.guards.iter().any(other_class)).count()
}

/// One cached translation.
pub struct Entry {
    pub guards: GuardSet,
    pub code: PyRef<PyCode>,
    pub graph: Arc<Graph>,
    /// How the replacement passes the graph its inputs (read again to check a dynamic graph's
    /// shapes).
    pub call: Arc<crate::translate::graph_call::GraphCall>,
    /// How the hook returns the graph's result itself, when the replacement would only call
    /// the graph and return its result.
    pub direct: Option<Arc<DirectCall>>,
    /// The code of the function its break resumes in, when it captured nothing before it.
    resumes_after_nothing: Option<PyRef<PyCode>>,
}

impl Entry {
    /// Whether the call fits: its guards hold, and a dynamic graph's shapes fit its inputs.
    /// What the guards read is left in `reads`.
    pub(super) fn fits<'f>(
        &self,
        frame: &FrameView<'f>,
        vm: &VirtualMachine,
        reads: &mut GuardReads<'f>,
    ) -> Result<(), Miss> {
        self.guards
            .check_reading(frame, vm, reads)
            .map_err(|g| g.cloned().map_or(Miss::GuardsChanged, Miss::Guard))?;
        if self.graph.dynamic {
            self.shapes_fit(frame, vm).map_err(Miss::Shapes)?;
        }
        Ok(())
    }

    /// Whether it breaks where nothing was captured, into a resume function that has since
    /// been skipped for capturing nothing either: it only adds a frame and a call.
    pub(super) fn breaks_for_nothing(&self) -> bool {
        self.resumes_after_nothing
            .as_ref()
            .is_some_and(|r| r.eval_hook_skipped())
    }

    fn shapes_fit(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> Result<(), String> {
        let unreadable = || "its graph's inputs cannot be read".to_owned();
        // What the replacement reads by a call it makes first is not there yet: a tensor of
        // the recorded meta, which the graph checks when it runs (`None` below stands for it).
        let Some(roots) = self
            .call
            .roots
            .iter()
            .map(|s| match s.has_draw() {
                true => Some(vm.ctx.none()),
                false => s.resolve(frame, vm),
            })
            .collect::<Option<Vec<_>>>()
        else {
            return Err(unreadable());
        };
        let mut held = smallvec::SmallVec::new();
        let Ok(objects) = self.call.gather(&roots, &mut held, vm) else {
            return Err(unreadable());
        };
        let mut metas = Vec::with_capacity(objects.len());
        let mut items = Vec::with_capacity(objects.len());
        for (o, want) in objects.iter().zip(&self.graph.inputs) {
            match o.downcast_ref::<crate::tensor::PyTensor>() {
                Some(t) => metas.push(crate::tensor::Meta::of(&t.read())),
                None => metas.push(want.clone()),
            }
            // An int of the frame's given as a number: sizes may be computed from it.
            items.push(
                o.downcast_ref::<rustpython_vm::builtins::PyInt>()
                    .and_then(|i| i.try_to_primitive::<i64>(vm).ok()),
            );
        }
        crate::graph::dynamic::fits(&self.graph, &metas, &items)
    }
}

/// Why an entry did not fit a call.
pub(super) enum Miss {
    /// The guard that failed.
    Guard(crate::translate::guards::guard::Guard),
    /// The guards changed while they were checked.
    GuardsChanged,
    /// Its graph is dynamic, and these sizes do not fit it: why.
    Shapes(String),
}

impl Entry {
    /// Verify the translation's code and publish its graph under `name` in the frame's globals.
    #[allow(clippy::result_large_err)]
    pub(super) fn install(
        t: crate::translate::convert_frame::Translation,
        frame: &FrameView<'_>,
        name: &str,
        vm: &VirtualMachine,
    ) -> Result<Entry, Failure> {
        let fail = |message: String| Failure {
            why: Unsupported::new(Kind::Internal, message),
            ops_left: Vec::new(),
            guards: Vec::new(),
            empty: false,
            top_steps: 0,
            tensorless: false,
        };
        verify(&t.code).map_err(|e| {
            fail(format!(
                "the generated code was rejected by the verifier: {e}"
            ))
        })?;
        if log::log_enabled!(target: crate::log_targets::BYTECODE, log::Level::Debug) {
            log::debug!(target: crate::log_targets::BYTECODE, "{}: original | replacement\n{}", super::cache::describe(frame.code()), crate::bytecode::dis::side_by_side(frame.code(), &t.code));
        }
        if !t.graph.outputs.is_empty() {
            let callable = super::CompiledGraph::for_replacement(t.graph.clone(), t.call.clone())
                .into_pyobject(vm);
            let globals: &Py<PyDict> = frame.globals();
            globals
                .set_item(name, callable, vm)
                .map_err(|_| fail("cannot store the compiled graph in the globals".into()))?;
        }
        if let Some(b) = &t.graph_break {
            let location = b.reason.location.as_ref().map_or_else(
                || super::cache::describe(frame.code()),
                |l| format!("{}:{}", l.file, l.line),
            );
            let resumes = match b.kind {
                super::breaks::BreakKind::BeforeLoop => "resumes at the loop's head",
                _ => "resumes after it",
            };
            log::info!(target: crate::log_targets::GRAPH_BREAKS, "{}: graph break [{}] at {location}: {}; {resumes} (hint: {})", frame.code().qualname.as_str(), b.kind.id(), b.reason.message, b.kind.hint());
            explain::record_break(|| BreakRecord {
                function: frame.code().qualname.as_str().to_owned(),
                reason: b.reason.message.clone(),
                kind: b.reason.kind.name(),
                location,
                ops_left: t.graph.nodes.iter().map(|n| n.op.clone()).collect(),
                guards_left: t.guards.guards.iter().map(ToString::to_string).collect(),
                id: b.kind.id().to_owned(),
                hint: b.kind.hint().to_owned(),
                resumed: true,
            });
        }
        // A translation without tensor work (trace_all) is not a graph.
        if !t.graph.outputs.is_empty() {
            explain::record_graph(|| CapturedGraph {
                function: frame.code().qualname.as_str().to_owned(),
                ops: t.graph.nodes.iter().map(|n| n.op.clone()).collect(),
                guards: t
                    .guards
                    .guards
                    .iter()
                    .map(ToString::to_string)
                    .chain(t.graph.checks.iter().map(|c| format!("size check: {c}")))
                    .collect(),
                inlined: t.inlined.clone(),
                text: t.graph.to_string(),
            });
        }
        let direct = t
            .returns_graph_result
            .then(|| DirectCall::new(&t.graph, &t.call, &t.code, frame.code(), vm))
            .flatten()
            .map(Arc::new);
        let resumes_after_nothing = t.graph_break.and_then(|b| b.after_nothing);
        let mut guards = t.guards;
        guards.weaken(vm);
        Ok(Entry {
            guards,
            code: t.code,
            graph: t.graph,
            call: t.call,
            direct,
            resumes_after_nothing,
        })
    }
}
