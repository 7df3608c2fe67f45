//! A frame being simulated: its code decoded once, its slots (locals, cells and free
//! variables), its value stack, the exceptions it is handling, and where it is.

use rustpython_vm::PyRef;
use rustpython_vm::builtins::PyCode;

use crate::bytecode::decode::{Instr, decode};
use crate::bytecode::linetable::Position;
use crate::translate::state::{Kind, Location, SimResult, Unsupported, unsupported};
use crate::translate::values::{CellRef, Globals, Var};

/// A frame slot: a value, or a cell (for cell and free variables).
#[derive(Clone, Debug)]
pub enum Slot {
    Empty,
    Val(Var),
    Cell(CellRef),
}

/// How a simulated frame ended, or (a generator's) stopped at a yield.
pub struct Returned {
    pub value: Var,
    pub position: Position,
    pub yielded: bool,
    /// The frame raised `value` (see `values::exceptions`).
    pub raised: bool,
}

/// A frame being simulated.
pub struct SimFrame {
    pub code: PyRef<PyCode>,
    /// The prologue (MAKE_CELL, COPY_FREE_VARS...) then the body.
    pub(super) instrs: Vec<Instr>,
    /// Where the body starts in `instrs`: decoded jump targets index the body.
    pub(super) body: usize,
    pub slots: Vec<Slot>,
    pub(super) names: Vec<String>,
    pub stack: Vec<Var>,
    pub globals: Globals,
    /// The free variables' cells, in order, for COPY_FREE_VARS.
    pub closure: Vec<CellRef>,
    /// The next instruction, in `instrs`.
    pub(super) pc: usize,
    /// Exceptions being handled (PUSH_EXC_INFO to POP_EXCEPT), innermost last: what a bare
    /// `raise` raises.
    pub(super) handling: Vec<Var>,
    /// The frame was called (inline) from an instruction under an exception handler.
    pub called_under_handler: bool,
}

impl SimFrame {
    /// Whether the handler `h` can act on an exception a replayed effect would raise: not
    /// one that only passes it on, as a generator's implicit handler does (CALL_INTRINSIC_1
    /// INTRINSIC_STOPITERATION_ERROR, which changes only a StopIteration) and an inlined
    /// comprehension's (its variable restored, SWAP/POP_TOP/STORE_FAST), each ending in
    /// RERAISE with no handler of its own around it.
    pub fn catches(&self, h: &crate::bytecode::decode::Handler) -> bool {
        use rustpython_vm::bytecode::{IntrinsicFunction1, Opcode};
        for i in self.instrs.iter().skip(self.body + h.target) {
            if i.handler.is_some() {
                return true;
            }
            match i.op {
                Opcode::Reraise => return false,
                Opcode::Swap | Opcode::PopTop | Opcode::StoreFast | Opcode::Nop => {}
                Opcode::CallIntrinsic1
                    if i.arg == IntrinsicFunction1::StopIterationError as u32 => {}
                _ => return true,
            }
        }
        true
    }

    pub fn new(code: PyRef<PyCode>, globals: Globals, closure: Vec<CellRef>) -> SimResult<Self> {
        let decoded = decode(&code)
            .map_err(|e| Unsupported::new(Kind::Internal, format!("cannot decode: {e}")))?;
        let names: Vec<String> = code
            .localsplus_names()
            .iter()
            .map(|n| n.as_str().to_owned())
            .collect();
        let body = decoded.prologue.len();
        let mut instrs = decoded.prologue;
        instrs.extend(decoded.instrs);
        Ok(Self {
            slots: vec![Slot::Empty; names.len()],
            names,
            code,
            instrs,
            body,
            stack: Vec::new(),
            globals,
            closure,
            pc: 0,
            handling: Vec::new(),
            called_under_handler: false,
        })
    }

    /// An exception is being handled (the frame is inside an except or finally block entered
    /// by one): the VM's record of it could not be rebuilt at a break.
    pub fn handling_exception(&self) -> bool {
        !self.handling.is_empty()
    }

    /// The name of slot `i` (a local, a cell or a free variable).
    pub fn slot_name(&self, i: usize) -> Option<&str> {
        self.names.get(i).map(String::as_str)
    }

    pub fn slot_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The next instruction's index in the body, if it is in the body.
    pub fn body_pc(&self) -> Option<usize> {
        self.pc.checked_sub(self.body)
    }

    /// The decoded body.
    pub fn body(&self) -> &[Instr] {
        &self.instrs[self.body..]
    }

    /// The user's file:line of the instruction that ran last.
    pub(super) fn location(&self) -> Location {
        let line = self
            .instrs
            .get(self.pc.saturating_sub(1))
            .and_then(|i| i.position.line)
            .unwrap_or(0)
            .max(0) as u32;
        Location {
            file: self.code.source_path().as_str().to_owned(),
            line,
            function: self.code.qualname.as_str().to_owned(),
        }
    }

    /// Go to the body's instruction `target` (a decoded jump target).
    pub(super) fn jump(&mut self, target: Option<usize>) -> SimResult<()> {
        match target {
            Some(t) => {
                self.pc = self.body + t;
                Ok(())
            }
            None => unsupported(Kind::Internal, "a jump without a target"),
        }
    }

    pub(super) fn push(&mut self, v: Var) {
        self.stack.push(v);
    }

    pub(super) fn pop(&mut self) -> SimResult<Var> {
        match self.stack.pop() {
            Some(v) => Ok(v),
            None => unsupported(Kind::Internal, "stack underflow"),
        }
    }

    pub(super) fn popn(&mut self, n: usize) -> SimResult<Vec<Var>> {
        if self.stack.len() < n {
            return unsupported(Kind::Internal, "stack underflow");
        }
        Ok(self.stack.split_off(self.stack.len() - n))
    }

    /// The value `depth` from the top (1: the top).
    pub(super) fn top(&self, depth: usize) -> SimResult<&Var> {
        match self.stack.len().checked_sub(depth) {
            Some(i) if depth > 0 => Ok(&self.stack[i]),
            _ => unsupported(Kind::Internal, "stack underflow"),
        }
    }

    /// The code's name number `i` (attributes, globals).
    pub(super) fn name(&self, i: u32) -> String {
        self.code
            .names
            .get(i as usize)
            .map(|n| n.as_str().to_owned())
            .unwrap_or_default()
    }
}
