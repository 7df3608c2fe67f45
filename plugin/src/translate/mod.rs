//! The translator: simulates a frame's bytecode over symbolic values (`executor`, `operators`,
//! `calls`, `var`, `tracer`), records tensor ops through fake tensors (`recorder`) into a
//! `graph` (run as loops over buffers when it is small and float64: `lowering`), records `side_effects` for the replacement to replay, derives `guard`s (checked as a `guard_program`) from the `source`s of what it relied on, generates the
//! replacement code (`codegen`, calling the graph as `graph_call` says), and caches translations per code object (`translator`).

pub mod cache;
pub mod calls;
pub mod codegen;
pub mod compiled_graph;
pub mod exceptions;
pub mod executor;
pub mod graph_break;
pub mod graph_call;
pub mod guard;
pub mod guard_program;
pub mod loop_break;
pub mod operators;
pub mod side_effects;
pub mod source;
pub mod tracer;
pub mod translation;
pub mod var;

pub use crate::graph::{Graph, Node, Value};
pub use cache::{Options, Translator};
pub use compiled_graph::CompiledGraph;
pub use guard::{Check, Guard, GuardSet};
pub use source::Source;
