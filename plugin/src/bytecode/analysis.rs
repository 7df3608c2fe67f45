//! Control-flow analysis of a decoded body, for splitting loops: the innermost loop around an
//! instruction, what is reached without an exception, the handler blocks that belong to a
//! loop's body, and whether a body uses the stack under it.

use rustpython_vm::bytecode::Opcode;

use super::{Handler, Instr};

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
    pub fn start(&self) -> usize {
        self.head + usize::from(self.is_for)
    }

    pub fn contains(&self, i: usize) -> bool {
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

/// The outermost loop around instruction `index`: the one whose head comes first among
/// those `innermost` would find at any depth.
pub fn outermost(body: &[Instr], index: usize) -> Option<Loop> {
    let mut lp = innermost(body, index)?;
    while let Some(outer) = lp.head.checked_sub(1).and_then(|h| innermost(body, h)) {
        if !outer.contains(lp.end) {
            break;
        }
        lp = outer;
    }
    Some(lp)
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

/// The locals a body deletes anywhere (`except E as e` ends with `del e`). Where a loop is
/// split, they travel as the unbound marker: unbound after the delete, they may be unbound
/// when the loop is entered again from an enclosing loop.
pub fn deleted_slots(body: &[Instr]) -> Vec<usize> {
    let mut slots: Vec<usize> = body
        .iter()
        .filter(|x| x.op == Opcode::DeleteFast)
        .map(|x| x.arg as usize)
        .collect();
    slots.sort_unstable();
    slots.dedup();
    slots
}
