//! The translator: each frame about to run is simulated over symbolic values, its tensor work
//! captured into a graph, guarded, compiled, and replaced by generated code that runs the
//! graph; what cannot be simulated runs as written, with the reason.

pub mod breaks;
pub mod cache;
pub mod codegen;
pub mod compiled_graph;
pub mod convert_frame;
pub mod executor;
pub mod explain;
pub mod graph_call;
pub mod guards;
pub mod side_effects;
pub mod source;
pub mod state;
pub mod templates;
pub mod values;

pub use cache::{Options, Translator};
pub use compiled_graph::CompiledGraph;
pub use guards::{Check, Guard, GuardSet};
pub use source::Source;
