//! What the toolkit needs to know about RustPython 0.6 opcodes beyond compiler-core's tables:
//! dis-style names, how a jump's oparg encodes its target, and which opcodes a compiler may
//! emit at all.

use rustpython_vm::bytecode::Opcode;

/// The dis-style name, e.g. `LOAD_FAST_BORROW` for `Opcode::LoadFastBorrow`.
pub fn opcode_name(op: Opcode) -> String {
    upper_snake(&format!("{op:?}"))
}

fn upper_snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// How a jump instruction's oparg encodes its target, in code units counted from the end of
/// the instruction's caches (as the VM's `jump_relative_*` and codegen's
/// `resolve_jump_offsets` do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JumpEncoding {
    Forward,
    Backward,
    /// END_ASYNC_FOR points back at the SEND of its loop, five units before its own end.
    EndAsyncFor,
}

const END_SEND_OFFSET: usize = 5;

pub fn jump_encoding(op: Opcode) -> Option<JumpEncoding> {
    if !op.has_jump() {
        return None;
    }
    Some(match op {
        Opcode::JumpBackward | Opcode::JumpBackwardNoInterrupt => JumpEncoding::Backward,
        Opcode::EndAsyncFor => JumpEncoding::EndAsyncFor,
        _ => JumpEncoding::Forward,
    })
}

/// The code-unit offset a jump lands on; `end` is the offset just after its caches.
pub fn jump_target(encoding: JumpEncoding, end: usize, arg: u32) -> Option<usize> {
    let arg = arg as usize;
    match encoding {
        JumpEncoding::Forward => end.checked_add(arg),
        JumpEncoding::Backward => end.checked_sub(arg),
        JumpEncoding::EndAsyncFor => end.checked_sub(arg)?.checked_sub(END_SEND_OFFSET),
    }
}

/// An opcode a compiler emits: not specialized, not instrumented, not a cache entry, not an
/// EXTENDED_ARG prefix (handled by the decoder) and not reserved.
pub fn is_base_opcode(op: Opcode) -> bool {
    op.deopt().is_none()
        && !op.is_instrumented()
        && !matches!(op, Opcode::Cache | Opcode::ExtendedArg | Opcode::Reserved)
}

/// Opcodes whose oparg is a slot of the frame's localsplus that must be a cell or a free
/// variable.
pub fn uses_cell_slot(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::LoadDeref
            | Opcode::StoreDeref
            | Opcode::DeleteDeref
            | Opcode::MakeCell
            | Opcode::LoadFromDictOrDeref
    )
}

/// The localsplus slots a local-variable opcode reads or writes.
pub fn local_slots(op: Opcode, arg: u32) -> Option<[Option<u32>; 2]> {
    match op {
        Opcode::LoadFastLoadFast
        | Opcode::LoadFastBorrowLoadFastBorrow
        | Opcode::StoreFastLoadFast
        | Opcode::StoreFastStoreFast => Some([Some(arg >> 4), Some(arg & 15)]),
        Opcode::LoadFast
        | Opcode::LoadFastBorrow
        | Opcode::LoadFastCheck
        | Opcode::LoadFastAndClear
        | Opcode::StoreFast
        | Opcode::DeleteFast => Some([Some(arg), None]),
        _ => None,
    }
}

/// The index into `co_names` a name opcode uses (LOAD_GLOBAL and LOAD_ATTR keep a flag in the
/// low bit, LOAD_SUPER_ATTR two).
pub fn name_index(op: Opcode, arg: u32) -> Option<u32> {
    if !op.has_name() {
        return None;
    }
    Some(match op {
        Opcode::LoadGlobal | Opcode::LoadAttr => arg >> 1,
        Opcode::LoadSuperAttr => arg >> 2,
        _ => arg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The oparg that makes a jump at `end` land on `target`, if the encoding can express it.
    pub fn jump_arg(encoding: JumpEncoding, end: usize, target: usize) -> Option<u32> {
        let arg = match encoding {
            JumpEncoding::Forward => target.checked_sub(end)?,
            JumpEncoding::Backward => end.checked_sub(target)?,
            JumpEncoding::EndAsyncFor => end.checked_sub(target)?.checked_sub(END_SEND_OFFSET)?,
        };
        u32::try_from(arg).ok()
    }

    #[test]
    fn names_are_dis_style() {
        assert_eq!(
            opcode_name(Opcode::LoadFastBorrowLoadFastBorrow),
            "LOAD_FAST_BORROW_LOAD_FAST_BORROW"
        );
        assert_eq!(opcode_name(Opcode::Resume), "RESUME");
    }

    #[test]
    fn jump_args_invert_targets() {
        for enc in [
            JumpEncoding::Forward,
            JumpEncoding::Backward,
            JumpEncoding::EndAsyncFor,
        ] {
            for (end, arg) in [(10usize, 0u32), (20, 7), (40, 3)] {
                if let Some(target) = jump_target(enc, end, arg) {
                    assert_eq!(jump_arg(enc, end, target), Some(arg));
                }
            }
        }
        assert_eq!(jump_target(JumpEncoding::Backward, 3, 4), None);
    }
}
