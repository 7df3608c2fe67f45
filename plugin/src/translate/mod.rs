//! The translator: each frame about to run is simulated over symbolic values, its tensor work
//! captured into a graph, guarded, compiled, and replaced by generated code that runs the
//! graph; what cannot be simulated runs as written, with the reason.

pub(crate) mod breaks;
pub(crate) mod cache;
pub(crate) mod cache_entry;
pub(crate) mod codegen;
pub(crate) mod compiled_graph;
pub(crate) mod constant_templates;
pub(crate) mod convert_frame;
pub(crate) mod direct_call;
pub(crate) mod effect;
pub(crate) mod exception_templates;
pub(crate) mod executor;
pub(crate) mod explain;
pub(crate) mod frame_disabled;
pub(crate) mod function_templates;
pub(crate) mod graph_call;
pub(crate) mod guards;
pub(crate) mod held_once;
pub(crate) mod iterator_templates;
pub(crate) mod key_const;
pub(crate) mod lazy_modules;
pub(crate) mod leaf_guards;
pub(crate) mod loaded_modules;
pub(crate) mod math_functions;
pub(crate) mod misses;
pub mod native_reads;
pub(crate) mod nesting;
pub(crate) mod object_templates;
pub(crate) mod policy;
pub(crate) mod side_effects;
pub(crate) mod sized_numbers;
pub(crate) mod source;
pub(crate) mod state;
pub(crate) mod templates;
pub(crate) mod traced_wrappers;
pub(crate) mod values;
pub(crate) mod view_outputs;

pub use cache::{Options, Translator};
pub use compiled_graph::CompiledGraph;
pub use graph_call::GraphCall;
pub use guards::{Check, Guard, GuardSet};
pub use policy::{Dynamic, Specialization, Stance};
pub use source::Source;
