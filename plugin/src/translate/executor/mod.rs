//! The opcode executor: runs a code object's instructions over symbolic values in a virtual
//! frame (`frame`). Control flow follows values known at trace time; loops unroll within the
//! instruction budget. What it cannot simulate is reported as a typed `Unsupported` with the
//! instruction's file:line.
//!
//! The table below is the whole instruction set the executor knows: per opcode, the handler
//! that simulates it (in the file of its family) and what the frame does where it cannot be
//! simulated (`AtFailure`: break the graph there, as a call, a branch or another instruction,
//! or run the whole frame as written). Opcodes not in the table are not simulated, and break.

mod attrs;
mod build;
mod calls;
mod control;
mod exceptions;
mod frame;
mod generators;
mod imports;
mod locals;
mod operators;
mod patterns;
mod stack;

use rustpython_vm::bytecode::Opcode;

use crate::bytecode::decode::Instr;
use crate::bytecode::opcodes::opcode_name;
use crate::translate::breaks::{AtFailure, branch, branch_if_bool, call, no_break, opcode};
use crate::translate::state::{
    INSTRUCTION_BUDGET, Kind, STEPS_WITHOUT_TENSORS, SimResult, State, Unsupported, unsupported,
};
use crate::translate::values::Var;

pub use frame::{Returned, SimFrame, Slot};

/// What an instruction did to the flow of its frame.
pub enum Flow {
    /// Go on with the next instruction (or where a jump set the frame's pc).
    Next,
    /// The frame returned, raised out of itself, or (a generator) yielded.
    Return(Returned),
}

type Handler = SimResult<Flow>;

/// The instruction set: `Opcode, ... => handler, what a frame does where it fails;`.
macro_rules! instruction_set {
    ($( $($op:ident)|+ => $handler:ident, $at_failure:ident; )*) => {
        impl State<'_> {
            fn dispatch(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
                match x.op {
                    $( $(Opcode::$op)|+ => self.$handler(f, x), )*
                    other => unsupported(Kind::Opcode, format!("opcode {}", opcode_name(other))),
                }
            }
        }

        /// What a frame does where `x` cannot be simulated, as declared in the table.
        pub fn at_failure(x: &Instr) -> AtFailure {
            match x.op {
                $( $(Opcode::$op)|+ => $at_failure(x), )*
                _ => opcode(x),
            }
        }
    };
}

instruction_set! {
    // stack.rs
    Resume | Nop | NotTaken | Cache | ExtendedArg => nop, opcode;
    PopTop | EndFor | PopIter => pop_top, opcode;
    PushNull => push_null, opcode;
    Copy => copy, opcode;
    Swap => swap, opcode;
    // locals.rs
    MakeCell => make_cell, opcode;
    CopyFreeVars => copy_free_vars, opcode;
    // The instructions on local slots do not break: run in the replacement, they would read
    // its slots, which hold what the frame was entered with, not the simulated locals.
    LoadFast | LoadFastBorrow | LoadFastCheck => load_fast, no_break;
    // It may push a NULL, which the replacement cannot pass on.
    LoadFastAndClear => load_fast_and_clear, no_break;
    LoadFastLoadFast | LoadFastBorrowLoadFastBorrow => load_fast_load_fast, no_break;
    StoreFast => store_fast, no_break;
    StoreFastLoadFast => store_fast_load_fast, no_break;
    StoreFastStoreFast => store_fast_store_fast, no_break;
    DeleteFast => delete_fast, no_break;
    LoadDeref => load_deref, opcode;
    StoreDeref => store_deref, opcode;
    DeleteDeref => delete_deref, opcode;
    LoadConst => load_const, opcode;
    LoadSmallInt => load_small_int, opcode;
    LoadCommonConstant => load_common_constant, opcode;
    LoadGlobal => load_global, opcode;
    // imports.rs
    ImportName => import_name, opcode;
    ImportFrom => import_from, opcode;
    StoreGlobal | DeleteGlobal => store_global, opcode;
    // operators.rs
    BinaryOp => binary_op, opcode;
    BinarySlice => binary_slice, opcode;
    StoreSubscr => store_subscr, opcode;
    StoreSlice => store_slice, opcode;
    DeleteSubscr => delete_subscr, opcode;
    UnaryNegative | UnaryInvert => unary, opcode;
    UnaryNot => unary_not, branch;
    ToBool => to_bool, branch;
    // A comparison whose bool feeds a jump breaks as a branch (the jump cannot).
    CompareOp => compare_op, branch_if_bool;
    IsOp => is_op, opcode;
    ContainsOp => contains_op, opcode;
    CallIntrinsic1 => call_intrinsic_1, opcode;
    // build.rs
    BuildTuple => build_tuple, opcode;
    BuildList => build_list, opcode;
    BuildMap => build_map, opcode;
    BuildSet => build_set, opcode;
    SetAdd | SetUpdate => set_add_or_update, opcode;
    BuildString => build_string, opcode;
    BuildSlice => build_slice, opcode;
    ListAppend => list_append, opcode;
    ListExtend => list_extend, opcode;
    MapAdd => map_add, opcode;
    DictUpdate | DictMerge => dict_update, opcode;
    UnpackSequence => unpack_sequence, opcode;
    UnpackEx => unpack_ex, opcode;
    FormatSimple | FormatWithSpec => format_value, opcode;
    ConvertValue => convert_value, opcode;
    BuildInterpolation => build_interpolation, opcode;
    BuildTemplate => build_template, opcode;
    // patterns.rs
    MatchSequence | MatchMapping => match_collection, opcode;
    GetLen => get_len, opcode;
    MatchKeys => match_keys, opcode;
    MatchClass => match_class, opcode;
    // attrs.rs
    LoadAttr => load_attr, opcode;
    LoadSuperAttr => load_super_attr, opcode;
    StoreAttr => store_attr, opcode;
    DeleteAttr => delete_attr, opcode;
    // It may push a NULL as its second value, which the replacement cannot pass on.
    LoadSpecial => load_special, no_break;
    // calls.rs
    Call | CallKw => call, call;
    CallFunctionEx => call_function_ex, call;
    MakeFunction => make_function, opcode;
    SetFunctionAttribute => set_function_attribute, opcode;
    // control.rs
    JumpForward | JumpBackward | JumpBackwardNoInterrupt => jump, opcode;
    PopJumpIfTrue | PopJumpIfFalse | PopJumpIfNone | PopJumpIfNotNone => pop_jump_if, opcode;
    GetIter => get_iter, opcode;
    ForIter => for_iter, opcode;
    ReturnValue => return_value, opcode;
    // exceptions.rs: the VM's record of an exception being handled cannot be rebuilt at a
    // break, so the instructions that handle one do not break.
    RaiseVarargs => raise_varargs, opcode;
    Reraise => reraise, opcode;
    PushExcInfo => push_exc_info, no_break;
    PopExcept => pop_except, no_break;
    CheckExcMatch => check_exc_match, no_break;
    WithExceptStart => not_simulated, no_break;
    // generators.rs: a generator's frame is never replaced; these are simulated inside the
    // frame that consumes it.
    ReturnGenerator => return_generator, no_break;
    YieldValue => yield_value, no_break;
    Send => send, no_break;
    EndSend => end_send, opcode;
    GetYieldFromIter => get_iter, opcode;
    GetAwaitable => not_simulated, no_break;
}

/// Where `run_top` stops before its frame returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Never,
    /// Before the frame's own `n`th instruction (counted as `top_steps` counts).
    BeforeStep(usize),
    /// The first time the frame is about to run the body's instruction at this index.
    AtFirst(usize),
}

/// How the simulation of the translated frame itself ended.
pub enum TopOutcome {
    Returned(Returned),
    /// Stopped before the instruction at `SimFrame::pc`, as asked (a graph break).
    Stopped,
}

impl State<'_> {
    /// Simulate the translated frame `f` to its return, or until `stop` says so. `top_steps`
    /// counts the frame's own instructions, so that after a failure it names the instruction
    /// that failed (an inlined call fails at the caller's CALL).
    pub fn run_top(&mut self, f: &mut SimFrame, stop: Stop) -> SimResult<TopOutcome> {
        self.top_steps = 0;
        loop {
            let stopped = match stop {
                Stop::Never => false,
                Stop::BeforeStep(n) => n == self.top_steps,
                Stop::AtFirst(pc) => f.body_pc() == Some(pc),
            };
            if stopped {
                return Ok(TopOutcome::Stopped);
            }
            self.top_steps += 1;
            if let Some(x) = f.instrs.get(f.pc) {
                self.top_position = x.position;
            }
            if let Flow::Return(r) = self.step(f)? {
                return Ok(TopOutcome::Returned(r));
            }
        }
    }

    /// Simulate `f` (an inlined call, or a generator's frame to its next yield) to its end.
    pub fn run(&mut self, f: &mut SimFrame) -> SimResult<Returned> {
        self.run_to_end(f, false)
    }

    /// Simulate `f` to its end; with `catch`, an exception it raises out of itself is
    /// returned (`Returned::raised`) for the caller to handle, instead of failing.
    pub fn run_to_end(&mut self, f: &mut SimFrame, catch: bool) -> SimResult<Returned> {
        loop {
            match self.step(f)? {
                Flow::Next => {}
                Flow::Return(r) if r.raised && !catch => {
                    let shown = match &r.value {
                        Var::Obj(o) => o.class().name().to_string(),
                        other => other.kind(),
                    };
                    let mut e = Unsupported::new(
                        Kind::Raises,
                        format!(
                            "{shown} raised out of {} (an exception leaving an inlined call)",
                            f.code.qualname.as_str()
                        ),
                    );
                    e.location = Some(f.location());
                    return Err(e);
                }
                Flow::Return(r) => return Ok(r),
            }
        }
    }

    /// Simulate the next instruction of `f`; a failure names its location.
    fn step(&mut self, f: &mut SimFrame) -> Handler {
        crate::translate::nesting::stack_left()?;
        self.steps += 1;
        if self.steps > INSTRUCTION_BUDGET {
            return unsupported(
                Kind::Limit,
                format!("more than {INSTRUCTION_BUDGET} instructions to simulate"),
            );
        }
        if self.steps >= STEPS_WITHOUT_TENSORS && self.needs_tensors {
            if crate::graph::recorder::with(|r| {
                r.graph.inputs.is_empty() && r.graph.nodes.is_empty()
            }) {
                return unsupported(
                    Kind::EmptyGraph,
                    format!("no tensor work in the first {STEPS_WITHOUT_TENSORS} instructions"),
                );
            }
            // Tensor work was seen: the recorder is not asked again on every later step.
            self.needs_tensors = false;
        }
        let Some(x) = f.instrs.get(f.pc).cloned() else {
            return unsupported(Kind::Internal, "ran past the end of the code");
        };
        f.pc += 1;
        self.position = x.position;
        self.under_handler =
            f.called_under_handler || x.handler.as_ref().is_some_and(|h| f.catches(h));
        let popped = x.op.stack_effect_info(x.arg).popped() as usize;
        if f.stack[f.stack.len().saturating_sub(popped)..]
            .iter()
            .any(|v| matches!(v, Var::Num(_)))
        {
            self.force_popped(x.op, &mut f.stack, popped)?;
        }
        self.pending_raise = None;
        let result = self.dispatch(f, &x);
        // An operation (or an inlined call) raised what Python raises there, under a handler
        // of this frame: the handler gets it, as the VM's would; under one of a frame
        // further out, this frame raises it on to its caller. Under none it is not followed
        // (the inlined calls that raise are rolled back, their guards with them): the raise
        // is dropped here, so that no caller takes it for its own.
        let raised = match &result {
            Err(e) => self.take_raise(e),
            Ok(_) => None,
        };
        match result {
            // Under a handler of a frame further out, this inlined frame raises it on.
            Err(_)
                if let Some(r) = raised
                    && (x.handler.is_some() || f.called_under_handler) =>
            {
                let exc = match r.made {
                    Some(exc) => exc,
                    None => {
                        let exc = self.new_exception_with(r.class, r.args, r.attributes)?;
                        self.note_raised(&exc, f.handling.last());
                        exc
                    }
                };
                if x.handler.is_some() {
                    return Ok(self.throw(f, exc, &x));
                }
                Ok(Flow::Return(Returned {
                    value: exc,
                    position: x.position,
                    yielded: false,
                    raised: true,
                }))
            }
            result => result.map_err(|mut e| {
                if e.location.is_none() {
                    e.location = Some(f.location());
                }
                e
            }),
        }
    }

    /// An instruction the executor knows but does not simulate.
    fn not_simulated(&mut self, _f: &mut SimFrame, x: &Instr) -> Handler {
        unsupported(Kind::Opcode, format!("opcode {}", opcode_name(x.op)))
    }
}
