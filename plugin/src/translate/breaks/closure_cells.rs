//! A break in a frame with cells or free variables. The resume function must see the frame's
//! cells themselves, not copies of their values: a closure made before the break (a lambda
//! over `self`, a helper that counts with `nonlocal`) holds those cells and reads or writes
//! them after it. So the resume function is made a closure over them: its code has every cell
//! and free variable of the original as a free variable (none of its own; the original's
//! cells marked cell too, `CodeLayout::cell_frees`, so that one read unbound raises what the
//! original raises), and the replacement
//! makes it with MAKE_FUNCTION from its own cells, after it stored into them what the
//! simulation left there. The function is made on every call, as Python makes a nested
//! function; its code is made once, so its translations are cached as any resume function's.
//! So are the handler function of a break under a handler and a split loop's body and driver
//! (the driver makes the body function and the functions after the loop from its cells).

use rustpython_vm::builtins::{PyCode, PyStrInterned};
use rustpython_vm::bytecode::Opcode;
use rustpython_vm::{PyRef, VirtualMachine};

use crate::bytecode::builder::{Builder, Label};
use crate::bytecode::opcodes::{local_slots, uses_cell_slot};
use crate::bytecode::{CodeLayout, Instr};
use crate::translate::executor::{SimFrame, Slot};
use crate::translate::function_templates::CLOSURE;
use crate::translate::source::Source;
use crate::translate::state::{Kind, SimResult, Unsupported};
use crate::translate::values::{CellRef, Var};

/// The prefix of the name a parameter that was a cell keeps in a resume function: the slot
/// stays a parameter (the caller passes a placeholder there), its name becomes a free variable.
const CELL_PARAMETER: &str = "%cell";

/// `layout` with every cell made a free variable, cells first, then the original's free
/// variables: the closure the replacement passes is in this order. A parameter that was a
/// cell keeps its slot under another name, so that every other slot keeps its number.
pub fn cells_made_free(layout: &mut CodeLayout, vm: &VirtualMachine) {
    if layout.cellvars.is_empty() {
        return;
    }
    let mut free: Vec<&'static PyStrInterned> = Vec::new();
    layout.cell_frees.extend(layout.cellvars.iter().copied());
    for cell in std::mem::take(&mut layout.cellvars) {
        if let Some(i) = layout
            .varnames
            .iter()
            .position(|v| v.as_str() == cell.as_str())
        {
            layout.varnames[i] = vm.ctx.intern_str(format!("{CELL_PARAMETER}{i}"));
        }
        free.push(cell);
    }
    free.append(&mut layout.freevars);
    layout.freevars = free;
}

/// `x`, copied from code whose slots are named `from`, with its slots renumbered by name for
/// code whose slots are named `to`. A pair of locals packed in one oparg is split in two where
/// a new number does not fit in its four bits. `None`: a slot has no name in `to`.
fn renumbered(
    x: &Instr,
    from: &[&'static PyStrInterned],
    to: &[&'static PyStrInterned],
) -> Option<Vec<Instr>> {
    let map = |slot: u32| -> Option<u32> {
        let name = from.get(slot as usize)?;
        to.iter()
            .position(|n| n.as_str() == name.as_str())
            .map(|i| i as u32)
    };
    let with = |op: Opcode, arg: u32| Instr {
        op,
        arg,
        ..x.clone()
    };
    if uses_cell_slot(x.op) {
        return Some(vec![with(x.op, map(x.arg)?)]);
    }
    match local_slots(x.op, x.arg) {
        None => Some(vec![x.clone()]),
        Some([Some(a), None]) => Some(vec![with(x.op, map(a)?)]),
        Some([Some(a), Some(b)]) => {
            let (a, b) = (map(a)?, map(b)?);
            if a < 16 && b < 16 {
                return Some(vec![with(x.op, (a << 4) | b)]);
            }
            let (first, second) = match x.op {
                Opcode::LoadFastLoadFast => (Opcode::LoadFast, Opcode::LoadFast),
                Opcode::LoadFastBorrowLoadFastBorrow => {
                    (Opcode::LoadFastBorrow, Opcode::LoadFastBorrow)
                }
                Opcode::StoreFastLoadFast => (Opcode::StoreFast, Opcode::LoadFast),
                Opcode::StoreFastStoreFast => (Opcode::StoreFast, Opcode::StoreFast),
                _ => return None,
            };
            Some(vec![with(first, a), with(second, b)])
        }
        Some(_) => None,
    }
}

/// A store the replacement makes into one of its own cells before it makes the resume
/// function: what the simulation left there (`None`: a parameter deleted, `del x`).
#[derive(Clone, Debug)]
pub struct CellStore<T> {
    pub name: String,
    pub value: Option<T>,
}

/// The frame's own cells (not the free variables it was given: a store into those is a side
/// effect, replayed as such) whose content at the break differs from what the replacement's
/// cells hold when it starts: a parameter's value, or nothing. `nlocals`: the slots that are
/// locals, parameters among them.
pub fn own_cell_stores(frame: &SimFrame, nlocals: usize) -> Vec<CellStore<Var>> {
    let mut stores = Vec::new();
    for (i, slot) in frame.slots.iter().enumerate() {
        let Slot::Cell(cell) = slot else { continue };
        let cell = cell.borrow();
        if cell.existing {
            continue;
        }
        let Some(name) = frame.slot_name(i).map(str::to_owned) else {
            continue;
        };
        let unchanged = match &cell.value {
            // A parameter's cell as the prologue made it.
            Some(Var::Lazy(_, Source::Local(n))) => i < nlocals && *n == name,
            Some(_) => false,
            None => i >= nlocals,
        };
        if !unchanged {
            stores.push(CellStore {
                name,
                value: cell.value.clone(),
            });
        }
    }
    stores
}

/// The frame's cells and free variables, by name.
pub fn frame_cells(frame: &SimFrame) -> Vec<(String, CellRef)> {
    frame
        .slots
        .iter()
        .enumerate()
        .filter_map(|(i, slot)| match slot {
            Slot::Cell(c) => Some((frame.slot_name(i)?.to_owned(), c.clone())),
            _ => None,
        })
        .collect()
}

/// Copy the original's instruction `i` (`x`, slots named `from`) into `b`, its slots
/// renumbered for `b`'s layout (see `renumbered`), its jump to `to`.
pub fn copy_renumbered(
    b: &mut Builder<'_>,
    i: usize,
    x: &Instr,
    to: Option<Label>,
    from: &[&'static PyStrInterned],
) -> SimResult<()> {
    let names = b.layout().localsplus_names();
    let copies = renumbered(x, from, &names)
        .ok_or_else(|| Unsupported::new(Kind::Internal, "a slot of the original has no name"))?;
    for (k, y) in copies.iter().enumerate() {
        b.copy(i, y, to.filter(|_| k == 0));
    }
    Ok(())
}

/// Push the function of `code` whose closure is the cells of `b`'s code of the same names
/// (each loaded as a cell, as LOAD_CLOSURE does): a resume, handler, loop body or driver
/// function made in a frame with cells.
pub fn emit_closure(b: &mut Builder<'_>, code: &PyRef<PyCode>) -> SimResult<()> {
    for name in code.freevars.iter() {
        let slot = b.slot(name.as_str()).ok_or_else(|| {
            Unsupported::new(
                Kind::Internal,
                format!("no cell {} to close over", name.as_str()),
            )
        })?;
        b.emit(Opcode::LoadFast, slot);
    }
    b.emit(Opcode::BuildTuple, code.freevars.len() as u32);
    b.load_const(code.clone().into());
    b.emit(Opcode::MakeFunction, 0);
    b.emit(Opcode::SetFunctionAttribute, CLOSURE);
    Ok(())
}
