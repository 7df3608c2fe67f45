//! Graph breaks: where the simulation of a frame stops at an instruction it cannot simulate,
//! the graph captured so far is kept. The replacement code runs that graph, rebuilds the
//! frame's state (its stack and its locals) from the graph's outputs, runs the breaking
//! instruction for real, and calls a *resume function*: a code object made from the original
//! that takes the state as arguments, puts it back (locals in their slots, the stack pushed,
//! NULLs of the call protocol re-made) and jumps to the instruction after the break. The
//! resume function is an ordinary function to the hook: it is translated in turn when called,
//! and made once per (code, break point, state shape), so that later calls reuse its cache
//! (`resume`).
//!
//! A break is taken only where it keeps tensor work; elsewhere the frame runs as written, as
//! before. An instruction inside a loop is not broken here (resuming there would nest a call
//! per iteration): `loop_split` splits the loop instead. In a frame with cells or free
//! variables every function made from it (resume, handler, loop body and driver) is a
//! closure over the frame's cells (`closure_cells`).
//!
//! Under an exception handler (a `try` or `with` block), the resume function keeps the
//! original's exception table, so what follows the break is covered as written; the breaking
//! instruction itself gets a landing pad in the replacement, which passes the exception and
//! the handler's stack to a *handler function*: the original from the handler's first
//! instruction, run as written (the hook skips it), so `except` clauses match, `finally`
//! blocks run and `__exit__` sees the exception as they would have.

pub mod closure_cells;
pub mod loop_code;
pub mod loop_split;
pub mod reason;
pub mod resume;

use rustpython_vm::PyRef;
use rustpython_vm::builtins::PyCode;
use rustpython_vm::bytecode::Opcode;
use rustpython_vm::bytecode::oparg::COMPARE_OP_BOOL_MASK;

use crate::bytecode::Instr;
use crate::bytecode::analysis::{Loop, innermost};
use crate::bytecode::opcodes::opcode_name;
use crate::translate::state::{Kind, Location, Unsupported};

pub use resume::{ResumeCache, ResumeShape};

/// What kind of instruction a break happened at: a stable identifier for logs, `explain` and
/// the user's searches, and a hint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakKind {
    /// A call the translator cannot simulate (print, an unsupported builtin, an opaque object,
    /// a data-dependent tensor method such as `item()`, a user function that failed inline).
    Call,
    /// A truth test of a value known only at run time (`if tensor:`).
    Branch,
    /// Any other instruction the executor does not simulate.
    Opcode,
    /// A break inside a loop: the loop runs as written and its body, made a function, is
    /// translated per iteration with the break inside it (`loop_split`).
    Loop,
    /// A break inside a loop that is not split: the graph ends at the head of the outermost
    /// loop around it, and the loops and what follows run as written
    /// (`loop_split::break_before_loop`).
    BeforeLoop,
}

impl BreakKind {
    pub fn id(self) -> &'static str {
        match self {
            BreakKind::Call => "GB-CALL",
            BreakKind::Branch => "GB-BRANCH",
            BreakKind::Opcode => "GB-OPCODE",
            BreakKind::Loop => "GB-LOOP",
            BreakKind::BeforeLoop => "GB-BEFORE-LOOP",
        }
    }

    pub fn hint(self) -> &'static str {
        match self {
            BreakKind::Call => {
                "the call runs as written between two graphs; move it out of the hot path, or wrap it in symtrace.disable if it is yours"
            }
            BreakKind::Branch => {
                "the condition is known only at run time (a tensor's truth, a number drawn from random); compute both branches with symtrace.where, or branch on a Python value"
            }
            BreakKind::Opcode => "this instruction runs as written between two graphs",
            BreakKind::Loop => {
                "the loop runs as written and its body is translated per iteration, split at the break; raise min_graph_size to keep small bodies whole"
            }
            BreakKind::BeforeLoop => {
                "the graph ends before the loop, which runs as written with what follows: its body captures too little before the break to be split per iteration (min_graph_size), or cannot be"
            }
        }
    }
}

/// What a frame does where an instruction cannot be simulated, as the executor's instruction
/// table declares it beside the instruction's handler (`executor::at_failure`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtFailure {
    /// Break the graph there: the instruction runs as written between two graphs.
    Break(BreakKind),
    /// The frame runs as written: the instruction cannot run alone between two graphs (it
    /// may leave a NULL, which a call cannot pass on, or it belongs to a protocol the
    /// replacement cannot rebuild: an exception being handled, a generator).
    NoBreak,
}

// The declarations of the instruction table, one per behaviour.
pub fn call(_: &Instr) -> AtFailure {
    AtFailure::Break(BreakKind::Call)
}
pub fn branch(_: &Instr) -> AtFailure {
    AtFailure::Break(BreakKind::Branch)
}
pub fn opcode(_: &Instr) -> AtFailure {
    AtFailure::Break(BreakKind::Opcode)
}
pub fn no_break(_: &Instr) -> AtFailure {
    AtFailure::NoBreak
}
/// A comparison whose result feeds a jump (the compiler asks for a bool) is a branch.
pub fn branch_if_bool(x: &Instr) -> AtFailure {
    if x.arg & COMPARE_OP_BOOL_MASK != 0 {
        branch(x)
    } else {
        opcode(x)
    }
}

/// Why an instruction cannot be a break point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotBreakable {
    /// A jump, return or raise, or the frame's first instruction.
    ControlFlow,
    /// Inside a loop: resuming there would nest a call per iteration; the loop is split
    /// instead (`loop_split`).
    InLoop(Loop),
    /// The instruction table says it cannot break (`AtFailure::NoBreak`).
    NotReplayable(Opcode),
}

impl NotBreakable {
    pub fn to_unsupported(self) -> Unsupported {
        let message = match self {
            NotBreakable::ControlFlow => "a jump, return or raise".to_owned(),
            NotBreakable::InLoop(_) => "inside a loop".to_owned(),
            NotBreakable::NotReplayable(op) => format!("{} cannot be replayed", opcode_name(op)),
        };
        Unsupported::new(Kind::Internal, message)
    }
}

/// Why the body instruction at `index` of `code` cannot be a break point, if it cannot.
pub fn not_breakable(body: &[Instr], index: usize) -> Option<NotBreakable> {
    let x = body.get(index)?;
    if x.target.is_some() || x.op.is_no_fallthrough() || index == 0 {
        return Some(NotBreakable::ControlFlow);
    }
    // Only loops entered without an exception: see `analysis::innermost`.
    if let Some(lp) = innermost(body, index) {
        return Some(NotBreakable::InLoop(lp));
    }
    match crate::translate::executor::at_failure(x) {
        AtFailure::NoBreak => Some(NotBreakable::NotReplayable(x.op)),
        AtFailure::Break(_) => None,
    }
}

/// Whether what follows instruction `index` only moves values about and returns (`return
/// f(x)`, `y = f(x); return y`): a resume function there would capture nothing.
pub fn returns_right_after(body: &[Instr], index: usize) -> bool {
    for x in body.iter().skip(index + 1) {
        if x.target.is_some() {
            return false;
        }
        match x.op {
            Opcode::ReturnValue => return true,
            Opcode::Nop
            | Opcode::NotTaken
            | Opcode::PopTop
            | Opcode::Copy
            | Opcode::Swap
            | Opcode::LoadConst
            | Opcode::LoadSmallInt
            | Opcode::LoadFast
            | Opcode::LoadFastBorrow
            | Opcode::LoadFastLoadFast
            | Opcode::LoadFastBorrowLoadFastBorrow
            | Opcode::StoreFast
            | Opcode::StoreFastLoadFast
            | Opcode::StoreFastStoreFast
            | Opcode::BuildTuple => {}
            _ => return false,
        }
    }
    false
}

/// The instruction as the replacement runs it, and what the original leaves on the stack
/// (`true`: a NULL of the call protocol). The replacement never leaves a NULL: a NULL cannot
/// be an argument, so the resume function makes it. A method load becomes an attribute load,
/// whose bound method the call then takes with a NULL (the split into function and `self` is
/// only an optimization).
pub fn replayed(x: &Instr) -> (Instr, Vec<bool>) {
    let plain = |arg: u32| Instr {
        op: x.op,
        arg,
        target: None,
        handler: None,
        position: x.position,
        offset: 0,
    };
    match x.op {
        // LOAD_SUPER_ATTR's method form too: `super().__new__(cls, ...)` breaks there, and
        // its NULL (a static method's) must not reach the resume function's arguments.
        Opcode::LoadAttr | Opcode::LoadGlobal | Opcode::LoadSuperAttr if x.arg & 1 != 0 => {
            (plain(x.arg & !1), vec![false, true])
        }
        _ => {
            let pushed = x.op.stack_effect_info(x.arg).pushed() as usize;
            (plain(x.arg), vec![false; pushed])
        }
    }
}

/// Where and why a translation breaks its graph and resumes.
pub struct GraphBreak {
    pub kind: BreakKind,
    /// Why the instruction could not be simulated.
    pub reason: Unsupported,
    /// The resume function's code when nothing was captured before the break: the break is
    /// worth its cost (a replaced frame and a call more) only while that function captures
    /// something after it.
    pub after_nothing: Option<PyRef<PyCode>>,
}

/// How a frame that cannot be simulated whole may break (absent: it fails instead).
pub struct BreakPolicy<'a> {
    pub resumes: &'a ResumeCache,
    /// Ops a loop's body must capture before its break for the body to be split off and
    /// translated per iteration (below it, the frame runs as written).
    pub min_graph_size: usize,
    /// A frame may break where it has captured nothing yet, so that what follows the
    /// instruction is captured by the resume function (off once that proved to capture
    /// nothing: `cache_entry::Entry::breaks_for_nothing`).
    pub after_nothing: bool,
}

/// The reason of a break, located at the breaking instruction of the translated frame (a call
/// that failed inline names where inside it failed).
pub fn located_at(why: Unsupported, code: &PyCode, x: &Instr) -> Unsupported {
    let here = Location {
        file: code.source_path().as_str().to_owned(),
        line: x.position.line.unwrap_or(0).max(0) as u32,
        function: code.qualname.as_str().to_owned(),
    };
    let message = match &why.location {
        Some(inner) if inner.function != here.function || inner.line != here.line => format!(
            "{} (in {}, {}:{})",
            why.message, inner.function, inner.file, inner.line
        ),
        _ => why.message.clone(),
    };
    Unsupported {
        message,
        location: Some(here),
        ..why
    }
}
