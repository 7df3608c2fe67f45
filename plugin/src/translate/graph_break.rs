//! Graph breaks: where the simulation of a frame stops at an instruction it cannot simulate,
//! the graph captured so far is kept. The replacement code runs that graph, rebuilds the
//! frame's state (its stack and its locals) from the graph's outputs, runs the breaking
//! instruction for real, and calls a *resume function*: a code object made from the original
//! that takes the state as arguments, puts it back (locals in their slots, the stack pushed,
//! NULLs of the call protocol re-made) and jumps to the instruction after the break. The
//! resume function is an ordinary function to the hook: it is translated in turn when called,
//! and made once per (code, break point, state shape), so that later calls reuse its cache.
//!
//! A break is taken only where it keeps tensor work; elsewhere the frame runs as written, as
//! before. An instruction inside a loop is not broken here (resuming there would nest a call
//! per iteration): `loop_break` splits the loop instead. Not (yet) broken: frames with cells
//! or free variables.
//!
//! Under an exception handler (a `try` or `with` block), the resume function keeps the
//! original's exception table, so what follows the break is covered as written; the breaking
//! instruction itself gets a landing pad in the replacement, which passes the exception and
//! the handler's stack to a *handler function*: the original from the handler's first
//! instruction, run as written (the hook skips it), so `except` clauses match, `finally`
//! blocks run and `__exit__` sees the exception as they would have.

use rustpython_vm::builtins::{PyCode, PyDict, PyStrInterned};
use rustpython_vm::bytecode::{CodeFlags, Opcode};
use rustpython_vm::{Py, PyObjectRef, PyRef, VirtualMachine};

use crate::bytecode::{CodeLayout, Instr, assemble};

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
    /// translated per iteration with the break inside it (`loop_break`).
    Loop,
}

impl BreakKind {
    pub fn of(x: &Instr) -> Self {
        match x.op {
            // A comparison whose result feeds a jump (it gives a bool).
            Opcode::CompareOp
                if x.arg & rustpython_vm::bytecode::oparg::COMPARE_OP_BOOL_MASK != 0 =>
            {
                BreakKind::Branch
            }
            Opcode::Call | Opcode::CallKw | Opcode::CallFunctionEx => BreakKind::Call,
            Opcode::ToBool | Opcode::UnaryNot => BreakKind::Branch,
            _ => BreakKind::Opcode,
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            BreakKind::Call => "GB-CALL",
            BreakKind::Branch => "GB-BRANCH",
            BreakKind::Opcode => "GB-OPCODE",
            BreakKind::Loop => "GB-LOOP",
        }
    }

    pub fn hint(self) -> &'static str {
        match self {
            BreakKind::Call => {
                "the call runs as written between two graphs; move it out of the hot path, or wrap it in symtrace.disable if it is yours"
            }
            BreakKind::Branch => {
                "the truth of a tensor is known only at run time; compute both branches with symtrace.where, or branch on a Python value"
            }
            BreakKind::Opcode => "this instruction runs as written between two graphs",
            BreakKind::Loop => {
                "the loop runs as written and its body is translated per iteration, split at the break; raise min_graph_size to keep small bodies whole"
            }
        }
    }
}

/// `not_breakable`'s reason for an instruction inside a loop (see `loop_break`).
pub const IN_LOOP: &str = "inside a loop";

/// Why the body instruction at `index` of `code` cannot be a break point, if it cannot.
pub fn not_breakable(code: &PyCode, body: &[Instr], index: usize) -> Option<String> {
    let x = body.get(index)?;
    if !code.cellvars.is_empty() || !code.freevars.is_empty() {
        return Some("the frame has cells or free variables".into());
    }
    if x.target.is_some() || x.op.is_no_fallthrough() || index == 0 {
        return Some("a jump, return or raise".into());
    }
    // Only loops entered without an exception: see `loop_break::innermost`.
    let in_loop = super::loop_break::innermost(body, index).is_some();
    if in_loop {
        return Some(IN_LOOP.into());
    }
    let banned = matches!(
        x.op,
        Opcode::YieldValue
            | Opcode::Send
            | Opcode::PushExcInfo
            | Opcode::PopExcept
            | Opcode::CheckExcMatch
            | Opcode::WithExceptStart
            | Opcode::LoadFastAndClear
            | Opcode::ReturnGenerator
            | Opcode::GetAwaitable
            // May push a NULL as its second value, which the replacement cannot pass on.
            | Opcode::LoadSpecial
    );
    banned.then(|| {
        format!(
            "{} cannot be replayed",
            crate::bytecode::opcodes::opcode_name(x.op)
        )
    })
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
        Opcode::LoadAttr | Opcode::LoadGlobal if x.arg & 1 != 0 => {
            (plain(x.arg & !1), vec![false, true])
        }
        _ => {
            let pushed = x.op.stack_effect_info(x.arg).pushed() as usize;
            (plain(x.arg), vec![false; pushed])
        }
    }
}

/// The shape of the state a resume function takes: what decides its code.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResumeShape {
    /// Index in the body of the first instruction to run.
    pub resume_at: usize,
    /// The stack it starts with, bottom first: `true` for a NULL (re-made, not passed).
    pub stack: Vec<bool>,
    /// Slots of the original's locals unbound at the break (passed as None, then deleted).
    pub unbound: Vec<usize>,
    /// Slots that may hold the unbound marker (`ResumeCache::unbound_marker`) after a loop run
    /// as written: deleted when they do.
    pub maybe_unbound: Vec<usize>,
}

/// The resume function's code: parameters are the original's locals (every one, in slot
/// order, so that the copied instructions keep their slot numbers) and then the non-NULL stack
/// values, bottom first.
pub fn resume_code(
    original: &PyCode,
    body: &[Instr],
    shape: &ResumeShape,
    kind: &str,
    marker: &PyObjectRef,
    vm: &VirtualMachine,
) -> Result<PyRef<PyCode>, String> {
    // A handler's first instruction (PUSH_EXC_INFO) has no line: the first one that has.
    let line = body
        .get(shape.resume_at..)
        .and_then(|rest| rest.iter().find_map(|x| x.position.line))
        .unwrap_or(0);
    let name = format!("{kind}_in_{}_at_{line}", original.obj_name.as_str());
    resume_code_with(
        CodeLayout::of(original),
        body,
        shape,
        &Resumed {
            name: &name,
            extra_locals: &[],
            marker,
        },
        vm,
    )
}

/// What a function that starts inside an original's body is called and holds besides the
/// original's locals and stack.
pub struct Resumed<'a> {
    pub name: &'a str,
    /// Locals of its own, after the parameters (slots `nlocals + passed + k`).
    pub extra_locals: &'a [&'a str],
    pub marker: &'a PyObjectRef,
}

/// A function made of `body` (the original's instructions, or a rewrite of them with the same
/// slots) that starts at `shape.resume_at` with the state of `shape` as its parameters.
pub fn resume_code_with(
    mut layout: CodeLayout,
    body: &[Instr],
    shape: &ResumeShape,
    made: &Resumed<'_>,
    vm: &VirtualMachine,
) -> Result<PyRef<PyCode>, String> {
    let nlocals = layout.varnames.len();
    let passed = shape.stack.iter().filter(|null| !**null).count();
    for k in 0..passed {
        // Numbered after the slots, so that a resume function of a resume function adds new names.
        layout
            .varnames
            .push(vm.ctx.intern_str(format!("%stack{}", nlocals + k)));
    }
    layout.arg_count = (nlocals + passed) as u32;
    layout.posonlyarg_count = 0;
    layout.kwonlyarg_count = 0;
    layout
        .flags
        .remove(CodeFlags::VARARGS | CodeFlags::VARKEYWORDS);
    for extra in made.extra_locals {
        layout.varnames.push(vm.ctx.intern_str(*extra));
    }
    let name: &'static PyStrInterned = vm.ctx.intern_str(made.name);
    layout.obj_name = name;
    layout.qualname = name;
    let marker = if shape.maybe_unbound.is_empty() {
        0
    } else {
        layout.constants.push(made.marker.clone());
        (layout.constants.len() - 1) as u32
    };

    let position = body
        .get(shape.resume_at)
        .map(|x| x.position)
        .ok_or("no instruction to resume at")?;
    let op = |op: Opcode, arg: u32| Instr {
        op,
        arg,
        target: None,
        handler: None,
        position,
        offset: 0,
    };
    let mut instrs = vec![op(Opcode::Resume, 0)];
    for &slot in &shape.unbound {
        instrs.push(op(Opcode::DeleteFast, slot as u32));
    }
    for &slot in &shape.maybe_unbound {
        // if slot is marker: del slot
        instrs.push(op(Opcode::LoadFast, slot as u32));
        instrs.push(op(Opcode::LoadConst, marker));
        instrs.push(op(Opcode::IsOp, 0));
        let after = instrs.len() + 2;
        instrs.push(Instr {
            target: Some(after),
            ..op(Opcode::PopJumpIfFalse, 0)
        });
        instrs.push(op(Opcode::DeleteFast, slot as u32));
    }
    let mut next = nlocals;
    for &null in &shape.stack {
        if null {
            instrs.push(op(Opcode::PushNull, 0));
        } else {
            // Cleared as it is pushed: the stack holds the only reference, as it did.
            instrs.push(op(Opcode::LoadFastAndClear, next as u32));
            next += 1;
        }
    }
    let shift = instrs.len() + 1;
    instrs.push(Instr {
        target: Some(shift + shape.resume_at),
        ..op(Opcode::JumpForward, 0)
    });
    for (i, x) in body.iter().enumerate() {
        let mut y = x.clone();
        if i == 0 && y.op == Opcode::Resume {
            y.op = Opcode::Nop;
            y.arg = 0;
        }
        y.target = y.target.map(|t| t + shift);
        if let Some(h) = y.handler.as_mut() {
            h.target += shift;
        }
        instrs.push(y);
    }
    drop_unreachable_handlers(&mut instrs);
    assemble(&layout, &instrs, vm).map_err(|e| e.to_string())
}

/// Forget the handlers of instructions no path reaches (the code before a resume point): the
/// assembler drops unreachable blocks, and a handler entry left for them would be malformed.
pub fn drop_unreachable_handlers(instrs: &mut [Instr]) {
    if let Ok(depths) = crate::bytecode::verify::stack_depths(instrs) {
        for (x, d) in instrs.iter_mut().zip(depths) {
            if d.is_none() {
                x.handler = None;
            }
        }
    }
}

/// The state the handler function of a break under `handler` takes: the original's stack cut
/// to the handler's depth (`kept`: `true` for a NULL), the raising instruction's offset if the
/// handler wants it, and the exception; `unbound` as for the resume function.
pub fn handler_shape(
    handler: &crate::bytecode::Handler,
    kept: &[bool],
    unbound: Vec<usize>,
) -> Result<ResumeShape, String> {
    let below = kept
        .get(..handler.depth as usize)
        .ok_or("the handler's stack is deeper than the break's")?;
    let stack = below
        .iter()
        .copied()
        .chain(handler.push_lasti.then_some(false))
        .chain([false])
        .collect();
    Ok(ResumeShape {
        resume_at: handler.target,
        stack,
        unbound,
        maybe_unbound: Vec::new(),
    })
}

/// What a generated function is made for: the key of its cache entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// A resume function after a break.
    Resume(ResumeShape),
    /// The original's exception handler, entered from a breaking instruction's landing pad:
    /// run as written (an exception being handled is not simulated).
    Handler(ResumeShape),
    /// A loop's body as a function (`loop_break`), for the locals bound at its head.
    LoopBody { head: usize, bound: Vec<bool> },
    /// The loop run as written, calling its body function (`loop_break`).
    LoopDriver {
        head: usize,
        bound: Vec<bool>,
        stack: Vec<bool>,
    },
}

/// Functions made so far, one per (code, purpose): a second break at the same point finds
/// the same function, whose translations are cached on its code.
#[derive(Default)]
pub struct ResumeCache {
    made: std::sync::Mutex<std::collections::HashMap<(usize, Purpose), Made>>,
    marker: std::sync::OnceLock<PyObjectRef>,
}

struct Made {
    /// Held so that the key's address is not reused.
    _original: PyRef<PyCode>,
    code: PyRef<PyCode>,
    name: String,
}

static RESUME_NAMES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl ResumeCache {
    /// The object that stands for an unbound local where a loop run as written passes its
    /// locals around (a call cannot pass "unbound"); never seen by the user's code.
    pub fn unbound_marker(&self, vm: &VirtualMachine) -> PyObjectRef {
        use rustpython_vm::AsObject;
        self.marker
            .get_or_init(|| {
                vm.ctx
                    .types
                    .object_type
                    .as_object()
                    .call((), vm)
                    .expect("object() cannot fail")
            })
            .clone()
    }

    /// The name under which the resume function for `shape` is bound in `globals` (made and
    /// bound on first use).
    pub fn function_for(
        &self,
        original: &Py<PyCode>,
        body: &[Instr],
        shape: &ResumeShape,
        globals: &Py<PyDict>,
        vm: &VirtualMachine,
    ) -> Result<String, String> {
        let marker = self.unbound_marker(vm);
        self.bound_function(
            original,
            Purpose::Resume(shape.clone()),
            globals,
            vm,
            || resume_code(original, body, shape, "resume", &marker, vm),
        )
    }

    /// The name under which the handler function for `shape` (see `handler_shape`) is bound
    /// in `globals`.
    pub fn handler_function_for(
        &self,
        original: &Py<PyCode>,
        body: &[Instr],
        shape: &ResumeShape,
        globals: &Py<PyDict>,
        vm: &VirtualMachine,
    ) -> Result<String, String> {
        let marker = self.unbound_marker(vm);
        self.bound_function(
            original,
            Purpose::Handler(shape.clone()),
            globals,
            vm,
            || resume_code(original, body, shape, "handler", &marker, vm),
        )
    }

    /// The name under which the function made by `make` for `purpose` is bound in `globals`
    /// (made, verified and bound on first use).
    pub fn bound_function(
        &self,
        original: &Py<PyCode>,
        purpose: Purpose,
        globals: &Py<PyDict>,
        vm: &VirtualMachine,
        make: impl FnOnce() -> Result<PyRef<PyCode>, String>,
    ) -> Result<String, String> {
        use rustpython_vm::AsObject;
        let key = (original as *const _ as usize, purpose);
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        if !made.contains_key(&key) {
            let code = make()?;
            crate::bytecode::verify(&code).map_err(|e| {
                format!(
                    "the generated function {} was rejected by the verifier: {e}",
                    code.qualname.as_str()
                )
            })?;
            if matches!(key.1, Purpose::LoopDriver { .. } | Purpose::Handler(_)) {
                // The loop runs as written (its body function is what gets translated); so
                // does a handler, entered with an exception the simulation never saw.
                code.set_eval_hook_skipped(true);
            }
            let name = format!(
                "__symtrace_resume_{}",
                RESUME_NAMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            );
            made.insert(
                key.clone(),
                Made {
                    _original: original.to_owned(),
                    code,
                    name,
                },
            );
        }
        let m = &made[&key];
        let bound = globals.get_item_opt(m.name.as_str(), vm).ok().flatten();
        let current = bound
            .as_ref()
            .and_then(|f| f.get_attr("__code__", vm).ok())
            .is_some_and(|c| c.is(m.code.as_object()));
        if !current {
            let func = vm
                .ctx
                .types
                .function_type
                .as_object()
                .call((m.code.clone(), globals.to_owned()), vm)
                .map_err(|_| "cannot make the resume function".to_owned())?;
            globals
                .set_item(m.name.as_str(), func, vm)
                .map_err(|_| "cannot bind the resume function in the globals".to_owned())?;
        }
        Ok(m.name.clone())
    }
}
