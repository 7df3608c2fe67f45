//! A graph lowered to loops over row-major float64 or float32 buffers. For small tensors the general
//! kernels cost far more than their arithmetic (ndarray's dimension handling, dtype dispatch,
//! broadcasting machinery, a check per result); a lowered graph fixes all of that when it is
//! built, because its shapes are known then, and only the loops run per call.
//!
//! Every step computes each element with the function the eager kernel uses (`float_op`,
//! `Unary::float`/`float32`, `small_product_into`, `softmax_rows_f32`/`softmax_rows_f64`: see
//! `real.rs`) in the same order, so a lowered graph rounds exactly as eager execution does.
//! A graph with a node that has no lowering runs through the registry instead, and so does a
//! call whose inputs are not row-major arrays of the graph's type.

mod permute;
pub(crate) mod real;
mod run;
#[cfg(test)]
mod tests;

use std::ops::Range;

use ndarray::{ArrayD, IxDyn};
use smallvec::SmallVec;

use crate::graph::ir::{Graph, Value};
use crate::tensor::DType;
use crate::tensor::ops::elementwise::{Binary, Fit, Unary, fit};
use crate::tensor::ops::linalg::SMALL_PRODUCT;
use crate::tensor::ops::reduce::reduced_dims;
use crate::tensor::ops::select::narrow_range;
use crate::tensor::ops::shape_ops::transpose_perm;
use crate::tensor::shape::normalize_dim;

use permute::Permutation;
use real::Real;

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
    /// torch's `linear`, `x @ w.T + bias` for `w` of `n × k`, as the eager kernel computes a
    /// small one: `w` transposed into a buffer of the step's own, the product's loop, then
    /// the bias added to each row.
    Linear {
        x: Value,
        w: Value,
        bias: Option<Value>,
        k: usize,
        n: usize,
    },
    /// A reduction of each run of `lane` elements (the last dimension) to one.
    Reduce {
        a: Value,
        lane: usize,
        how: LaneReduction,
    },
    Softmax {
        a: Value,
        lane: usize,
        log: bool,
    },
    /// The axes of a tensor permuted, copied out in row-major order.
    Permute {
        a: Value,
        permutation: Permutation,
    },
    /// The same elements in the same order (reshape, squeeze, unsqueeze).
    Copy {
        a: Value,
    },
    /// `length` of the `dim_len` indices of a dimension, from `start` (`narrow`, `split`):
    /// for each of the `outer` blocks, a run of `length * inner` elements copied out.
    Narrow {
        a: Value,
        outer: usize,
        dim_len: usize,
        inner: usize,
        start: usize,
        length: usize,
    },
}

/// What a `Step::Reduce` computes of a lane: `sum`, `mean` or `var` (with its correction).
#[derive(Clone, Copy, Debug)]
enum LaneReduction {
    Sum,
    Mean,
    Var(f64),
}

/// A lowered graph, over one element type.
#[derive(Clone, Debug)]
pub enum Lowered {
    Float64(LoweredAs<f64>),
    Float32(LoweredAs<f32>),
}

#[derive(Clone, Debug)]
pub struct LoweredAs<T> {
    steps: Vec<Step>,
    consts: Vec<Vec<T>>,
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
    outputs: Vec<(Value, ArrayD<T>)>,
}

/// Lowering pays for small tensors, where fixed costs dominate; a graph whose intermediate
/// results need more scratch than this (in elements) runs through the registry.
const SCRATCH_LIMIT: usize = 1 << 16;

/// The lowering of `graph`, or why it has none (tensors not all float64 or all float32, a
/// node without a lowering).
pub fn lower(graph: &Graph, last_use: &[usize]) -> Result<Lowered, String> {
    let all = |dt: DType| {
        graph.inputs.iter().all(|m| m.dtype == dt)
            && graph.consts.iter().all(|c| c.dtype() == dt)
            && graph.nodes.iter().all(|n| n.meta.dtype == dt)
    };
    if all(DType::Float64) {
        lower_as(graph, last_use).map(Lowered::Float64)
    } else if all(DType::Float32) {
        lower_as(graph, last_use).map(Lowered::Float32)
    } else {
        Err("its tensors are not all float64 or all float32".into())
    }
}

/// Whether node `j` of `graph` has a lowering on its own: a float64 or float32 result
/// computed from operands of its type by a step `lower` knows (see `graph::segments`).
pub(crate) fn node_lowers(graph: &Graph, j: usize) -> bool {
    let node = &graph.nodes[j];
    let dtype = node.meta.dtype;
    dtype.is_float()
        && node.inputs.iter().all(|v| graph.meta(*v).dtype == dtype)
        && lower_node(graph, &node.op, &node.inputs, &node.attrs, &node.meta.shape).is_some()
}

#[cfg(test)]
impl Lowered {
    /// The scratch buffer's length, in elements.
    pub fn scratch_len(&self) -> usize {
        match self {
            Lowered::Float64(l) => l.scratch_len,
            Lowered::Float32(l) => l.scratch_len,
        }
    }
}

fn lower_as<T: Real>(graph: &Graph, last_use: &[usize]) -> Result<LoweredAs<T>, String> {
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
        .map(|c| {
            T::array(c)
                .expect("checked to be of the graph's type")
                .iter()
                .copied()
                .collect()
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
    Ok(LoweredAs {
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
            && !(fa == Fit::Rows && fb == Fit::Rows)
            && !(fa == Fit::Lanes && fb == Fit::Lanes);
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
        "sum" | "mean" | "var" => {
            let dims = shape(0);
            let lane = *dims.last()?;
            let over_last = reduced_dims(&dims, attrs).ok()?? == [dims.len() - 1];
            let how = match op {
                "sum" => LaneReduction::Sum,
                "mean" => LaneReduction::Mean,
                _ => LaneReduction::Var(attrs.int("correction").ok()? as f64),
            };
            (over_last && lane > 0).then_some(Step::Reduce {
                a: inputs[0],
                lane,
                how,
            })
        }
        "linear" => lower_linear(&shape(0), &shape(1), inputs, |v| graph.meta(v).shape),
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
                permutation: Permutation::new(&dims, &transpose_perm(dims.len(), attrs).ok()?),
            })
        }
        "reshape" | "squeeze" | "unsqueeze" => Some(Step::Copy { a: inputs[0] }),
        "narrow" => {
            let dims = shape(0);
            let (d, start, length) = narrow_range(&dims, attrs).ok()?;
            Some(Step::Narrow {
                a: inputs[0],
                outer: dims[..d].iter().product(),
                dim_len: dims[d],
                inner: dims[d + 1..].iter().product(),
                start,
                length,
            })
        }
        _ => None,
    }
}

/// A linear layer small enough for the eager kernel's product loop (see `lower_matmul`),
/// computed as eager's `linear` computes it (`linalg::linear_into`).
fn lower_linear(
    x: &[usize],
    w: &[usize],
    inputs: &[Value],
    shape_of: impl Fn(Value) -> Vec<usize>,
) -> Option<Step> {
    let (&[n, k], Some((&k_x, batch))) = (w, x.split_last()) else {
        return None;
    };
    let rows: usize = batch.iter().product();
    let bias = inputs.get(2).copied();
    if k_x != k || rows * k * n > SMALL_PRODUCT || bias.is_some_and(|b| shape_of(b) != [n]) {
        return None;
    }
    Some(Step::Linear {
        x: inputs[0],
        w: inputs[1],
        bias,
        k,
        n,
    })
}

/// Where the eager kernel takes its small-product loop, the same products (a batch of them,
/// with `b` shared or batched alike). A larger product is not lowered: the graph around it
/// would be large too, and its elementwise ops run faster fused (`fuse`) than as a lowered
/// graph's loops.
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
    let batches: usize = batch_a.iter().product();
    // A shared `b` is multiplied by all the batch's rows at once in the eager kernel: that
    // product's size decides its kernel.
    let rows = if batch_b.is_empty() { batches * m } else { m };
    if rows * k * n > SMALL_PRODUCT || (!batch_b.is_empty() && batch_a != batch_b) {
        return None;
    }
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
