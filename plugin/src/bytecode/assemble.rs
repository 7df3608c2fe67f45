//! Instruction list → code object, through rustpython-codegen's assembler (the compiler's own
//! back end: stack depth, exception table, location table, EXTENDED_ARG, cache entries, the
//! cell/free-variable/generator prologue, local kinds). The fork adds `assemble_code`, which
//! takes the code's flags and exception handlers given per instruction.
//!
//! Constants never pass through the assembler as values: it gets placeholders and the code
//! object gets the layout's Python objects by index, so nested code objects (and, later,
//! arbitrary objects) keep their identity.

use rustpython_codegen::ir::{CodeUnitMetadata, ConstantPool, InstructionSequence, assemble_code};
use rustpython_compiler_core::OneIndexed;
use rustpython_vm::builtins::{PyCode, PyStrInterned};
use rustpython_vm::bytecode::{
    CO_FAST_CELL, CO_FAST_FREE, CO_FAST_HIDDEN, CodeFlags, CodeObject, ConstantData, Opcode,
    PseudoOpcode,
};
use rustpython_vm::{PyObjectRef, PyRef, VirtualMachine};

use super::decode::Instr;
use super::opcodes::uses_cell_slot;

/// The code object type of the VM (constants are Python objects).
pub type VmCodeObject = <PyCode as std::ops::Deref>::Target;

/// Everything a code object holds besides its instructions.
#[derive(Clone)]
pub struct CodeLayout {
    pub flags: CodeFlags,
    pub posonlyarg_count: u32,
    /// Positional parameters, positional-only ones included (`co_argcount`).
    pub arg_count: u32,
    pub kwonlyarg_count: u32,
    pub first_line: Option<OneIndexed>,
    pub source_path: &'static PyStrInterned,
    pub obj_name: &'static PyStrInterned,
    pub qualname: &'static PyStrInterned,
    pub constants: Vec<PyObjectRef>,
    pub names: Vec<&'static PyStrInterned>,
    pub varnames: Vec<&'static PyStrInterned>,
    /// Cell variables, those that are also parameters first (as `co_cellvars` lists them).
    pub cellvars: Vec<&'static PyStrInterned>,
    pub freevars: Vec<&'static PyStrInterned>,
    /// Local variables marked hidden (the inlined comprehension's iteration variables).
    pub hidden: Vec<&'static PyStrInterned>,
    /// Free variables that stand for cells of the frame this code continues (a function
    /// made for a break): marked cell too, so that one read unbound raises
    /// `UnboundLocalError`, as in that frame, not `NameError`.
    pub cell_frees: Vec<&'static PyStrInterned>,
}

impl CodeLayout {
    /// The layout of an existing code object.
    pub fn of(code: &PyCode) -> Self {
        let source_path = code.source_path();
        let code = &code.code;
        let hidden = code
            .varnames
            .iter()
            .zip(code.localspluskinds.iter())
            .filter(|(_, kind)| *kind & CO_FAST_HIDDEN != 0)
            .map(|(name, _)| *name)
            .collect();
        Self {
            flags: code.flags,
            posonlyarg_count: code.posonlyarg_count,
            arg_count: code.arg_count,
            kwonlyarg_count: code.kwonlyarg_count,
            first_line: code.first_line_number,
            source_path,
            obj_name: code.obj_name,
            qualname: code.qualname,
            constants: code.constants.iter().map(|c| c.clone().into()).collect(),
            names: code.names.to_vec(),
            varnames: code.varnames.to_vec(),
            cellvars: code.cellvars.to_vec(),
            freevars: code.freevars.to_vec(),
            hidden,
            cell_frees: code
                .freevars
                .iter()
                .zip(&code.localspluskinds[code.localspluskinds.len() - code.freevars.len()..])
                .filter(|(_, kind)| *kind & CO_FAST_CELL != 0)
                .map(|(name, _)| *name)
                .collect(),
        }
    }

    /// The slot names in frame order: locals, cells that are not parameters, free variables.
    pub fn localsplus_names(&self) -> Vec<&'static PyStrInterned> {
        let mut names = self.varnames.clone();
        names.extend(
            self.cellvars
                .iter()
                .filter(|c| !self.varnames.iter().any(|v| v.as_str() == c.as_str())),
        );
        names.extend(self.freevars.iter());
        names
    }
}

/// Why the assembler refused an instruction list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssembleError(pub String);

impl std::fmt::Display for AssembleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "assembler: {}", self.0)
    }
}

impl std::error::Error for AssembleError {}

fn err(msg: impl Into<String>) -> AssembleError {
    AssembleError(msg.into())
}

/// Assemble `instrs` (starting with RESUME, without the prologue) into a code object with
/// `layout`. Jump targets and handlers are instruction indices, local opargs are slots of the
/// layout's frame, as [`super::decode`] gives them.
pub fn assemble(
    layout: &CodeLayout,
    instrs: &[Instr],
    vm: &VirtualMachine,
) -> Result<PyRef<PyCode>, AssembleError> {
    let seq = instruction_sequence(layout, instrs)?;
    let metadata = metadata(layout)?;
    let assembled = assemble_code(
        layout.source_path.as_str().to_owned(),
        seq,
        metadata,
        layout.flags,
        true,
        true,
    )
    .map_err(|e| err(e.to_string()))?;
    Ok(vm.ctx.new_code(into_vm_code(layout, assembled)?))
}

fn instruction_sequence(
    layout: &CodeLayout,
    instrs: &[Instr],
) -> Result<InstructionSequence, AssembleError> {
    let mut seq = InstructionSequence::new();
    let mut labels = vec![None; instrs.len()];
    for x in instrs {
        for target in x.target.into_iter().chain(x.handler.map(|h| h.target)) {
            let slot = labels
                .get_mut(target)
                .ok_or_else(|| err(format!("target {target} is past the end")))?;
            if slot.is_none() {
                *slot = Some(seq.new_label());
            }
        }
    }
    let slots = layout.localsplus_names();
    let cell_names: Vec<&str> = layout
        .cellvars
        .iter()
        .chain(&layout.freevars)
        .map(|n| n.as_str())
        .collect();
    for (i, x) in instrs.iter().enumerate() {
        if let Some(label) = labels[i] {
            seq.use_label(label).map_err(|e| err(e.to_string()))?;
        }
        let (opcode, arg) = if let Some(target) = x.target {
            let label = labels[target].expect("every target has a label");
            let op = match x.op {
                Opcode::JumpForward | Opcode::JumpBackward => {
                    i32::from(PseudoOpcode::Jump.as_u16())
                }
                Opcode::JumpBackwardNoInterrupt => {
                    i32::from(PseudoOpcode::JumpNoInterrupt.as_u16())
                }
                op => i32::from(u8::from(op)),
            };
            (op, label)
        } else if uses_cell_slot(x.op) {
            // The assembler numbers cells and free variables among themselves and maps them to
            // frame slots itself (fix_cell_offsets).
            let name = slots
                .get(x.arg as usize)
                .ok_or_else(|| err(format!("{:?} slot {} out of range", x.op, x.arg)))?;
            let index = cell_names
                .iter()
                .position(|c| *c == name.as_str())
                .ok_or_else(|| {
                    err(format!(
                        "{:?} slot {} ({}) is not a cell",
                        x.op,
                        x.arg,
                        name.as_str()
                    ))
                })?;
            (i32::from(u8::from(x.op)), index as i32)
        } else {
            let arg = i32::try_from(x.arg).map_err(|_| err("oparg too large"))?;
            (i32::from(u8::from(x.op)), arg)
        };
        let [line, col, end_line, end_col] = x.position.to_addop_args();
        seq.addop(opcode, arg, line, col, end_line, end_col)
            .map_err(|e| err(format!("instruction {i}: {e}")))?;
        if let Some(h) = x.handler {
            let label = labels[h.target].expect("every handler has a label");
            seq.set_except_handler(label, h.depth, h.push_lasti)
                .map_err(|e| err(e.to_string()))?;
        }
    }
    Ok(seq)
}

fn metadata(layout: &CodeLayout) -> Result<CodeUnitMetadata, AssembleError> {
    let mut md = CodeUnitMetadata {
        name: layout.obj_name.as_str().to_owned(),
        qualname: Some(layout.qualname.as_str().to_owned()),
        consts: ConstantPool::from_ordered(vec![ConstantData::None; layout.constants.len()]),
        names: Default::default(),
        varnames: Default::default(),
        cellvars: Default::default(),
        freevars: Default::default(),
        fast_hidden: Default::default(),
        fast_hidden_final: Default::default(),
        argcount: layout
            .arg_count
            .checked_sub(layout.posonlyarg_count)
            .ok_or_else(|| err("fewer arguments than positional-only ones"))?,
        posonlyargcount: layout.posonlyarg_count,
        kwonlyargcount: layout.kwonlyarg_count,
        firstlineno: layout.first_line.unwrap_or(OneIndexed::MIN),
    };
    let tables = [
        (&mut md.names, &layout.names, "co_names"),
        (&mut md.varnames, &layout.varnames, "co_varnames"),
        (&mut md.cellvars, &layout.cellvars, "co_cellvars"),
        (&mut md.freevars, &layout.freevars, "co_freevars"),
    ];
    for (set, names, what) in tables {
        for name in names {
            if !set.insert(name.as_str().to_owned()) {
                return Err(err(format!("{what} holds {:?} twice", name.as_str())));
            }
        }
    }
    for name in &layout.hidden {
        md.fast_hidden_final.insert(name.as_str().to_owned());
    }
    Ok(md)
}

/// `kinds` with the free variables of `layout.cell_frees` marked cell too.
fn cells_marked(layout: &CodeLayout, mut kinds: Box<[u8]>) -> Box<[u8]> {
    let first_free = kinds.len() - layout.freevars.len();
    for (i, name) in layout.freevars.iter().enumerate() {
        if layout
            .cell_frees
            .iter()
            .any(|c| c.as_str() == name.as_str())
        {
            kinds[first_free + i] |= CO_FAST_FREE | CO_FAST_CELL;
        }
    }
    kinds
}

fn into_vm_code(
    layout: &CodeLayout,
    out: CodeObject<ConstantData>,
) -> Result<VmCodeObject, AssembleError> {
    // The assembler lists parameter cells first; keep the interned names, in its order.
    let cellvars = out
        .cellvars
        .iter()
        .map(|name| {
            layout
                .cellvars
                .iter()
                .find(|c| c.as_str() == name.as_str())
                .copied()
                .ok_or_else(|| err(format!("cell {name} appeared")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CodeObject {
        instructions: out.instructions,
        locations: out.locations,
        flags: out.flags,
        posonlyarg_count: out.posonlyarg_count,
        arg_count: out.arg_count,
        kwonlyarg_count: out.kwonlyarg_count,
        source_path: layout.source_path,
        first_line_number: layout.first_line,
        max_stackdepth: out.max_stackdepth,
        obj_name: layout.obj_name,
        qualname: layout.qualname,
        constants: layout.constants.iter().cloned().map(Into::into).collect(),
        names: layout.names.clone().into_boxed_slice(),
        varnames: layout.varnames.clone().into_boxed_slice(),
        cellvars: cellvars.into_boxed_slice(),
        freevars: layout.freevars.clone().into_boxed_slice(),
        localspluskinds: cells_marked(layout, out.localspluskinds),
        linetable: out.linetable,
        exceptiontable: out.exceptiontable,
    })
}
