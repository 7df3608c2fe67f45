//! The verifier: a code object the toolkit built is checked before the VM may run it. The VM
//! trusts its bytecode (an out-of-range index or an unbalanced stack is undefined behaviour
//! there), so everything the eval loop takes on faith is checked here: opcodes, jump targets,
//! operand indices, the exception table and the value stack on every path.

use rustpython_vm::builtins::PyCode;
use rustpython_vm::bytecode::{
    CO_FAST_CELL, CO_FAST_FREE, ExceptionTableEntry, Opcode, decode_exception_table,
    encode_exception_table,
};

use super::decode::{DecodeError, Instr, decode_units};
use super::opcodes::{local_slots, name_index, opcode_name, uses_cell_slot};

/// What the verifier needs to know of a code object besides its bytes and exception table.
#[derive(Clone, Debug)]
pub struct CodeFacts {
    pub nconsts: usize,
    pub nnames: usize,
    /// Kind of each frame slot (CO_FAST_*), locals then cells then free variables.
    pub localspluskinds: Vec<u8>,
    pub nfreevars: usize,
    pub max_stackdepth: u32,
}

/// Why a code object was rejected: where, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    /// Code-unit offset of the offending instruction, if one is to blame.
    pub offset: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "offset {offset}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for VerifyError {}

fn at(x: &Instr, message: String) -> VerifyError {
    VerifyError {
        offset: Some(x.offset),
        message: format!("{} {}: {message}", opcode_name(x.op), x.arg),
    }
}

/// Check a code object as the VM would run it: its live bytes, not the deoptimized view.
pub fn verify(code: &PyCode) -> Result<(), VerifyError> {
    let c = &code.code;
    let units = &c.instructions;
    let mut bytes = Vec::with_capacity(units.len() * 2);
    for i in 0..units.len() {
        bytes.push(u8::from(units.read_op(i).as_opcode()));
        bytes.push(u8::from(units.read_arg(i)));
    }
    let facts = CodeFacts {
        nconsts: c.constants.len(),
        nnames: c.names.len(),
        localspluskinds: c.localspluskinds.to_vec(),
        nfreevars: c.freevars.len(),
        max_stackdepth: c.max_stackdepth,
    };
    verify_parts(&bytes, &c.exceptiontable, &facts)
}

/// Check raw `(opcode, oparg)` byte pairs and an exception table against `facts`.
pub fn verify_parts(
    bytes: &[u8],
    exceptiontable: &[u8],
    facts: &CodeFacts,
) -> Result<(), VerifyError> {
    if bytes.is_empty() {
        return Err(VerifyError {
            offset: None,
            message: "the code is empty".into(),
        });
    }
    check_exception_table_encoding(exceptiontable)?;
    // Decode errors name their offset themselves.
    let instrs =
        decode_units(bytes, &[], exceptiontable, 0).map_err(|e: DecodeError| VerifyError {
            offset: None,
            message: e.to_string(),
        })?;
    check_caches(bytes, &instrs)?;
    check_prologue(&instrs)?;
    for x in &instrs {
        check_operands(x, facts)?;
    }
    check_stack(&instrs, facts)
}

fn check_exception_table_encoding(table: &[u8]) -> Result<(), VerifyError> {
    let entries = decode_exception_table(table);
    let bad = |message: String| {
        Err(VerifyError {
            offset: None,
            message,
        })
    };
    if *encode_exception_table(&entries) != *table {
        return bad(
            "the exception table is malformed (it does not decode to whole entries)".into(),
        );
    }
    for pair in entries.windows(2) {
        let (a, b): (&ExceptionTableEntry, &ExceptionTableEntry) = (&pair[0], &pair[1]);
        if b.start < a.end {
            return bad(format!(
                "exception table entries {}..{} and {}..{} overlap or are out of order",
                a.start, a.end, b.start, b.end
            ));
        }
    }
    Ok(())
}

/// Cache entries of a fresh code object are zero; anything else is code the VM would
/// mistake for cached specialization data.
fn check_caches(bytes: &[u8], instrs: &[Instr]) -> Result<(), VerifyError> {
    for x in instrs {
        let op_unit = x.offset + extended_arg_count(bytes, x.offset);
        for unit in op_unit + 1..=op_unit + x.op.cache_entries() {
            if bytes[2 * unit] != 0 || bytes[2 * unit + 1] != 0 {
                return Err(at(x, format!("cache entry at offset {unit} is not zero")));
            }
        }
    }
    Ok(())
}

fn extended_arg_count(bytes: &[u8], offset: usize) -> usize {
    let ext = u8::from(Opcode::ExtendedArg);
    bytes[2 * offset..]
        .chunks(2)
        .take_while(|unit| unit[0] == ext)
        .count()
}

/// A code object starts with its prologue (cells, free variables, generator), then RESUME:
/// lazy quickening, instrumentation and the trace 'call' event happen there.
fn check_prologue(instrs: &[Instr]) -> Result<(), VerifyError> {
    for x in instrs {
        match x.op {
            Opcode::Resume => return Ok(()),
            Opcode::MakeCell | Opcode::CopyFreeVars | Opcode::ReturnGenerator | Opcode::PopTop => {}
            _ => return Err(at(x, "comes before RESUME".into())),
        }
    }
    Err(VerifyError {
        offset: None,
        message: "the code has no RESUME".into(),
    })
}

fn check_operands(x: &Instr, facts: &CodeFacts) -> Result<(), VerifyError> {
    let nslots = facts.localspluskinds.len();
    if x.op == Opcode::LoadConst && x.arg as usize >= facts.nconsts {
        return Err(at(
            x,
            format!(
                "constant index {} out of range ({} constants)",
                x.arg, facts.nconsts
            ),
        ));
    }
    if let Some(index) = name_index(x.op, x.arg)
        && index as usize >= facts.nnames
    {
        return Err(at(
            x,
            format!("name index {index} out of range ({} names)", facts.nnames),
        ));
    }
    for slot in local_slots(x.op, x.arg).into_iter().flatten().flatten() {
        if slot as usize >= nslots {
            return Err(at(
                x,
                format!("local slot {slot} out of range ({nslots} slots)"),
            ));
        }
    }
    if uses_cell_slot(x.op) {
        let kind = facts.localspluskinds.get(x.arg as usize).copied();
        match kind {
            None => {
                return Err(at(
                    x,
                    format!("cell slot {} out of range ({nslots} slots)", x.arg),
                ));
            }
            Some(k) if k & (CO_FAST_CELL | CO_FAST_FREE) == 0 => {
                return Err(at(
                    x,
                    format!("slot {} is neither a cell nor a free variable", x.arg),
                ));
            }
            Some(_) => {}
        }
    }
    if x.op == Opcode::CopyFreeVars && x.arg as usize != facts.nfreevars {
        return Err(at(
            x,
            format!(
                "copies {} free variables, the code has {}",
                x.arg, facts.nfreevars
            ),
        ));
    }
    if let Some(h) = x.handler
        && h.depth > facts.max_stackdepth
    {
        return Err(at(
            x,
            format!(
                "handler depth {} exceeds co_stacksize {}",
                h.depth, facts.max_stackdepth
            ),
        ));
    }
    Ok(())
}

/// Abstract interpretation of the stack depth over every path, exception edges included:
/// no underflow, never above co_stacksize, the same depth wherever paths meet, and no path
/// running off the end.
fn check_stack(instrs: &[Instr], facts: &CodeFacts) -> Result<(), VerifyError> {
    walk_stack(instrs, facts.max_stackdepth as i64).map(|_| ())
}

/// The stack depth before each instruction of `instrs` (`None`: unreachable), as the
/// verifier finds it; fails where the verifier would.
pub fn stack_depths(instrs: &[Instr]) -> Result<Vec<Option<i64>>, VerifyError> {
    walk_stack(instrs, i64::MAX)
}

fn walk_stack(instrs: &[Instr], max: i64) -> Result<Vec<Option<i64>>, VerifyError> {
    let mut depth_at: Vec<Option<i64>> = vec![None; instrs.len()];
    let mut work = vec![0usize];
    depth_at[0] = Some(0);
    let reach = |depth_at: &mut Vec<Option<i64>>,
                 work: &mut Vec<usize>,
                 from: &Instr,
                 to: usize,
                 depth: i64| {
        match depth_at[to] {
            None => {
                depth_at[to] = Some(depth);
                work.push(to);
                Ok(())
            }
            Some(d) if d == depth => Ok(()),
            Some(d) => Err(at(
                from,
                format!(
                    "reaches offset {} with stack depth {depth}, another path with {d}",
                    instrs[to].offset
                ),
            )),
        }
    };
    while let Some(i) = work.pop() {
        let x = &instrs[i];
        let depth = depth_at[i].expect("queued instructions have a depth");
        let effect = x.op.stack_effect_info(x.arg);
        let (popped, pushed) = (i64::from(effect.popped()), i64::from(effect.pushed()));
        if popped > depth {
            return Err(at(
                x,
                format!("stack underflow: pops {popped} of a stack of {depth}"),
            ));
        }
        let after = depth - popped + pushed;
        if after > max || depth > max {
            return Err(at(
                x,
                format!(
                    "stack depth {} exceeds co_stacksize {max}",
                    after.max(depth)
                ),
            ));
        }
        if let Some(h) = x.handler {
            let h_depth = i64::from(h.depth);
            if h_depth > depth {
                return Err(at(
                    x,
                    format!(
                        "handler at offset {} keeps {h_depth} values of a stack of {depth}",
                        instrs[h.target].offset
                    ),
                ));
            }
            let entry = h_depth + 1 + i64::from(h.push_lasti);
            if entry > max {
                return Err(at(
                    x,
                    format!("handler entry depth {entry} exceeds co_stacksize {max}"),
                ));
            }
            reach(&mut depth_at, &mut work, x, h.target, entry)?;
        }
        if let Some(t) = x.target
            && x.op != Opcode::EndAsyncFor
        {
            reach(&mut depth_at, &mut work, x, t, after)?;
        }
        if !x.op.is_no_fallthrough() {
            if i + 1 >= instrs.len() {
                return Err(at(x, "execution runs off the end of the code".into()));
            }
            reach(&mut depth_at, &mut work, x, i + 1, after)?;
        }
    }
    Ok(depth_at)
}
