//! The code of a split loop's two functions (see `loop_split`): the body function, one
//! iteration returning how it ended with the locals, and the driver, the loop run as written
//! calling it.

use rustpython_vm::builtins::PyCode;
use rustpython_vm::bytecode::{CodeFlags, Opcode};
use rustpython_vm::{PyObjectRef, PyRef, VirtualMachine};

use super::closure_cells::{cells_made_free, copy_renumbered, emit_closure};
use super::loop_split::{Exit, Exits};
use super::resume::{ResumeShape, Resumed, emit_prologue, resumed_layout};
use crate::bytecode::analysis::Loop;
use crate::bytecode::builder::{Builder, Label};
use crate::bytecode::{CodeLayout, Handler, Instr};
use crate::translate::state::{Kind, SimResult, Unsupported};

/// `COMPARE_OP` for `==` with its result made a bool, as the compiler emits it.
const COMPARE_EQ_BOOL: u32 = 88;

/// The body function's code. Parameters: the original's locals in slot order, then the item
/// (a `for` loop). It starts with the stack of the loop's head (`head_depth` values, made
/// `None`: `uses_stack_below` makes sure the body only moves and drops them) and the item,
/// runs the body's instructions, and ends each iteration by returning `(tag, value, *locals)`.
pub fn body_code(
    original: &PyCode,
    body: &[Instr],
    lp: &Loop,
    region: &[usize],
    head_depth: usize,
    exits: &Exits,
    marker: &PyObjectRef,
    vm: &VirtualMachine,
) -> SimResult<PyRef<PyCode>> {
    let mut layout = CodeLayout::of(original);
    let nlocals = layout.varnames.len();
    if lp.is_for {
        layout.varnames.push(vm.ctx.intern_str("%item"));
    }
    layout.arg_count = layout.varnames.len() as u32;
    layout.posonlyarg_count = 0;
    layout.kwonlyarg_count = 0;
    layout
        .flags
        .remove(CodeFlags::VARARGS | CodeFlags::VARKEYWORDS);
    let line = body[lp.head].position.line.unwrap_or(0);
    let name = vm.ctx.intern_str(format!(
        "loop_body_in_{}_at_{line}",
        original.obj_name.as_str()
    ));
    // `co_name` the original's, as a resume function's (`resumed_layout`).
    layout.qualname = name;
    cells_made_free(&mut layout, vm);
    let from = CodeLayout::of(original).localsplus_names();

    let mut b = Builder::new(layout, body[lp.start()].position, vm);
    b.emit(Opcode::Resume, 0);
    for _ in 0..head_depth {
        b.load_const(vm.ctx.none());
    }
    if lp.is_for {
        b.emit(Opcode::LoadFast, nlocals as u32);
    }
    b.jump(Opcode::JumpForward, 0, Label::Original(lp.start()));
    let own: Vec<Label> = exits.kinds.iter().map(|_| b.new_label()).collect();
    // (tag, value, *locals): the value on the stack, or None.
    let epilogue = |b: &mut Builder<'_>, tag: usize, value_on_stack: bool| {
        if !value_on_stack {
            b.load_const(vm.ctx.none());
        }
        b.load_const(vm.ctx.new_int(tag).into());
        b.emit(Opcode::Swap, 2);
        for slot in 0..nlocals {
            b.emit(Opcode::LoadFast, slot as u32);
        }
        b.emit(Opcode::BuildTuple, nlocals as u32 + 2);
        b.emit(Opcode::ReturnValue, 0);
    };
    for i in (lp.start()..=lp.end).chain(region.iter().copied()) {
        let x = &body[i];
        if x.op == Opcode::DeleteFast {
            // The local travels as the unbound marker (see `deleted_slots`).
            b.mark_original(i);
            b.position = x.position;
            b.load_const(marker.clone());
            b.emit(Opcode::StoreFast, x.arg);
            continue;
        }
        if x.op == Opcode::ReturnValue {
            // In place: each return leaves its own stack under the value.
            b.mark_original(i);
            b.position = x.position;
            epilogue(&mut b, exits.tag(Exit::Return), true);
            continue;
        }
        let to = x.target.map(|t| match t {
            t if t == lp.head => own[exits.tag(Exit::Next)],
            t if lp.contains(t) || region.contains(&t) => Label::Original(t),
            t => own[exits.tag(Exit::Leave(t))],
        });
        copy_renumbered(&mut b, i, x, to, &from)?;
        if let (Some(h), Some(outer)) = (x.handler, lp.outer)
            && h == outer
        {
            b.set_handler(h, own[exits.tag(Exit::Raise)]);
        }
    }
    for (k, kind) in exits.kinds.iter().enumerate() {
        if *kind == Exit::Return {
            continue;
        }
        b.place(own[k]);
        b.position = body[lp.end].position;
        if *kind == Exit::Raise {
            // The stack as the handler takes it: cut to its depth, the raising offset (if it
            // wants one: the driver's raise makes its own), the exception.
            if lp.outer.is_some_and(|h| h.push_lasti) {
                b.emit(Opcode::Swap, 2);
                b.emit(Opcode::PopTop, 0);
            }
            epilogue(&mut b, k, true);
            continue;
        }
        epilogue(&mut b, k, false);
    }
    // The return label is never jumped to; place it on the last instruction.
    let last = b.len() - 1;
    b.place_at(own[exits.tag(Exit::Return)], last);
    b.finish()
        .map_err(|e| Unsupported::new(Kind::Internal, e.to_string()))
}

/// What the driver needs besides the loop.
pub struct Driver<'a> {
    /// The body function's name in the globals, or in a frame with cells its code, made a
    /// closure over the driver's cells (`closure_cells`).
    pub body_global: &'a str,
    pub body_closure: Option<PyRef<PyCode>>,
    /// Per exit out of the loop (and `None` for the `for` loop running out), the resume
    /// function the driver calls instead of running the rest of the frame as written, where
    /// the stack is empty there (and its code, made a closure, in a frame with cells).
    pub after: Vec<(Option<usize>, String, Option<PyRef<PyCode>>)>,
    /// Stack depth of the original at each of its instructions.
    pub depths: &'a [Option<i64>],
    /// Locals unbound at the head or deleted by the body: they may hold the marker.
    pub maybe_unbound: &'a [usize],
    /// The loop's handler blocks (`handler_region`), which only the body function holds.
    pub region: &'a [usize],
    pub marker: &'a PyObjectRef,
    pub name: &'a str,
}

/// The driver's code: a resume function of the original at the loop's head (parameters: the
/// locals, then the stack there) whose body is replaced by a call to the body function, the
/// locals unpacked from what it returns, and a dispatch on its tag.
pub fn driver_code(
    original: &PyCode,
    body: &[Instr],
    lp: &Loop,
    exits: &Exits,
    stack: &[bool],
    d: &Driver<'_>,
    vm: &VirtualMachine,
) -> SimResult<PyRef<PyCode>> {
    let nlocals = original.varnames.len();
    let passed = stack.iter().filter(|null| !**null).count();
    let (item, tag, value) = (
        (nlocals + passed) as u32,
        (nlocals + passed + 1) as u32,
        (nlocals + passed + 2) as u32,
    );
    let head_depth = d.depths[lp.head]
        .ok_or_else(|| Unsupported::new(Kind::Internal, "the loop's head is unreachable"))?;
    let shape = ResumeShape {
        resume_at: lp.head,
        stack: stack.to_vec(),
        unbound: Vec::new(),
        maybe_unbound: Vec::new(),
    };
    let made = Resumed {
        name: d.name,
        extra_locals: &["%item", "%tag", "%value"],
    };
    let layout = resumed_layout(CodeLayout::of(original), &shape, &made, vm);
    let from = CodeLayout::of(original).localsplus_names();
    let mut b = Builder::new(layout, body[lp.head].position, vm);
    emit_prologue(&mut b, &shape, nlocals, d.marker);
    let mut pads = Vec::new();
    // The function and its NULL: a global, or a closure over the driver's cells.
    let callee = |b: &mut Builder<'_>, global: &str, closure: &Option<PyRef<PyCode>>| {
        match closure {
            Some(code) => {
                emit_closure(b, code)?;
                b.emit(Opcode::PushNull, 0);
            }
            None => {
                let g = b.name(global);
                b.emit(Opcode::LoadGlobal, (g << 1) | 1);
            }
        }
        SimResult::Ok(())
    };
    // Delete the locals that still hold the marker (the rest of the frame runs here).
    let clear_marked = |b: &mut Builder<'_>| {
        for &slot in d.maybe_unbound {
            let skip = b.new_label();
            b.emit(Opcode::LoadFast, slot as u32);
            b.load_const(d.marker.clone());
            b.emit(Opcode::IsOp, 0);
            b.jump(Opcode::PopJumpIfFalse, 0, skip);
            b.emit(Opcode::DeleteFast, slot as u32);
            b.place(skip);
        }
    };
    // Call the resume function for the rest of the frame, or run it here.
    // Two exits may resume at the same place, through the same function.
    let leave = |b: &mut Builder<'_>, x: Option<usize>, to: Option<Label>| {
        if let Some((_, g, closure)) = d.after.iter().find(|(y, ..)| *y == x) {
            callee(b, g, closure)?;
            for slot in 0..nlocals {
                b.emit(Opcode::LoadFast, slot as u32);
            }
            b.emit(Opcode::Call, nlocals as u32);
            b.emit(Opcode::ReturnValue, 0);
        } else {
            clear_marked(b);
            if let Some(to) = to {
                b.jump(Opcode::JumpForward, 0, to);
            }
        }
        SimResult::Ok(())
    };
    for (i, x) in body.iter().enumerate() {
        if d.region.contains(&i) {
            continue;
        }
        if lp.contains(i) && i >= lp.start() {
            if i > lp.start() {
                continue;
            }
            b.mark_original(i);
            b.position = x.position;
            let call = Label::Original(i);
            if lp.is_for {
                b.emit(Opcode::StoreFast, item);
            }
            // A local the rest of the frame left unbound (the loop is entered again from an
            // enclosing loop, after an exit deleted its marker, or a `del`) is the marker
            // again: LOAD_FAST_CHECK raises for it, and its handler stores the marker.
            for &slot in d.maybe_unbound {
                let (pad, checked) = (b.new_label(), b.new_label());
                b.emit(Opcode::LoadFastCheck, slot as u32);
                let handler = Handler {
                    target: 0,
                    depth: head_depth as u32,
                    push_lasti: false,
                };
                b.set_handler(handler, pad);
                b.emit(Opcode::PopTop, 0);
                b.place(checked);
                pads.push((slot, pad, checked));
            }
            callee(&mut b, d.body_global, &d.body_closure)?;
            for slot in 0..nlocals {
                b.emit(Opcode::LoadFast, slot as u32);
            }
            if lp.is_for {
                b.emit(Opcode::LoadFast, item);
            }
            b.emit(Opcode::Call, nlocals as u32 + u32::from(lp.is_for));
            b.emit(Opcode::UnpackSequence, nlocals as u32 + 2);
            b.emit(Opcode::StoreFast, tag);
            b.emit(Opcode::StoreFast, value);
            for slot in 0..nlocals {
                b.emit(Opcode::StoreFast, slot as u32);
            }
            let dispatch = b.new_label();
            b.emit(Opcode::LoadFast, tag);
            b.jump(Opcode::PopJumpIfTrue, 0, dispatch);
            let again = if lp.is_for {
                Label::Original(lp.head)
            } else {
                call
            };
            b.jump(Opcode::JumpBackward, 0, again);
            b.place(dispatch);
            for (k, kind) in exits.kinds.iter().enumerate() {
                if *kind == Exit::Next {
                    continue;
                }
                let next = b.new_label();
                b.emit(Opcode::LoadFast, tag);
                b.load_const(vm.ctx.new_int(k).into());
                b.emit(Opcode::CompareOp, COMPARE_EQ_BOOL);
                b.jump(Opcode::PopJumpIfFalse, 0, next);
                match kind {
                    Exit::Return => {
                        b.emit(Opcode::LoadFast, value);
                        b.emit(Opcode::ReturnValue, 0);
                    }
                    Exit::Leave(t) => {
                        let there = d.depths[*t].ok_or_else(|| {
                            Unsupported::new(Kind::Internal, "a loop exit is unreachable")
                        })?;
                        for _ in there..head_depth {
                            b.emit(Opcode::PopTop, 0);
                        }
                        leave(&mut b, Some(*t), Some(Label::Original(*t)))?;
                    }
                    Exit::Raise => {
                        // Under the handler around the loop, with the iteration's locals.
                        clear_marked(&mut b);
                        b.emit(Opcode::LoadFast, value);
                        b.emit(Opcode::RaiseVarargs, 1);
                        if let Some(h) = lp.outer {
                            b.set_handler(h, Label::Original(h.target));
                        }
                    }
                    Exit::Next => {}
                }
                b.place(next);
            }
            // Every tag was dispatched above.
            b.emit(Opcode::LoadFast, value);
            b.emit(Opcode::ReturnValue, 0);
            continue;
        }
        b.position = x.position;
        copy_renumbered(&mut b, i, x, x.target.map(Label::Original), &from)?;
        if i == 0 && x.op == Opcode::Resume {
            // Only the prologue's RESUME starts the function.
            let y = b.last_mut().expect("just copied");
            y.op = Opcode::Nop;
            y.arg = 0;
        }
        let ran_out = lp.is_for && body[lp.head].target.is_some_and(|e| i == e + 1);
        if ran_out {
            leave(&mut b, None, None)?;
        }
    }
    for (slot, pad, checked) in pads {
        // The handler's stack: the loop head's, and the UnboundLocalError.
        b.place(pad);
        b.emit(Opcode::PopTop, 0);
        b.load_const(d.marker.clone());
        b.emit(Opcode::StoreFast, slot as u32);
        b.jump(Opcode::JumpBackward, 0, checked);
    }
    b.finish()
        .map_err(|e| Unsupported::new(Kind::Internal, e.to_string()))
}
