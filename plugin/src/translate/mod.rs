//! The translator: simulates a frame's bytecode over symbolic values (`executor`, `operators`,
//! `calls`, `var`, `tracer`), records tensor ops through fake tensors (`recorder`) into a
//! `graph`, derives `guard`s from the `source`s of what it relied on, generates the
//! replacement code (`codegen`), and caches translations per code object (`translator`).

pub mod calls;
pub mod codegen;
pub mod executor;
pub mod graph;
pub mod guard;
pub mod operators;
pub mod recorder;
pub mod source;
pub mod tracer;
pub mod translation;
pub mod translator;
pub mod var;

pub use graph::{Graph, Node, Value};
pub use guard::{Check, Guard, GuardSet};
pub use source::Source;
pub use translator::{Options, Translator};
