//! Running a lowered graph: its steps, each a loop over the buffers it was planned with.

use std::ops::Range;

use ndarray::ArrayD;
use smallvec::SmallVec;

use super::real::{Real, with_binary};
use super::{LaneReduction, Lowered, LoweredAs, Step};
use crate::graph::ir::{Outputs, Value};
use crate::tensor::TensorData;
use crate::tensor::ops::elementwise::{Binary, Fit, Lineup};
use crate::tensor::ops::linalg::{add_bias, linear_into, small_product_into};
use crate::tensor::ops::lineup::zip_over;
use crate::tensor::ops::reduce::{mean_lane, sum_lane, var_lane};

impl Lowered {
    /// Run on `inputs` (whose dtypes and shapes the caller has checked); `None` when one is
    /// not a row-major array of the graph's type, which the general path then handles.
    pub fn run(&self, inputs: &[&TensorData]) -> Option<Outputs> {
        match self {
            Lowered::Float64(l) => l.run(inputs),
            Lowered::Float32(l) => l.run(inputs),
        }
    }
}

impl<T: Real> LoweredAs<T> {
    fn run(&self, inputs: &[&TensorData]) -> Option<Outputs> {
        // A plain loop: collecting `Option`s pushes one by one through an adapter.
        let mut slices: SmallVec<[&[T]; 8]> = SmallVec::with_capacity(inputs.len());
        for t in inputs {
            slices.push(T::array(t)?.as_slice()?);
        }
        let mut scratch = T::scratch().take();
        if scratch.len() < self.scratch_len {
            scratch.resize(self.scratch_len, T::zero());
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
                let data: &[T] = match *v {
                    Value::Input(i) => {
                        return T::wrap(return_input(inputs[i], template));
                    }
                    Value::Const(i) => &self.consts[i],
                    Value::Node(i) => &scratch[self.places[i].clone()],
                };
                let mut out = template.clone();
                // SAFETY: a clone of an array made by `zeros` owns `len()` contiguous elements.
                unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr(), out.len()) }
                    .copy_from_slice(data);
                T::wrap(out)
            })
            .collect();
        T::scratch().set(scratch);
        Some(outputs)
    }
}

/// What one step reads: the inputs, the constants, and the scratch buffer on either side of
/// the place it writes. A planned place never overlaps another live one, so every operand
/// lies wholly before or wholly after the written place.
struct Operands<'a, T> {
    inputs: &'a [&'a [T]],
    consts: &'a [Vec<T>],
    places: &'a [Range<usize>],
    before: &'a [T],
    after: &'a [T],
    after_start: usize,
}

impl<'a, T> Operands<'a, T> {
    fn split(
        scratch: &'a mut [T],
        out: &Range<usize>,
        inputs: &'a [&'a [T]],
        consts: &'a [Vec<T>],
        places: &'a [Range<usize>],
    ) -> (&'a mut [T], Self) {
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

    fn get(&self, v: Value) -> &'a [T] {
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
    fn run<'a, T: Real>(&self, out: &mut [T], get: &impl Fn(Value) -> &'a [T]) {
        match self {
            Step::Binary { op, a, b } => {
                let lined = |(v, fit): (Value, Fit)| Lineup::new(fit, get(v));
                with_binary!(*op, f => zip_over(lined(*a), lined(*b), out, &f))
            }
            Step::Unary { op, a } => T::unary_into(*op, get(*a), out),
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
                    return out.fill(T::zero()); // empty operands: the products are zeros
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
            Step::Linear { x, w, bias, k, n } => {
                let mut w_t = T::temp().take();
                let rows = out.len() / (*n).max(1);
                linear_into(get(*x), get(*w), (rows, *k, *n), out, &mut w_t);
                T::temp().set(w_t);
                if let Some(b) = bias {
                    add_bias(out, get(*b));
                }
            }
            Step::Reduce { a, lane, how } => {
                let mut wide = Vec::new();
                for (o, run) in out.iter_mut().zip(get(*a).chunks_exact(*lane)) {
                    let run = T::widen(run, &mut wide);
                    *o = T::from_f64(match how {
                        LaneReduction::Sum => sum_lane(run),
                        LaneReduction::Mean => mean_lane(run),
                        LaneReduction::Var(correction) => var_lane(run, *correction),
                    });
                }
            }
            Step::Softmax { a, lane, log } => {
                out.copy_from_slice(get(*a));
                T::softmax(out, *lane, *log);
            }
            Step::Permute { a, permutation } => permutation.run(get(*a), out),
            Step::Copy { a } => out.copy_from_slice(get(*a)),
            Step::Narrow {
                a,
                outer,
                dim_len,
                inner,
                start,
                length,
            } => {
                let (taken, block) = (length * inner, dim_len * inner);
                if taken == 0 {
                    return;
                }
                let from = get(*a);
                for (o, dst) in out.chunks_exact_mut(taken).enumerate().take(*outer) {
                    let first = o * block + start * inner;
                    dst.copy_from_slice(&from[first..first + taken]);
                }
            }
        }
    }
}

impl Step {
    /// The operand this step, as the `j`th, may overwrite (see `Lowered::in_place`).
    pub(super) fn overwritable(&self, j: usize, last_use: &[usize]) -> Option<usize> {
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
            Step::MatMul { .. }
            | Step::Linear { .. }
            | Step::Reduce { .. }
            | Step::Narrow { .. }
            | Step::Permute { .. } => None,
        }
    }

    /// Compute into `buf`, which holds operand `own` and becomes the result.
    fn run_in_place<'a, T: Real>(
        &self,
        own: Value,
        buf: &mut [T],
        get: &impl Fn(Value) -> &'a [T],
    ) {
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
                    (true, Fit::Lanes) => { let run = buf.len() / y.len(); buf.chunks_exact_mut(run).zip(y).for_each(|(r, &q)| r.iter_mut().for_each(|x| *x = f(*x, q))) }
                    (false, Fit::Lanes) => { let run = buf.len() / y.len(); buf.chunks_exact_mut(run).zip(y).for_each(|(r, &q)| r.iter_mut().for_each(|x| *x = f(q, *x))) }
                })
            }
            Step::Unary { op, .. } => T::unary_in_place(*op, buf),
            Step::Softmax { lane, log, .. } => T::softmax(buf, *lane, *log),
            Step::Copy { .. } => {}
            Step::MatMul { .. }
            | Step::Linear { .. }
            | Step::Reduce { .. }
            | Step::Narrow { .. }
            | Step::Permute { .. } => unreachable!("never in place"),
        }
    }
}

/// A graph input returned as an output: a row-major copy, as eager's result would be.
fn return_input<T: Real>(t: &TensorData, template: &ArrayD<T>) -> ArrayD<T> {
    let mut out = template.clone();
    out.assign(T::array(t).expect("checked to be of the graph's type"));
    out
}

impl Step {
    pub(super) fn operands(&self) -> impl Iterator<Item = Value> {
        let (a, b, c) = match self {
            Step::Binary { a, b, .. } => (a.0, Some(b.0), None),
            Step::MatMul { a, b, .. } => (*a, Some(*b), None),
            Step::Linear { x, w, bias, .. } => (*x, Some(*w), *bias),
            Step::Unary { a, .. }
            | Step::Reduce { a, .. }
            | Step::Narrow { a, .. }
            | Step::Softmax { a, .. }
            | Step::Permute { a, .. }
            | Step::Copy { a } => (*a, None, None),
        };
        std::iter::once(a).chain(b).chain(c)
    }
}
