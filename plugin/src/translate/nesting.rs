//! A bound on how deep the simulation walks values nested in one another. A list made in the
//! call may hold itself (`a.append(a)`: Python prints it `[...]`), and a caller's list may
//! too; walking such a value item by item (to pass it to native code, to build it again in
//! the replacement, to print it) would never end, and the interpreter's stack would. Each
//! walk enters a level per value; past `MAX_DEPTH` the simulation refuses, and the frame runs
//! as written, where Python handles the cycle itself.

use std::cell::Cell;

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, Unsupported};

/// Deeper than any value a program builds by hand, far from the stack's end.
const MAX_DEPTH: usize = 200;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// One level of a walk, left when dropped.
pub struct Level(());

impl Level {
    /// Enter a level, or refuse past the bound.
    pub fn enter() -> SimResult<Level> {
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
