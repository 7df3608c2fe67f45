//! Captured graphs: tensor ops from the registry applied to a frame's input tensors and to
//! constants (`ir`), recorded through fake tensors while a frame is simulated (`recorder`),
//! and run natively, lowered to loops where they can be (`lowering`), a node taking over an
//! operand read for the last time where it can (`consume`), chains of elementwise ops in one
//! pass (`fuse`), nodes nothing needs dropped (`prune`); a dynamic graph called at the same sizes again runs as a static copy made
//! for them (`sized`).

pub(crate) mod consume;
pub(crate) mod dynamic;
pub(crate) mod fuse;
pub(crate) mod ir;
pub(crate) mod lowering;
mod prune;
pub(crate) mod recorder;
pub(crate) mod segments;
pub(crate) mod size_floats;
pub(crate) mod sized;
pub(crate) mod sizes;

pub use ir::{Graph, Node, Outputs, Value};
