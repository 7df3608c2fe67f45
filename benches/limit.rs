//! The limit of the tiny forward passes of `benches/translate.py`: the same computations
//! written by hand in Rust over flat float64 buffers, allocated once, with plain loops (what a
//! careful programmer writes without a library). `benches/translate.sh` prints these figures
//! beside the traced ones, so that the distance of a graph run to the limit stays visible.
//!
//!   cargo run --release --example limit
//!
//! Prints `name limit=SECONDS` lines, as translate.py does.

use std::hint::black_box;
use std::time::Instant;

/// `out = a @ b` for row-major `a` (m × k) and `b` (k × n).
fn matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize, out: &mut [f64]) {
    for i in 0..m {
        let row = &mut out[i * n..(i + 1) * n];
        row.fill(0.0);
        for p in 0..k {
            let x = a[i * k + p];
            for (o, &y) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                *o += x * y;
            }
        }
    }
}

fn softmax_rows(x: &mut [f64], n: usize) {
    for row in x.chunks_exact_mut(n) {
        let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
        let mut sum = 0.0;
        for v in row.iter_mut() {
            *v = (*v - max).exp();
            sum += *v;
        }
        row.iter_mut().for_each(|v| *v /= sum);
    }
}

/// Deterministic values in (-1, 1): the figures do not depend on them.
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

/// translate.py's `mlp_tiny`: `mlp.forward` with sizes 16-16-16-16 on one sample
/// (x @ w + b, relu between layers, softmax at the end).
struct Mlp {
    layers: Vec<(Vec<f64>, Vec<f64>)>,
    x: Vec<f64>,
    h: [Vec<f64>; 2],
}

impl Mlp {
    fn new() -> Self {
        let layers = (0..3)
            .map(|l| (values(16 * 16, l), vec![0.0; 16]))
            .collect();
        Mlp {
            layers,
            x: values(16, 9),
            h: [vec![0.0; 16], vec![0.0; 16]],
        }
    }

    fn forward(&mut self) -> f64 {
        let [a, b] = &mut self.h;
        a.copy_from_slice(&self.x);
        for (l, (w, bias)) in self.layers.iter().enumerate() {
            matmul(a, w, 1, 16, 16, b);
            for (v, &c) in b.iter_mut().zip(bias) {
                *v += c;
                if l < 2 {
                    *v = v.max(0.0);
                }
            }
            std::mem::swap(a, b);
        }
        softmax_rows(a, 16);
        a[0]
    }
}

/// translate.py's `attention_tiny`: `attention.attention` with d_model 16 on a (1, 4, 16)
/// input: projections, scores scaled by 1/sqrt(d), softmax, the weighted sum, the output
/// projection and the residual.
struct Attention {
    wq: Vec<f64>,
    wk: Vec<f64>,
    wv: Vec<f64>,
    wo: Vec<f64>,
    x: Vec<f64>,
    q: Vec<f64>,
    k: Vec<f64>,
    v: Vec<f64>,
    kt: Vec<f64>,
    scores: Vec<f64>,
    mixed: Vec<f64>,
    out: Vec<f64>,
}

const T: usize = 4;
const D: usize = 16;

impl Attention {
    fn new() -> Self {
        Attention {
            wq: values(D * D, 1),
            wk: values(D * D, 2),
            wv: values(D * D, 3),
            wo: values(D * D, 4),
            x: values(T * D, 5),
            q: vec![0.0; T * D],
            k: vec![0.0; T * D],
            v: vec![0.0; T * D],
            kt: vec![0.0; D * T],
            scores: vec![0.0; T * T],
            mixed: vec![0.0; T * D],
            out: vec![0.0; T * D],
        }
    }

    fn forward(&mut self) -> f64 {
        matmul(&self.x, &self.wq, T, D, D, &mut self.q);
        matmul(&self.x, &self.wk, T, D, D, &mut self.k);
        matmul(&self.x, &self.wv, T, D, D, &mut self.v);
        for i in 0..T {
            for j in 0..D {
                self.kt[j * T + i] = self.k[i * D + j];
            }
        }
        matmul(&self.q, &self.kt, T, D, T, &mut self.scores);
        let scale = (D as f64).sqrt();
        self.scores.iter_mut().for_each(|s| *s /= scale);
        softmax_rows(&mut self.scores, T);
        matmul(&self.scores, &self.v, T, T, D, &mut self.mixed);
        matmul(&self.mixed, &self.wo, T, D, D, &mut self.out);
        for (o, &x) in self.out.iter_mut().zip(&self.x) {
            *o += x;
        }
        self.out[0] + self.scores[0]
    }
}

/// Seconds per call, the best of five runs of at least 0.1 s each (as translate.py measures).
fn per_call(mut f: impl FnMut() -> f64) -> f64 {
    black_box(f());
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let (mut n, start) = (0u64, Instant::now());
        loop {
            for _ in 0..1000 {
                black_box(f());
            }
            n += 1000;
            let t = start.elapsed().as_secs_f64();
            if t > 0.1 {
                best = best.min(t / n as f64);
                break;
            }
        }
    }
    best
}

fn main() {
    let mut mlp = Mlp::new();
    println!("mlp_tiny limit={:.9}", per_call(|| mlp.forward()));
    let mut attention = Attention::new();
    println!(
        "attention_tiny limit={:.9}",
        per_call(|| attention.forward())
    );
}
