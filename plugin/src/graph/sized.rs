//! A dynamic graph at one call's sizes. A dynamic graph runs op by op: fusion, the lowering
//! and the reuse of dead operands are planned for fixed sizes, which it learns per call. A
//! program that calls it at the same sizes again and again (a model at its batch size, after
//! a first call at another one made its dimensions dynamic) gets, from the second call at
//! those sizes on, a static copy of the graph made for them and planned as any static graph
//! is. Sizes seen once (a sequence that grows by one token per call) never pay for a copy.
//!
//! The copy computes what the op-by-op run computes: each node's symbolic attributes are
//! worked out from the same sizes (and the same int inputs), and static plans round as op by
//! op runs do.

use std::sync::{Arc, Mutex};

use smallvec::SmallVec;

use super::ir::{Graph, Node, Value};
use super::sizes::{read_shape, read_tensor, resolve};
use crate::tensor::{DType, Meta, TensorData, TensorError, registry};

/// The sizes of each static copy kept, at most, the most recently made last.
const COPIES: usize = 4;
/// Sizes seen once, remembered until a second call at them makes a copy.
const SEEN: usize = 8;

/// What identifies a call's sizes: each input's rank and dimensions, and the value of each
/// int input (a symbolic attribute may read it).
type Key = SmallVec<[i64; 16]>;

/// A dynamic graph's static copies, by the sizes they were made for.
#[derive(Default)]
pub struct Copies {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    seen: Vec<Key>,
    /// `None`: the copy could not be made at these sizes (inference failed), so calls at
    /// them run op by op and raise where eager code would.
    made: Vec<(Key, Option<Arc<Graph>>)>,
}

impl Copies {
    /// The static copy of `graph` for the sizes of `inputs`, when one exists or this is the
    /// second call at them; `None`: run op by op.
    pub fn for_call(&self, graph: &Graph, inputs: &[&TensorData]) -> Option<Arc<Graph>> {
        let key = key(inputs);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, copy)) = state.made.iter().find(|(k, _)| *k == key) {
            return copy.clone();
        }
        match state.seen.iter().position(|k| *k == key) {
            Some(at) => {
                state.seen.remove(at);
            }
            None => {
                if state.seen.len() == SEEN {
                    state.seen.remove(0);
                }
                state.seen.push(key);
                return None;
            }
        }
        let copy = match at_sizes(graph, inputs) {
            Ok(g) => {
                log::debug!(
                    target: crate::log_targets::GRAPH,
                    "a dynamic graph of {} nodes gets a static copy for its inputs {}",
                    g.nodes.len(),
                    described(inputs)
                );
                Some(Arc::new(g))
            }
            Err(e) => {
                log::debug!(
                    target: crate::log_targets::GRAPH,
                    "a dynamic graph runs op by op at these sizes: {e}"
                );
                None
            }
        };
        if state.made.len() == COPIES {
            state.made.remove(0);
        }
        state.made.push((key, copy.clone()));
        copy
    }
}

/// A graph's copy starts with no copies of its own.
impl Clone for Copies {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for Copies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        write!(f, "Copies({} made)", state.made.len())
    }
}

fn key(inputs: &[&TensorData]) -> Key {
    let mut key = Key::new();
    for t in inputs {
        key.push(t.ndim() as i64);
        key.extend(t.shape().iter().map(|&n| n as i64));
        if t.ndim() == 0 && t.dtype() == DType::Int64 {
            key.push(read_tensor(t, super::sizes::Read::Item).unwrap_or(0));
        }
    }
    key
}

/// Each input's sizes, or an int input's value: `[3, 16], [16, 16], 5`.
fn described(inputs: &[&TensorData]) -> String {
    let each = inputs.iter().map(
        |t| match (t.ndim(), read_tensor(t, super::sizes::Read::Item)) {
            (0, Some(v)) => v.to_string(),
            _ => format!("{:?}", t.shape()),
        },
    );
    each.collect::<Vec<_>>().join(", ")
}

/// `graph` (dynamic) as a static graph for the sizes of `inputs`: each node's meta inferred
/// at those sizes, its symbolic attributes worked out as the op-by-op run works them out.
fn at_sizes(graph: &Graph, inputs: &[&TensorData]) -> Result<Graph, TensorError> {
    let mut g = Graph::new();
    g.inputs = inputs.iter().map(|t| Meta::of(t)).collect();
    g.consts = graph.consts.clone();
    for node in &graph.nodes {
        let attrs = if node.sym.is_empty() {
            node.attrs.clone()
        } else {
            let dim = |v: Value, r| -> Option<i64> {
                match v {
                    Value::Input(i) => read_tensor(inputs.get(i)?, r),
                    Value::Const(i) => read_tensor(g.consts.get(i)?, r),
                    Value::Node(i) => read_shape(&g.nodes.get(i)?.meta.shape, None, r),
                }
            };
            let first = node.inputs.first().map(|v| g.meta(*v).shape);
            resolve(&node.attrs, &node.sym, first.as_deref(), &dim).ok_or_else(|| {
                TensorError::runtime(format!(
                    "op {}: its sizes cannot be worked out for this call",
                    node.op
                ))
            })?
        };
        let metas: Vec<Meta> = node.inputs.iter().map(|v| g.meta(*v)).collect();
        let meta = registry().infer(&node.op, &metas, &attrs)?;
        g.nodes.push(Node {
            op: node.op.clone(),
            inputs: node.inputs.clone(),
            attrs,
            meta,
            sym: Vec::new(),
        });
    }
    g.outputs = graph.outputs.clone();
    Ok(g)
}
