//! Guards: what must still hold of a frame's inputs for a translation to be reused (`guard`),
//! and a guard set compiled for the code object it guards (`program`).

pub mod class_entries;
pub mod guard;
pub mod ident;
pub mod program;

pub use guard::{Check, Guard, GuardSet};
