//! The translator (in progress): the captured graph, the sources of the values a simulation
//! relies on, and the guards that decide whether a translation is reused.

pub mod graph;
pub mod guard;
pub mod source;

pub use graph::{Graph, Node, Value};
pub use guard::{Check, Guard, GuardSet};
pub use source::Source;
