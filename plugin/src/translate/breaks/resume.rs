//! Resume and handler functions: code made from the original that starts after a break (or
//! at an exception handler) with the frame's state passed as arguments, made once per
//! (code, purpose) and bound in the frame's globals.

use rustpython_vm::builtins::{PyCode, PyDict};
use rustpython_vm::bytecode::{CodeFlags, Opcode};
use rustpython_vm::{Py, PyObjectRef, PyRef, VirtualMachine};

use crate::bytecode::builder::{Builder, Label};
use crate::bytecode::{CodeLayout, Handler, Instr};
use crate::translate::breaks::closure_cells::{cells_made_free, copy_renumbered};
use crate::translate::state::{Kind, SimResult, Unsupported};

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
) -> SimResult<PyRef<PyCode>> {
    // A handler's first instruction (PUSH_EXC_INFO) has no line: the first one that has.
    let line = body
        .get(shape.resume_at..)
        .and_then(|rest| rest.iter().find_map(|x| x.position.line))
        .unwrap_or(0);
    let name = format!("{kind}_in_{}_at_{line}", original.obj_name.as_str());
    let position = body
        .get(shape.resume_at)
        .map(|x| x.position)
        .ok_or_else(|| Unsupported::new(Kind::Internal, "no instruction to resume at"))?;
    let made = Resumed {
        name: &name,
        extra_locals: &[],
    };
    let nlocals = original.varnames.len();
    let layout = resumed_layout(CodeLayout::of(original), shape, &made, vm);
    // Slots of cells and free variables move (see `closure_cells`); the others keep theirs.
    let from = CodeLayout::of(original).localsplus_names();
    let mut b = Builder::new(layout, position, vm);
    emit_prologue(&mut b, shape, nlocals, marker);
    for (i, x) in body.iter().enumerate() {
        copy_renumbered(&mut b, i, x, x.target.map(Label::Original), &from)?;
        if i == 0 && x.op == Opcode::Resume {
            // Only the prologue's RESUME starts the function.
            let y = b.last_mut().expect("just copied");
            y.op = Opcode::Nop;
            y.arg = 0;
        }
    }
    b.finish()
        .map_err(|e| Unsupported::new(Kind::Internal, e.to_string()))
}

/// What a function that starts inside an original's body is called and holds besides the
/// original's locals and stack.
pub struct Resumed<'a> {
    pub name: &'a str,
    /// Locals of its own, after the parameters (slots `nlocals + passed + k`).
    pub extra_locals: &'a [&'a str],
}

/// The layout of a function that starts inside the body of `layout`'s code with the state of
/// `shape` as its parameters: the original's locals, then the non-NULL stack values; the
/// original's cells are its free variables (`closure_cells`).
pub fn resumed_layout(
    mut layout: CodeLayout,
    shape: &ResumeShape,
    made: &Resumed<'_>,
    vm: &VirtualMachine,
) -> CodeLayout {
    cells_made_free(&mut layout, vm);
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
    // Its `co_name` is the original's, which tracebacks, `logging`'s `funcName` and
    // `f_code.co_name` show for code that runs on in it; its qualname says what it is.
    layout.qualname = vm.ctx.intern_str(made.name);
    layout
}

/// The start of a function made by `resumed_layout`: put the state of `shape` back (unbound
/// locals deleted, the marker of a possibly unbound one too, the stack pushed from the
/// parameters, NULLs made again) and jump to the original's instruction `shape.resume_at`.
pub fn emit_prologue(
    b: &mut Builder<'_>,
    shape: &ResumeShape,
    nlocals: usize,
    marker: &PyObjectRef,
) {
    b.emit(Opcode::Resume, 0);
    for &slot in &shape.unbound {
        b.emit(Opcode::DeleteFast, slot as u32);
    }
    for &slot in &shape.maybe_unbound {
        // if slot is marker: del slot
        let kept = b.new_label();
        b.emit(Opcode::LoadFast, slot as u32);
        b.load_const(marker.clone());
        b.emit(Opcode::IsOp, 0);
        b.jump(Opcode::PopJumpIfFalse, 0, kept);
        b.emit(Opcode::DeleteFast, slot as u32);
        b.place(kept);
    }
    let mut next = nlocals;
    for &null in &shape.stack {
        if null {
            b.emit(Opcode::PushNull, 0);
        } else {
            // Cleared as it is pushed: the stack holds the only reference, as it did.
            b.emit(Opcode::LoadFastAndClear, next as u32);
            next += 1;
        }
    }
    b.jump(Opcode::JumpForward, 0, Label::Original(shape.resume_at));
}

/// The state the handler function of a break under `handler` takes: the original's stack cut
/// to the handler's depth (`kept`: `true` for a NULL), the raising instruction's offset if the
/// handler wants it, and the exception; `unbound` as for the resume function.
pub fn handler_shape(
    handler: &Handler,
    kept: &[bool],
    unbound: Vec<usize>,
) -> SimResult<ResumeShape> {
    let below = kept.get(..handler.depth as usize).ok_or_else(|| {
        Unsupported::new(
            Kind::Internal,
            "the handler's stack is deeper than the break's",
        )
    })?;
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
    /// A loop's body as a function (`loop_split`), for the locals bound at its head.
    LoopBody { head: usize, bound: Vec<bool> },
    /// The loop run as written, calling its body function (`loop_split`).
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
    ) -> SimResult<String> {
        let marker = self.unbound_marker(vm);
        self.bound_function(
            original,
            Purpose::Resume(shape.clone()),
            globals,
            vm,
            || resume_code(original, body, shape, "resume", &marker, vm),
        )
    }

    /// How many frames stand between the frame of `code` and the caller of the user's frame
    /// it continues: 0 for a user's code; for a resume function or a handler, the replacement
    /// that calls it and those of the functions that one continues; `None` for a function
    /// made for a loop.
    pub fn frames_between(&self, code: &Py<PyCode>) -> Option<usize> {
        let made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        let (mut at, mut between) = (code as *const Py<PyCode> as usize, 0);
        while let Some(((original, purpose), _)) = made
            .iter()
            .find(|(_, m)| &*m.code as *const Py<PyCode> as usize == at)
        {
            match purpose {
                Purpose::Resume(_) | Purpose::Handler(_) => between += 1,
                Purpose::LoopBody { .. } | Purpose::LoopDriver { .. } => return None,
            }
            at = *original;
        }
        Some(between)
    }

    /// The code of the resume function for `shape`, once made.
    pub fn code_for(&self, original: &Py<PyCode>, shape: &ResumeShape) -> Option<PyRef<PyCode>> {
        self.made_code(original, Purpose::Resume(shape.clone()))
    }

    /// The code of the function made for `purpose`, once made.
    pub fn made_code(&self, original: &Py<PyCode>, purpose: Purpose) -> Option<PyRef<PyCode>> {
        let key = (original as *const _ as usize, purpose);
        let made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        made.get(&key).map(|m| m.code.clone())
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
    ) -> SimResult<String> {
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
        make: impl FnOnce() -> SimResult<PyRef<PyCode>>,
    ) -> SimResult<String> {
        use rustpython_vm::AsObject;
        let key = (original as *const _ as usize, purpose);
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        if !made.contains_key(&key) {
            let code = make()?;
            crate::bytecode::verify(&code).map_err(|e| {
                Unsupported::new(
                    Kind::Internal,
                    format!(
                        "the generated function {} was rejected by the verifier: {e}",
                        code.qualname.as_str()
                    ),
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
        if !m.code.freevars.is_empty() {
            // A closure over the frame's cells: the replacement makes it (`closure_cells`).
            return Ok(m.name.clone());
        }
        let bound = globals.get_item_opt(m.name.as_str(), vm).ok().flatten();
        let current = bound
            .as_ref()
            .filter(|f| {
                f.downcast_ref::<rustpython_vm::builtins::PyFunction>()
                    .is_some()
            })
            .and_then(|f| f.get_attr("__code__", vm).ok())
            .is_some_and(|c| c.is(m.code.as_object()));
        if !current {
            let func = vm
                .ctx
                .types
                .function_type
                .as_object()
                .call((m.code.clone(), globals.to_owned()), vm)
                .map_err(|_| Unsupported::new(Kind::Internal, "cannot make the resume function"))?;
            globals.set_item(m.name.as_str(), func, vm).map_err(|_| {
                Unsupported::new(
                    Kind::Internal,
                    "cannot bind the resume function in the globals",
                )
            })?;
        }
        Ok(m.name.clone())
    }
}
