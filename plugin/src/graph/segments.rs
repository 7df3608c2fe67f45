//! A graph that does not lower whole (a node without a lowering, tensors of several types)
//! still has runs of consecutive nodes that do: each run is lowered as a graph of its own and
//! runs as one step of the op-by-op run. For small tensors the dispatch per node costs more
//! than the arithmetic; a run of them becomes loops over buffers planned once.

use crate::graph::ir::{Graph, Node, Value};
use crate::graph::lowering::{Lowered, lower, node_lowers};
use smallvec::SmallVec;

use crate::tensor::TensorData;

/// Fewer nodes gain nothing from running as one.
const MIN_NODES: usize = 2;

/// Nodes `start..end` of a graph, lowered.
#[derive(Clone, Debug)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    /// The values of the whole graph the run reads, in the order of its own inputs.
    pub inputs: Vec<Value>,
    /// The nodes whose results are read after the run (or returned), in the order of its
    /// outputs.
    pub outputs: Vec<usize>,
    lowered: Lowered,
}

/// The graph's lowered runs, in order. `eligible` says which nodes may join one: a node of
/// a fused group is left to it (its blocks are vectorized for the CPU; a lowered loop is
/// not, and at the sizes fusion takes, that costs more than the dispatch it saves).
pub fn segments(
    graph: &Graph,
    last_use: &[usize],
    eligible: impl Fn(usize) -> bool,
) -> Vec<Segment> {
    let found: Vec<Segment> = runs(graph, eligible)
        .into_iter()
        .filter_map(|(start, end)| segment(graph, start, end, last_use))
        .collect();
    if !found.is_empty() {
        log::debug!(
            target: crate::log_targets::GRAPH,
            "of a graph of {} nodes, {} run lowered, in {} runs ({})",
            graph.nodes.len(),
            found.iter().map(|s| s.end - s.start).sum::<usize>(),
            found.len(),
            found
                .iter()
                .map(|s| format!("v{}..v{}", s.start, s.end - 1))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    found
}

/// The maximal stretches, of `MIN_NODES` or more, of consecutive nodes that lower, are of
/// one type and that `eligible` accepts.
fn runs(graph: &Graph, eligible: impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
    let n = graph.nodes.len();
    let mut found = Vec::new();
    let mut j = 0;
    while j < n {
        let dtype = graph.nodes[j].meta.dtype;
        let joins =
            |k: usize| graph.nodes[k].meta.dtype == dtype && eligible(k) && node_lowers(graph, k);
        if !joins(j) {
            j += 1;
            continue;
        }
        let mut end = j + 1;
        while end < n && joins(end) {
            end += 1;
        }
        if end - j >= MIN_NODES {
            found.push((j, end));
        }
        j = end;
    }
    found
}

/// Nodes `start..end` as a graph of their own, lowered; `None` when it does not lower (its
/// results need more scratch than lowering pays for).
fn segment(graph: &Graph, start: usize, end: usize, last_use: &[usize]) -> Option<Segment> {
    let mut sub = Graph::new();
    let mut inputs: Vec<Value> = Vec::new();
    // Each outer value read (an input, an earlier node's result, a constant) and its value in
    // the run's graph.
    let mut outer: Vec<(Value, Value)> = Vec::new();
    for node in &graph.nodes[start..end] {
        let mut operands = Vec::with_capacity(node.inputs.len());
        for &v in &node.inputs {
            operands.push(match v {
                Value::Node(i) if i >= start => Value::Node(i - start),
                _ => match outer.iter().find(|(o, _)| *o == v) {
                    Some((_, inner)) => *inner,
                    None => {
                        let inner = match v {
                            Value::Const(c) => sub.constant(graph.consts[c].clone()),
                            _ => {
                                inputs.push(v);
                                sub.input(graph.meta(v))
                            }
                        };
                        outer.push((v, inner));
                        inner
                    }
                },
            });
        }
        sub.nodes.push(Node {
            op: node.op.clone(),
            inputs: operands,
            attrs: node.attrs.clone(),
            meta: node.meta.clone(),
            sym: Vec::new(),
        });
    }
    let outputs: Vec<usize> = (start..end).filter(|&k| last_use[k] >= end).collect();
    sub.outputs = outputs.iter().map(|k| Value::Node(k - start)).collect();
    let lowered = lower(&sub, &sub.last_uses()).ok()?;
    Some(Segment {
        start,
        end,
        inputs,
        outputs,
        lowered,
    })
}

impl Segment {
    /// Run on the graph's `inputs`, `consts` and the `results` so far, and leave the run's
    /// results where its nodes' would be (nothing for a node read only inside the run);
    /// `false`, with nothing changed, when an argument is not a row-major array of the run's
    /// type (a strided view an earlier node handed on): its nodes then run one by one.
    pub fn run_into(
        &self,
        inputs: &[&TensorData],
        consts: &[TensorData],
        last_use: &[usize],
        results: &mut Vec<Option<TensorData>>,
    ) -> bool {
        let outs = {
            let args: SmallVec<[&TensorData; 8]> = self
                .inputs
                .iter()
                .map(|v| match *v {
                    Value::Input(i) => inputs[i],
                    Value::Const(i) => &consts[i],
                    Value::Node(i) => results[i]
                        .as_ref()
                        .expect("a node's result lives until its last use"),
                })
                .collect();
            match self.lowered.run(&args) {
                Some(outs) => outs,
                None => return false,
            }
        };
        results.extend((self.start..self.end).map(|_| None));
        for (k, out) in self.outputs.iter().zip(outs) {
            results[*k] = Some(out);
        }
        // A result read for the last time inside the run is freed, as its reader would.
        for v in &self.inputs {
            if let Value::Node(i) = *v
                && (self.start..self.end).contains(&last_use[i])
            {
                results[i] = None;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::ir::{Graph, Value};
    use crate::tensor::{Attr, Attrs, DType, Meta, Scalar, TensorData};

    fn random(shape: &[usize], dtype: DType) -> TensorData {
        let values: Vec<Scalar> = crate::tensor::random::normal(shape.iter().product())
            .into_iter()
            .map(Scalar::Float)
            .collect();
        TensorData::from_scalars(shape, &values, dtype).unwrap()
    }

    fn bits(t: &TensorData) -> Vec<u64> {
        t.to_scalars()
            .iter()
            .map(|s| s.as_f64().to_bits())
            .collect()
    }

    /// Two lowerable runs around a node without a lowering (`tril`), and an int64 result
    /// after them: the runs are lowered, and every result is eager's, bit for bit, also when
    /// an input is not row-major (the run then goes node by node).
    #[test]
    fn runs_of_lowerable_nodes_run_lowered_and_give_eagers_results() {
        for dtype in [DType::Float64, DType::Float32] {
            crate::tensor::random::manual_seed(5);
            let mut g = Graph::new();
            let meta = |shape: &[usize]| Meta {
                shape: shape.to_vec(),
                dtype,
            };
            let x = g.input(meta(&[4, 8]));
            let w = g.input(meta(&[8, 8]));
            let b = g.input(meta(&[8]));
            let c = g.constant(TensorData::scalar(Scalar::Float(0.5)).cast(dtype));
            let h = g.apply("matmul", &[x, w], Attrs::new()).unwrap();
            let h = g.apply("add", &[h, b], Attrs::new()).unwrap();
            let h = g.apply("relu", &[h], Attrs::new()).unwrap();
            let narrow = Attrs::new()
                .with("dim", Attr::Int(1))
                .with("start", Attr::Int(2))
                .with("length", Attr::Int(4));
            let n = g.apply("narrow", &[h], narrow).unwrap();
            let n = g
                .apply("tril", &[n], Attrs::new().with("diagonal", Attr::Int(1)))
                .unwrap();
            let m = g.apply("mul", &[n, c], Attrs::new()).unwrap();
            let t = g.apply("tanh", &[m], Attrs::new()).unwrap();
            let s = g
                .apply("softmax", &[t], Attrs::new().with("dim", Attr::Int(-1)))
                .unwrap();
            let best = g
                .apply(
                    "argmax",
                    &[s],
                    Attrs::new()
                        .with("dim", Attr::Int(1))
                        .with("keepdim", Attr::Bool(false)),
                )
                .unwrap();
            g.outputs = vec![s, h, best];
            assert_eq!(g.lowered_runs(), [0..4, 5..8], "{g}");
            let inputs = [
                random(&[4, 8], dtype),
                random(&[8, 8], dtype),
                random(&[8], dtype),
            ];
            let transposed = match &inputs[1] {
                TensorData::Float64(a) => {
                    TensorData::Float64(a.t().as_standard_layout().into_owned().reversed_axes())
                }
                TensorData::Float32(a) => {
                    TensorData::Float32(a.t().as_standard_layout().into_owned().reversed_axes())
                }
                _ => unreachable!("float inputs"),
            };
            assert!(!transposed.is_standard_layout());
            let results = g.eager_results(&inputs);
            let want: Vec<&TensorData> = g
                .outputs
                .iter()
                .map(|v| match v {
                    Value::Node(i) => &results[*i],
                    _ => unreachable!("node outputs"),
                })
                .collect();
            for w_arg in [&inputs[1], &transposed] {
                let got = g.run(&[&inputs[0], w_arg, &inputs[2]]).unwrap();
                assert_eq!(got.len(), want.len());
                for (a, b) in got.iter().zip(&want) {
                    assert_eq!(a.shape(), b.shape());
                    assert_eq!(a.dtype(), b.dtype());
                    assert_eq!(bits(a), bits(b), "{g}");
                }
            }
        }
    }
}
