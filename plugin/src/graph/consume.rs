//! Nodes that take over an operand read for the last time. Eager execution cannot know that a
//! tensor is dead; a graph does (its plan's last uses), so a reshape keeps its operand's
//! buffer instead of copying it, and `+ - * /` on float tensors write into their dead operand
//! instead of a new array. The arithmetic is the eager kernel's, element for element. A
//! transpose whose only reader is a matrix product hands it a strided view of its dead operand
//! instead of a row-major copy: products round alike whatever their operands' layout
//! (`tensor::ops::product`'s tests), and no other kernel ever sees the view.

use ndarray::{ArrayD, IxDyn};

use crate::tensor::ops::elementwise::{Binary, Fit, fit};
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
    let reusing = matches!(op, "reshape" | "squeeze" | "unsqueeze")
        || matches!(
            Binary::named(op),
            Some(Binary::Add | Binary::Sub | Binary::Mul | Binary::Div)
        );
    if !reusing {
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
/// node result read for the last time, and its own result is read once, by a `matmul`, and is
/// not an output (`last_use` is `usize::MAX` for outputs).
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
                && matches!(node.inputs[..], [Value::Node(i)] if last_use[i] == j)
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

/// The node's result computed in `own` (its operand at `pos`), or `own` back when this node
/// cannot run in it (a layout, a dtype or a broadcast the in-place loops do not cover).
pub fn run_in(
    op: &str,
    meta: &Meta,
    pos: usize,
    own: TensorData,
    other: Option<&TensorData>,
) -> Result<TensorData, TensorData> {
    if !own.is_standard_layout() {
        return Err(own);
    }
    if let Some(b) = Binary::named(op) {
        let Some(other) = other else { return Err(own) };
        return binary_in(b, meta, pos == 0, own, other);
    }
    // reshape, squeeze, unsqueeze: the same elements in the same order.
    Ok(crate::each_dtype!(own, a => a
        .into_shape_with_order(IxDyn(&meta.shape))
        .expect("inference gave a shape of the same count")
        .into()))
}

fn binary_in(
    op: Binary,
    meta: &Meta,
    own_first: bool,
    own: TensorData,
    other: &TensorData,
) -> Result<TensorData, TensorData> {
    if own.dtype() != meta.dtype || other.dtype() != meta.dtype || own.shape() != meta.shape {
        return Err(own);
    }
    match (own, other) {
        (TensorData::Float32(mut a), TensorData::Float32(y)) => {
            match in_place(op, own_first, &mut a, y, &meta.shape) {
                true => Ok(TensorData::Float32(a)),
                false => Err(TensorData::Float32(a)),
            }
        }
        (TensorData::Float64(mut a), TensorData::Float64(y)) => {
            match in_place(op, own_first, &mut a, y, &meta.shape) {
                true => Ok(TensorData::Float64(a)),
                false => Err(TensorData::Float64(a)),
            }
        }
        (own, _) => Err(own),
    }
}

/// `a = a op y` (or `y op a`), `y` lined up row-major with `a`; false if it does not line up.
fn in_place<T>(
    op: Binary,
    own_first: bool,
    a: &mut ArrayD<T>,
    y: &ArrayD<T>,
    shape: &[usize],
) -> bool
where
    T: Copy
        + std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>,
{
    let (Some(x), Some(ys), Some(how)) = (a.as_slice_mut(), y.as_slice(), fit(y.shape(), shape))
    else {
        return false;
    };
    match op {
        Binary::Add => lined_up(how, own_first, x, ys, |p, q| p + q),
        Binary::Sub => lined_up(how, own_first, x, ys, |p, q| p - q),
        Binary::Mul => lined_up(how, own_first, x, ys, |p, q| p * q),
        _ => lined_up(how, own_first, x, ys, |p, q| p / q),
    }
    true
}

#[inline(always)]
fn lined_up<T: Copy>(how: Fit, own_first: bool, x: &mut [T], ys: &[T], f: impl Fn(T, T) -> T) {
    let g = |own: T, other: T| {
        if own_first {
            f(own, other)
        } else {
            f(other, own)
        }
    };
    match how {
        Fit::Whole => x.iter_mut().zip(ys).for_each(|(p, &q)| *p = g(*p, q)),
        Fit::One => x.iter_mut().for_each(|p| *p = g(*p, ys[0])),
        Fit::Rows => x
            .chunks_exact_mut(ys.len())
            .for_each(|row| row.iter_mut().zip(ys).for_each(|(p, &q)| *p = g(*p, q))),
        Fit::Lanes => {
            let run = x.len() / ys.len();
            x.chunks_exact_mut(run)
                .zip(ys)
                .for_each(|(r, &q)| r.iter_mut().for_each(|p| *p = g(*p, q)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Graph;
    use crate::tensor::{Attr, Attrs, DType, Scalar, registry};

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

        let mut results: Vec<TensorData> = Vec::new();
        for node in &g.nodes {
            let args: Vec<&TensorData> = node
                .inputs
                .iter()
                .map(|v| match v {
                    Value::Input(i) => &inputs[*i],
                    Value::Const(i) => &g.consts[*i],
                    Value::Node(i) => &results[*i],
                })
                .collect();
            results.push(registry().call(&node.op, &args, &node.attrs).unwrap());
        }
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
        let mut last_use = vec![0; g.nodes.len()];
        for (j, node) in g.nodes.iter().enumerate() {
            for v in &node.inputs {
                if let Value::Node(i) = v {
                    last_use[*i] = j;
                }
            }
        }
        for o in &g.outputs {
            if let Value::Node(i) = o {
                last_use[*i] = usize::MAX;
            }
        }
        let views = views_for_products(&g.nodes, &last_use);
        assert_eq!(
            views,
            [false, true, false, true, false, false, false, false]
        );

        let mut results: Vec<TensorData> = Vec::new();
        for node in &g.nodes {
            let args: Vec<&TensorData> = node
                .inputs
                .iter()
                .map(|v| match v {
                    Value::Input(i) => &inputs[*i],
                    Value::Const(i) => &g.consts[*i],
                    Value::Node(i) => &results[*i],
                })
                .collect();
            results.push(registry().call(&node.op, &args, &node.attrs).unwrap());
        }
        let refs: Vec<&TensorData> = inputs.iter().collect();
        let got = g.run(&refs).unwrap();
        assert_eq!(got[0], results[7]);
        assert_eq!(got[1], results[6]);
    }

    #[test]
    fn only_a_last_read_of_a_node_result_is_taken() {
        let (a, b) = (Value::Node(0), Value::Node(1));
        let last_use = [2, 5];
        assert_eq!(consumable("add", &[a, b], 2, &last_use), Some((0, 0)));
        assert_eq!(consumable("add", &[b, a], 2, &last_use), Some((1, 0)));
        assert_eq!(consumable("mul", &[a, a], 2, &last_use), None);
        assert_eq!(
            consumable("add", &[Value::Input(0), b], 5, &last_use),
            Some((1, 1))
        );
        assert_eq!(consumable("matmul", &[a, b], 2, &last_use), None);
        assert_eq!(consumable("reshape", &[a], 3, &last_use), None);
    }
}
