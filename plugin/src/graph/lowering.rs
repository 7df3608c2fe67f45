//! A graph lowered to loops over row-major float64 buffers. For small tensors the general
//! kernels cost far more than their arithmetic (ndarray's dimension handling, dtype dispatch,
//! broadcasting machinery, a check per result); a lowered graph fixes all of that when it is
//! built, because its shapes are known then, and only the loops run per call.
//!
//! Every step computes each element with the function the eager kernel uses (`float_op`,
//! `Unary::float`, `small_product`, `softmax_lane`) in the same order, so a lowered graph
//! rounds exactly as eager execution does. A graph with a node that has no lowering runs
//! through the registry instead, and so does a call whose inputs are not row-major float64.

use std::cell::Cell;
use std::ops::Range;

use ndarray::{ArrayD, IxDyn};
use smallvec::SmallVec;

use super::ir::{Graph, Outputs, Value};
use crate::tensor::ops::elementwise::{Binary, Fit, Lineup, Unary, fit, float_op};
use crate::tensor::ops::linalg::{SMALL_PRODUCT, small_product_into};
use crate::tensor::ops::reduce::softmax_lane;
use crate::tensor::ops::shape_ops::transpose_perm;
use crate::tensor::shape::normalize_dim;
use crate::tensor::{DType, TensorData};

/// `$body` with `$f` bound to `|p, q| float_op(op, p, q)` for the arithmetic op `op` made a
/// constant, so that each op gets its own loop instead of a dispatch per element.
macro_rules! with_binary {
    ($op:expr, $f:ident => $body:expr) => {
        match $op {
            Binary::Add => {
                let $f = |p: f64, q: f64| float_op(Binary::Add, p, q);
                $body
            }
            Binary::Sub => {
                let $f = |p: f64, q: f64| float_op(Binary::Sub, p, q);
                $body
            }
            Binary::Mul => {
                let $f = |p: f64, q: f64| float_op(Binary::Mul, p, q);
                $body
            }
            Binary::Div => {
                let $f = |p: f64, q: f64| float_op(Binary::Div, p, q);
                $body
            }
            Binary::Maximum => {
                let $f = |p: f64, q: f64| float_op(Binary::Maximum, p, q);
                $body
            }
            Binary::Minimum => {
                let $f = |p: f64, q: f64| float_op(Binary::Minimum, p, q);
                $body
            }
            other => {
                let $f = |p: f64, q: f64| float_op(other, p, q);
                $body
            }
        }
    };
}

/// As `with_binary`, for `Unary::float`.
macro_rules! with_unary {
    ($op:expr, $f:ident => $body:expr) => {
        match $op {
            Unary::Relu => {
                let $f = |x: f64| Unary::Relu.float(x);
                $body
            }
            Unary::Neg => {
                let $f = |x: f64| Unary::Neg.float(x);
                $body
            }
            Unary::Exp => {
                let $f = |x: f64| Unary::Exp.float(x);
                $body
            }
            Unary::Tanh => {
                let $f = |x: f64| Unary::Tanh.float(x);
                $body
            }
            Unary::Sigmoid => {
                let $f = |x: f64| Unary::Sigmoid.float(x);
                $body
            }
            other => {
                let $f = |x: f64| other.float(x);
                $body
            }
        }
    };
}

#[derive(Clone, Debug)]
enum Step {
    Binary {
        op: Binary,
        a: (Value, Fit),
        b: (Value, Fit),
    },
    Unary {
        op: Unary,
        a: Value,
    },
    /// `batches` products of an `m × k` block of `a` with `b`, which is one `k × n` matrix
    /// shared by all, or one per batch.
    MatMul {
        a: Value,
        b: Value,
        batches: usize,
        m: usize,
        k: usize,
        n: usize,
        b_per_batch: bool,
    },
    Softmax {
        a: Value,
        lane: usize,
        log: bool,
    },
    /// The axes of a tensor of `shape` permuted, copied out in row-major order.
    Permute {
        a: Value,
        shape: Vec<usize>,
        perm: Vec<usize>,
    },
    /// The same elements in the same order (reshape, squeeze, unsqueeze).
    Copy {
        a: Value,
    },
}

#[derive(Clone, Debug)]
pub struct Lowered {
    steps: Vec<Step>,
    consts: Vec<Vec<f64>>,
    /// Per step, the operand whose place it overwrites with its result (an operand read for
    /// the last time, of the result's shape): one pass, no copy.
    in_place: Vec<Option<usize>>,
    /// Where each node's result lives in the scratch buffer. Places are planned when the
    /// graph is lowered: a result's place is free again after its last use.
    places: Vec<Range<usize>>,
    /// The scratch buffer's length.
    scratch_len: usize,
    /// Each output, and an array of its shape that a run's result is cloned from: a clone
    /// copies the shape and strides as they are, where making an array from a shape works
    /// out and checks its strides, which costs more than the rest of a small output.
    outputs: Vec<(Value, ArrayD<f64>)>,
}

/// Lowering pays for small tensors, where fixed costs dominate; a graph whose intermediate
/// results need more scratch than this (in elements) runs through the registry.
const SCRATCH_LIMIT: usize = 1 << 16;

thread_local! {
    /// The scratch buffer of this thread's lowered runs, kept between calls (at most
    /// `SCRATCH_LIMIT` elements): a run allocates only its outputs.
    static SCRATCH: Cell<Vec<f64>> = const { Cell::new(Vec::new()) };
}

/// The lowering of `graph`, or why it has none (a tensor that is not float64, a node
/// without a lowering).
pub fn lower(graph: &Graph, last_use: &[usize]) -> Result<Lowered, String> {
    let f64_only = graph.inputs.iter().all(|m| m.dtype == DType::Float64)
        && graph.consts.iter().all(|c| c.dtype() == DType::Float64)
        && graph.nodes.iter().all(|n| n.meta.dtype == DType::Float64);
    if !f64_only {
        return Err("not all of its tensors are float64".into());
    }
    let steps = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            lower_node(graph, &node.op, &node.inputs, &node.attrs, &node.meta.shape)
                .ok_or_else(|| format!("v{i} = {}(...) has no lowering for its operands", node.op))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let consts = graph
        .consts
        .iter()
        .map(|c| match c {
            TensorData::Float64(a) => a.iter().copied().collect(),
            _ => unreachable!("checked to be float64"),
        })
        .collect();
    let outputs = graph
        .outputs
        .iter()
        .map(|v| (*v, ArrayD::zeros(IxDyn(&graph.meta(*v).shape))))
        .collect();
    let in_place: Vec<Option<usize>> = steps
        .iter()
        .enumerate()
        .map(|(j, step)| step.overwritable(j, last_use))
        .collect();
    let (places, scratch_len) = plan_places(graph, &steps, &in_place, last_use);
    if scratch_len > SCRATCH_LIMIT {
        return Err(format!(
            "its results need {scratch_len} elements of scratch, more than the {SCRATCH_LIMIT} that lowering pays for"
        ));
    }
    Ok(Lowered {
        steps,
        consts,
        in_place,
        places,
        scratch_len,
        outputs,
    })
}

/// A place in the scratch buffer for each node's result, first fit among the places freed by
/// earlier last uses; an in-place step takes its operand's place. Returns the places and the
/// buffer's length.
fn plan_places(
    graph: &Graph,
    steps: &[Step],
    in_place: &[Option<usize>],
    last_use: &[usize],
) -> (Vec<Range<usize>>, usize) {
    let mut places: Vec<Range<usize>> = Vec::with_capacity(steps.len());
    let mut free: Vec<Range<usize>> = Vec::new();
    let mut end = 0;
    for (j, step) in steps.iter().enumerate() {
        let len: usize = graph.nodes[j].meta.shape.iter().product();
        let place = match in_place[j] {
            Some(i) => places[i].clone(),
            None => match free.iter().position(|r| r.len() >= len) {
                Some(f) => {
                    let r = free.swap_remove(f);
                    free.push(r.start + len..r.end);
                    r.start..r.start + len
                }
                None => {
                    end += len;
                    end - len..end
                }
            },
        };
        places.push(place);
        // Operands read for the last time free their places (once each; the one overwritten
        // in place now holds this step's result).
        let mut done: SmallVec<[usize; 2]> = SmallVec::new();
        for v in step.operands() {
            if let Value::Node(i) = v
                && last_use[i] == j
                && in_place[j] != Some(i)
                && !done.contains(&i)
            {
                done.push(i);
                free.push(places[i].clone());
            }
        }
    }
    (places, end)
}

fn lower_node(
    graph: &Graph,
    op: &str,
    inputs: &[Value],
    attrs: &crate::tensor::Attrs,
    out: &[usize],
) -> Option<Step> {
    let shape = |i: usize| graph.meta(inputs[i]).shape;
    if let Some(op) = Binary::named(op) {
        if op.is_comparison() || matches!(op, Binary::And | Binary::Or | Binary::Xor) {
            return None;
        }
        let (fa, fb) = (fit(&shape(0), out)?, fit(&shape(1), out)?);
        let paired = matches!((fa, fb), (Fit::Whole, _) | (_, Fit::Whole))
            && !(fa == Fit::Rows && fb == Fit::Rows);
        return paired.then_some(Step::Binary {
            op,
            a: (inputs[0], fa),
            b: (inputs[1], fb),
        });
    }
    if let Some(op) = Unary::named(op) {
        return (op != Unary::Not).then_some(Step::Unary { op, a: inputs[0] });
    }
    match op {
        "matmul" => lower_matmul(&shape(0), &shape(1), inputs),
        "softmax" | "log_softmax" => {
            let dims = shape(0);
            let d = normalize_dim(attrs.int("dim").ok()?, dims.len()).ok()?;
            let lane = *dims.last()?;
            (d + 1 == dims.len() && lane > 0).then_some(Step::Softmax {
                a: inputs[0],
                lane,
                log: op == "log_softmax",
            })
        }
        "transpose" => {
            let dims = shape(0);
            Some(Step::Permute {
                a: inputs[0],
                perm: transpose_perm(dims.len(), attrs).ok()?,
                shape: dims,
            })
        }
        "reshape" | "squeeze" | "unsqueeze" => Some(Step::Copy { a: inputs[0] }),
        _ => None,
    }
}

/// Where the eager kernel takes its small-product loop, the same products (a batch of them,
/// with `b` shared or batched alike); anything else is not lowered.
fn lower_matmul(a: &[usize], b: &[usize], inputs: &[Value]) -> Option<Step> {
    let (k, m, batch_a) = match a {
        [] => return None,
        [k] => (*k, 1, &[][..]),
        [batch @ .., m, k] => (*k, *m, batch),
    };
    let (n, batch_b) = match b {
        [] => return None,
        [_] => (1, &[][..]),
        [batch @ .., _, n] => (*n, batch),
    };
    if m * k * n > SMALL_PRODUCT || (!batch_b.is_empty() && batch_a != batch_b) {
        return None;
    }
    let batches = batch_a.iter().product();
    Some(Step::MatMul {
        a: inputs[0],
        b: inputs[1],
        batches,
        m,
        k,
        n,
        b_per_batch: !batch_b.is_empty(),
    })
}

impl Lowered {
    /// Run on `inputs` (whose dtypes and shapes the caller has checked); `None` when one is
    /// not a row-major float64 array, which the general path then handles.
    pub fn run(&self, inputs: &[&TensorData]) -> Option<Outputs> {
        let slices = inputs
            .iter()
            .map(|t| match t {
                TensorData::Float64(a) => a.as_slice(),
                _ => None,
            })
            .collect::<Option<SmallVec<[&[f64]; 8]>>>()?;
        let mut scratch = SCRATCH.take();
        if scratch.len() < self.scratch_len {
            scratch.resize(self.scratch_len, 0.0);
        }
        for (j, step) in self.steps.iter().enumerate() {
            let (out, operands) = Operands::split(
                &mut scratch,
                &self.places[j],
                &slices,
                &self.consts,
                &self.places,
            );
            match self.in_place[j] {
                Some(i) => step.run_in_place(Value::Node(i), out, &|v| operands.get(v)),
                None => step.run(out, &|v| operands.get(v)),
            }
        }
        let outputs = self
            .outputs
            .iter()
            .map(|(v, template)| {
                let data: &[f64] = match *v {
                    Value::Input(i) => {
                        return TensorData::Float64(return_input(inputs[i], template));
                    }
                    Value::Const(i) => &self.consts[i],
                    Value::Node(i) => &scratch[self.places[i].clone()],
                };
                let mut out = template.clone();
                // SAFETY: a clone of an array made by `zeros` owns `len()` contiguous elements.
                unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr(), out.len()) }
                    .copy_from_slice(data);
                TensorData::Float64(out)
            })
            .collect();
        SCRATCH.set(scratch);
        Some(outputs)
    }
}

/// What one step reads: the inputs, the constants, and the scratch buffer on either side of
/// the place it writes. A planned place never overlaps another live one, so every operand
/// lies wholly before or wholly after the written place.
struct Operands<'a> {
    inputs: &'a [&'a [f64]],
    consts: &'a [Vec<f64>],
    places: &'a [Range<usize>],
    before: &'a [f64],
    after: &'a [f64],
    after_start: usize,
}

impl<'a> Operands<'a> {
    fn split(
        scratch: &'a mut [f64],
        out: &Range<usize>,
        inputs: &'a [&'a [f64]],
        consts: &'a [Vec<f64>],
        places: &'a [Range<usize>],
    ) -> (&'a mut [f64], Self) {
        let (before, rest) = scratch.split_at_mut(out.start);
        let (out_buf, after) = rest.split_at_mut(out.len());
        (
            out_buf,
            Operands {
                inputs,
                consts,
                places,
                before,
                after,
                after_start: out.end,
            },
        )
    }

    fn get(&self, v: Value) -> &'a [f64] {
        match v {
            Value::Input(i) => self.inputs[i],
            Value::Const(i) => &self.consts[i],
            Value::Node(i) => {
                let r = &self.places[i];
                if r.end <= self.before.len() {
                    &self.before[r.clone()]
                } else {
                    &self.after[r.start - self.after_start..r.end - self.after_start]
                }
            }
        }
    }
}

impl Step {
    /// Compute into `out`, which has the result's length; every element is written.
    fn run<'a>(&self, out: &mut [f64], get: &impl Fn(Value) -> &'a [f64]) {
        match self {
            Step::Binary { op, a, b } => {
                let lined = |(v, fit): (Value, Fit)| Lineup::new(fit, get(v));
                with_binary!(*op, f => zip_into(lined(*a), lined(*b), out, &f))
            }
            Step::Unary { op, a } => {
                with_unary!(*op, f => out.iter_mut().zip(get(*a)).for_each(|(o, &x)| *o = f(x)))
            }
            Step::MatMul {
                a,
                b,
                batches,
                m,
                k,
                n,
                b_per_batch,
            } => {
                let (a, b) = (get(*a), get(*b));
                if !b_per_batch {
                    // Rows are computed independently, so the batches make one tall product.
                    return small_product_into(a, b, *k, *n, out);
                }
                if *k == 0 {
                    return out.fill(0.0); // empty operands: the products are zeros
                }
                let per_out = (m * n).max(1);
                for ((o, x), y) in out
                    .chunks_exact_mut(per_out)
                    .zip(a.chunks_exact(m * k))
                    .zip(b.chunks_exact(k * n))
                    .take(*batches)
                {
                    small_product_into(x, y, *k, *n, o);
                }
            }
            Step::Softmax { a, lane, log } => {
                out.copy_from_slice(get(*a));
                out.chunks_exact_mut(*lane)
                    .for_each(|l| softmax_lane(l, *log));
            }
            Step::Permute { a, shape, perm } => permute(get(*a), shape, perm, out),
            Step::Copy { a } => out.copy_from_slice(get(*a)),
        }
    }
}

/// `f` over two lined-up operands into `out` (the pairings `lower_node` accepts).
fn zip_into(a: Lineup<'_, f64>, b: Lineup<'_, f64>, out: &mut [f64], f: &impl Fn(f64, f64) -> f64) {
    match (a, b) {
        (Lineup::Whole(x), Lineup::Whole(y)) => out
            .iter_mut()
            .zip(x.iter().zip(y))
            .for_each(|(o, (&p, &q))| *o = f(p, q)),
        (Lineup::Whole(x), Lineup::One(q)) => {
            out.iter_mut().zip(x).for_each(|(o, &p)| *o = f(p, q))
        }
        (Lineup::One(p), Lineup::Whole(y)) => {
            out.iter_mut().zip(y).for_each(|(o, &q)| *o = f(p, q))
        }
        (Lineup::Whole(x), Lineup::Rows(y)) => out
            .chunks_exact_mut(y.len())
            .zip(x.chunks_exact(y.len()))
            .for_each(|(o, row)| {
                o.iter_mut()
                    .zip(row.iter().zip(y))
                    .for_each(|(o, (&p, &q))| *o = f(p, q))
            }),
        (Lineup::Rows(x), Lineup::Whole(y)) => out
            .chunks_exact_mut(x.len())
            .zip(y.chunks_exact(x.len()))
            .for_each(|(o, row)| {
                o.iter_mut()
                    .zip(x.iter().zip(row))
                    .for_each(|(o, (&p, &q))| *o = f(p, q))
            }),
        _ => unreachable!("pairings were checked when lowering"),
    }
}

impl Step {
    /// The operand this step, as the `j`th, may overwrite (see `Lowered::in_place`).
    fn overwritable(&self, j: usize, last_use: &[usize]) -> Option<usize> {
        let last = |v: Value| match v {
            Value::Node(i) if last_use[i] == j => Some(i),
            _ => None,
        };
        match self {
            Step::Binary { a, b, .. } => {
                let own = |(v, fit): (Value, Fit), other: Value| {
                    if fit == Fit::Whole && v != other {
                        last(v)
                    } else {
                        None
                    }
                };
                own(*a, b.0).or_else(|| own(*b, a.0))
            }
            Step::Unary { a, .. } | Step::Softmax { a, .. } | Step::Copy { a } => last(*a),
            Step::MatMul { .. } | Step::Permute { .. } => None,
        }
    }

    /// Compute into `buf`, which holds operand `own` and becomes the result.
    fn run_in_place<'a>(&self, own: Value, buf: &mut [f64], get: &impl Fn(Value) -> &'a [f64]) {
        match self {
            Step::Binary { op, a, b } => {
                // The operands keep their order: `own` may be the right-hand one.
                let (own_first, (other, fit)) = if a.0 == own && a.1 == Fit::Whole {
                    (true, *b)
                } else {
                    (false, *a)
                };
                let y = get(other);
                with_binary!(*op, f => match (own_first, fit) {
                    (true, Fit::Whole) => buf.iter_mut().zip(y).for_each(|(x, &q)| *x = f(*x, q)),
                    (false, Fit::Whole) => buf.iter_mut().zip(y).for_each(|(x, &q)| *x = f(q, *x)),
                    (true, Fit::One) => buf.iter_mut().for_each(|x| *x = f(*x, y[0])),
                    (false, Fit::One) => buf.iter_mut().for_each(|x| *x = f(y[0], *x)),
                    (true, Fit::Rows) => buf.chunks_exact_mut(y.len()).for_each(|row| row.iter_mut().zip(y).for_each(|(x, &q)| *x = f(*x, q))),
                    (false, Fit::Rows) => buf.chunks_exact_mut(y.len()).for_each(|row| row.iter_mut().zip(y).for_each(|(x, &q)| *x = f(q, *x))),
                })
            }
            Step::Unary { op, .. } => {
                with_unary!(*op, f => buf.iter_mut().for_each(|x| *x = f(*x)))
            }
            Step::Softmax { lane, log, .. } => buf
                .chunks_exact_mut(*lane)
                .for_each(|l| softmax_lane(l, *log)),
            Step::Copy { .. } => {}
            Step::MatMul { .. } | Step::Permute { .. } => unreachable!("never in place"),
        }
    }
}

/// The elements of a row-major tensor of `shape` with its axes permuted, in row-major order
/// (ndarray's general iterator costs more than the copy at these sizes).
fn permute(src: &[f64], shape: &[usize], perm: &[usize], out: &mut [f64]) {
    let Some(last) = shape.len().checked_sub(1) else {
        return out.copy_from_slice(src);
    };
    if src.is_empty() {
        return;
    }
    let mut strides = vec![0; shape.len()];
    let mut s = 1;
    for d in (0..shape.len()).rev() {
        strides[d] = s;
        s *= shape[d];
    }
    // Per output axis: its length and the source stride that walks it.
    let dims: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let steps: Vec<usize> = perm.iter().map(|&p| strides[p]).collect();
    let mut index = vec![0; shape.len()];
    let (mut base, mut at) = (0, 0);
    loop {
        out[at..at + dims[last]]
            .iter_mut()
            .enumerate()
            .for_each(|(j, o)| *o = src[base + j * steps[last]]);
        at += dims[last];
        // The next row: an odometer over the outer axes.
        let mut d = last;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            base += steps[d];
            if index[d] < dims[d] {
                break;
            }
            base -= steps[d] * dims[d];
            index[d] = 0;
        }
    }
}

/// A graph input returned as an output: a row-major copy, as eager's result would be.
fn return_input(t: &TensorData, template: &ArrayD<f64>) -> ArrayD<f64> {
    match t {
        TensorData::Float64(a) => {
            let mut out = template.clone();
            out.assign(a);
            out
        }
        _ => unreachable!("checked to be float64"),
    }
}

impl Step {
    fn operands(&self) -> impl Iterator<Item = Value> {
        let (a, b) = match self {
            Step::Binary { a, b, .. } => (a.0, Some(b.0)),
            Step::MatMul { a, b, .. } => (*a, Some(*b)),
            Step::Unary { a, .. }
            | Step::Softmax { a, .. }
            | Step::Permute { a, .. }
            | Step::Copy { a } => (*a, None),
        };
        std::iter::once(a).chain(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::{Attr, Attrs, Meta, Scalar, registry};

    fn random(shape: &[usize]) -> TensorData {
        let n = shape.iter().product();
        let values: Vec<Scalar> = crate::tensor::random::normal(n)
            .into_iter()
            .map(Scalar::Float)
            .collect();
        TensorData::from_scalars(shape, &values, DType::Float64).unwrap()
    }

    /// The graph's nodes run one by one through the registry, as eager execution runs them.
    fn eager(g: &Graph, inputs: &[TensorData]) -> Vec<TensorData> {
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
            let out = registry().call(&node.op, &args, &node.attrs).unwrap();
            results.push(out);
        }
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
        let got = lowered.run(&refs).expect("row-major float64 inputs");
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
            dtype: DType::Float64,
        })
    }

    #[test]
    fn mlp_layers_and_broadcasts_match_eager_to_the_bit() {
        crate::tensor::random::manual_seed(7);
        for (batch, d_in, d_out) in [(1, 16, 16), (8, 16, 32), (3, 5, 7), (2, 33, 9)] {
            let mut g = Graph::new();
            let x = input(&mut g, &[batch, d_in]);
            let w = input(&mut g, &[d_in, d_out]);
            let b = input(&mut g, &[d_out]);
            let s = g.constant(TensorData::scalar(Scalar::Float(0.37)));
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
            g.outputs = vec![p, lp, h];
            let inputs = [
                random(&[batch, d_in]),
                random(&[d_in, d_out]),
                random(&[d_out]),
            ];
            check(&mut g, &inputs);
        }
    }

    #[test]
    fn batched_products_transposes_and_reshapes_match_eager_to_the_bit() {
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
    }

    #[test]
    fn scratch_places_are_reused_after_their_last_use() {
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
            lowered.scratch_len <= 3 * 32,
            "{} elements for {} results of 32",
            lowered.scratch_len,
            g.nodes.len()
        );
        check(&mut g, &[random(&[4, 8]), random(&[8, 8])]);
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
        let big = 64;
        let mut g3 = Graph::new();
        let p = input(&mut g3, &[big, big]);
        let m = g3.apply("matmul", &[p, p], Attrs::new()).unwrap(); // matrixmultiply's size
        g3.outputs = vec![m];
        assert!(lower(&g3, &[usize::MAX]).is_err());
    }
}
