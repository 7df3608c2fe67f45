use super::*;
use crate::tensor::{Attrs, Meta, Scalar};

fn data(shape: &[usize], seed: f64, dtype: DType) -> TensorData {
    scaled(shape, seed, 3.0, dtype)
}

fn scaled(shape: &[usize], seed: f64, scale: f64, dtype: DType) -> TensorData {
    let n: usize = shape.iter().product();
    let values: Vec<Scalar> = (0..n)
        .map(|i| Scalar::Float(((i as f64 + seed) * 0.37).sin() * scale))
        .collect();
    TensorData::from_scalars(shape, &values, dtype).unwrap()
}

/// The first and last node of each group the graph runs fused, and the nodes it returns.
fn groups_of(g: &Graph) -> Vec<(usize, usize, Vec<usize>)> {
    g.fusion_roles()
        .iter()
        .enumerate()
        .filter_map(|(j, r)| match r {
            Role::Starts(group) => {
                assert_eq!(group.first, j);
                Some((j, group.last, group.output_nodes().collect()))
            }
            _ => None,
        })
        .collect()
}

/// A layer as model code writes it: a product, a bias, `gelu`, a row's mean taken off, and
/// more, at sizes that run op by op (two results of 40,000 elements pass the lowering's
/// scratch); one group of thirteen nodes with two outputs.
fn layer(dtype: DType) -> Graph {
    let mut g = Graph::new();
    let meta = |shape: &[usize]| Meta {
        shape: shape.to_vec(),
        dtype,
    };
    let c = |g: &mut Graph, v: f64| g.constant(TensorData::full(&[], Scalar::Float(v), dtype));
    let x = g.input(meta(&[4, 100, 100])); // rows of 100: blocks of 1024 cut through rows
    let w = g.input(meta(&[100, 100]));
    let b = g.input(meta(&[100]));
    let m = g.input(meta(&[4, 100, 1]));
    let z = g.input(meta(&[4, 100, 100]));
    let (half, root, one) = (
        c(&mut g, 0.5),
        c(&mut g, 0.7071067811865476),
        c(&mut g, 1.0),
    );
    let ap = |g: &mut Graph, op: &str, args: &[Value]| g.apply(op, args, Attrs::new()).unwrap();
    let h = ap(&mut g, "matmul", &[x, w]); // v0
    let h = ap(&mut g, "add", &[h, b]); // v1: rows; the product's buffer is taken over
    let a = ap(&mut g, "mul", &[h, half]); // v2: gelu, its operand read twice
    let e = ap(&mut g, "mul", &[h, root]); // v3
    let e = ap(&mut g, "erf", &[e]); // v4
    let e = ap(&mut g, "add", &[one, e]); // v5
    let y = ap(&mut g, "mul", &[a, e]); // v6
    let y = ap(&mut g, "sub", &[m, y]); // v7: lanes, on the left
    let y = ap(&mut g, "tanh", &[y]); // v8
    let y = ap(&mut g, "div", &[y, z]); // v9: a strided operand (given transposed)
    let s = ap(&mut g, "sigmoid", &[y]); // v10: reads an output of the graph
    let r = ap(&mut g, "relu", &[x]); // v11: an input, never written over
    let r = ap(&mut g, "maximum", &[r, s]); // v12
    let o = ap(&mut g, "neg", &[r]); // v13
    g.outputs = vec![o, y];
    g
}

fn layer_inputs(dtype: DType) -> Vec<TensorData> {
    // `z` as a strided view: the transpose of a row-major array.
    let z = match data(&[4, 100, 100], 5.0, dtype) {
        TensorData::Float32(a) => TensorData::Float32(a.permuted_axes(vec![0, 2, 1])),
        TensorData::Float64(a) => TensorData::Float64(a.permuted_axes(vec![0, 2, 1])),
        _ => unreachable!(),
    };
    vec![
        data(&[4, 100, 100], 1.0, dtype),
        scaled(&[100, 100], 2.0, 0.1, dtype),
        data(&[100], 3.0, dtype),
        data(&[4, 100, 1], 4.0, dtype),
        z,
    ]
}

#[test]
fn fused_groups_compute_what_the_ops_compute_one_by_one() {
    for dtype in [DType::Float32, DType::Float64] {
        let g = layer(dtype);
        assert_eq!(groups_of(&g), [(1, 13, vec![9, 13])], "{dtype:?}");
        let inputs = layer_inputs(dtype);
        let want = g.eager_results(&inputs);
        let refs: Vec<&TensorData> = inputs.iter().collect();
        let got = g.run(&refs).unwrap();
        assert_eq!(got[0], want[13], "{dtype:?}");
        assert_eq!(got[1], want[9], "{dtype:?}");
        // The same again: nothing of a run is left over into the next.
        assert_eq!(g.run(&refs).unwrap()[0], want[13], "{dtype:?}");
    }
}

#[test]
fn groups_are_runs_of_elementwise_nodes_of_one_shape_and_float_type() {
    let mut g = Graph::new();
    let meta = |shape: &[usize], dtype| Meta {
        shape: shape.to_vec(),
        dtype,
    };
    let x = g.input(meta(&[300, 300], DType::Float64));
    let b = g.input(meta(&[300], DType::Float64));
    let i = g.input(meta(&[300, 300], DType::Int64));
    let ap = |g: &mut Graph, op: &str, args: &[Value]| g.apply(op, args, Attrs::new()).unwrap();
    let h = ap(&mut g, "exp", &[x]); // v0: large and costly: on two threads
    let sq = ap(&mut g, "mul", &[h, h]); // v1: reads v0 twice
    let t = ap(&mut g, "sum", &[sq]); // v2: not elementwise
    let s = ap(&mut g, "add", &[t, b]); // v3: alone, no dead operand of its shape
    let k = ap(&mut g, "neg", &[i]); // v4: int64 is not fused
    let k = ap(&mut g, "abs", &[k]); // v5
    let u = ap(&mut g, "sqrt", &[s]); // v6: alone, too small to pay for a group
    let p = ap(&mut g, "matmul", &[x, x]); // v7
    let r = ap(&mut g, "relu", &[p]); // v8: alone, in its dead operand's buffer
    g.outputs = vec![u, k, sq, r];
    assert_eq!(groups_of(&g), [(0, 1, vec![1]), (8, 8, vec![8])]);
    let ints: Vec<Scalar> = (0..90_000).map(|n| Scalar::Int(n % 7 - 3)).collect();
    let inputs = vec![
        data(&[300, 300], 1.0, DType::Float64),
        data(&[300], 2.0, DType::Float64),
        TensorData::from_scalars(&[300, 300], &ints, DType::Int64).unwrap(),
    ];
    let want = g.eager_results(&inputs);
    let refs: Vec<&TensorData> = inputs.iter().collect();
    let got = g.run(&refs).unwrap();
    assert_eq!(got[0], want[6]);
    assert_eq!(got[1], want[5]);
    assert_eq!(got[2], want[1]);
    assert_eq!(got[3], want[8]);
}
