//! Code object → instruction list. Reads the deoptimized bytes (`co_code`), never the live,
//! specialized ones, folds EXTENDED_ARG prefixes into the oparg, skips cache entries, turns
//! jump offsets and exception-table ranges into instruction indices, and attaches each
//! instruction's source position.

use rustpython_vm::builtins::PyCode;
use rustpython_vm::bytecode::{Opcode, decode_exception_table};

use super::linetable::{Position, decode_positions};
use super::opcodes::{is_base_opcode, jump_encoding, jump_target, opcode_name};

/// The exception handler that covers an instruction (one entry of `co_exceptiontable`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handler {
    /// Index of the handler's first instruction.
    pub target: usize,
    /// Value-stack depth the handler runs at (the stack is cut to it, then the exception pushed).
    pub depth: u32,
    /// Whether the offset of the raising instruction is pushed below the exception.
    pub push_lasti: bool,
}

/// One decoded instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    pub op: Opcode,
    /// The whole oparg (EXTENDED_ARG folded in). For a jump it is the encoded offset as found;
    /// [`Instr::target`] is what counts.
    pub arg: u32,
    /// Index of the instruction a jump lands on.
    pub target: Option<usize>,
    pub handler: Option<Handler>,
    pub position: Position,
    /// Code-unit offset in the code it was decoded from (its first EXTENDED_ARG, if any).
    pub offset: usize,
}

impl Instr {
    /// A NOP at `position`: what a break replays where nothing runs as written between the
    /// graph and the resume function (a loop split at its head, a graph ending before a loop).
    pub fn nop_at(position: Position) -> Instr {
        Instr {
            op: Opcode::Nop,
            arg: 0,
            target: None,
            handler: None,
            position,
            offset: 0,
        }
    }
}

/// A code object's instructions, after the prologue the assembler re-creates from the code's
/// flags and cells (MAKE_CELL, COPY_FREE_VARS, RETURN_GENERATOR + POP_TOP).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedCode {
    pub prologue: Vec<Instr>,
    pub instrs: Vec<Instr>,
}

/// Why a code object cannot be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    UnknownOpcode {
        offset: usize,
        byte: u8,
    },
    /// Instrumented (sys.monitoring) or otherwise not a compiler's opcode.
    NotBaseOpcode {
        offset: usize,
        name: String,
    },
    Truncated {
        offset: usize,
    },
    JumpOutOfRange {
        offset: usize,
        target: Option<usize>,
    },
    ExceptionTable(String),
    LineTable(String),
    NoResume,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownOpcode { offset, byte } => {
                write!(f, "unknown opcode {byte} at offset {offset}")
            }
            Self::NotBaseOpcode { offset, name } => {
                write!(
                    f,
                    "{name} at offset {offset} is not an opcode a compiler emits"
                )
            }
            Self::Truncated { offset } => {
                write!(f, "instruction at offset {offset} runs past the end")
            }
            Self::JumpOutOfRange { offset, target } => match target {
                Some(t) => write!(
                    f,
                    "jump at offset {offset} lands on {t}, not an instruction start"
                ),
                None => write!(f, "jump at offset {offset} lands outside the code"),
            },
            Self::ExceptionTable(m) | Self::LineTable(m) => f.write_str(m),
            Self::NoResume => f.write_str("the code does not start with RESUME after its prologue"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Decode `code` from its deoptimized bytes.
pub fn decode(code: &PyCode) -> Result<DecodedCode, DecodeError> {
    let code = &code.code;
    let bytes = code.instructions.original_bytes();
    let first_line = code.first_line_number.map_or(0, |l| l.get() as i32);
    decode_bytes(&bytes, &code.linetable, &code.exceptiontable, first_line)
}

/// Decode raw `(opcode, oparg)` byte pairs with their location and exception tables.
pub fn decode_bytes(
    bytes: &[u8],
    linetable: &[u8],
    exceptiontable: &[u8],
    first_line: i32,
) -> Result<DecodedCode, DecodeError> {
    split_prologue(decode_units(bytes, linetable, exceptiontable, first_line)?)
}

/// Every instruction, the prologue included, with indices into the whole list.
pub(super) fn decode_units(
    bytes: &[u8],
    linetable: &[u8],
    exceptiontable: &[u8],
    first_line: i32,
) -> Result<Vec<Instr>, DecodeError> {
    if !bytes.len().is_multiple_of(2) {
        return Err(DecodeError::Truncated {
            offset: bytes.len() / 2,
        });
    }
    let units = bytes.len() / 2;
    let positions =
        decode_positions(linetable, first_line, units).map_err(DecodeError::LineTable)?;
    let mut instrs = Vec::new();
    // Code-unit offset → index of the instruction starting there.
    let mut start_of = vec![None; units + 1];
    let mut ends = Vec::new();
    let mut i = 0;
    while i < units {
        let start = i;
        let mut arg = 0u32;
        let op = loop {
            let byte = bytes[2 * i];
            let op = Opcode::try_from(byte)
                .map_err(|_| DecodeError::UnknownOpcode { offset: i, byte })?;
            arg = (arg << 8) | u32::from(bytes[2 * i + 1]);
            i += 1;
            if op != Opcode::ExtendedArg {
                break op;
            }
            if i >= units {
                return Err(DecodeError::Truncated { offset: start });
            }
        };
        if !is_base_opcode(op) {
            return Err(DecodeError::NotBaseOpcode {
                offset: start,
                name: opcode_name(op),
            });
        }
        i += op.cache_entries();
        if i > units {
            return Err(DecodeError::Truncated { offset: start });
        }
        start_of[start] = Some(instrs.len());
        ends.push(i);
        instrs.push(Instr {
            op,
            arg,
            target: None,
            handler: None,
            position: positions[start],
            offset: start,
        });
    }
    for (instr, &end) in instrs.iter_mut().zip(&ends) {
        if let Some(encoding) = jump_encoding(instr.op) {
            let unit = jump_target(encoding, end, instr.arg).filter(|&u| u < units);
            let index = unit.and_then(|u| start_of.get(u).copied().flatten());
            instr.target = Some(index.ok_or(DecodeError::JumpOutOfRange {
                offset: instr.offset,
                target: unit,
            })?);
        }
    }
    attach_handlers(&mut instrs, &start_of, exceptiontable)?;
    Ok(instrs)
}

fn attach_handlers(
    instrs: &mut [Instr],
    start_of: &[Option<usize>],
    table: &[u8],
) -> Result<(), DecodeError> {
    let entries = decode_exception_table(table);
    let units = start_of.len() - 1;
    for e in entries {
        let bad = |what: &str| {
            DecodeError::ExceptionTable(format!(
                "exception table entry {}..{} -> {}: {what}",
                e.start, e.end, e.target
            ))
        };
        let (start, end, target) = (e.start as usize, e.end as usize, e.target as usize);
        if start >= end || end > units {
            return Err(bad("range is empty or outside the code"));
        }
        if start_of[start].is_none() || (start_of[end].is_none() && end != units) {
            return Err(bad(
                "range does not start and end on instruction boundaries",
            ));
        }
        let target = start_of
            .get(target)
            .copied()
            .flatten()
            .ok_or_else(|| bad("handler is not an instruction start"))?;
        let handler = Handler {
            target,
            depth: u32::from(e.depth),
            push_lasti: e.push_lasti,
        };
        let first = instrs.partition_point(|x| x.offset < start);
        for instr in instrs[first..].iter_mut().take_while(|x| x.offset < end) {
            if instr.handler.is_some() {
                return Err(bad("ranges overlap"));
            }
            instr.handler = Some(handler);
        }
    }
    Ok(())
}

/// Split off the instructions before the first RESUME and re-base indices.
fn split_prologue(mut instrs: Vec<Instr>) -> Result<DecodedCode, DecodeError> {
    let resume = instrs
        .iter()
        .position(|x| x.op == Opcode::Resume)
        .ok_or(DecodeError::NoResume)?;
    let prologue_ok = instrs[..resume].iter().all(|x| {
        matches!(
            x.op,
            Opcode::MakeCell | Opcode::CopyFreeVars | Opcode::ReturnGenerator | Opcode::PopTop
        ) && x.handler.is_none()
    });
    let targets_body = instrs.iter().all(|x| {
        x.target.is_none_or(|t| t >= resume) && x.handler.is_none_or(|h| h.target >= resume)
    });
    if !prologue_ok || !targets_body {
        return Err(DecodeError::NoResume);
    }
    let body = instrs.split_off(resume);
    let rebase = |x: Instr| Instr {
        target: x.target.map(|t| t - resume),
        handler: x.handler.map(|h| Handler {
            target: h.target - resume,
            ..h
        }),
        ..x
    };
    Ok(DecodedCode {
        prologue: instrs,
        instrs: body.into_iter().map(rebase).collect(),
    })
}
