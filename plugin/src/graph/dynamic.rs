//! Whether a graph recorded at one size runs at another: the values that depend on its
//! dynamic inputs, and what would have baked one of their sizes into the recording.

use super::ir::{Graph, Value};
use crate::tensor::registry;

/// Why the sizes of `dynamic` inputs are in the graph (`None`: they are not, and the graph
/// may be marked dynamic). `read` are the values whose sizes the program read while it was
/// recorded (see `tensor::size_reads`).
pub fn size_leak(graph: &Graph, dynamic: &[usize], read: &[Value]) -> Option<String> {
    let mut node_dynamic = vec![false; graph.nodes.len()];
    let is_dynamic = |v: &Value, node_dynamic: &[bool]| match v {
        Value::Input(i) => dynamic.contains(i),
        Value::Const(_) => false,
        Value::Node(i) => node_dynamic[*i],
    };
    for (j, node) in graph.nodes.iter().enumerate() {
        if !node.inputs.iter().any(|v| is_dynamic(v, &node_dynamic)) {
            continue;
        }
        node_dynamic[j] = true;
        let size_free = registry().get(&node.op).is_some_and(|op| op.size_free);
        if !size_free {
            return Some(format!("op {} holds sizes in its attributes", node.op));
        }
    }
    read.iter().find(|v| is_dynamic(v, &node_dynamic)).map(|_| {
        "the program reads a size (shape, size(), len, numel, a tensor made in its shape)"
            .to_owned()
    })
}

/// Whether the graph's shape inference holds for inputs described by `inputs`: for a dynamic
/// graph, what the guards checked before it runs at new sizes. An op whose shapes do not fit
/// at these sizes (a broadcast against a constant of the recorded size) would raise inside
/// the graph, where eager code raises at that op, after what came before it: such a call
/// does not fit the entry.
pub fn fits(graph: &Graph, inputs: &[crate::tensor::Meta]) -> bool {
    let mut metas: Vec<crate::tensor::Meta> = Vec::with_capacity(graph.nodes.len());
    for node in &graph.nodes {
        let args: Vec<crate::tensor::Meta> = node
            .inputs
            .iter()
            .map(|v| match v {
                Value::Input(i) => inputs[*i].clone(),
                Value::Const(i) => crate::tensor::Meta::of(&graph.consts[*i]),
                Value::Node(i) => metas[*i].clone(),
            })
            .collect();
        match registry().infer(&node.op, &args, &node.attrs) {
            Ok(m) if crate::tensor::shape::check_size(&m.shape).is_ok() => metas.push(m),
            _ => return false,
        }
    }
    true
}
