//! Chains of elementwise ops fused into one pass over memory. Run op by op, `gelu`'s
//! `x * 0.5 * (1 + erf(x / sqrt 2))` or a bias add and a `relu` after a product read and
//! write the whole tensor once per op and allocate a fresh array for each unary op; a graph
//! knows which results are read once, by the next op, and so computes such a chain in the
//! buffer of the result it starts from, block by block, every op of the chain over one block
//! while it is in cache.
//!
//! Each element goes through the same function, in the same order, as in eager execution
//! (`lowering::real::Real`: the eager kernels' arithmetic), so a fused chain rounds as the
//! ops run one by one do; where the elements fall among blocks and threads changes nothing.

use std::borrow::Cow;

use ndarray::ArrayD;

use super::ir::{Graph, Value};
use super::lowering::real::{Real, with_binary, with_unary};
use crate::tensor::ops::elementwise::{Binary, Fit, Unary, fit};
use crate::tensor::ops::f32_math::wide_vectors;
use crate::tensor::ops::parallel::by_parts_mut;
use crate::tensor::{DType, TensorData};

/// Elements per block: each op of a chain runs over a block before the next op does, so a
/// block should stay in the first-level cache (8 KiB of float64).
const BLOCK: usize = 1024;

/// One op of a chain, applied to the chain's running value.
#[derive(Clone, Debug, PartialEq)]
pub enum Link {
    Unary(Unary),
    /// `running op other`, or `other op running` when not `running_first`; `other` lines up
    /// with the result as `fit` says.
    Binary {
        op: Binary,
        other: Value,
        fit: Fit,
        running_first: bool,
    },
}

/// Consecutive nodes, each an elementwise op that reads the previous one's result for the
/// last time, computed in the buffer of the result they start from.
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    /// The node whose result the chain starts from, read for the last time by its first link.
    pub head: usize,
    pub links: Vec<Link>,
    /// The chain's last node: the one whose result it computes.
    pub last: usize,
    /// Some op costs more than the memory it touches: large chains are worth two threads.
    heavy: bool,
}

/// What a node is to the fusion: alone, the first link of a chain (which computes the whole
/// chain), or a later link (already computed by its chain's first).
#[derive(Clone, Debug, PartialEq)]
pub enum Role {
    Alone,
    Starts(Chain),
    Within,
}

/// Each node's role. Graphs with dynamic sizes are not fused: how an operand lines up with
/// a result depends on their sizes, which such a graph learns per call.
pub fn chains(graph: &Graph, last_use: &[usize]) -> Vec<Role> {
    let mut roles = vec![Role::Alone; graph.nodes.len()];
    if graph.dynamic {
        return roles;
    }
    // The first link of the chain being extended.
    let mut open: Option<usize> = None;
    for j in 0..graph.nodes.len() {
        let open_last = open.and_then(|first| match &roles[first] {
            Role::Starts(chain) => Some(chain.last),
            _ => None,
        });
        let Some((running, link)) = link_of(graph, j, last_use, open_last) else {
            open = None;
            continue;
        };
        // A later link must follow its predecessor directly: then whatever else it reads was
        // computed before the chain's first link, which computes the chain.
        if let Some(first) = open
            && let Role::Starts(chain) = &mut roles[first]
            && chain.last == running
            && j == running + 1
        {
            chain.heavy |= is_heavy(&link);
            chain.links.push(link);
            chain.last = j;
            roles[j] = Role::Within;
            continue;
        }
        roles[j] = Role::Starts(Chain {
            head: running,
            heavy: is_heavy(&link),
            links: vec![link],
            last: j,
        });
        open = Some(j);
    }
    roles
}

/// Node `j` as a link: the node whose result it continues (read for the last time, once, of
/// the same shape and float type as its own; `prefer` first, when both operands could be),
/// and the op.
fn link_of(
    graph: &Graph,
    j: usize,
    last_use: &[usize],
    prefer: Option<usize>,
) -> Option<(usize, Link)> {
    let node = &graph.nodes[j];
    if !matches!(node.meta.dtype, DType::Float32 | DType::Float64) {
        return None;
    }
    let running = |v: Value| match v {
        Value::Node(i)
            if last_use[i] == j
                && node.inputs.iter().filter(|w| **w == v).count() == 1
                && graph.nodes[i].meta == node.meta =>
        {
            Some(i)
        }
        _ => None,
    };
    if let Some(op) = Unary::named(&node.op) {
        let [a] = node.inputs[..] else { return None };
        return (op != Unary::Not)
            .then(|| running(a))
            .flatten()
            .map(|i| (i, Link::Unary(op)));
    }
    let op = Binary::named(&node.op)?;
    if op.is_comparison() || matches!(op, Binary::And | Binary::Or | Binary::Xor) {
        return None;
    }
    let [a, b] = node.inputs[..] else { return None };
    let mut order = [(a, b, true), (b, a, false)];
    if prefer.is_some_and(|p| b == Value::Node(p)) {
        order.swap(0, 1);
    }
    order.into_iter().find_map(|(own, other, running_first)| {
        let i = running(own)?;
        let meta = graph.meta(other);
        if meta.dtype != node.meta.dtype {
            return None;
        }
        let fit = fit(&meta.shape, &node.meta.shape)?;
        Some((
            i,
            Link::Binary {
                op,
                other,
                fit,
                running_first,
            },
        ))
    })
}

/// Ops that cost more than the memory traffic they cause; a chain of only cheap ones is
/// bound by memory, where a second thread adds only its hand-over.
fn is_heavy(link: &Link) -> bool {
    match link {
        Link::Unary(op) => !matches!(op, Unary::Neg | Unary::Abs | Unary::Relu),
        Link::Binary { op, .. } => matches!(op, Binary::Pow | Binary::Mod | Binary::FloorDiv),
    }
}

impl Chain {
    /// The chain's result, computed in `head` (the head node's result, of the chain's float
    /// type, which the graph's inference and checks guarantee), reading the other operands
    /// through `arg`.
    pub fn run<'a>(&self, head: TensorData, arg: &impl Fn(Value) -> &'a TensorData) -> TensorData {
        match head {
            TensorData::Float64(_) => f64::wrap(self.run_as::<f64>(head, arg)),
            TensorData::Float32(_) => f32::wrap(self.run_as::<f32>(head, arg)),
            _ => unreachable!("chains are of float results"),
        }
    }

    fn run_as<'a, T: Real>(
        &self,
        head: TensorData,
        arg: &impl Fn(Value) -> &'a TensorData,
    ) -> ArrayD<T> {
        let mut own = T::unwrap(head).expect("the chain's type");
        if !own.is_standard_layout() {
            own = own.as_standard_layout().into_owned();
        }
        // Each binary link's other operand, row-major (copied when it is a strided view).
        let others: Vec<Cow<'a, [T]>> = self
            .links
            .iter()
            .map(|link| match link {
                Link::Binary { other, .. } => {
                    let a = T::array(arg(*other)).expect("an operand of the chain's type");
                    match a.as_slice() {
                        Some(s) => Cow::Borrowed(s),
                        None => Cow::Owned(a.iter().copied().collect()),
                    }
                }
                Link::Unary(_) => Cow::Borrowed(&[][..]),
            })
            .collect();
        let buf = own.as_slice_mut().expect("made row-major");
        let n = buf.len();
        let part = |at: usize, part: &mut [T]| pass(&self.links, &others, n, at, part);
        if self.heavy {
            by_parts_mut(buf, part);
        } else {
            part(0, buf);
        }
        own
    }
}

/// Every link over `part` (the elements from `at` on of a result of `n`), block by block.
fn pass<T: Real>(links: &[Link], others: &[Cow<'_, [T]>], n: usize, at: usize, part: &mut [T]) {
    wide_vectors!(pass_avx2, {
        for (b, block) in part.chunks_mut(BLOCK).enumerate() {
            let start = at + b * BLOCK;
            for (link, y) in links.iter().zip(others) {
                match *link {
                    Link::Unary(op) => {
                        with_unary!(op, f => block.iter_mut().for_each(|x| *x = f(*x)))
                    }
                    Link::Binary {
                        op,
                        fit,
                        running_first,
                        ..
                    } => with_binary!(op, f => match running_first {
                        true => lined_up(fit, y, n, start, block, |x, q| f(x, q)),
                        false => lined_up(fit, y, n, start, block, |x, q| f(q, x)),
                    }),
                }
            }
        }
    })
}

/// `x = g(x, y)` over `block` (the elements from `start` on of a result of `n`), with `y`
/// the other operand's elements lined up as `fit` says.
#[inline(always)]
fn lined_up<T: Copy>(
    fit: Fit,
    y: &[T],
    n: usize,
    start: usize,
    block: &mut [T],
    g: impl Fn(T, T) -> T,
) {
    let len = block.len();
    match fit {
        Fit::Whole => block
            .iter_mut()
            .zip(&y[start..start + len])
            .for_each(|(x, &q)| *x = g(*x, q)),
        Fit::One => {
            let q = y[0];
            block.iter_mut().for_each(|x| *x = g(*x, q))
        }
        // `y` repeats row after row: runs of it, from where the block starts in a row.
        Fit::Rows => {
            let mut pos = 0;
            while pos < len {
                let k = (start + pos) % y.len();
                let m = (y.len() - k).min(len - pos);
                block[pos..pos + m]
                    .iter_mut()
                    .zip(&y[k..k + m])
                    .for_each(|(x, &q)| *x = g(*x, q));
                pos += m;
            }
        }
        // Each element of `y` holds for a run of `n / y.len()` result elements.
        Fit::Lanes => {
            let run = n / y.len();
            let mut pos = 0;
            while pos < len {
                let i = start + pos;
                let m = (run - i % run).min(len - pos);
                let q = y[i / run];
                block[pos..pos + m].iter_mut().for_each(|x| *x = g(*x, q));
                pos += m;
            }
        }
    }
}

#[cfg(test)]
mod tests;
