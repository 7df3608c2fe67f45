//! The translator (in progress): the captured graph so far.

pub mod graph;

pub use graph::{Graph, Node, Value};
