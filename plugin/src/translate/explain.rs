//! What `symtrace.explain` observes while it runs (the graphs captured and each break, with
//! its reason), and which code objects must translate whole (`compile(fullgraph=True)`): both
//! per thread, switched on around a traced call by `python::compile`.

use std::cell::RefCell;

use rustpython_vm::Py;
use rustpython_vm::builtins::PyCode;

/// What `explain` collects while it runs.
#[derive(Default, Clone, Debug)]
pub struct ExplainLog {
    pub graphs: Vec<CapturedGraph>,
    pub breaks: Vec<BreakRecord>,
    /// Each recompile: the function, and why each of its entries did not fit.
    pub recompiles: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct CapturedGraph {
    pub function: String,
    pub ops: Vec<String>,
    pub guards: Vec<String>,
    pub inlined: Vec<String>,
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct BreakRecord {
    pub function: String,
    pub reason: String,
    /// The kind of the reason (`breaks::reason::Kind::name`).
    pub kind: &'static str,
    /// file:line of the instruction the simulation stopped at.
    pub location: String,
    pub ops_left: Vec<String>,
    pub guards_left: Vec<String>,
    /// Stable identifier of the kind of break (`GB-CALL`, `GB-BRANCH`, `GB-OPCODE`, and
    /// `GB-FRAME` when the whole frame runs as written).
    pub id: String,
    pub hint: String,
    /// The graph before the break was kept and the frame resumed after it (otherwise the
    /// whole frame ran as written).
    pub resumed: bool,
}

thread_local! {
    static EXPLAIN: RefCell<Option<ExplainLog>> = const { RefCell::new(None) };
    /// Code objects that must translate whole (`compile(fullgraph=True)`), innermost last.
    static FULLGRAPH: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

pub fn explain_begin() {
    EXPLAIN.with(|e| *e.borrow_mut() = Some(ExplainLog::default()));
}

pub fn explain_end() -> ExplainLog {
    EXPLAIN.with(|e| e.borrow_mut().take().unwrap_or_default())
}

pub fn push_fullgraph(code: &Py<PyCode>) {
    FULLGRAPH.with(|f| f.borrow_mut().push(code as *const _ as usize));
}

pub fn pop_fullgraph() {
    FULLGRAPH.with(|f| f.borrow_mut().pop());
}

pub fn wants_fullgraph(code: &Py<PyCode>) -> bool {
    FULLGRAPH.with(|f| f.borrow().contains(&(code as *const _ as usize)))
}

/// Add a break to the log of the `explain` under way on this thread, if one is.
pub fn record_break(make: impl FnOnce() -> BreakRecord) {
    EXPLAIN.with(|e| {
        if let Some(log) = e.borrow_mut().as_mut() {
            log.breaks.push(make());
        }
    });
}

/// Add a recompile's reasons to the log of the `explain` under way on this thread, if one is.
pub fn record_recompile(make: impl FnOnce() -> String) {
    EXPLAIN.with(|e| {
        if let Some(log) = e.borrow_mut().as_mut() {
            log.recompiles.push(make());
        }
    });
}

/// Add a captured graph to the log of the `explain` under way on this thread, if one is.
pub fn record_graph(make: impl FnOnce() -> CapturedGraph) {
    EXPLAIN.with(|e| {
        if let Some(log) = e.borrow_mut().as_mut() {
            log.graphs.push(make());
        }
    });
}
