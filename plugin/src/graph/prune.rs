//! Which nodes a captured graph keeps: those its outputs and size checks depend on, every
//! draw from the random number generator (the program draws it whether or not it reads it,
//! and later draws depend on it), and every check of an asserted truth.

use super::ir::{Graph, Value};
use crate::tensor::registry;

impl Graph {
    /// Nodes no output depends on are dropped (the simulation may compute values it never uses),
    /// but for those that draw random numbers: the program draws them whether or not it reads
    /// them, and later draws depend on it, so such a node nothing reads becomes an output (the
    /// replacement leaves it unread; the graph, called, draws it); so does an asserted truth.
    pub fn prune(&mut self) {
        let unread: Vec<Value> = self
            .live_nodes()
            .iter()
            .enumerate()
            .filter(|&(i, live)| !live && registry().kept(&self.nodes[i].op))
            .map(|(i, _)| Value::Node(i))
            .collect();
        self.outputs.extend(unread);
        let live = self.live_nodes();
        self.keep_nodes(&live);
    }

    /// Which nodes the outputs or the checks depend on.
    fn live_nodes(&self) -> Vec<bool> {
        let mut live = vec![false; self.nodes.len()];
        // A value whose sizes a check reads stays: the check reads them at run time.
        let node_of = |v: &Value| match v {
            Value::Node(i) => Some(*i),
            _ => None,
        };
        let mut stack: Vec<usize> = self.outputs.iter().filter_map(node_of).collect();
        stack.extend(self.checks.iter().flat_map(|c| {
            let mut vs = Vec::new();
            c.values(&mut vs);
            vs.into_iter().filter_map(|v| node_of(&v))
        }));
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut live[i], true) {
                continue;
            }
            let node = &self.nodes[i];
            stack.extend(node.inputs.iter().filter_map(node_of));
            let mut vs = Vec::new();
            node.sym.iter().for_each(|s| s.values(&mut vs));
            stack.extend(vs.iter().filter_map(node_of));
        }
        live
    }

    /// Drop the nodes `live` does not mark, renumbering the others.
    fn keep_nodes(&mut self, live: &[bool]) {
        let mut new_index = vec![usize::MAX; self.nodes.len()];
        let mut kept = Vec::new();
        for (i, node) in self.nodes.drain(..).enumerate() {
            if live[i] {
                new_index[i] = kept.len();
                kept.push(node);
            }
        }
        let remap = |v: &mut Value| {
            if let Value::Node(i) = v {
                *i = new_index[*i];
            }
        };
        for node in &mut kept {
            node.inputs.iter_mut().for_each(remap);
        }
        self.outputs.iter_mut().for_each(remap);
        let moved = |v: Value| match v {
            Value::Node(i) => Value::Node(new_index[i]),
            other => other,
        };
        for node in &mut kept {
            node.sym.iter_mut().for_each(|s| s.remap(&moved));
        }
        self.checks.iter_mut().for_each(|c| c.remap(&moved));
        self.nodes = kept;
    }
}
