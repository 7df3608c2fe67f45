//! Graph breaks inside loops. Resuming in the middle of a loop would nest one resume call per
//! iteration, so a loop whose body breaks is split instead (as SOT does): its body becomes a
//! function of its own, the *body function*, that takes the frame's locals (and the item of a
//! `for` loop), runs one iteration and returns `(tag, value, *locals)`, where the tag says
//! how the iteration ended: the next iteration, a `return`, or a jump out of the loop. The
//! loop itself runs as written in the *driver*, a resume function of the original at the
//! loop's head whose body is replaced by the call and the dispatch on the tag. The body
//! function is an ordinary function to the hook: each call is translated (and cached), and
//! the break inside it is an ordinary break, no longer inside a loop. After the loop the
//! driver calls a resume function for the rest of the frame, translated in turn.
//!
//! A call cannot pass an unbound local, so the driver starts with every local that is unbound
//! at the head bound to a marker object, and the functions after the loop delete the locals
//! that still hold it; a local the body deletes (`except E as e` ends in `del e`) is bound to
//! the marker instead. The marker is never seen by the user's code: a body that might read
//! such a local (the compiler emits `LOAD_FAST_CHECK` there) is not split.
//!
//! The body's exception handlers (an except block, a `with` block's exit, a comprehension's
//! cleanup) are placed by the compiler after the function's code; reached only through the
//! body's handlers, they go with the body function (`handler_region`). A loop inside a `try`
//! or `with` block is split too: in the body function, an exception for that block's handler
//! ends the iteration (`Exit::Raise`, with the iteration's locals), and the driver raises it
//! again under the handler.

use rustpython_vm::builtins::PyCode;
use rustpython_vm::bytecode::Opcode;
use rustpython_vm::{PyObjectRef, PyRef, VirtualMachine};

use super::graph_break::{ResumeShape, Resumed, resume_code_with};
use crate::bytecode::{CodeLayout, Handler, Instr, Position, assemble};

/// `COMPARE_OP` for `==` with its result made a bool, as the compiler emits it.
const COMPARE_EQ_BOOL: u32 = 88;

/// A loop of the original's body: instructions `head..=end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loop {
    /// The first instruction of an iteration: `FOR_ITER`, or a `while` loop's condition.
    pub head: usize,
    /// The last backward jump to the head (`JUMP_BACKWARD`: the no-interrupt one ends
    /// except blocks, not loops).
    pub end: usize,
    pub is_for: bool,
    /// The handler of a `try` or `with` block around the loop (the head's): in the body
    /// function, an exception it would catch ends the iteration (`Exit::Raise`), and the
    /// driver raises it again under that handler, with the iteration's locals.
    pub outer: Option<Handler>,
}

impl Loop {
    /// First instruction of the body function's copy (after `FOR_ITER`).
    fn start(&self) -> usize {
        self.head + usize::from(self.is_for)
    }

    fn contains(&self, i: usize) -> bool {
        self.head <= i && i <= self.end
    }
}

/// The innermost loop around instruction `index`. Only backward jumps reached without an
/// exception count: an except block placed after the function's code may jump back to the
/// head (`continue` after it is handled), but it is part of the body (`handler_region`), and
/// the loop does not extend to it.
pub fn innermost(body: &[Instr], index: usize) -> Option<Loop> {
    let normal = normally_reached(body);
    let back = |j: usize, x: &Instr| normal[j] && x.op == Opcode::JumpBackward;
    let head = body
        .iter()
        .enumerate()
        .filter(|(j, x)| back(*j, x) && x.target.is_some_and(|t| t <= index && index < *j))
        .filter_map(|(_, x)| x.target)
        .max()?;
    let end = body
        .iter()
        .enumerate()
        .filter(|(j, x)| back(*j, x) && x.target == Some(head))
        .map(|(j, _)| j)
        .max()?;
    Some(Loop {
        head,
        end,
        is_for: body[head].op == Opcode::ForIter,
        outer: body[head].handler,
    })
}

/// Instructions reached from the first without an exception: through fallthroughs and jumps.
fn normally_reached(body: &[Instr]) -> Vec<bool> {
    let mut seen = vec![false; body.len()];
    let mut work = vec![0];
    while let Some(i) = work.pop() {
        if i >= body.len() || seen[i] {
            continue;
        }
        seen[i] = true;
        let x = &body[i];
        work.extend(x.target);
        if !x.op.is_no_fallthrough() {
            work.push(i + 1);
        }
    }
    seen
}

/// The loop's code outside its instructions: the blocks reached only through the exception
/// handlers of its body (an except block, a `with` block's exit, an inlined comprehension's
/// cleanup), which the compiler places after the function's code. They go with the body
/// function; a jump from them to the code after the loop (`break` in an except block) is an
/// exit of the loop (`exits`). Fails when such a block falls through into code outside the
/// loop.
pub fn handler_region(body: &[Instr], lp: &Loop) -> Result<Vec<usize>, String> {
    let normal = normally_reached(body);
    let mut region = vec![false; body.len()];
    let outer = lp.outer.map(|h| h.target);
    let mut work: Vec<usize> = body[lp.start()..=lp.end]
        .iter()
        .filter_map(|x| x.handler.map(|h| h.target))
        .collect();
    while let Some(i) = work.pop() {
        if lp.contains(i) || Some(i) == outer || region.get(i).is_none_or(|r| *r) {
            continue;
        }
        if normal[i] {
            return Err(
                "an exception handler of the loop's body falls through into code outside the loop"
                    .into(),
            );
        }
        region[i] = true;
        let x = &body[i];
        // A jump to code reached without an exception leaves the loop (see `exits`).
        work.extend(x.target.filter(|t| !lp.contains(*t) && !normal[*t]));
        work.extend(x.handler.map(|h| h.target));
        if !x.op.is_no_fallthrough() {
            work.push(i + 1);
        }
    }
    Ok(region
        .iter()
        .enumerate()
        .filter(|(_, r)| **r)
        .map(|(i, _)| i)
        .collect())
}

/// How an iteration of the body function ended (its tag is the index in `Exits::kinds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The next iteration (the end of the body, or `continue`).
    Next,
    /// `return`: the value is the second item.
    Return,
    /// A jump out of the loop to this instruction of the original (`break`, a `while` loop's
    /// condition, ...).
    Leave(usize),
    /// An exception for the handler around the loop (`Loop::outer`): the value.
    Raise,
}

/// Every way out of the loop's body.
pub struct Exits {
    pub kinds: Vec<Exit>,
}

impl Exits {
    fn tag(&self, e: Exit) -> usize {
        self.kinds
            .iter()
            .position(|k| *k == e)
            .expect("every exit is listed")
    }
}

/// Why the loop cannot be split, if it cannot. `bound[slot]`: the local is bound at the head;
/// `region`: the loop's handler blocks (`handler_region`).
pub fn refusal(
    code: &PyCode,
    body: &[Instr],
    lp: &Loop,
    region: &[usize],
    bound: &[bool],
) -> Option<String> {
    if !code.cellvars.is_empty() || !code.freevars.is_empty() {
        return Some("the frame has cells or free variables".into());
    }
    if lp.is_for {
        let exhausted = body[lp.head].target?;
        if body.get(exhausted).map(|x| x.op) != Some(Opcode::EndFor)
            || body.get(exhausted + 1).map(|x| x.op) != Some(Opcode::PopIter)
        {
            return Some("a for loop that does not end in END_FOR, POP_ITER".into());
        }
    }
    let in_body = |i: usize| (lp.start() <= i && i <= lp.end) || region.binary_search(&i).is_ok();
    let deleted = deleted_slots(body, lp, region);
    for (i, x) in body.iter().enumerate() {
        let inside = in_body(i);
        // The body's handlers come with it; a try or with around the loop would not cover
        // the body function.
        if x.handler
            .is_some_and(|h| inside != in_body(h.target) && !(inside && Some(h) == lp.outer))
        {
            return Some("the loop's handlers cover code outside it, or it jumps into them".into());
        }
        if !lp.contains(i)
            && !region.contains(&i)
            && x.target.is_some_and(|t| in_body(t) && t != lp.head)
        {
            return Some("a jump into the loop's body".into());
        }
        if !inside {
            continue;
        }
        match x.op {
            Opcode::LoadFastCheck
                if !bound.get(x.arg as usize).copied().unwrap_or(false)
                    || deleted.contains(&(x.arg as usize)) =>
            {
                return Some("the loop may read a local before assigning it".into());
            }
            // Only the compiler's `name = None; del name` (after `except E as name`): a delete
            // of a local that may be unbound raises, where binding the marker would not.
            Opcode::DeleteFast
                if i == 0 || body[i - 1].op != Opcode::StoreFast || body[i - 1].arg != x.arg =>
            {
                return Some("the loop deletes a local".into());
            }
            Opcode::YieldValue | Opcode::Send | Opcode::ReturnGenerator | Opcode::GetAwaitable => {
                return Some("the loop yields".into());
            }
            _ => {}
        }
    }
    None
}

/// Why the body cannot run on placeholders for the stack of the loop's head, if it cannot: an
/// instruction of the body (or of its handler blocks) uses a value of that stack, where the
/// body function has only `None` (a comprehension inside an expression appends to the list
/// under its iterator; a `return` inside a loop inside a `with` block calls the block's
/// `__exit__`). Which slots hold placeholders is followed along the body's paths; moving,
/// copying and dropping them (an iterator, on the way out) is fine.
pub fn uses_stack_below(
    body: &[Instr],
    lp: &Loop,
    region: &[usize],
    head_depth: usize,
) -> Option<String> {
    let in_body = |i: usize| (lp.start() <= i && i <= lp.end) || region.contains(&i);
    let mut at: std::collections::HashMap<usize, Vec<bool>> = std::collections::HashMap::new();
    let mut first = vec![true; head_depth];
    if lp.is_for {
        first.push(false); // the item
    }
    at.insert(lp.start(), first);
    let mut work = vec![lp.start()];
    let used = |x: &Instr| {
        Some(format!(
            "the loop's body uses the stack under it ({} at line {})",
            crate::bytecode::opcodes::opcode_name(x.op),
            x.position.line.unwrap_or(0)
        ))
    };
    while let Some(i) = work.pop() {
        let x = &body[i];
        let mut s = at[&i].clone();
        let n = s.len();
        match x.op {
            Opcode::PopTop | Opcode::PopIter | Opcode::EndFor => {
                s.pop()?;
            }
            Opcode::Swap => s.swap(n - 1, n.checked_sub(x.arg as usize)?),
            Opcode::Copy => s.push(s[n.checked_sub(x.arg as usize)?]),
            _ => {
                let effect = x.op.stack_effect_info(x.arg);
                let popped = effect.popped() as usize;
                // LIST_APPEND, SET_ADD and MAP_ADD also read the container under what they pop.
                let reads = match x.op {
                    Opcode::ListAppend | Opcode::SetAdd => x.arg as usize + 1,
                    Opcode::MapAdd => x.arg as usize + 2,
                    _ => popped,
                };
                if s[n.checked_sub(reads)?..].iter().any(|p| *p) {
                    return used(x);
                }
                s.truncate(n - popped);
                s.extend(std::iter::repeat_n(false, effect.pushed() as usize));
            }
        }
        let mut next = Vec::new();
        if let Some(t) = x.target {
            next.push((t, s.clone()));
        }
        if !x.op.is_no_fallthrough() {
            next.push((i + 1, s.clone()));
        }
        if let Some(h) = x.handler {
            let mut entry: Vec<bool> = at[&i].iter().copied().take(h.depth as usize).collect();
            entry.extend(std::iter::repeat_n(false, 1 + usize::from(h.push_lasti)));
            next.push((h.target, entry));
        }
        for (t, state) in next {
            // The head, and code outside the body, are exits: the body function returns there.
            if t == lp.head || !in_body(t) {
                continue;
            }
            match at.get_mut(&t) {
                None => {
                    at.insert(t, state);
                    work.push(t);
                }
                Some(old) if old.len() != state.len() => return used(x),
                Some(old) => {
                    let merged: Vec<bool> = old.iter().zip(&state).map(|(a, b)| *a || *b).collect();
                    if merged != *old {
                        *old = merged;
                        work.push(t);
                    }
                }
            }
        }
    }
    None
}

/// Locals the loop's body deletes (`except E as e` ends with `del e`). In the body function
/// a delete binds the unbound marker instead, which travels like the marker of a local
/// unbound at the head; a body that might read such a local is not split (`refusal`).
pub fn deleted_slots(body: &[Instr], lp: &Loop, region: &[usize]) -> Vec<usize> {
    let mut slots: Vec<usize> = (lp.start()..=lp.end)
        .chain(region.iter().copied())
        .filter(|&i| body[i].op == Opcode::DeleteFast)
        .map(|i| body[i].arg as usize)
        .collect();
    slots.sort_unstable();
    slots.dedup();
    slots
}

/// The exits of the loop's body.
pub fn exits(body: &[Instr], lp: &Loop, region: &[usize]) -> Exits {
    let mut kinds = vec![Exit::Next, Exit::Return];
    if lp.outer.is_some() {
        kinds.push(Exit::Raise);
    }
    for x in body[lp.start()..=lp.end]
        .iter()
        .chain(region.iter().map(|&i| &body[i]))
    {
        if let Some(t) = x.target
            && !lp.contains(t)
            && !region.contains(&t)
            && !kinds.contains(&Exit::Leave(t))
        {
            kinds.push(Exit::Leave(t));
        }
    }
    Exits { kinds }
}

/// Where an instruction being built jumps: to an instruction of the original, or to a piece
/// of code of the builder's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    Body(usize),
    Own(usize),
}

/// An instruction list whose jumps name labels, resolved once every instruction is placed.
struct Builder {
    instrs: Vec<Instr>,
    targets: Vec<Option<Label>>,
    handlers: Vec<Option<Label>>,
    body_at: std::collections::HashMap<usize, usize>,
    own_at: Vec<Option<usize>>,
    position: Position,
}

impl Builder {
    fn new(position: Position) -> Self {
        Self {
            instrs: Vec::new(),
            targets: Vec::new(),
            handlers: Vec::new(),
            body_at: Default::default(),
            own_at: Vec::new(),
            position,
        }
    }

    fn emit(&mut self, op: Opcode, arg: u32) {
        self.jump(op, arg, None);
    }

    fn jump(&mut self, op: Opcode, arg: u32, to: Option<Label>) {
        self.instrs.push(Instr {
            op,
            arg,
            target: None,
            handler: None,
            position: self.position,
            offset: 0,
        });
        self.targets.push(to);
        self.handlers.push(None);
    }

    /// Copy `x` (instruction `i` of the original) with its jump going to `to`; its handler
    /// stays on the copy of the original's handler.
    fn copy(&mut self, i: usize, x: &Instr, to: Option<Label>) {
        self.body_at.entry(i).or_insert(self.instrs.len());
        let mut y = x.clone();
        y.target = None;
        self.instrs.push(y);
        self.targets.push(to);
        self.handlers.push(x.handler.map(|h| Label::Body(h.target)));
    }

    /// The handler of the last instruction placed: `h`, at label `to`.
    fn set_handler(&mut self, h: Handler, to: Label) {
        if let (Some(x), Some(l)) = (self.instrs.last_mut(), self.handlers.last_mut()) {
            x.handler = Some(h);
            *l = Some(to);
        }
    }

    /// Mark where instruction `i` of the original now starts (it was replaced).
    fn mark_body(&mut self, i: usize) {
        self.body_at.insert(i, self.instrs.len());
    }

    fn new_label(&mut self) -> Label {
        self.own_at.push(None);
        Label::Own(self.own_at.len() - 1)
    }

    fn place(&mut self, l: Label) {
        if let Label::Own(k) = l {
            self.own_at[k] = Some(self.instrs.len());
        }
    }

    /// The instructions, and where each instruction of the original now is.
    fn finish(mut self) -> Result<(Vec<Instr>, std::collections::HashMap<usize, usize>), String> {
        let resolve = |l: &Label| -> Result<usize, String> {
            match l {
                Label::Body(i) => self
                    .body_at
                    .get(i)
                    .copied()
                    .ok_or_else(|| format!("instruction {i} of the original was not copied")),
                Label::Own(k) => {
                    self.own_at[*k].ok_or_else(|| "a label was never placed".to_owned())
                }
            }
        };
        for ((x, t), h) in self
            .instrs
            .iter_mut()
            .zip(&self.targets)
            .zip(&self.handlers)
        {
            x.target = t.as_ref().map(resolve).transpose()?;
            if let (Some(handler), Some(l)) = (x.handler.as_mut(), h) {
                handler.target = resolve(l)?;
            }
        }
        Ok((self.instrs, self.body_at))
    }
}

fn constant(layout: &mut CodeLayout, o: PyObjectRef) -> u32 {
    layout.constants.push(o);
    (layout.constants.len() - 1) as u32
}

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
) -> Result<PyRef<PyCode>, String> {
    let mut layout = CodeLayout::of(original);
    let marker = constant(&mut layout, marker.clone());
    let nlocals = layout.varnames.len();
    if lp.is_for {
        layout.varnames.push(vm.ctx.intern_str("%item"));
    }
    layout.arg_count = layout.varnames.len() as u32;
    layout.posonlyarg_count = 0;
    layout.kwonlyarg_count = 0;
    layout.flags.remove(
        rustpython_vm::bytecode::CodeFlags::VARARGS
            | rustpython_vm::bytecode::CodeFlags::VARKEYWORDS,
    );
    let line = body[lp.head].position.line.unwrap_or(0);
    let name = vm.ctx.intern_str(format!(
        "loop_body_in_{}_at_{line}",
        original.obj_name.as_str()
    ));
    layout.obj_name = name;
    layout.qualname = name;
    let none = constant(&mut layout, vm.ctx.none());
    let tags: Vec<u32> = (0..exits.kinds.len())
        .map(|k| constant(&mut layout, vm.ctx.new_int(k).into()))
        .collect();

    let mut b = Builder::new(body[lp.start()].position);
    b.emit(Opcode::Resume, 0);
    for _ in 0..head_depth {
        b.emit(Opcode::LoadConst, none);
    }
    if lp.is_for {
        b.emit(Opcode::LoadFast, nlocals as u32);
    }
    b.jump(Opcode::JumpForward, 0, Some(Label::Body(lp.start())));
    let own: Vec<Label> = exits.kinds.iter().map(|_| b.new_label()).collect();
    let epilogue = |b: &mut Builder, tag: u32, value_on_stack: bool| {
        if !value_on_stack {
            b.emit(Opcode::LoadConst, none);
        }
        b.emit(Opcode::LoadConst, tag);
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
            b.mark_body(i);
            b.position = x.position;
            b.emit(Opcode::LoadConst, marker);
            b.emit(Opcode::StoreFast, x.arg);
            continue;
        }
        if x.op == Opcode::ReturnValue {
            // In place: each return leaves its own stack under the value.
            b.mark_body(i);
            b.position = x.position;
            epilogue(&mut b, tags[exits.tag(Exit::Return)], true);
            continue;
        }
        let to = x.target.map(|t| match t {
            t if t == lp.head => own[exits.tag(Exit::Next)],
            t if lp.contains(t) || region.contains(&t) => Label::Body(t),
            t => own[exits.tag(Exit::Leave(t))],
        });
        b.copy(i, x, to);
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
            epilogue(&mut b, tags[k], true);
            continue;
        }
        epilogue(&mut b, tags[k], false);
    }
    // The return label is never jumped to; place it on the last instruction.
    let last = b.instrs.len() - 1;
    if let Label::Own(k) = own[exits.tag(Exit::Return)] {
        b.own_at[k] = Some(last);
    }
    let (instrs, _) = b.finish()?;
    assemble(&layout, &instrs, vm).map_err(|e| e.to_string())
}

/// What the driver needs besides the loop.
pub struct Driver<'a> {
    /// The body function's name in the globals.
    pub body_global: &'a str,
    /// Per exit out of the loop (and `None` for the `for` loop running out), the resume
    /// function the driver calls instead of running the rest of the frame as written, where
    /// the stack is empty there.
    pub after: Vec<(Option<usize>, String)>,
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
) -> Result<PyRef<PyCode>, String> {
    let mut layout = CodeLayout::of(original);
    let nlocals = layout.varnames.len();
    let passed = stack.iter().filter(|null| !**null).count();
    let (item, tag, value) = (
        (nlocals + passed) as u32,
        (nlocals + passed + 1) as u32,
        (nlocals + passed + 2) as u32,
    );
    let marker = constant(&mut layout, d.marker.clone());
    let tags: Vec<u32> = (0..exits.kinds.len())
        .map(|k| constant(&mut layout, vm.ctx.new_int(k).into()))
        .collect();
    // Two exits may resume at the same place, through the same function.
    let name_index = |layout: &mut CodeLayout, n: &str| -> u32 {
        if let Some(i) = layout.names.iter().position(|x| x.as_str() == n) {
            return i as u32;
        }
        layout.names.push(vm.ctx.intern_str(n));
        (layout.names.len() - 1) as u32
    };
    let body_fn = name_index(&mut layout, d.body_global);
    let after: Vec<(Option<usize>, u32)> = d
        .after
        .iter()
        .map(|(x, g)| (*x, name_index(&mut layout, g)))
        .collect();
    let head_depth = d.depths[lp.head].ok_or("the loop's head is unreachable")?;

    let mut b = Builder::new(body[lp.head].position);
    // Delete the locals that still hold the marker (the rest of the frame runs here).
    let clear_marked = |b: &mut Builder| {
        for &slot in d.maybe_unbound {
            let skip = b.new_label();
            b.emit(Opcode::LoadFast, slot as u32);
            b.emit(Opcode::LoadConst, marker);
            b.emit(Opcode::IsOp, 0);
            b.jump(Opcode::PopJumpIfFalse, 0, Some(skip));
            b.emit(Opcode::DeleteFast, slot as u32);
            b.place(skip);
        }
    };
    // Call the resume function for the rest of the frame, or run it here.
    let leave = |b: &mut Builder, x: Option<usize>, to: Option<Label>| {
        if let Some((_, g)) = after.iter().find(|(y, _)| *y == x) {
            b.emit(Opcode::LoadGlobal, (g << 1) | 1);
            for slot in 0..nlocals {
                b.emit(Opcode::LoadFast, slot as u32);
            }
            b.emit(Opcode::Call, nlocals as u32);
            b.emit(Opcode::ReturnValue, 0);
        } else {
            clear_marked(b);
            if let Some(to) = to {
                b.jump(Opcode::JumpForward, 0, Some(to));
            }
        }
    };
    for (i, x) in body.iter().enumerate() {
        if d.region.contains(&i) {
            continue;
        }
        if lp.contains(i) && i >= lp.start() {
            if i > lp.start() {
                continue;
            }
            b.mark_body(i);
            b.position = x.position;
            let call = Label::Body(i);
            if lp.is_for {
                b.emit(Opcode::StoreFast, item);
            }
            b.emit(Opcode::LoadGlobal, (body_fn << 1) | 1);
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
            b.jump(Opcode::PopJumpIfTrue, 0, Some(dispatch));
            b.jump(
                Opcode::JumpBackward,
                0,
                Some(if lp.is_for {
                    Label::Body(lp.head)
                } else {
                    call
                }),
            );
            b.place(dispatch);
            for (k, kind) in exits.kinds.iter().enumerate() {
                if *kind == Exit::Next {
                    continue;
                }
                let next = b.new_label();
                b.emit(Opcode::LoadFast, tag);
                b.emit(Opcode::LoadConst, tags[k]);
                b.emit(Opcode::CompareOp, COMPARE_EQ_BOOL);
                b.jump(Opcode::PopJumpIfFalse, 0, Some(next));
                match kind {
                    Exit::Return => {
                        b.emit(Opcode::LoadFast, value);
                        b.emit(Opcode::ReturnValue, 0);
                    }
                    Exit::Leave(t) => {
                        let there = d.depths[*t].ok_or("a loop exit is unreachable")?;
                        for _ in there..head_depth {
                            b.emit(Opcode::PopTop, 0);
                        }
                        leave(&mut b, Some(*t), Some(Label::Body(*t)));
                    }
                    Exit::Raise => {
                        // Under the handler around the loop, with the iteration's locals.
                        clear_marked(&mut b);
                        b.emit(Opcode::LoadFast, value);
                        b.emit(Opcode::RaiseVarargs, 1);
                        if let Some(h) = lp.outer {
                            b.set_handler(h, Label::Body(h.target));
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
        b.copy(i, x, x.target.map(Label::Body));
        let ran_out = lp.is_for && body[lp.head].target.is_some_and(|e| i == e + 1);
        if ran_out {
            leave(&mut b, None, None);
        }
    }
    let (driver_body, body_at) = b.finish()?;
    let resume_at = *body_at
        .get(&lp.head)
        .ok_or("the loop's head was not placed")?;
    let shape = ResumeShape {
        resume_at,
        stack: stack.to_vec(),
        unbound: Vec::new(),
        maybe_unbound: Vec::new(),
    };
    let made = Resumed {
        name: d.name,
        extra_locals: &["%item", "%tag", "%value"],
        marker: d.marker,
    };
    resume_code_with(layout, &driver_body, &shape, &made, vm)
}
