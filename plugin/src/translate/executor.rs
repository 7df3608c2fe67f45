//! The opcode executor: runs a code object's instructions over symbolic values in a virtual
//! frame (slots, cells, value stack). Control flow follows values known at trace time; loops
//! unroll within the instruction budget. What it cannot simulate is reported as
//! [`Unsupported`] with the instruction's file:line.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rustpython_vm::builtins::{PyCode, PyStr};
use rustpython_vm::bytecode::{
    BinaryOperator, ComparisonOperator, ConvertValueOparg, IntrinsicFunction1, MakeFunctionFlag,
    Opcode,
};
use rustpython_vm::{PyObjectRef, PyRef};

use super::source::Source;
use super::tracer::{
    INSTRUCTION_BUDGET, Location, MAX_INLINE_DEPTH, SimResult, Tracer, Unsupported, unsupported,
};
use super::var::{CellRef, CellState, Globals, SimFunction, SimGen, Var};
use crate::bytecode::decode::{Instr, decode};
use crate::bytecode::linetable::Position;

/// A frame slot: a value, or a cell (for cell and free variables).
#[derive(Clone, Debug)]
pub enum Slot {
    Empty,
    Val(Var),
    Cell(CellRef),
}

/// A frame being simulated.
pub struct SimFrame {
    pub code: PyRef<PyCode>,
    instrs: Vec<Instr>,
    body: usize,
    pub slots: Vec<Slot>,
    names: Vec<String>,
    pub stack: Vec<Var>,
    pub globals: Globals,
    /// The free variables' cells, in order, for COPY_FREE_VARS.
    pub closure: Vec<CellRef>,
    pc: usize,
    /// Exceptions being handled (PUSH_EXC_INFO to POP_EXCEPT), innermost last: what a bare
    /// `raise` raises.
    handling: Vec<Var>,
}

/// How a simulated frame ended, or (a generator's) stopped at a yield.
pub struct Returned {
    pub value: Var,
    pub position: Position,
    pub yielded: bool,
    /// The frame raised `value` (see `exceptions`).
    pub raised: bool,
}

impl SimFrame {
    pub fn new(code: PyRef<PyCode>, globals: Globals, closure: Vec<CellRef>) -> SimResult<Self> {
        let decoded = decode(&code).map_err(|e| Unsupported {
            reason: format!("cannot decode: {e}"),
            location: None,
        })?;
        let names: Vec<String> = code
            .localsplus_names()
            .iter()
            .map(|n| n.as_str().to_owned())
            .collect();
        // Decoded jump targets index the body, which follows the prologue here.
        let body = decoded.prologue.len();
        let mut instrs = decoded.prologue;
        instrs.extend(decoded.instrs);
        Ok(Self {
            slots: vec![Slot::Empty; names.len()],
            names,
            code,
            instrs,
            body,
            stack: Vec::new(),
            globals,
            closure,
            pc: 0,
            handling: Vec::new(),
        })
    }

    /// An exception is being handled (the frame is inside an except or finally block entered
    /// by one): the VM's record of it could not be rebuilt at a break.
    pub fn handling_exception(&self) -> bool {
        !self.handling.is_empty()
    }

    pub fn slot_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    fn location(&self) -> Location {
        let line = self
            .instrs
            .get(self.pc.saturating_sub(1))
            .and_then(|i| i.position.line)
            .unwrap_or(0)
            .max(0) as u32;
        Location {
            file: self.code.source_path().as_str().to_owned(),
            line,
            function: self.code.qualname.as_str().to_owned(),
        }
    }

    fn pop(&mut self) -> SimResult<Var> {
        match self.stack.pop() {
            Some(v) => Ok(v),
            None => unsupported("stack underflow"),
        }
    }

    fn popn(&mut self, n: usize) -> SimResult<Vec<Var>> {
        if self.stack.len() < n {
            return unsupported("stack underflow");
        }
        Ok(self.stack.split_off(self.stack.len() - n))
    }

    fn top(&self, depth: usize) -> SimResult<&Var> {
        match self.stack.len().checked_sub(depth) {
            Some(i) => Ok(&self.stack[i]),
            None => unsupported("stack underflow"),
        }
    }

    fn name(&self, i: u32) -> String {
        self.code
            .names
            .get(i as usize)
            .map(|n| n.as_str().to_owned())
            .unwrap_or_default()
    }
}

/// What resuming a simulated generator gave.
pub enum Resumed {
    Yielded(Var),
    /// It returned (StopIteration) with this value.
    Returned(Var),
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

impl Tracer<'_> {
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
            match self.step(f) {
                Ok(Some(r)) => return Ok(TopOutcome::Returned(r)),
                Ok(None) => {}
                Err(mut e) => {
                    if e.location.is_none() {
                        e.location = Some(f.location());
                    }
                    return Err(e);
                }
            }
        }
    }

    /// Simulate `f` to its return (or, for a generator's frame, to its next yield).
    pub fn run(&mut self, f: &mut SimFrame) -> SimResult<Returned> {
        loop {
            match self.step(f) {
                Ok(Some(r)) if r.raised => {
                    let shown = match &r.value {
                        Var::Obj(o) => o.class().name().to_string(),
                        other => other.kind().to_string(),
                    };
                    return Err(Unsupported {
                        reason: format!(
                            "{shown} raised out of {} (an exception leaving an inlined call)",
                            f.code.qualname.as_str()
                        ),
                        location: Some(f.location()),
                    });
                }
                Ok(Some(r)) => return Ok(r),
                Ok(None) => {}
                Err(mut e) => {
                    if e.location.is_none() {
                        e.location = Some(f.location());
                    }
                    return Err(e);
                }
            }
        }
    }

    /// The next item of an iterator made during the simulation (`None`: exhausted).
    pub fn next_item(&mut self, iterator: &Var) -> SimResult<Option<Var>> {
        match iterator {
            Var::Iter(it) => Ok(it.borrow_mut().pop_front()),
            Var::Gen(g) => Ok(match self.resume(g)? {
                Resumed::Yielded(v) => Some(v),
                Resumed::Returned(_) => None,
            }),
            other => unsupported(format!("next() of a {}", other.kind())),
        }
    }

    /// Run a simulated generator to its next yield or its return.
    pub fn resume(&mut self, g: &Rc<RefCell<SimGen>>) -> SimResult<Resumed> {
        // The frame is taken out while it runs: a generator that resumes itself is refused.
        let (frame, started) = {
            let mut state = g.borrow_mut();
            if state.done {
                return Ok(Resumed::Returned(Var::Obj(self.vm.ctx.none())));
            }
            let started = std::mem::replace(&mut state.started, true);
            (state.frame.take(), started)
        };
        let Some(mut frame) = frame else {
            return unsupported(format!(
                "generator {} already running (ValueError)",
                g.borrow().qualname
            ));
        };
        if started {
            // What the paused YIELD_VALUE evaluates to: the value sent, None for next().
            frame.stack.push(Var::Obj(self.vm.ctx.none()));
        }
        if self.depth >= MAX_INLINE_DEPTH {
            return unsupported("generators nested too deep");
        }
        self.depth += 1;
        let result = self.run(&mut frame);
        self.depth -= 1;
        let r = result?;
        let mut state = g.borrow_mut();
        if r.yielded {
            state.frame = Some(frame);
            Ok(Resumed::Yielded(r.value))
        } else {
            state.done = true;
            Ok(Resumed::Returned(r.value))
        }
    }

    fn load_slot(&mut self, f: &SimFrame, i: usize) -> SimResult<Var> {
        match f.slots.get(i) {
            Some(Slot::Val(v)) => Ok(v.clone()),
            Some(Slot::Cell(c)) => Ok(Var::Cell(c.clone())),
            _ => unsupported(format!(
                "local {:?} is unbound (UnboundLocalError)",
                f.names.get(i).map_or("?", |s| s.as_str())
            )),
        }
    }

    fn store_slot(f: &mut SimFrame, i: usize, v: Var) -> SimResult<()> {
        match f.slots.get_mut(i) {
            Some(s) => {
                *s = if matches!(v, Var::Null) {
                    Slot::Empty
                } else {
                    Slot::Val(v)
                };
                Ok(())
            }
            None => unsupported("local slot out of range"),
        }
    }

    fn cell(f: &SimFrame, i: usize) -> SimResult<CellRef> {
        match f.slots.get(i) {
            Some(Slot::Cell(c)) => Ok(c.clone()),
            _ => unsupported("not a cell"),
        }
    }

    /// Raise `exc` at the instruction just started: to its handler (the stack cut to the
    /// handler's depth, the raising offset pushed if it wants it, then the exception), or out
    /// of the frame.
    fn throw(&mut self, f: &mut SimFrame, exc: Var, position: Position) -> Option<Returned> {
        let at = f.pc - 1;
        match f.instrs[at].handler {
            Some(h) => {
                f.stack.truncate(h.depth as usize);
                if h.push_lasti {
                    let offset = at.saturating_sub(f.body) as u32;
                    f.stack.push(Var::Obj(self.vm.ctx.new_int(offset).into()));
                }
                f.stack.push(exc);
                f.pc = f.body + h.target;
                None
            }
            None => Some(Returned {
                value: exc,
                position,
                yielded: false,
                raised: true,
            }),
        }
    }

    fn step(&mut self, f: &mut SimFrame) -> SimResult<Option<Returned>> {
        self.steps += 1;
        if self.steps > INSTRUCTION_BUDGET {
            return unsupported(format!(
                "more than {INSTRUCTION_BUDGET} instructions to simulate"
            ));
        }
        let Some(ins) = f.instrs.get(f.pc).cloned() else {
            return unsupported("ran past the end of the code");
        };
        f.pc += 1;
        let vm = self.vm;
        let arg = ins.arg;
        match ins.op {
            Opcode::Resume
            | Opcode::Nop
            | Opcode::NotTaken
            | Opcode::Cache
            | Opcode::ExtendedArg => {}
            Opcode::MakeCell => {
                let i = arg as usize;
                let value = match f.slots.get(i) {
                    Some(Slot::Val(v)) => Some(v.clone()),
                    _ => None,
                };
                f.slots[i] = Slot::Cell(Rc::new(RefCell::new(CellState {
                    value,
                    existing: false,
                    home: None,
                })));
            }
            Opcode::CopyFreeVars => {
                let n = arg as usize;
                let first = f.slots.len() - n;
                for k in 0..n {
                    let cell = f.closure.get(k).cloned().ok_or_else(|| Unsupported {
                        reason: "closure too short".into(),
                        location: None,
                    })?;
                    f.slots[first + k] = Slot::Cell(cell);
                }
            }
            Opcode::LoadFast | Opcode::LoadFastBorrow | Opcode::LoadFastCheck => {
                let v = self.load_slot(f, arg as usize)?;
                f.stack.push(v);
            }
            Opcode::LoadFastAndClear => {
                let v = match f.slots.get(arg as usize) {
                    Some(Slot::Val(v)) => v.clone(),
                    _ => Var::Null,
                };
                f.slots[arg as usize] = Slot::Empty;
                f.stack.push(v);
            }
            Opcode::LoadFastLoadFast | Opcode::LoadFastBorrowLoadFastBorrow => {
                let a = self.load_slot(f, (arg >> 4) as usize)?;
                let b = self.load_slot(f, (arg & 15) as usize)?;
                f.stack.push(a);
                f.stack.push(b);
            }
            Opcode::StoreFast => {
                let v = f.pop()?;
                Self::store_slot(f, arg as usize, v)?;
            }
            Opcode::StoreFastLoadFast => {
                let v = f.pop()?;
                Self::store_slot(f, (arg >> 4) as usize, v)?;
                let w = self.load_slot(f, (arg & 15) as usize)?;
                f.stack.push(w);
            }
            Opcode::StoreFastStoreFast => {
                let a = f.pop()?;
                Self::store_slot(f, (arg >> 4) as usize, a)?;
                let b = f.pop()?;
                Self::store_slot(f, (arg & 15) as usize, b)?;
            }
            Opcode::DeleteFast => {
                f.slots[arg as usize] = Slot::Empty;
            }
            Opcode::LoadDeref => {
                let c = Self::cell(f, arg as usize)?;
                let v = c.borrow().value.clone();
                match v {
                    Some(v) => f.stack.push(v),
                    None => return unsupported("free variable referenced before assignment"),
                }
            }
            Opcode::StoreDeref => {
                let v = f.pop()?;
                let c = Self::cell(f, arg as usize)?;
                let (existing, home) = (c.borrow().existing, c.borrow().home.clone());
                match (existing, home) {
                    (false, _) => {}
                    (true, Some(name)) => self.effects.store_cell(&name, v.clone()),
                    (true, None) => {
                        return unsupported(
                            "a store into a closure cell of an inlined function's caller (a side effect that is not replayed)",
                        );
                    }
                }
                c.borrow_mut().value = Some(v);
            }
            Opcode::LoadConst => {
                let c = f
                    .code
                    .constants
                    .get(arg as usize)
                    .cloned()
                    .ok_or_else(|| Unsupported {
                        reason: "constant out of range".into(),
                        location: None,
                    })?;
                f.stack.push(Var::Obj(c.into()));
            }
            Opcode::LoadSmallInt => f.stack.push(Var::Obj(vm.ctx.new_int(arg).into())),
            Opcode::LoadGlobal => {
                let name = f.name(arg >> 1);
                let v = self.load_global(&f.globals, &name)?;
                f.stack.push(v);
                if arg & 1 != 0 {
                    f.stack.push(Var::Null);
                }
            }
            Opcode::LoadAttr => {
                let name = f.name(arg >> 1);
                let owner = f.pop()?;
                if arg & 1 != 0 {
                    let (callable, this) = self.load_method(&owner, &name)?;
                    f.stack.push(callable);
                    f.stack.push(this);
                } else {
                    let v = self.load_attr(&owner, &name)?;
                    f.stack.push(v);
                }
            }
            Opcode::LoadSpecial => {
                let name = match arg {
                    0 => "__enter__",
                    1 => "__exit__",
                    _ => return unsupported("an async context manager"),
                };
                let owner = f.pop()?;
                let (callable, this) = self.load_special(&owner, name)?;
                f.stack.push(callable);
                f.stack.push(this);
            }
            Opcode::PopTop | Opcode::EndFor | Opcode::PopIter => {
                f.pop()?;
            }
            Opcode::PushNull => f.stack.push(Var::Null),
            Opcode::Copy => {
                let v = f.top(arg as usize)?.clone();
                f.stack.push(v);
            }
            Opcode::Swap => {
                let n = f.stack.len();
                let i = arg as usize;
                if i > n || i < 1 {
                    return unsupported("stack underflow");
                }
                f.stack.swap(n - 1, n - i);
            }
            Opcode::BinaryOp => {
                let op = BinaryOperator::try_from(arg).map_err(|_| Unsupported {
                    reason: "bad binary operator".into(),
                    location: None,
                })?;
                let b = f.pop()?;
                let a = f.pop()?;
                let r = self.binary(op, &a, &b)?;
                f.stack.push(r);
            }
            Opcode::BinarySlice => {
                let stop = f.pop()?;
                let start = f.pop()?;
                let container = f.pop()?;
                let (start, stop) = (self.obj(&start)?, self.obj(&stop)?);
                let slice = rustpython_vm::builtins::PySlice {
                    start: Some(start),
                    stop,
                    step: None,
                };
                let slice = rustpython_vm::PyPayload::into_pyobject(slice, vm);
                let r = self.binary(BinaryOperator::Subscr, &container, &Var::Obj(slice))?;
                f.stack.push(r);
            }
            Opcode::BuildSlice => {
                let n = arg as usize;
                let parts = f.popn(n)?;
                let objs = parts
                    .iter()
                    .map(|p| self.obj(p))
                    .collect::<SimResult<Vec<_>>>()?;
                if !objs.iter().all(|o| super::var::is_plain(o, vm)) {
                    return unsupported("a slice of non-constant bounds");
                }
                let slice = rustpython_vm::builtins::PySlice {
                    start: Some(objs[0].clone()),
                    stop: objs[1].clone(),
                    step: objs.get(2).cloned(),
                };
                f.stack
                    .push(Var::Obj(rustpython_vm::PyPayload::into_pyobject(slice, vm)));
            }
            Opcode::UnaryNegative | Opcode::UnaryInvert => {
                let a = f.pop()?;
                let o = self.obj(&a)?;
                let r = if ins.op == Opcode::UnaryNegative {
                    vm._neg(&o)
                } else {
                    vm._invert(&o)
                };
                let r = self.native_result(r, self.is_tensor(&a), "a unary operator")?;
                f.stack.push(r);
            }
            Opcode::UnaryNot => {
                let a = f.pop()?;
                let t = self.truth(&a)?;
                f.stack.push(Var::Obj(vm.ctx.new_bool(!t).into()));
            }
            Opcode::ToBool => {
                let a = f.pop()?;
                let t = self.truth(&a)?;
                f.stack.push(Var::Obj(vm.ctx.new_bool(t).into()));
            }
            Opcode::CallIntrinsic1 => {
                let v = f.pop()?;
                let func = IntrinsicFunction1::try_from(arg).map_err(|_| Unsupported {
                    reason: "bad intrinsic".into(),
                    location: None,
                })?;
                let r = match func {
                    IntrinsicFunction1::ListToTuple => Var::tuple(self.items(&v)?),
                    IntrinsicFunction1::UnaryPositive => {
                        let o = self.obj(&v)?;
                        self.native_result(vm._pos(&o), self.is_tensor(&v), "unary +")?
                    }
                    other => return unsupported(format!("intrinsic {other:?}")),
                };
                f.stack.push(r);
            }
            Opcode::CompareOp => {
                let b = f.pop()?;
                let a = f.pop()?;
                let op = ComparisonOperator::try_from(arg).map_err(|_| Unsupported {
                    reason: "bad comparison".into(),
                    location: None,
                })?;
                let r = self.compare(op, &a, &b)?;
                // The compiler asks for a bool where the comparison feeds a jump: of a tensor,
                // a branch on its value. It breaks here (the comparison, run as written, gives
                // the bool), not at the jump, which cannot be a break point.
                let r = if arg & rustpython_vm::bytecode::oparg::COMPARE_OP_BOOL_MASK != 0 {
                    Var::Obj(vm.ctx.new_bool(self.truth(&r)?).into())
                } else {
                    r
                };
                f.stack.push(r);
            }
            Opcode::IsOp => {
                let b = f.pop()?;
                let a = f.pop()?;
                let same = self.is(&a, &b)?;
                f.stack
                    .push(Var::Obj(vm.ctx.new_bool(same != (arg == 1)).into()));
            }
            Opcode::ContainsOp => {
                let haystack = f.pop()?;
                let needle = f.pop()?;
                let found = self.contains(&haystack, &needle)?;
                f.stack
                    .push(Var::Obj(vm.ctx.new_bool(found != (arg == 1)).into()));
            }
            Opcode::BuildTuple => {
                let items = f.popn(arg as usize)?;
                f.stack.push(Var::tuple(items));
            }
            Opcode::BuildList => {
                let items = f.popn(arg as usize)?;
                f.stack.push(Var::list(items));
            }
            Opcode::BuildMap => {
                let flat = f.popn(2 * arg as usize)?;
                let mut entries: Vec<(PyObjectRef, Var)> = Vec::new();
                for pair in flat.chunks(2) {
                    let key = self.key(&pair[0])?;
                    dict_insert(&mut entries, key, pair[1].clone(), vm)?;
                }
                f.stack.push(Var::Dict(Rc::new(RefCell::new(entries))));
            }
            Opcode::BuildString => {
                let parts = f.popn(arg as usize)?;
                let mut s = String::new();
                for p in &parts {
                    let o = self.obj(p)?;
                    match o.downcast_ref::<PyStr>() {
                        Some(x) => s.push_str(&x.to_string_lossy()),
                        None => return unsupported("BUILD_STRING of a non-string"),
                    }
                }
                f.stack.push(Var::Obj(vm.ctx.new_str(s).into()));
            }
            Opcode::FormatSimple | Opcode::FormatWithSpec => {
                let spec = if ins.op == Opcode::FormatWithSpec {
                    Some(f.pop()?)
                } else {
                    None
                };
                let v = f.pop()?;
                let o = self.plain_obj(&v, "formatting")?;
                let spec = match spec {
                    Some(s) => self
                        .plain_obj(&s, "a format spec")?
                        .downcast::<PyStr>()
                        .map_err(|_| Unsupported {
                            reason: "format spec".into(),
                            location: None,
                        })?,
                    None => vm.ctx.new_str(""),
                };
                let r = vm.format(&o, spec).map_err(|_| Unsupported {
                    reason: "formatting raises".into(),
                    location: None,
                })?;
                f.stack.push(Var::Obj(r.into()));
            }
            Opcode::ConvertValue => {
                let v = f.pop()?;
                let o = self.plain_obj(&v, "a conversion")?;
                let conv = ConvertValueOparg::try_from(arg).map_err(|_| Unsupported {
                    reason: "bad conversion".into(),
                    location: None,
                })?;
                let r = match conv {
                    ConvertValueOparg::Str => o.str(vm).map(Into::into),
                    ConvertValueOparg::Repr => o.repr(vm).map(Into::into),
                    ConvertValueOparg::Ascii => {
                        rustpython_vm::stdlib::builtins::ascii(o, vm).map(Into::into)
                    }
                    ConvertValueOparg::None => Ok(o),
                };
                let r = r.map_err(|_| Unsupported {
                    reason: "conversion raises".into(),
                    location: None,
                })?;
                f.stack.push(Var::Obj(r));
            }
            Opcode::ListAppend => {
                let v = f.pop()?;
                match f.top(arg as usize)? {
                    Var::List(l) => l.borrow_mut().push(v),
                    _ => return unsupported("LIST_APPEND to a non-list"),
                }
            }
            Opcode::ListExtend => {
                let v = f.pop()?;
                let items = self.items(&v)?;
                match f.top(arg as usize)? {
                    Var::List(l) => l.borrow_mut().extend(items),
                    _ => return unsupported("LIST_EXTEND to a non-list"),
                }
            }
            Opcode::MapAdd => {
                let value = f.pop()?;
                let key = f.pop()?;
                let key = self.key(&key)?;
                match f.top(arg as usize)?.clone() {
                    Var::Dict(d) => dict_insert(&mut d.borrow_mut(), key, value, vm)?,
                    _ => return unsupported("MAP_ADD to a non-dict"),
                }
            }
            Opcode::DictUpdate | Opcode::DictMerge => {
                let other = f.pop()?;
                let entries = self.dict_entries(&other)?;
                match f.top(arg as usize)?.clone() {
                    Var::Dict(d) => {
                        for (k, v) in entries {
                            if ins.op == Opcode::DictMerge
                                && d.borrow()
                                    .iter()
                                    .any(|(k2, _)| vm.bool_eq(k2, &k).unwrap_or(false))
                            {
                                return unsupported("duplicate keyword argument (TypeError)");
                            }
                            dict_insert(&mut d.borrow_mut(), k, v, vm)?;
                        }
                    }
                    _ => return unsupported("DICT_UPDATE of a non-dict"),
                }
            }
            Opcode::UnpackSequence => {
                let v = f.pop()?;
                let items = self.items(&v)?;
                if items.len() != arg as usize {
                    return unsupported(format!(
                        "unpacking {} values into {arg} (ValueError)",
                        items.len()
                    ));
                }
                f.stack.extend(items.into_iter().rev());
            }
            Opcode::UnpackEx => {
                let before = (arg & 0xff) as usize;
                let after = (arg >> 8) as usize;
                let v = f.pop()?;
                let items = self.items(&v)?;
                if items.len() < before + after {
                    return unsupported("not enough values to unpack (ValueError)");
                }
                let middle = items[before..items.len() - after].to_vec();
                let mut out: Vec<Var> = items[..before].to_vec();
                out.push(Var::list(middle));
                out.extend(items[items.len() - after..].iter().cloned());
                f.stack.extend(out.into_iter().rev());
            }
            Opcode::ReturnGenerator => {
                // A generator's first instruction: what it "returns" was made by the call
                // (`Var::Gen`); resumed, it goes on with the value sent, None.
                f.stack.push(Var::Obj(vm.ctx.none()));
            }
            Opcode::YieldValue => {
                let value = f.pop()?;
                return Ok(Some(Returned {
                    value,
                    position: ins.position,
                    yielded: true,
                    raised: false,
                }));
            }
            Opcode::Send => {
                // `yield from`: [receiver, sent] -> [receiver, item], or, once the receiver is
                // done, [receiver, its return value] and a jump to END_SEND.
                f.pop()?;
                let receiver = f.top(1)?.clone();
                let done = match &receiver {
                    Var::Gen(g) => match self.resume(g)? {
                        Resumed::Yielded(item) => {
                            f.stack.push(item);
                            None
                        }
                        Resumed::Returned(value) => Some(value),
                    },
                    other => match self.next_item(other)? {
                        Some(item) => {
                            f.stack.push(item);
                            None
                        }
                        None => Some(Var::Obj(vm.ctx.none())),
                    },
                };
                if let Some(value) = done {
                    f.stack.push(value);
                    f.pc = f.body_start()
                        + ins.target.ok_or_else(|| Unsupported {
                            reason: "SEND without target".into(),
                            location: None,
                        })?;
                }
            }
            Opcode::EndSend => {
                let value = f.pop()?;
                f.pop()?;
                f.stack.push(value);
            }
            Opcode::GetIter | Opcode::GetYieldFromIter => {
                let v = f.pop()?;
                let it = match v {
                    Var::Iter(_) | Var::Gen(_) => v,
                    other => Var::Iter(Rc::new(RefCell::new(VecDeque::from(self.items(&other)?)))),
                };
                f.stack.push(it);
            }
            Opcode::ForIter => {
                let iterator = f.top(1)?.clone();
                let next = self.next_item(&iterator)?;
                match next {
                    Some(v) => f.stack.push(v),
                    None => {
                        let mut t = ins.target.ok_or_else(|| Unsupported {
                            reason: "FOR_ITER without target".into(),
                            location: None,
                        })?;
                        t += f.body_start();
                        if f.instrs.get(t).is_some_and(|i| i.op == Opcode::EndFor) {
                            t += 1;
                        }
                        f.pc = t;
                    }
                }
            }
            Opcode::JumpForward | Opcode::JumpBackward | Opcode::JumpBackwardNoInterrupt => {
                f.pc = f.body_start() + ins.target.expect("jump has a target");
            }
            Opcode::PopJumpIfTrue
            | Opcode::PopJumpIfFalse
            | Opcode::PopJumpIfNone
            | Opcode::PopJumpIfNotNone => {
                let v = f.pop()?;
                let jump = match ins.op {
                    Opcode::PopJumpIfTrue => self.truth(&v)?,
                    Opcode::PopJumpIfFalse => !self.truth(&v)?,
                    Opcode::PopJumpIfNone => self.is_none(&v)?,
                    _ => !self.is_none(&v)?,
                };
                if jump {
                    f.pc = f.body_start() + ins.target.expect("jump has a target");
                }
            }
            Opcode::Call | Opcode::CallKw => {
                let kwnames: Vec<String> = if ins.op == Opcode::CallKw {
                    let names = f.pop()?;
                    let Var::Obj(t) = names else {
                        return unsupported("keyword names");
                    };
                    let t = t
                        .downcast::<rustpython_vm::builtins::PyTuple>()
                        .map_err(|_| Unsupported {
                            reason: "keyword names".into(),
                            location: None,
                        })?;
                    t.as_slice()
                        .iter()
                        .map(|n| {
                            n.downcast_ref::<PyStr>()
                                .map(|s| s.to_string_lossy().into_owned())
                                .unwrap_or_default()
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                let mut args = f.popn(arg as usize)?;
                let this = f.pop()?;
                let callable = f.pop()?;
                if !matches!(this, Var::Null) {
                    args.insert(0, this);
                }
                let npos = args.len() - kwnames.len();
                let kwargs: Vec<(String, Var)> =
                    kwnames.into_iter().zip(args.split_off(npos)).collect();
                let r = self.call(&callable, args, kwargs, f)?;
                f.stack.push(r);
            }
            Opcode::CallFunctionEx => {
                let kwargs = f.pop()?;
                let args = f.pop()?;
                let this = f.pop()?;
                let callable = f.pop()?;
                let mut pos = self.items(&args)?;
                if !matches!(this, Var::Null) {
                    pos.insert(0, this);
                }
                let kw = match kwargs {
                    Var::Null => Vec::new(),
                    other => self
                        .dict_entries(&other)?
                        .into_iter()
                        .map(|(k, v)| {
                            k.downcast_ref::<PyStr>()
                                .map(|s| (s.to_string_lossy().into_owned(), v))
                                .ok_or_else(|| Unsupported {
                                    reason: "keywords must be strings".into(),
                                    location: None,
                                })
                        })
                        .collect::<SimResult<Vec<_>>>()?,
                };
                let r = self.call(&callable, pos, kw, f)?;
                f.stack.push(r);
            }
            Opcode::MakeFunction => {
                let code = f.pop()?;
                let Var::Obj(code) = code else {
                    return unsupported("MAKE_FUNCTION of a non-code");
                };
                let code = code.downcast::<PyCode>().map_err(|_| Unsupported {
                    reason: "MAKE_FUNCTION of a non-code".into(),
                    location: None,
                })?;
                let func = SimFunction {
                    code,
                    defaults: None,
                    kwdefaults: None,
                    closure: Vec::new(),
                    globals: f.globals.clone(),
                };
                f.stack.push(Var::Func(Rc::new(func)));
            }
            Opcode::SetFunctionAttribute => {
                let func = f.pop()?;
                let value = f.pop()?;
                let Var::Func(func) = func else {
                    return unsupported("SET_FUNCTION_ATTRIBUTE on a non-function");
                };
                let mut new = SimFunction {
                    code: func.code.clone(),
                    defaults: func.defaults.clone(),
                    kwdefaults: func.kwdefaults.clone(),
                    closure: func.closure.clone(),
                    globals: func.globals.clone(),
                };
                match MakeFunctionFlag::try_from(arg) {
                    Ok(MakeFunctionFlag::Defaults) => new.defaults = Some(value),
                    Ok(MakeFunctionFlag::KwOnlyDefaults) => new.kwdefaults = Some(value),
                    Ok(MakeFunctionFlag::Closure) => {
                        new.closure = self
                            .items(&value)?
                            .into_iter()
                            .map(|c| match c {
                                Var::Cell(c) => Ok(c),
                                _ => unsupported("a closure of non-cells"),
                            })
                            .collect::<SimResult<Vec<_>>>()?;
                    }
                    // Annotations are not read by the simulation.
                    Ok(MakeFunctionFlag::Annotations | MakeFunctionFlag::Annotate) => {}
                    _ => return unsupported("a function with type parameters"),
                }
                f.stack.push(Var::Func(Rc::new(new)));
            }
            Opcode::StoreSubscr => {
                let key = f.pop()?;
                let container = f.pop()?;
                let value = f.pop()?;
                self.store_subscr(&container, &key, value)?;
            }
            Opcode::RaiseVarargs => {
                let exc = match arg {
                    0 => f.handling.last().cloned().ok_or_else(|| Unsupported {
                        reason: "a bare raise with no exception being handled (RuntimeError)"
                            .into(),
                        location: None,
                    })?,
                    1 => {
                        let x = f.pop()?;
                        self.exception_to_raise(&x)?
                    }
                    _ => return unsupported("raise ... from ..."),
                };
                self.note_raised(&exc, f.handling.last());
                return Ok(self.throw(f, exc, ins.position));
            }
            Opcode::Reraise => {
                // The raising offset under it (oparg 1) only names a line for the traceback.
                let exc = f.pop()?;
                return Ok(self.throw(f, exc, ins.position));
            }
            Opcode::PushExcInfo => {
                let exc = f.pop()?;
                // What POP_EXCEPT would restore: not read by the simulation.
                f.stack.push(Var::Obj(vm.ctx.none()));
                f.stack.push(exc.clone());
                f.handling.push(exc);
            }
            Opcode::PopExcept => {
                f.pop()?;
                f.handling.pop().ok_or_else(|| Unsupported {
                    reason: "POP_EXCEPT with no exception being handled".into(),
                    location: None,
                })?;
            }
            Opcode::CheckExcMatch => {
                let class = f.pop()?;
                let exc = f.top(1)?.clone();
                let matched = self.exception_matches(&exc, &class)?;
                f.stack.push(Var::Obj(vm.ctx.new_bool(matched).into()));
            }
            Opcode::ReturnValue => {
                let value = f.pop()?;
                return Ok(Some(Returned {
                    value,
                    position: ins.position,
                    yielded: false,
                    raised: false,
                }));
            }
            Opcode::StoreAttr => {
                let owner = f.pop()?;
                let value = f.pop()?;
                let name = f.name(arg);
                self.store_attr(&owner, &name, value)?;
            }
            Opcode::StoreGlobal | Opcode::DeleteGlobal => {
                if f.globals.owner.is_some() {
                    return unsupported(
                        "a global store by an inlined function (a side effect that is not replayed)",
                    );
                }
                let name = f.name(arg);
                let value = if ins.op == Opcode::StoreGlobal {
                    Some(f.pop()?)
                } else {
                    None
                };
                if value.is_none()
                    && matches!(
                        self.load_global_binding(&f.globals, &name),
                        None | Some(None)
                    )
                {
                    return unsupported(format!(
                        "del of global {name:?}, which is not defined (NameError)"
                    ));
                }
                self.effects.store_global(&f.globals.dict, &name, value);
            }
            Opcode::DeleteSubscr => {
                let key = f.pop()?;
                let container = f.pop()?;
                self.delete_subscr(&container, &key)?;
            }
            Opcode::DeleteAttr => {
                let owner = f.pop()?;
                let name = f.name(arg);
                self.delete_attr(&owner, &name)?;
            }
            Opcode::StoreSlice => {
                // container[start:stop] = value: an item store with a slice for its key.
                let stop = f.pop()?;
                let start = f.pop()?;
                let container = f.pop()?;
                let value = f.pop()?;
                let key = self.slice_of(&start, &stop)?;
                self.store_subscr(&container, &key, value)?;
            }
            Opcode::DeleteDeref => {
                return unsupported(format!(
                    "{} (a side effect)",
                    crate::bytecode::opcodes::opcode_name(ins.op)
                ));
            }
            other => {
                return unsupported(format!(
                    "opcode {}",
                    crate::bytecode::opcodes::opcode_name(other)
                ));
            }
        }
        Ok(None)
    }

    /// The global `name` as the simulation sees it: `Some(Some(v))` bound (written earlier
    /// in the simulation, or read from the dictionary), `Some(None)` deleted by the
    /// simulation, `None` not in the dictionary.
    fn load_global_binding(&mut self, globals: &Globals, name: &str) -> Option<Option<Var>> {
        if let Some(written) = self.effects.global(&globals.dict, name) {
            return Some(written);
        }
        let v = globals.dict.get_item_opt(name, self.vm).ok().flatten()?;
        Some(Some(Var::Lazy(v, globals.source(name))))
    }

    fn load_global(&mut self, globals: &Globals, name: &str) -> SimResult<Var> {
        let vm = self.vm;
        match self.load_global_binding(globals, name) {
            Some(Some(v)) => return Ok(v),
            Some(None) => {
                return unsupported(format!("global {name:?} read after the call deleted it"));
            }
            None => {}
        }
        match vm.builtins.dict().get_item_opt(name, vm).ok().flatten() {
            Some(v) => {
                if globals.owner.is_some() {
                    return unsupported(format!(
                        "builtin {name} read by an inlined function of another module"
                    ));
                }
                Ok(Var::Lazy(v, Source::Builtin(name.to_owned())))
            }
            None => unsupported(format!("name {name:?} is not defined (NameError)")),
        }
    }
}

impl SimFrame {
    fn body_start(&self) -> usize {
        self.body
    }

    /// The next instruction's index in the body (the decoded instructions after the prologue),
    /// if it is in the body.
    pub fn body_pc(&self) -> Option<usize> {
        self.pc.checked_sub(self.body)
    }

    /// The decoded body.
    pub fn body(&self) -> &[Instr] {
        &self.instrs[self.body..]
    }
}

/// Insert into a dictionary made during the simulation (keys are plain values).
pub fn dict_insert(
    entries: &mut Vec<(PyObjectRef, Var)>,
    key: PyObjectRef,
    value: Var,
    vm: &rustpython_vm::VirtualMachine,
) -> SimResult<()> {
    for (k, v) in entries.iter_mut() {
        if vm.bool_eq(k, &key).unwrap_or(false) {
            *v = value;
            return Ok(());
        }
    }
    entries.push((key, value));
    Ok(())
}
