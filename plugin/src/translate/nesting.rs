//! A bound on how deep the simulation walks values nested in one another. A list made in the
//! call may hold itself (`a.append(a)`: Python prints it `[...]`), and a caller's list may
//! too; walking such a value item by item (to pass it to native code, to build it again in
//! the replacement, to print it) would never end, and the interpreter's stack would. Each
//! walk enters a level per value; past `MAX_DEPTH` the simulation refuses, and the frame runs
//! as written, where Python handles the cycle itself. Whatever recurses, the simulation also
//! refuses near the end of the thread's stack (`stack_left`).

use std::cell::Cell;

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, Unsupported};

/// Deeper than any value a program builds by hand, far from the stack's end.
const MAX_DEPTH: usize = 200;

/// The stack the simulation leaves free: a step runs native code and Python methods of the
/// tensor class beneath it, which need room of their own.
const STACK_RESERVE: usize = 512 * 1024;

/// Refuses when the thread's stack nears its end. Every way the simulation recurses (an
/// inlined call, an operator dispatched to another, a walk of nested values) passes a
/// check, so that a recursion the bounds above miss (a translator bug among them) ends in a
/// fallback with its reason, not in a stack overflow that takes the interpreter down.
pub fn stack_left() -> SimResult<()> {
    match stacker::remaining_stack() {
        Some(left) if left < STACK_RESERVE => Err(Unsupported::new(
            Kind::Limit,
            "the simulation nears the end of the thread's stack",
        )),
        _ => Ok(()),
    }
}

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// One level of a walk, left when dropped.
pub struct Level(());

impl Level {
    /// Enter a level, or refuse past the bound.
    pub fn enter() -> SimResult<Level> {
        stack_left()?;
        DEPTH.with(|d| {
            if d.get() >= MAX_DEPTH {
                return Err(Unsupported::new(
                    Kind::Limit,
                    format!("a value nested more than {MAX_DEPTH} levels deep, or holding itself"),
                ));
            }
            d.set(d.get() + 1);
            Ok(Level(()))
        })
    }
}

impl Drop for Level {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_a_thread_with_stack(bytes: usize) -> bool {
        std::thread::Builder::new()
            .stack_size(bytes)
            .spawn(|| stack_left().is_ok())
            .expect("a thread")
            .join()
            .expect("no panic")
    }

    #[test]
    fn the_simulation_refuses_near_the_end_of_the_stack() {
        assert!(on_a_thread_with_stack(8 << 20));
        assert!(!on_a_thread_with_stack(256 << 10));
    }
}
