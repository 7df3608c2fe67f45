//! The one way symtrace writes bytecode: an instruction list whose jumps and exception
//! handlers name labels (an instruction of an original body, or a place of the builder's own),
//! resolved once every instruction is placed; instructions copied from an original with their
//! targets remapped; constants and names interned; then assembled (`assemble`). Code
//! generation, resume and handler functions and split loops all write through it, as
//! Cranelift's `FunctionBuilder` serves every front end.

use std::collections::HashMap;
use std::fmt;

use rustpython_vm::builtins::{PyCode, PyInt, PyStr};
use rustpython_vm::bytecode::Opcode;
use rustpython_vm::{AsObject, PyObjectRef, PyRef, VirtualMachine};

use super::assemble::{AssembleError, CodeLayout, assemble};
use super::decode::{Handler, Instr};
use super::linetable::Position;

/// Where a jump or a handler goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Label {
    /// Where the original body's instruction at this index was copied (or replaced: see
    /// `Builder::mark_original`).
    Original(usize),
    /// A place of the builder's own (`Builder::new_label`, `Builder::place`).
    Own(usize),
}

#[derive(Debug)]
pub enum BuildError {
    /// A label points at an instruction of the original that was not copied.
    NotCopied(usize),
    /// A label of the builder's own was never placed.
    NotPlaced,
    Assemble(AssembleError),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::NotCopied(i) => write!(f, "instruction {i} of the original was not copied"),
            BuildError::NotPlaced => f.write_str("a label was never placed"),
            BuildError::Assemble(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BuildError {}

pub struct Builder<'vm> {
    /// The code's names, constants and locals: interned into as instructions need them.
    pub layout: CodeLayout,
    instrs: Vec<Instr>,
    targets: Vec<Option<Label>>,
    handlers: Vec<Option<Label>>,
    originals: HashMap<usize, usize>,
    own: Vec<Option<usize>>,
    /// The position the next instructions the builder makes carry.
    pub position: Position,
    vm: &'vm VirtualMachine,
}

impl<'vm> Builder<'vm> {
    pub fn new(layout: CodeLayout, position: Position, vm: &'vm VirtualMachine) -> Self {
        Self {
            layout,
            instrs: Vec::new(),
            targets: Vec::new(),
            handlers: Vec::new(),
            originals: HashMap::new(),
            own: Vec::new(),
            position,
            vm,
        }
    }

    /// The layout of the code being built.
    pub fn layout(&self) -> &CodeLayout {
        &self.layout
    }

    pub fn vm(&self) -> &'vm VirtualMachine {
        self.vm
    }

    /// How many instructions are placed.
    pub fn len(&self) -> usize {
        self.instrs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }

    pub fn emit(&mut self, op: Opcode, arg: u32) {
        self.push(op, arg, None);
    }

    /// A jump (or any instruction with a target) to `to`.
    pub fn jump(&mut self, op: Opcode, arg: u32, to: Label) {
        self.push(op, arg, Some(to));
    }

    fn push(&mut self, op: Opcode, arg: u32, to: Option<Label>) {
        self.instrs.push(Instr {
            op,
            arg,
            target: None,
            handler: None,
            position: self.position,
            offset: 0,
        });
        self.targets.push(to);
        self.handlers.push(None);
    }

    /// Copy `x`, the original's instruction `i`, with its jump going to `to`; its handler
    /// stays on the copy of the original's handler (`Label::Original`).
    pub fn copy(&mut self, i: usize, x: &Instr, to: Option<Label>) {
        self.originals.entry(i).or_insert(self.instrs.len());
        let mut y = x.clone();
        y.target = None;
        self.instrs.push(y);
        self.targets.push(to);
        self.handlers
            .push(x.handler.map(|h| Label::Original(h.target)));
    }

    /// Copy the whole of `body`, jumps and handlers kept on the copies.
    pub fn copy_all(&mut self, body: &[Instr]) {
        for (i, x) in body.iter().enumerate() {
            self.copy(i, x, x.target.map(Label::Original));
        }
    }

    /// Mark where the original's instruction `i` now starts (it was replaced by what follows).
    pub fn mark_original(&mut self, i: usize) {
        self.originals.insert(i, self.instrs.len());
    }

    /// The handler of the last instruction placed: `h`'s depth and lasti, at `to`.
    pub fn set_handler(&mut self, h: Handler, to: Label) {
        if let (Some(x), Some(l)) = (self.instrs.last_mut(), self.handlers.last_mut()) {
            x.handler = Some(h);
            *l = Some(to);
        }
    }

    /// The last instruction placed, to change in place (its oparg, its op).
    pub fn last_mut(&mut self) -> Option<&mut Instr> {
        self.instrs.last_mut()
    }

    pub fn new_label(&mut self) -> Label {
        self.own.push(None);
        Label::Own(self.own.len() - 1)
    }

    /// Place `l` at the next instruction.
    pub fn place(&mut self, l: Label) {
        self.place_at(l, self.instrs.len());
    }

    /// Place `l` at instruction `at` (already placed).
    pub fn place_at(&mut self, l: Label, at: usize) {
        if let Label::Own(k) = l {
            self.own[k] = Some(at);
        }
    }

    /// The index of the name `n`, added if new.
    pub fn name(&mut self, n: &str) -> u32 {
        if let Some(i) = self.layout.names.iter().position(|x| x.as_str() == n) {
            return i as u32;
        }
        self.layout.names.push(self.vm.ctx.intern_str(n));
        (self.layout.names.len() - 1) as u32
    }

    /// The index of the constant `obj`: the same object, or an equal int or str, is stored once.
    pub fn constant(&mut self, obj: PyObjectRef) -> u32 {
        let vm = self.vm;
        let same = |c: &PyObjectRef| {
            c.is(&obj)
                || (c.class().is(obj.class())
                    && (obj.class().is(vm.ctx.types.int_type)
                        || obj.class().is(vm.ctx.types.str_type))
                    && match (c.downcast_ref::<PyInt>(), obj.downcast_ref::<PyInt>()) {
                        (Some(a), Some(b)) => a.as_bigint() == b.as_bigint(),
                        _ => match (c.downcast_ref::<PyStr>(), obj.downcast_ref::<PyStr>()) {
                            (Some(a), Some(b)) => a.as_wtf8() == b.as_wtf8(),
                            _ => false,
                        },
                    })
        };
        if let Some(i) = self.layout.constants.iter().position(same) {
            return i as u32;
        }
        self.layout.constants.push(obj);
        (self.layout.constants.len() - 1) as u32
    }

    /// `LOAD_CONST obj`.
    pub fn load_const(&mut self, obj: PyObjectRef) {
        let c = self.constant(obj);
        self.emit(Opcode::LoadConst, c);
    }

    /// The slot of the local, cell or free variable `n`.
    pub fn slot(&self, n: &str) -> Option<u32> {
        self.layout
            .localsplus_names()
            .iter()
            .position(|x| x.as_str() == n)
            .map(|i| i as u32)
    }

    /// Whether `n` is a cell or free variable.
    pub fn is_cell(&self, n: &str) -> bool {
        self.layout
            .cellvars
            .iter()
            .chain(&self.layout.freevars)
            .any(|c| c.as_str() == n)
    }

    /// Resolve every label and assemble. Handlers of instructions no path reaches are
    /// dropped: the assembler drops unreachable blocks, and a handler entry left for them would
    /// be malformed.
    pub fn finish(mut self) -> Result<PyRef<PyCode>, BuildError> {
        let resolve = |l: &Label| -> Result<usize, BuildError> {
            match l {
                Label::Original(i) => self
                    .originals
                    .get(i)
                    .copied()
                    .ok_or(BuildError::NotCopied(*i)),
                Label::Own(k) => self.own[*k].ok_or(BuildError::NotPlaced),
            }
        };
        let mut instrs = std::mem::take(&mut self.instrs);
        for ((x, t), h) in instrs.iter_mut().zip(&self.targets).zip(&self.handlers) {
            x.target = t.as_ref().map(resolve).transpose()?;
            if let (Some(handler), Some(l)) = (x.handler.as_mut(), h) {
                handler.target = resolve(l)?;
            }
        }
        if let Ok(depths) = super::verify::stack_depths(&instrs) {
            for (x, d) in instrs.iter_mut().zip(depths) {
                if d.is_none() {
                    x.handler = None;
                }
            }
        }
        assemble(&self.layout, &instrs, self.vm).map_err(BuildError::Assemble)
    }
}
