//! Nodes that take over an operand read for the last time. Eager execution cannot know that a
//! tensor is dead; a graph does (its plan's last uses), so a reshape keeps its operand's
//! buffer instead of copying it (elementwise ops write into theirs: `fuse`). A transpose whose
//! only reader is a matrix product hands it a strided view of its dead operand (or of a plain
//! copy of a graph input or constant, which the graph does not own) instead of a row-major
//! copy: products round alike whatever their operands' layout
//! (`tensor::ops::product`'s tests), and no other kernel ever sees the view.

use ndarray::IxDyn;

use crate::tensor::{Meta, TensorData};

use super::ir::{Node, Value};
use crate::tensor::Attrs;
use crate::tensor::ops::shape_ops::{permutation, transpose_perm};

/// The operand (its position among the node's inputs, and its node) that a node of `op` may
/// consume: a node result whose last use is this node `j`, read once by it.
pub fn consumable(
    op: &str,
    inputs: &[Value],
    j: usize,
    last_use: &[usize],
) -> Option<(usize, usize)> {
    if !matches!(op, "reshape" | "squeeze" | "unsqueeze") {
        return None;
    }
    inputs.iter().enumerate().find_map(|(pos, v)| match v {
        Value::Node(i) if last_use[*i] == j && inputs.iter().filter(|w| *w == v).count() == 1 => {
            Some((pos, *i))
        }
        _ => None,
    })
}

/// Per node, whether it is a transpose (or permutation) to run as a view: its operand is a
/// node result read for the last time, or an input or constant of the graph (then copied as it
/// lies in memory, one pass, where a row-major transposed copy took three times as long), and
/// its own result is read once, by a `matmul`, and is not an output (`last_use` is
/// `usize::MAX` for outputs).
pub fn views_for_products(nodes: &[Node], last_use: &[usize]) -> Vec<bool> {
    let mut readers = vec![(0usize, true); nodes.len()];
    for node in nodes {
        for v in &node.inputs {
            if let Value::Node(i) = v {
                readers[*i].0 += 1;
                readers[*i].1 &= node.op == "matmul";
            }
        }
    }
    nodes
        .iter()
        .enumerate()
        .map(|(j, node)| {
            matches!(node.op.as_str(), "transpose" | "permute")
                && match node.inputs[..] {
                    [Value::Node(i)] => last_use[i] == j,
                    [Value::Input(_) | Value::Const(_)] => true,
                    _ => false,
                }
                && readers[j] == (1, true)
                && last_use[j] != usize::MAX
        })
        .collect()
}

/// `own` with its axes permuted as the transpose or permutation `op` with `attrs` says, the
/// same elements in place (a strided view, for [`views_for_products`]' nodes).
pub fn permuted(op: &str, attrs: &Attrs, own: TensorData) -> crate::tensor::TResult<TensorData> {
    let perm = match op {
        "transpose" => transpose_perm(own.ndim(), attrs)?,
        _ => permutation(&attrs.ints("dims")?, own.ndim())?,
    };
    Ok(crate::each_dtype!(own, a => a.permuted_axes(IxDyn(&perm)).into()))
}

/// The node's result (a reshape, squeeze or unsqueeze: the same elements in the same order)
/// made of `own`, or `own` back when it is not row-major.
pub fn run_in(meta: &Meta, own: TensorData) -> Result<TensorData, TensorData> {
    if !own.is_standard_layout() {
        return Err(own);
    }
    Ok(crate::each_dtype!(own, a => a
        .into_shape_with_order(IxDyn(&meta.shape))
        .expect("inference gave a shape of the same count")
        .into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Graph;
    use crate::tensor::{Attr, Attrs, DType, Scalar};

    fn f32s(shape: &[usize], seed: f64) -> TensorData {
        let n: usize = shape.iter().product();
        let values: Vec<Scalar> = (0..n)
            .map(|i| Scalar::Float(((i as f64 + seed) * 0.37).sin() * 3.0))
            .collect();
        TensorData::from_scalars(shape, &values, DType::Float32).unwrap()
    }

    #[test]
    fn nodes_that_take_over_dead_operands_compute_what_the_registry_does() {
        let mut g = Graph::new();
        let meta = |shape: &[usize]| Meta {
            shape: shape.to_vec(),
            dtype: DType::Float32,
        };
        let x = g.input(meta(&[2, 3, 4]));
        let b = g.input(meta(&[4]));
        let m = g.input(meta(&[2, 3, 1]));
        let h = g.apply("add", &[x, b], Attrs::new()).unwrap();
        let h = g.apply("sub", &[m, h], Attrs::new()).unwrap(); // the right operand dies
        let h = g.apply("div", &[h, m], Attrs::new()).unwrap();
        let sq = g.apply("mul", &[h, h], Attrs::new()).unwrap(); // read twice: not taken
        let r = g
            .apply(
                "reshape",
                &[sq],
                Attrs::new().with("shape", Attr::Ints(vec![6, 4])),
            )
            .unwrap();
        let t = g
            .apply(
                "transpose",
                &[r],
                Attrs::new()
                    .with("dim0", Attr::Int(0))
                    .with("dim1", Attr::Int(1)),
            )
            .unwrap();
        let out = g.apply("mul", &[t, b], Attrs::new()).unwrap_err(); // (4, 6) * (4,)
        assert!(out.message.contains("broadcast"), "{}", out.message);
        let u = g
            .apply("unsqueeze", &[t], Attrs::new().with("dim", Attr::Int(0)))
            .unwrap();
        g.outputs = vec![u, h];
        let inputs = [
            f32s(&[2, 3, 4], 1.0),
            f32s(&[4], 2.0),
            f32s(&[2, 3, 1], 3.0),
        ];
        let refs: Vec<&TensorData> = inputs.iter().collect();

        let results = g.eager_results(&inputs);
        let got = g.run(&refs).unwrap();
        let want = [&results[6], &results[2]];
        for (a, b) in got.iter().zip(want) {
            assert_eq!(a, b);
        }
    }

    #[test]
    fn products_of_transposed_dead_results_are_the_registry_products() {
        // Large enough (4 x 72 x 96 results) to run node by node rather than lowered.
        let mut g = Graph::new();
        let meta = |shape: &[usize]| Meta {
            shape: shape.to_vec(),
            dtype: DType::Float32,
        };
        let x = g.input(meta(&[4, 72, 96]));
        let w = g.input(meta(&[96, 96]));
        let k = g.apply("matmul", &[x, w], Attrs::new()).unwrap();
        let swap = |a: i64, b: i64| {
            Attrs::new()
                .with("dim0", Attr::Int(a))
                .with("dim1", Attr::Int(b))
        };
        let kt = g.apply("transpose", &[k], swap(-2, -1)).unwrap(); // a view for the product
        let s = g.apply("matmul", &[x, kt], Attrs::new()).unwrap(); // (4, 72, 72)
        let p = g
            .apply(
                "permute",
                &[s],
                Attrs::new().with("dims", Attr::Ints(vec![0, 2, 1])),
            )
            .unwrap(); // a view: the left operand this time
        let v = g.apply("matmul", &[p, x], Attrs::new()).unwrap(); // (4, 72, 96)
        let vt = g.apply("transpose", &[v], swap(0, 1)).unwrap(); // read twice: a copy
        let twice = g.apply("add", &[vt, vt], Attrs::new()).unwrap();
        let out = g.apply("matmul", &[vt, w], Attrs::new()).unwrap();
        g.outputs = vec![out, twice];

        let inputs = [f32s(&[4, 72, 96], 1.0), f32s(&[96, 96], 2.0)];
        let views = views_for_products(&g.nodes, &g.last_uses());
        assert_eq!(
            views,
            [false, true, false, true, false, false, false, false]
        );

        let results = g.eager_results(&inputs);
        let refs: Vec<&TensorData> = inputs.iter().collect();
        let got = g.run(&refs).unwrap();
        assert_eq!(got[0], results[7]);
        assert_eq!(got[1], results[6]);
    }

    #[test]
    fn products_of_transposed_inputs_read_copies_of_the_inputs_as_they_lie() {
        // `x @ w.T` and `x.T @ e` on a graph's inputs (a gradient's product): each transpose
        // runs as a view of a copy of its input; one also read by an `add` stays a row-major
        // copy. Large enough to run node by node.
        let mut g = Graph::new();
        let meta = |shape: &[usize]| Meta {
            shape: shape.to_vec(),
            dtype: DType::Float32,
        };
        let x = g.input(meta(&[300, 96]));
        let w = g.input(meta(&[96, 96]));
        let e = g.input(meta(&[300, 10]));
        let swap = Attrs::new()
            .with("dim0", Attr::Int(0))
            .with("dim1", Attr::Int(1));
        let wt = g.apply("transpose", &[w], swap.clone()).unwrap();
        let h = g.apply("matmul", &[x, wt], Attrs::new()).unwrap();
        let xt = g.apply("transpose", &[x], swap.clone()).unwrap();
        let grad = g.apply("matmul", &[xt, e], Attrs::new()).unwrap();
        let wt2 = g.apply("transpose", &[w], swap).unwrap();
        let both = g.apply("matmul", &[x, wt2], Attrs::new()).unwrap();
        let plus = g.apply("add", &[wt2, wt2], Attrs::new()).unwrap(); // read twice
        g.outputs = vec![h, grad, both, plus];

        let views = views_for_products(&g.nodes, &g.last_uses());
        assert_eq!(views, [true, false, true, false, false, false, false]);
        let inputs = [
            f32s(&[300, 96], 1.0),
            f32s(&[96, 96], 2.0),
            f32s(&[300, 10], 3.0),
        ];
        let results = g.eager_results(&inputs);
        let refs: Vec<&TensorData> = inputs.iter().collect();
        let got = g.run(&refs).unwrap();
        let want = [&results[1], &results[3], &results[5], &results[6]];
        assert_eq!(got.len(), want.len());
        assert!(got.iter().zip(want).all(|(a, b)| a == b));
        // The inputs are read, never taken: a second run gives the same.
        assert_eq!(g.run(&refs).unwrap(), got);
    }

    #[test]
    fn only_a_last_read_of_a_node_result_is_taken() {
        let (a, b) = (Value::Node(0), Value::Node(1));
        let last_use = [2, 5];
        assert_eq!(consumable("reshape", &[a], 2, &last_use), Some((0, 0)));
        assert_eq!(consumable("unsqueeze", &[b], 5, &last_use), Some((0, 1)));
        assert_eq!(
            consumable("squeeze", &[Value::Input(0)], 5, &last_use),
            None
        );
        assert_eq!(consumable("add", &[a, b], 2, &last_use), None); // `fuse`'s
        assert_eq!(consumable("matmul", &[a, b], 2, &last_use), None);
        assert_eq!(consumable("reshape", &[a], 3, &last_use), None);
    }
}
