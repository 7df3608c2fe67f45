//! Every log target of the crate, one per concern, so that `RUST_LOG` selects what a user
//! sees (`RUST_LOG=symtrace::graph_breaks=info`). Nothing else in the crate writes a target
//! string; the README lists what each one says at which level.

/// Each code object and its replacement side by side (debug); code a backend could not
/// rebuild or the verifier rejected (warn).
pub const BYTECODE: &str = "symtrace::bytecode";
/// Every frame entry, as the `frames` plugin records it (info).
pub const FRAMES: &str = "symtrace::frames";
/// Each captured graph (debug); a graph that runs op by op, and why (debug).
pub const GRAPH: &str = "symtrace::graph";
/// Each graph break with its id, file:line and hint, and each frame that runs as written (info);
/// each frame that ran as written with nothing to capture or given no tensor and meeting
/// none before it stopped (debug).
pub const GRAPH_BREAKS: &str = "symtrace::graph_breaks";
/// Each translation's guards (debug), each guard as it is made (trace).
pub const GUARDS: &str = "symtrace::guards";
/// Inline calls rolled back (debug).
pub const INLINE: &str = "symtrace::inline";
/// Each recompile with the guard that failed (info); the recompile limit (warn).
pub const RECOMPILES: &str = "symtrace::recompiles";
/// Each mutation recorded for replay (debug).
pub const SIDE_EFFECTS: &str = "symtrace::side_effects";
