//! Lowered graphs against the registry, op by op: same results, bit for bit.

use super::*;
use crate::tensor::{Attr, Attrs, Meta, Scalar, TensorData};

thread_local! {
    /// The element type of the graphs the tests build.
    static DT: std::cell::Cell<DType> = const { std::cell::Cell::new(DType::Float64) };
}

/// `f` with graphs of float64, then of float32.
fn for_each_float(f: impl Fn()) {
    for dt in [DType::Float64, DType::Float32] {
        DT.set(dt);
        f();
    }
}

fn random(shape: &[usize]) -> TensorData {
    let n = shape.iter().product();
    let values: Vec<Scalar> = crate::tensor::random::normal(n)
        .into_iter()
        .map(Scalar::Float)
        .collect();
    TensorData::from_scalars(shape, &values, DT.get()).unwrap()
}

/// The graph's nodes run one by one through the registry, as eager execution runs them.
fn eager(g: &Graph, inputs: &[TensorData]) -> Vec<TensorData> {
    let results = g.eager_results(inputs);
    g.outputs
        .iter()
        .map(|v| match v {
            Value::Input(i) => inputs[*i].clone(),
            Value::Const(i) => g.consts[*i].clone(),
            Value::Node(i) => results[*i].clone(),
        })
        .collect()
}

fn bits(t: &TensorData) -> Vec<u64> {
    t.to_scalars()
        .iter()
        .map(|s| s.as_f64().to_bits())
        .collect()
}

/// Lowered and eager agree to the bit, shapes included.
fn check(g: &mut Graph, inputs: &[TensorData]) {
    g.prune();
    let last_use = vec![usize::MAX; g.nodes.len()];
    let lowered = lower(g, &last_use).unwrap_or_else(|why| panic!("not lowered: {why}\n{g}"));
    let refs: Vec<&TensorData> = inputs.iter().collect();
    assert_eq!(
        matches!(lowered, Lowered::Float32(_)),
        DT.get() == DType::Float32
    );
    let got = lowered
        .run(&refs)
        .expect("row-major inputs of the graph's type");
    let want = eager(g, inputs);
    assert_eq!(got.len(), want.len());
    for (a, b) in got.iter().zip(&want) {
        assert_eq!(a.shape(), b.shape(), "{g}");
        assert_eq!(bits(a), bits(b), "{g}");
    }
    // And through Graph::run (its own plan, buffers reused in place).
    let via_run = g.run(&refs).unwrap();
    for (a, b) in via_run.iter().zip(&want) {
        assert_eq!(bits(a), bits(b), "{g}");
    }
}

fn input(g: &mut Graph, shape: &[usize]) -> Value {
    g.input(Meta {
        shape: shape.to_vec(),
        dtype: DT.get(),
    })
}

#[test]
fn mlp_layers_and_broadcasts_match_eager_to_the_bit() {
    for_each_float(|| {
        crate::tensor::random::manual_seed(7);
        for (batch, d_in, d_out) in [(1, 16, 16), (8, 16, 32), (3, 5, 7), (2, 33, 9)] {
            let mut g = Graph::new();
            let x = input(&mut g, &[batch, d_in]);
            let w = input(&mut g, &[d_in, d_out]);
            let b = input(&mut g, &[d_out]);
            let s = g.constant(TensorData::scalar(Scalar::Float(0.37)).cast(DT.get()));
            let h = g.apply("matmul", &[x, w], Attrs::new()).unwrap();
            let h = g.apply("add", &[h, b], Attrs::new()).unwrap();
            let h = g.apply("relu", &[h], Attrs::new()).unwrap();
            let h2 = g.apply("mul", &[s, h], Attrs::new()).unwrap();
            let h3 = g.apply("sub", &[b, h2], Attrs::new()).unwrap();
            let h4 = g.apply("tanh", &[h3], Attrs::new()).unwrap();
            let p = g
                .apply("softmax", &[h4], Attrs::new().with("dim", Attr::Int(-1)))
                .unwrap();
            let lp = g
                .apply("log_softmax", &[h3], Attrs::new().with("dim", Attr::Int(1)))
                .unwrap();
            // float32 has exp and erf of its own (vector_math): those too.
            let e = g.apply("exp", &[h3], Attrs::new()).unwrap();
            let sg = g.apply("sigmoid", &[h4], Attrs::new()).unwrap();
            let er = g.apply("erf", &[h2], Attrs::new()).unwrap();
            g.outputs = vec![p, lp, h, e, sg, er];
            let inputs = [
                random(&[batch, d_in]),
                random(&[d_in, d_out]),
                random(&[d_out]),
            ];
            check(&mut g, &inputs);
        }
    });
}

#[test]
fn kept_dims_operands_match_eager_to_the_bit() {
    for_each_float(|| {
        crate::tensor::random::manual_seed(9);
        let mut g = Graph::new();
        let x = input(&mut g, &[2, 3, 8]);
        let m = input(&mut g, &[2, 3, 1]);
        let s = input(&mut g, &[2, 1, 1]);
        let centered = g.apply("sub", &[x, m], Attrs::new()).unwrap();
        let scaled = g.apply("div", &[s, centered], Attrs::new()).unwrap();
        let again = g.apply("mul", &[scaled, m], Attrs::new()).unwrap();
        g.outputs = vec![centered, again];
        check(
            &mut g,
            &[random(&[2, 3, 8]), random(&[2, 3, 1]), random(&[2, 1, 1])],
        );
    });
}

#[test]
fn batched_products_transposes_and_reshapes_match_eager_to_the_bit() {
    for_each_float(|| {
        crate::tensor::random::manual_seed(8);
        let mut g = Graph::new();
        let x = input(&mut g, &[2, 4, 16]);
        let w = input(&mut g, &[16, 16]);
        let v = input(&mut g, &[16]);
        let q = g.apply("matmul", &[x, w], Attrs::new()).unwrap();
        let kt = g
            .apply(
                "transpose",
                &[q],
                Attrs::new()
                    .with("dim0", Attr::Int(-2))
                    .with("dim1", Attr::Int(-1)),
            )
            .unwrap();
        let scores = g.apply("matmul", &[q, kt], Attrs::new()).unwrap();
        let t0 = g
            .apply(
                "transpose",
                &[x],
                Attrs::new()
                    .with("dim0", Attr::Int(0))
                    .with("dim1", Attr::Int(2)),
            )
            .unwrap();
        let r = g
            .apply(
                "reshape",
                &[t0],
                Attrs::new().with("shape", Attr::Ints(vec![16, 8])),
            )
            .unwrap();
        let mv = g.apply("matmul", &[w, v], Attrs::new()).unwrap();
        let vm = g.apply("matmul", &[v, w], Attrs::new()).unwrap();
        let same = g.apply("add", &[scores, scores], Attrs::new()).unwrap();
        g.outputs = vec![scores, r, mv, vm, same, scores];
        let inputs = [random(&[2, 4, 16]), random(&[16, 16]), random(&[16])];
        check(&mut g, &inputs);
    });
}

#[test]
fn scratch_places_are_reused_after_their_last_use() {
    for_each_float(|| {
        crate::tensor::random::manual_seed(9);
        let mut g = Graph::new();
        let x = input(&mut g, &[4, 8]);
        let w = input(&mut g, &[8, 8]);
        // Products cannot overwrite an operand, so each needs a place; a freed one is reused.
        let mut h = g.apply("matmul", &[x, w], Attrs::new()).unwrap();
        for _ in 0..4 {
            let twice = g.apply("add", &[h, h], Attrs::new()).unwrap(); // one operand, twice
            h = g.apply("matmul", &[twice, w], Attrs::new()).unwrap();
        }
        g.outputs = vec![h];
        g.prune();
        let mut last_use = vec![usize::MAX; g.nodes.len()];
        for (j, node) in g.nodes.iter().enumerate() {
            for v in &node.inputs {
                if let Value::Node(i) = v {
                    last_use[*i] = j;
                }
            }
        }
        if let Value::Node(i) = h {
            last_use[i] = usize::MAX;
        }
        let lowered = lower(&g, &last_use).unwrap();
        assert!(
            lowered.scratch_len() <= 3 * 32,
            "{} elements for {} results of 32",
            lowered.scratch_len(),
            g.nodes.len()
        );
        check(&mut g, &[random(&[4, 8]), random(&[8, 8])]);
    });
}

#[test]
fn what_has_no_lowering_says_why() {
    let mut g = Graph::new();
    let x = input(&mut g, &[3, 4]);
    let s = g
        .apply("sum", &[x], Attrs::new().with("dim", Attr::None))
        .unwrap();
    g.outputs = vec![s];
    assert!(lower(&g, &[usize::MAX]).unwrap_err().contains("sum"));
    let mut g2 = Graph::new();
    let a = input(&mut g2, &[3, 1]);
    let b = input(&mut g2, &[1, 4]);
    let outer = g2.apply("mul", &[a, b], Attrs::new()).unwrap(); // both operands broadcast
    g2.outputs = vec![outer];
    assert!(lower(&g2, &[usize::MAX]).is_err());
    let mut g3 = Graph::new();
    let p = input(&mut g3, &[2, 4, 8]);
    let q = input(&mut g3, &[1, 8, 8]);
    let m = g3.apply("matmul", &[p, q], Attrs::new()).unwrap(); // batches broadcast
    g3.outputs = vec![m];
    assert!(lower(&g3, &[usize::MAX]).is_err());
    let mut g4 = Graph::new();
    let big = input(&mut g4, &[300, 300]);
    let r = g4.apply("relu", &[big], Attrs::new()).unwrap();
    g4.outputs = vec![r];
    assert!(lower(&g4, &[usize::MAX]).unwrap_err().contains("scratch"));
}

#[test]
fn linear_layers_match_eager_to_the_bit() {
    for_each_float(|| {
        crate::tensor::random::manual_seed(11);
        // (x's shape, out features): rows of one, of several, batched, a vector, odd sizes
        // and the largest product the eager kernel's loop takes (32 * 32 * 32).
        for (x_shape, n) in [
            (&[1, 16][..], 16),
            (&[8, 16][..], 32),
            (&[2, 3, 5][..], 7),
            (&[9][..], 12),
            (&[4, 8, 32][..], 32),
            (&[3, 1][..], 1),
        ] {
            let k = *x_shape.last().unwrap();
            for with_bias in [true, false] {
                let mut g = Graph::new();
                let x = input(&mut g, x_shape);
                let w = input(&mut g, &[n, k]);
                let b = input(&mut g, &[n]);
                let w2 = input(&mut g, &[n, n]);
                let first = if with_bias { vec![x, w, b] } else { vec![x, w] };
                let h = g.apply("linear", &first, Attrs::new()).unwrap();
                let h = g.apply("relu", &[h], Attrs::new()).unwrap();
                let y = g.apply("linear", &[h, w2, b], Attrs::new()).unwrap();
                g.outputs = vec![y, h];
                let inputs = [
                    random(x_shape),
                    random(&[n, k]),
                    random(&[n]),
                    random(&[n, n]),
                ];
                check(&mut g, &inputs);
            }
        }
    });
}

#[test]
fn products_past_the_plain_loop_are_not_lowered() {
    for (x_shape, w_shape, op) in [
        (&[33, 32][..], &[32, 32][..], "linear"),
        (&[64, 64][..], &[64, 64][..], "matmul"),
        (&[4, 16, 32][..], &[32, 64][..], "matmul"),
    ] {
        let mut g = Graph::new();
        let x = input(&mut g, x_shape);
        let w = input(&mut g, w_shape);
        let y = g.apply(op, &[x, w], Attrs::new()).unwrap();
        g.outputs = vec![y];
        assert!(lower(&g, &[usize::MAX]).is_err(), "{g}");
    }
}

#[test]
fn layer_norms_and_reductions_over_the_last_dimension_match_eager_to_the_bit() {
    for_each_float(|| {
        crate::tensor::random::manual_seed(13);
        for shape in [&[2, 16, 32][..], &[5, 7][..], &[9][..], &[3, 1][..]] {
            let last = shape.len() as i64 - 1;
            let mut g = Graph::new();
            let x = input(&mut g, shape);
            let gain = input(&mut g, &shape[shape.len() - 1..]);
            let eps = g.constant(TensorData::scalar(Scalar::Float(1e-5)).cast(DT.get()));
            let over_last = |keepdim: bool| {
                Attrs::new()
                    .with("dim", Attr::Ints(vec![last]))
                    .with("keepdim", Attr::Bool(keepdim))
            };
            // A layer norm as nn.LayerNorm writes it.
            let mean = g.apply("mean", &[x], over_last(true)).unwrap();
            let var = g
                .apply(
                    "var",
                    &[x],
                    over_last(true).with("correction", Attr::Int(0)),
                )
                .unwrap();
            let centred = g.apply("sub", &[x, mean], Attrs::new()).unwrap();
            let var_eps = g.apply("add", &[var, eps], Attrs::new()).unwrap();
            let std = g.apply("sqrt", &[var_eps], Attrs::new()).unwrap();
            let normed = g.apply("div", &[centred, std], Attrs::new()).unwrap();
            let scaled = g.apply("mul", &[normed, gain], Attrs::new()).unwrap();
            // And the other reductions, without kept dimensions.
            let sum = g.apply("sum", &[scaled], over_last(false)).unwrap();
            let unbiased = g
                .apply(
                    "var",
                    &[x],
                    over_last(false).with("correction", Attr::Int(1)),
                )
                .unwrap();
            g.outputs = vec![scaled, sum, unbiased, mean];
            check(&mut g, &[random(shape), random(&shape[shape.len() - 1..])]);
        }
    });
}

#[test]
fn a_reduction_over_another_dimension_is_not_lowered() {
    let mut g = Graph::new();
    let x = input(&mut g, &[4, 8]);
    let attrs = Attrs::new()
        .with("dim", Attr::Ints(vec![0]))
        .with("keepdim", Attr::Bool(false));
    let y = g.apply("mean", &[x], attrs).unwrap();
    g.outputs = vec![y];
    let last_use = vec![usize::MAX; g.nodes.len()];
    assert!(lower(&g, &last_use).is_err());
}

#[test]
fn narrows_and_splits_match_eager_to_the_bit() {
    for_each_float(|| {
        crate::tensor::random::manual_seed(19);
        let narrow = |dim: i64, start: i64, length: i64| {
            Attrs::new()
                .with("dim", Attr::Int(dim))
                .with("start", Attr::Int(start))
                .with("length", Attr::Int(length))
        };
        // (shape, dim, start, length): the middle of the last dimension, the first, a
        // negative start, nothing taken, a vector.
        for (shape, dim, start, length) in [
            (&[2, 16, 96][..], 2, 32, 32),
            (&[2, 16, 96][..], -1, 64, 32),
            (&[6, 5][..], 0, 1, 3),
            (&[3, 4, 5][..], 1, -3, 2),
            (&[3, 4][..], 1, 2, 0),
            (&[9][..], 0, 4, 5),
        ] {
            let mut g = Graph::new();
            let x = input(&mut g, shape);
            let part = g.apply("narrow", &[x], narrow(dim, start, length)).unwrap();
            let doubled = g.apply("add", &[part, part], Attrs::new()).unwrap();
            g.outputs = vec![part, doubled];
            check(&mut g, &[random(shape)]);
        }
        // An attention's query and key split off one projection, then multiplied.
        let mut g = Graph::new();
        let qkv = input(&mut g, &[2, 4, 24]);
        let q = g.apply("narrow", &[qkv], narrow(2, 0, 8)).unwrap();
        let k = g.apply("narrow", &[qkv], narrow(2, 8, 8)).unwrap();
        let swap = Attrs::new()
            .with("dim0", Attr::Int(-2))
            .with("dim1", Attr::Int(-1));
        let kt = g.apply("transpose", &[k], swap).unwrap();
        let scores = g.apply("matmul", &[q, kt], Attrs::new()).unwrap();
        g.outputs = vec![scores];
        check(&mut g, &[random(&[2, 4, 24])]);
    });
}
