//! Runs of elementwise ops fused into one pass over memory. Run op by op, `gelu`'s
//! `x * 0.5 * (1 + erf(x / sqrt 2))`, or a bias add and a `relu` after a product, read and
//! write the whole tensor once per op and allocate a fresh array for each; a graph knows
//! which results never leave such a run, and computes the run block by block instead: every
//! op over one block of elements, the block's intermediate results in small buffers that stay
//! in cache, and only the results read after the run written out, into the buffer of a dead
//! operand where there is one.
//!
//! Each element goes through the same function, in the same order, as in eager execution
//! (`lowering::real::Real`: the eager kernels' arithmetic), so a fused run rounds as the ops
//! run one by one do; where the elements fall among blocks and threads changes nothing.

use std::borrow::Cow;
use std::mem::MaybeUninit;

use ndarray::{ArrayD, IxDyn};
use smallvec::SmallVec;

use super::ir::{Graph, Value};
use super::lowering::real::{Real, with_binary};
use crate::tensor::ops::elementwise::{Binary, Fit, Unary, fit};
use crate::tensor::ops::parallel::by_parts_mut;
use crate::tensor::ops::unary::with_const_op;
use crate::tensor::{DType, Meta, TensorData};

/// Bytes per block buffer (1024 float32 or 512 float64 elements): large enough that the
/// work per block outweighs its setup, small enough that a block's buffers stay in cache.
const BLOCK_BYTES: usize = 4096;

/// Elements per block, for elements of type `T`.
fn block_len<T>() -> usize {
    BLOCK_BYTES / std::mem::size_of::<T>()
}

/// Rows and runs of an operand this long are read in place: blocks are cut where they end.
const LONG_RUN: usize = 64;

/// Results smaller than this run op by op: a group's fixed costs (its buffers, its walk over
/// its members and operands) outweigh the passes it saves (the GPT demo's 1024-element
/// activations ran 2-3% slower fused).
const MIN_ELEMENTS: usize = 4096;

/// A run of nodes this long at most is one group (its blocks' buffers stay small).
const MAX_MEMBERS: usize = 24;

/// What a member reads: an earlier member's result, or a value from outside the group.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Operand {
    Member(usize),
    External(usize),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Unary(Unary, Operand),
    Binary(Binary, Operand, Operand),
}

/// How an external operand's elements reach a block.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Load {
    /// A row-major operand of the result's shape: read in place.
    Whole,
    /// One element for all: its buffer filled once.
    One,
    /// Repeated row after row, rows of at least [`LONG_RUN`]: blocks end where rows do, and
    /// each reads its part of the row in place.
    Row(usize),
    /// Each element held for a run of at least [`LONG_RUN`]: blocks end where runs do, and
    /// its buffer is filled with the block's element.
    Lane(usize),
    /// Repeated in short rows or runs: its buffer filled for each block.
    Spread(Fit),
    /// The dead operand whose buffer output `o` takes over: its block copied out before the
    /// block is computed and overwritten.
    Under(usize),
}

/// Consecutive elementwise nodes of one shape and float type, computed together by the first.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub first: usize,
    pub last: usize,
    ops: Vec<Op>,
    externals: Vec<(Value, Load)>,
    /// The members whose results leave the group (read after it, or outputs of the graph),
    /// and for each the external operand whose buffer it takes over, if one is dead.
    outputs: Vec<(usize, Option<usize>)>,
    /// Per member, the output it writes straight into: an output no later member reads.
    direct: Vec<Option<usize>>,
    /// Per output, whether its member writes it straight (else its buffer is copied out).
    direct_outputs: Vec<bool>,
}

/// What a node is to the fusion: alone, the first node of a group (which computes the whole
/// group), or a later one (already computed by its group's first).
#[derive(Clone, Debug, PartialEq)]
pub enum Role {
    Alone,
    Starts(Group),
    Within,
}

impl Group {
    /// The nodes whose results the group returns (the tests check them; the run reads
    /// `outputs` directly).
    #[cfg(test)]
    pub fn output_nodes(&self) -> impl Iterator<Item = usize> + '_ {
        self.outputs.iter().map(|(k, _)| self.first + k)
    }

    /// The number of nodes in the group.
    pub fn members(&self) -> usize {
        self.ops.len()
    }
}

/// Each node's role. Graphs with dynamic sizes are not fused: how an operand lines up with
/// a result depends on their sizes, which such a graph learns per call.
pub fn groups(graph: &Graph, last_use: &[usize]) -> Vec<Role> {
    let mut roles = vec![Role::Alone; graph.nodes.len()];
    if graph.dynamic {
        return roles;
    }
    let mut j = 0;
    while j < graph.nodes.len() {
        let small = graph.nodes[j].meta.shape.iter().product::<usize>() < MIN_ELEMENTS;
        if small || !is_member(graph, j) {
            j += 1;
            continue;
        }
        let meta = &graph.nodes[j].meta;
        let mut last = j;
        while last + 1 < graph.nodes.len()
            && last + 1 - j < MAX_MEMBERS
            && graph.nodes[last + 1].meta == *meta
            && is_member(graph, last + 1)
        {
            last += 1;
        }
        let group = plan_group(graph, last_use, j, last);
        // A lone op with no dead operand to write over gains nothing over its kernel.
        if group.members() > 1 || group.outputs.iter().any(|(_, under)| under.is_some()) {
            roles[j] = Role::Starts(group);
            roles[j + 1..=last].fill(Role::Within);
        }
        j = last + 1;
    }
    roles
}

/// Whether node `j` is an elementwise float op whose operands all line up with its result.
fn is_member(graph: &Graph, j: usize) -> bool {
    let node = &graph.nodes[j];
    let float = matches!(node.meta.dtype, DType::Float32 | DType::Float64);
    let op_fits = match (Unary::named(&node.op), Binary::named(&node.op)) {
        (Some(op), _) => op != Unary::Not && node.inputs.len() == 1,
        (_, Some(op)) => {
            !op.is_comparison()
                && !matches!(op, Binary::And | Binary::Or | Binary::Xor)
                && node.inputs.len() == 2
        }
        _ => false,
    };
    float
        && op_fits
        && node.inputs.iter().all(|v| {
            let m = graph.meta(*v);
            m.dtype == node.meta.dtype && fit(&m.shape, &node.meta.shape).is_some()
        })
}

fn plan_group(graph: &Graph, last_use: &[usize], first: usize, last: usize) -> Group {
    let meta = &graph.nodes[first].meta;
    let mut externals: Vec<(Value, Load)> = Vec::new();
    let mut operand = |v: Value| -> Operand {
        if let Value::Node(i) = v
            && (first..=last).contains(&i)
        {
            return Operand::Member(i - first);
        }
        if let Some(e) = externals.iter().position(|(w, _)| *w == v) {
            return Operand::External(e);
        }
        let m = graph.meta(v);
        let numel: usize = m.shape.iter().product();
        let n: usize = meta.shape.iter().product();
        let load = match fit(&m.shape, &meta.shape).expect("checked by is_member") {
            Fit::Whole => Load::Whole,
            Fit::One => Load::One,
            Fit::Rows if numel >= LONG_RUN => Load::Row(numel),
            Fit::Lanes if n / numel >= LONG_RUN => Load::Lane(n / numel),
            how => Load::Spread(how),
        };
        externals.push((v, load));
        Operand::External(externals.len() - 1)
    };
    let ops: Vec<Op> = (first..=last)
        .map(|j| {
            let node = &graph.nodes[j];
            match (Unary::named(&node.op), &node.inputs[..]) {
                (Some(op), &[a]) => Op::Unary(op, operand(a)),
                (_, &[a, b]) => Op::Binary(
                    Binary::named(&node.op).expect("checked by is_member"),
                    operand(a),
                    operand(b),
                ),
                _ => unreachable!("checked by is_member"),
            }
        })
        .collect();
    // A member leaves the group when a node after it, or the caller, reads it.
    let mut outputs: Vec<(usize, Option<usize>)> = (first..=last)
        .filter(|&j| last_use[j] > last)
        .map(|j| (j - first, None))
        .collect();
    // A node result of the group's shape and type that the group reads for the last time
    // gives its buffer to an output, the last output first.
    let dead: Vec<usize> = externals
        .iter()
        .enumerate()
        .filter_map(|(e, (v, load))| match v {
            Value::Node(i)
                if *load == Load::Whole
                    && (first..=last).contains(&last_use[*i])
                    && graph.nodes[*i].meta == *meta =>
            {
                Some(e)
            }
            _ => None,
        })
        .collect();
    for ((o, output), e) in outputs.iter_mut().enumerate().rev().zip(dead) {
        output.1 = Some(e);
        externals[e].1 = Load::Under(o);
    }
    let read_in_group = |k: usize| {
        ops[k + 1..].iter().any(|op| match *op {
            Op::Unary(_, a) => a == Operand::Member(k),
            Op::Binary(_, a, b) => a == Operand::Member(k) || b == Operand::Member(k),
        })
    };
    let mut direct = vec![None; ops.len()];
    let direct_outputs: Vec<bool> = outputs
        .iter()
        .enumerate()
        .map(|(o, &(k, _))| {
            let straight = !read_in_group(k);
            if straight {
                direct[k] = Some(o);
            }
            straight
        })
        .collect();
    Group {
        first,
        last,
        ops,
        externals,
        outputs,
        direct,
        direct_outputs,
    }
}

/// An external operand's elements, as a group's run reads them.
enum Data<'a, T: Clone> {
    /// Row-major (copied when the operand is a strided view).
    Elements(Cow<'a, [T]>),
    /// In the buffer an output took over.
    InOutput,
}

/// An output's buffer: a dead operand's, or a fresh one whose elements are all written.
enum Out<T> {
    Taken(ArrayD<T>),
    Fresh(Vec<T>),
}

impl<T: Real> Out<T> {
    /// Its `n` elements, to be written (and, taken over, read first).
    fn elements(&mut self, n: usize) -> &mut [MaybeUninit<T>] {
        match self {
            Out::Taken(a) => {
                let s = a.as_slice_mut().expect("made row-major");
                // SAFETY: `MaybeUninit<T>` has `T`'s layout, and only initialized values are
                // written, so the array stays initialized.
                unsafe { &mut *(s as *mut [T] as *mut [MaybeUninit<T>]) }
            }
            Out::Fresh(v) => &mut v.spare_capacity_mut()[..n],
        }
    }

    fn finish(self, shape: &[usize]) -> ArrayD<T> {
        match self {
            Out::Taken(a) => a,
            Out::Fresh(mut v) => {
                // SAFETY: `Group::part` wrote every element (its blocks cover the result).
                unsafe { v.set_len(shape.iter().product()) };
                ArrayD::from_shape_vec(IxDyn(shape), v).expect("one element per index")
            }
        }
    }
}

impl Group {
    /// The group's outputs, by node: `taken` holds the results of the dead operands given to
    /// outputs (by external index), `arg` reads the others.
    pub fn run<'a>(
        &self,
        meta: &Meta,
        taken: Vec<(usize, TensorData)>,
        arg: &impl Fn(Value) -> &'a TensorData,
    ) -> SmallVec<[(usize, TensorData); 2]> {
        match meta.dtype {
            DType::Float64 => self.run_as::<f64>(&meta.shape, taken, arg),
            DType::Float32 => self.run_as::<f32>(&meta.shape, taken, arg),
            _ => unreachable!("groups are of float results"),
        }
    }

    /// The externals whose buffers outputs take over (by external index, with their values).
    pub fn dead_operands(&self) -> impl Iterator<Item = (usize, Value)> + '_ {
        self.externals
            .iter()
            .enumerate()
            .filter(|(_, (_, load))| matches!(load, Load::Under(_)))
            .map(|(e, (v, _))| (e, *v))
    }

    fn run_as<'a, T: Real>(
        &self,
        shape: &[usize],
        taken: Vec<(usize, TensorData)>,
        arg: &impl Fn(Value) -> &'a TensorData,
    ) -> SmallVec<[(usize, TensorData); 2]> {
        let mut taken: SmallVec<[(usize, ArrayD<T>); 2]> = taken
            .into_iter()
            .map(|(e, t)| {
                let a = T::unwrap(t).expect("an operand of the group's type");
                (
                    e,
                    if a.is_standard_layout() {
                        a
                    } else {
                        crate::tensor::layout::row_major(a.view())
                    },
                )
            })
            .collect();
        let n: usize = shape.iter().product();
        let mut outs: SmallVec<[Out<T>; 2]> = self
            .outputs
            .iter()
            .map(|(_, under)| match under {
                Some(e) => {
                    let at = taken
                        .iter()
                        .position(|(t, _)| t == e)
                        .expect("given by the caller");
                    Out::Taken(taken.swap_remove(at).1)
                }
                // Every element is written before the array is made: no zeroing pass.
                None => Out::Fresh(Vec::with_capacity(n)),
            })
            .collect();
        let data: Vec<Data<'a, T>> = self
            .externals
            .iter()
            .map(|(v, load)| match load {
                Load::Under(_) => Data::InOutput,
                _ => {
                    let a = T::array(arg(*v)).expect("an operand of the group's type");
                    Data::Elements(match a.as_slice() {
                        Some(s) => Cow::Borrowed(s),
                        None => Cow::Owned(a.iter().copied().collect()),
                    })
                }
            })
            .collect();
        let part = |at: usize, parts: &mut [&mut [MaybeUninit<T>]]| self.part(&data, n, at, parts);
        // Large groups by parts on rayon's threads, cheap ops included: bound by memory as
        // they are, two threads ran a normalization written out (five cheap ops) over
        // 256x1024 float32 in 90 µs instead of 150, and left the parts in the caches of the
        // threads whose products read them next (attention large, float32, two threads:
        // 1100 -> 940 µs).
        // A group with several outputs too: a fused pair of scalings of two 8x128x128
        // float32 operands took 78 µs on one thread.
        by_parts_mut(outs.iter_mut().map(|o| o.elements(n)).collect(), part);
        self.outputs
            .iter()
            .zip(outs)
            .map(|((k, _), o)| (self.first + k, T::wrap(o.finish(shape))))
            .collect()
    }

    /// The group over elements `at..at + len` of its result, `parts` those elements of each
    /// output, block by block.
    fn part<T: Real>(
        &self,
        data: &[Data<'_, T>],
        n: usize,
        at: usize,
        parts: &mut [&mut [MaybeUninit<T>]],
    ) {
        let len = parts[0].len();
        // A block's buffer per member, then per external (used by those not read in place),
        // no longer than the part: in this thread's scratch, kept between runs, so that a
        // small group pays for no allocation.
        let block = block_len::<T>().min(len);
        let need = (self.ops.len() + self.externals.len()) * block;
        let mut scratch = T::scratch().take();
        if scratch.len() < need {
            scratch.resize(need, T::zero());
        }
        let bufs = &mut scratch[..need];
        for (e, (_, load)) in self.externals.iter().enumerate() {
            if let (Load::One, Data::Elements(y)) = (load, &data[e]) {
                let slot = (self.ops.len() + e) * block;
                bufs[slot..slot + block].fill(y[0]);
            }
        }
        self.blocks_fast(bufs, block, data, n, at, parts);
        T::scratch().set(scratch);
    }

    /// [`Group::blocks`], compiled for AVX-512 or AVX2 where the CPU has it. One wrapper method
    /// per feature, not `vector_math`'s closure-taking `wide_vectors!`: a closure around this
    /// body is not inlined into the wrapper, and the fused normalization of `benches/fusion.sh`
    /// then ran at 126 µs instead of 63.
    fn blocks_fast<T: Real>(
        &self,
        bufs: &mut [T],
        block: usize,
        data: &[Data<'_, T>],
        n: usize,
        at: usize,
        parts: &mut [&mut [MaybeUninit<T>]],
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            return unsafe { self.blocks_avx512(bufs, block, data, n, at, parts) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA.
            return unsafe { self.blocks_avx2(bufs, block, data, n, at, parts) };
        }
        self.blocks(bufs, block, data, n, at, parts)
    }

    /// [`Group::blocks`] compiled for AVX-512, as [`Group::blocks_avx2`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn blocks_avx512<T: Real>(
        &self,
        bufs: &mut [T],
        block: usize,
        data: &[Data<'_, T>],
        n: usize,
        at: usize,
        parts: &mut [&mut [MaybeUninit<T>]],
    ) {
        self.blocks(bufs, block, data, n, at, parts)
    }

    /// [`Group::blocks`] compiled for AVX2 and FMA: wider vectors, the same operations in the
    /// same order (Rust fuses a multiply and an add only where asked, by `mul_add`, as float64
    /// `exp` does, whose result is exact-then-rounded on any CPU), so the same results.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn blocks_avx2<T: Real>(
        &self,
        bufs: &mut [T],
        block: usize,
        data: &[Data<'_, T>],
        n: usize,
        at: usize,
        parts: &mut [&mut [MaybeUninit<T>]],
    ) {
        self.blocks(bufs, block, data, n, at, parts)
    }

    /// The blocks of [`Group::part`], `bufs` a buffer of `block` elements per member, then
    /// per external.
    #[inline(always)]
    fn blocks<T: Real>(
        &self,
        bufs: &mut [T],
        block: usize,
        data: &[Data<'_, T>],
        n: usize,
        at: usize,
        parts: &mut [&mut [MaybeUninit<T>]],
    ) {
        let len = parts[0].len();
        let members = self.ops.len();
        let mut b0 = 0;
        while b0 < len {
            let start = at + b0;
            // A block ends where a row or run read in place does.
            let m = self
                .externals
                .iter()
                .fold(block.min(len - b0), |m, (_, load)| match load {
                    Load::Row(r) | Load::Lane(r) => m.min(r - start % r),
                    _ => m,
                });
            for (e, (_, load)) in self.externals.iter().enumerate() {
                let slot = (members + e) * block;
                let buf = &mut bufs[slot..slot + block];
                match (load, &data[e]) {
                    (Load::Lane(run), Data::Elements(y)) => buf[..m].fill(y[start / run]),
                    (Load::Spread(how), Data::Elements(y)) => {
                        spread(*how, y, n, start, &mut buf[..m])
                    }
                    (Load::Under(o), _) => {
                        for (d, x) in buf[..m].iter_mut().zip(&parts[*o][b0..b0 + m]) {
                            // SAFETY: an output that took over an operand holds its
                            // elements, and reads each block before it writes it.
                            *d = unsafe { x.assume_init() };
                        }
                    }
                    _ => {}
                }
            }
            for (k, op) in self.ops.iter().enumerate() {
                // The member's buffer apart from the others (earlier members before it,
                // later members and externals after it), which its op reads.
                let (before, rest) = bufs.split_at_mut(k * block);
                let (mine, after) = rest.split_at_mut(block);
                let slots = Slots {
                    before,
                    after,
                    k,
                    block,
                    members,
                };
                let get = |x| slots.operand(x, data, &self.externals, start, m);
                match self.direct[k] {
                    Some(o) => compute(op, &mut parts[o][b0..b0 + m], get, MaybeUninit::new),
                    None => compute(op, &mut mine[..m], get, |x| x),
                }
            }
            for (((k, _), p), direct) in self
                .outputs
                .iter()
                .zip(parts.iter_mut())
                .zip(&self.direct_outputs)
            {
                if !direct {
                    for (d, &x) in p[b0..b0 + m].iter_mut().zip(&bufs[k * block..][..m]) {
                        d.write(x);
                    }
                }
            }
            b0 += m;
        }
    }
}

/// The block buffers around member `k`'s: those of the members before it, and those of
/// the members after it and of the externals.
struct Slots<'b, T> {
    before: &'b [T],
    after: &'b [T],
    k: usize,
    block: usize,
    members: usize,
}

impl<'b, T: Real> Slots<'b, T> {
    /// An operand of member `k` over the block of `m` elements from `start`: an earlier
    /// member's buffer, an external's buffer, or an external's elements read in place.
    #[inline(always)]
    fn operand(
        &self,
        x: Operand,
        data: &'b [Data<'_, T>],
        externals: &[(Value, Load)],
        start: usize,
        m: usize,
    ) -> &'b [T] {
        let slot = |s: usize| -> &'b [T] {
            debug_assert_ne!(s, self.k, "a member does not read itself");
            if s < self.k {
                &self.before[s * self.block..][..m]
            } else {
                &self.after[(s - self.k - 1) * self.block..][..m]
            }
        };
        match x {
            Operand::Member(j) => slot(j),
            Operand::External(e) => match (&externals[e].1, &data[e]) {
                (Load::Whole, Data::Elements(y)) => &y[start..start + m],
                (Load::Row(r), Data::Elements(y)) => &y[start % r..start % r + m],
                _ => slot(self.members + e),
            },
        }
    }
}

/// One member's op over a block, each result element put into `out` through `put`.
#[inline(always)]
fn compute<'b, T: Real, W>(
    op: &Op,
    out: &mut [W],
    get: impl Fn(Operand) -> &'b [T],
    put: impl Fn(T) -> W,
) {
    match *op {
        Op::Unary(op, a) => {
            let a = get(a);
            // A plain loop, the element function in its body (see `with_const_op`).
            with_const_op!(op, OP => {
                for (o, &x) in out.iter_mut().zip(a) {
                    *o = put(T::unary(OP, x));
                }
            })
        }
        Op::Binary(op, a, b) => {
            let (a, b) = (get(a), get(b));
            with_binary!(op, f => out
                .iter_mut()
                .zip(a.iter().zip(b))
                .for_each(|(o, (&p, &q))| *o = put(f(p, q))))
        }
    }
}

/// The elements `start..start + buf.len()` of an operand repeated as `how` says over a
/// result of `n`, written into `buf`.
#[inline(always)]
fn spread<T: Copy>(how: Fit, y: &[T], n: usize, start: usize, buf: &mut [T]) {
    let len = buf.len();
    let mut pos = 0;
    match how {
        // `y` repeats row after row: runs of it, from where the block starts in a row.
        Fit::Rows => {
            while pos < len {
                let k = (start + pos) % y.len();
                let m = (y.len() - k).min(len - pos);
                buf[pos..pos + m].copy_from_slice(&y[k..k + m]);
                pos += m;
            }
        }
        // Each element of `y` holds for a run of `n / y.len()` result elements.
        Fit::Lanes => {
            let run = n / y.len();
            while pos < len {
                let i = start + pos;
                let m = (run - i % run).min(len - pos);
                buf[pos..pos + m].fill(y[i / run]);
                pos += m;
            }
        }
        Fit::Whole | Fit::One => unreachable!("read in place or filled once"),
    }
}

#[cfg(test)]
mod tests;
