//! Fake tensors: while a frame is simulated, its tensors are stand-ins ("fakes") of the right
//! shape and dtype, and every registry op that touches one is recorded into the graph instead
//! of computed. The Python tensor API thus runs as is during a simulation: one definition of
//! every function and method serves eager execution and tracing alike.
//!
//! A fake is recognised by the address of its data, so the recorder keeps every fake alive
//! while it records: an address is never reused during a translation. A tensor result whose
//! address the recorder does not know, made from fakes, means the Python layer computed it
//! outside the registry (indexing, copies): the simulation reports the path as unsupported
//! instead of recording a wrong constant.

use std::cell::RefCell;

use hashbrown::HashMap;

use super::ir::{Graph, Value};
use super::sizes::{Read, SizeCheck, SizeCmp, SizeExpr, SymAttr, read_shape};
use crate::tensor::{Attrs, Meta, Scalar, TensorData, TensorError};

/// How far a recording had gone: its inputs, constants, nodes and size checks.
#[derive(Clone, Copy, Debug)]
pub struct Mark(usize, usize, usize, usize);

/// The graph being recorded on this thread, and what its fakes stand for (looked up on every
/// op the simulation runs: a hashbrown map with its fast default hasher).
#[derive(Default)]
pub struct Recorder {
    pub graph: Graph,
    /// Inputs whose sizes may change from call to call (see `dynamic`), with which of their
    /// dimensions may.
    dynamic_inputs: Vec<(usize, Vec<bool>)>,
    /// Each fake by the address of its data, with the mark written into it (`mark_fake`).
    by_address: HashMap<usize, (Value, u64)>,
    /// Fakes made so far: the next one's mark.
    made: u64,
    /// Inputs that are ints of the frame's, with their values at trace time.
    int_inputs: Vec<(Value, i64)>,
    /// Data replaced by in-place updates, kept so that its address is not reused.
    kept: Vec<TensorData>,
    /// While set, an op whose inputs are all constants is a node, not folded: a view of a
    /// constant by sizes that change per call, whose attributes are about to become
    /// expressions (`unfolded`).
    keep_nodes: bool,
}

thread_local! {
    static ACTIVE: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

/// The address that identifies a tensor's data.
pub fn address(t: &TensorData) -> usize {
    crate::each_dtype!(t, a => a.as_ptr() as usize)
}

/// What tells a fake from a tensor allocated where a dropped fake was (a native function of
/// the tensor API may drop the fake results of its inner ops while the recording goes on,
/// and the allocator hands the address out again): its first element holds a mark no
/// program computes (a NaN payload, an int near 2**62), and a lookup checks it with the
/// address and the meta. A bool fake's mark is only `true`; an empty fake has no element
/// to hold one (its mark is 0, and its value is fixed by its meta whatever it is taken for).
fn mark_fake(t: &mut TensorData, n: u64) -> u64 {
    if crate::each_dtype!(t, a => a.is_empty()) {
        return 0;
    }
    match t {
        TensorData::Bool(a) => {
            a.iter_mut().take(1).for_each(|x| *x = true);
            1
        }
        TensorData::Int64(a) => {
            let mark = 0x3e5a_0000_0000_0000 | (n & 0xffff_ffff_ffff);
            a.iter_mut().take(1).for_each(|x| *x = mark as i64);
            mark
        }
        TensorData::Float32(a) => {
            let mark = 0x7fa0_0000 | (n as u32 & 0x1f_ffff);
            a.iter_mut().take(1).for_each(|x| *x = f32::from_bits(mark));
            u64::from(mark)
        }
        TensorData::Float64(a) => {
            let mark = 0x7ff5_a000_0000_0000 | (n & 0xfff_ffff_ffff);
            a.iter_mut().take(1).for_each(|x| *x = f64::from_bits(mark));
            mark
        }
    }
}

/// The mark `mark_fake` would have written into `t`.
fn mark_of(t: &TensorData) -> u64 {
    match t {
        TensorData::Bool(a) => a.iter().next().map_or(0, |&x| u64::from(x)),
        TensorData::Int64(a) => a.iter().next().map_or(0, |&x| x as u64),
        TensorData::Float32(a) => a.iter().next().map_or(0, |x| u64::from(x.to_bits())),
        TensorData::Float64(a) => a.iter().next().map_or(0, |x| x.to_bits()),
    }
}

/// A stand-in of this shape and type (its elements are never read as results; its identity
/// is the address of its data, with a mark in it: see `Recorder::fake`). Its zeros are allocated zeroed (`vec![0; n]` is a calloc), so
/// a large one costs address space, not memory or time, until something reads it; an owned
/// ndarray array cannot alias one element to every index instead.
fn fake_of(meta: &Meta) -> Result<TensorData, TensorError> {
    crate::tensor::shape::check_size(&meta.shape)?;
    if meta.shape.contains(&0) {
        return Ok(empty_fake(meta));
    }
    Ok(TensorData::full(&meta.shape, Scalar::Int(0), meta.dtype))
}

/// An empty stand-in with an address of its own: every empty array made the usual way
/// shares one dangling address, so its data is a vector with room for one element, which
/// the allocator gives a place no other live allocation has.
fn empty_fake(meta: &Meta) -> TensorData {
    use ndarray::{ArrayD, IxDyn};
    fn with_room<T>(shape: &[usize]) -> ArrayD<T> {
        ArrayD::from_shape_vec(IxDyn(shape), Vec::with_capacity(1))
            .expect("no element fills a shape with a 0")
    }
    match meta.dtype {
        crate::tensor::DType::Bool => TensorData::Bool(with_room(&meta.shape)),
        crate::tensor::DType::Int64 => TensorData::Int64(with_room(&meta.shape)),
        crate::tensor::DType::Float32 => TensorData::Float32(with_room(&meta.shape)),
        crate::tensor::DType::Float64 => TensorData::Float64(with_room(&meta.shape)),
    }
}

/// Keep the data a recorded in-place update replaced (see `Recorder::keep`).
fn retire(old: TensorData) {
    ACTIVE.with(|a| {
        if let Some(r) = a.borrow_mut().as_mut() {
            r.keep(old);
        }
    });
}

/// Start recording on this thread; `None` if a recording is already under way.
pub fn start() -> Option<RecordingGuard> {
    crate::tensor::registry::install_interceptor(intercept, retire);
    crate::tensor::registry::install_annotator(annotate);
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        if a.is_some() {
            return None;
        }
        *a = Some(Recorder::default());
        crate::tensor::size_reads::start();
        Some(RecordingGuard(()))
    })
}

/// Ends the recording when dropped (also when the simulation unwinds).
pub struct RecordingGuard(());

impl RecordingGuard {
    /// Take the recorded graph out, ending the recording. With dynamic inputs, the graph is
    /// dynamic unless their sizes went into it (`static_because` says how).
    pub fn finish(self) -> Graph {
        let reads = crate::tensor::size_reads::finish();
        let g = ACTIVE.with(|a| {
            a.borrow_mut()
                .take()
                .map(|r| {
                    let mut g = r.graph;
                    if !r.dynamic_inputs.is_empty() || !r.int_inputs.is_empty() {
                        let read: Vec<Value> = reads
                            .iter()
                            .filter_map(|addr| r.by_address.get(addr).map(|e| e.0))
                            .collect();
                        // Sizes vary with the inputs whose sizes do, and with the nodes that
                        // work theirs out from int inputs (their symbolic attributes); an int
                        // input's own shape is `[]` at every call, and a value computed from
                        // it alone (`arange(n) < pos`) keeps its shape.
                        let dynamic: Vec<usize> = r.dynamic_inputs.iter().map(|d| d.0).collect();
                        match super::dynamic::size_leak(&mut g, &dynamic, &read)
                            .or_else(|| pinned_input_size(&g, &r.dynamic_inputs, &r.int_inputs))
                        {
                            None => g.dynamic = true,
                            Some(why) => g.static_because = Some(why),
                        }
                    }
                    if !g.dynamic {
                        // At the recorded sizes, which its guards now fix, every symbolic
                        // attribute is what was recorded and every check passes.
                        g.nodes.iter_mut().for_each(|n| n.sym.clear());
                        g.checks.clear();
                    }
                    g
                })
                .unwrap_or_default()
        });
        std::mem::forget(self);
        g
    }
}

impl Drop for RecordingGuard {
    fn drop(&mut self) {
        crate::tensor::size_reads::finish();
        ACTIVE.with(|a| a.borrow_mut().take());
    }
}

/// Whether a recording is under way on this thread.
pub fn active() -> bool {
    ACTIVE.with(|a| a.borrow().is_some())
}

/// Checks that fix every dynamic dimension of the inputs, and every int input, to one value
/// (`len(x)` used as a number): such a graph fits one size, so it is better kept static
/// (`Some`: why). Where something stays free (the length of rows a mask selected, beside a
/// size the program counts with), the graph stays dynamic and the pinning checks go with it:
/// each call is checked against them (`dynamic::fits`), one entry per pinned size.
fn pinned_input_size(
    g: &Graph,
    dynamic: &[(usize, Vec<bool>)],
    ints: &[(Value, i64)],
) -> Option<String> {
    let mut free: Vec<SizeExpr> = dynamic
        .iter()
        .flat_map(|(i, dims)| {
            let i = *i;
            dims.iter()
                .enumerate()
                .filter(|(_, varying)| **varying)
                .map(move |(d, _)| SizeExpr::Dim(Value::Input(i), d))
        })
        .chain(ints.iter().map(|(v, _)| SizeExpr::Item(*v)))
        .collect();
    let mut why = None;
    for c in &g.checks {
        if c.cmp != SizeCmp::Eq || !c.outcome || !matches!(c.rhs, SizeExpr::Const(_)) {
            continue;
        }
        let Some(at) = free.iter().position(|f| *f == c.lhs) else {
            continue;
        };
        free.swap_remove(at);
        why.get_or_insert_with(|| match c.lhs {
            SizeExpr::Item(_) => {
                format!("the program uses an int it computes sizes from as a number ({c})")
            }
            _ => format!("the program uses a dynamic size as a number ({c})"),
        });
    }
    if free.is_empty() { why } else { None }
}

/// Run `f` on the active recorder. Panics if none is active: only the simulation calls it.
pub fn with<R>(f: impl FnOnce(&mut Recorder) -> R) -> R {
    ACTIVE.with(|a| f(a.borrow_mut().as_mut().expect("a recording is active")))
}

impl Recorder {
    /// A fake for a new graph input.
    pub fn input(&mut self, meta: Meta) -> Result<TensorData, TensorError> {
        crate::tensor::shape::check_size(&meta.shape)?; // before the input is added
        let v = self.graph.input(meta);
        self.fake(v)
    }

    /// A new fake standing for `v`, marked and known by its address.
    fn fake(&mut self, v: Value) -> Result<TensorData, TensorError> {
        let mut fake = fake_of(&self.graph.meta(v))?;
        self.made += 1;
        let mark = mark_fake(&mut fake, self.made);
        self.by_address.insert(address(&fake), (v, mark));
        Ok(fake)
    }

    /// A fake for a new graph input whose sizes may change from call to call: those of the
    /// dimensions `dynamic` marks.
    pub fn dynamic_input(
        &mut self,
        meta: Meta,
        dynamic: Vec<bool>,
    ) -> Result<TensorData, TensorError> {
        let fake = self.input(meta)?;
        self.dynamic_inputs
            .push((self.graph.inputs.len() - 1, dynamic));
        Ok(fake)
    }

    /// Whether the sizes of `v` may change from call to call: it is a dynamic input, or made
    /// from one, or made with sizes worked out per call.
    fn varies(&self, v: Value) -> bool {
        // Only a dynamic input or an int the sizes are computed from makes sizes vary.
        if self.dynamic_inputs.is_empty() && self.int_inputs.is_empty() {
            return false;
        }
        let input = |i: usize| self.dynamic_inputs.iter().any(|d| d.0 == i);
        let Value::Node(last) = v else {
            return matches!(v, Value::Input(i) if input(i));
        };
        let mut varies = vec![false; last + 1];
        for (j, node) in self.graph.nodes[..=last].iter().enumerate() {
            varies[j] = !node.sym.is_empty()
                || node.inputs.iter().any(|v| match v {
                    Value::Input(i) => input(*i),
                    Value::Const(_) => false,
                    Value::Node(i) => varies[*i],
                });
        }
        varies[last]
    }

    /// Dimension `dim` of the fake `t` as an expression of the graph's values, when it may
    /// change from call to call (`None`: it is the size the fake has).
    pub fn size_expr(&self, t: &TensorData, dim: usize) -> Option<SizeExpr> {
        let v = self.value_of(t)?;
        if let Value::Input(i) = v {
            let (_, dims) = self.dynamic_inputs.iter().find(|d| d.0 == i)?;
            return dims.get(dim).copied()?.then_some(SizeExpr::Dim(v, dim));
        }
        self.varies(v).then_some(SizeExpr::Dim(v, dim))
    }

    /// Whether `t` is a fake whose sizes may change from call to call.
    pub fn is_varying(&self, t: &TensorData) -> bool {
        self.value_of(t).is_some_and(|v| self.varies(v))
    }

    /// Give the node that made `t` the symbolic attributes `sym`, if worked out at the
    /// recorded sizes they are the attributes it was recorded with (so the simulation's idea of
    /// which argument went where is checked, not trusted). `false`: they are not, and the node
    /// keeps its recorded attributes.
    pub fn attach(&mut self, t: &TensorData, sym: Vec<SymAttr>) -> bool {
        let Some(Value::Node(j)) = self.value_of(t) else {
            return false;
        };
        let g = &self.graph;
        let node = &g.nodes[j];
        let first = node.inputs.first().map(|v| g.meta(*v).shape);
        let items = &self.int_inputs;
        let dim = |v: Value, r: Read| {
            let item = items.iter().find(|(w, _)| *w == v).map(|(_, i)| *i);
            read_shape(&g.meta(v).shape, item, r)
        };
        if super::sizes::resolve(&node.attrs, &sym, first.as_deref(), &dim).as_ref()
            != Some(&node.attrs)
        {
            return false;
        }
        self.graph.nodes[j].sym = sym;
        true
    }

    /// Mark the node that made `t` as holding its attributes at every call that passes the
    /// checks made so far (see `sizes::pinned`).
    pub fn pin(&mut self, t: &TensorData) -> bool {
        let Some(Value::Node(j)) = self.value_of(t) else {
            return false;
        };
        let node = &mut self.graph.nodes[j];
        if node.sym.is_empty() {
            node.sym = super::sizes::pinned(&node.attrs);
        }
        !node.sym.is_empty()
    }

    /// The symbolic attributes of the node that made `t`.
    pub fn sym_of(&self, t: &TensorData) -> Vec<SymAttr> {
        match self.value_of(t) {
            Some(Value::Node(j)) => self.graph.nodes[j].sym.clone(),
            _ => Vec::new(),
        }
    }

    /// A fake made by `op` from its attributes alone, some of them worked out per call.
    pub fn factory(
        &mut self,
        op: &str,
        attrs: Attrs,
        sym: Vec<SymAttr>,
    ) -> Result<TensorData, TensorError> {
        let v = self.graph.factory(op, attrs, sym)?;
        self.fake(v)
    }

    /// A new fake standing for `v` (a fake updated in place, made to stand again for what it
    /// stood for before a rolled-back update); `None` if `v` was itself rolled back.
    pub fn stand_in(&mut self, v: Value) -> Option<TensorData> {
        let held = match v {
            Value::Input(i) => i < self.graph.inputs.len(),
            Value::Const(i) => i < self.graph.consts.len(),
            Value::Node(i) => i < self.graph.nodes.len(),
        };
        if !held {
            return None;
        }
        self.fake(v).ok()
    }

    /// Note that the input `t` is an int of the frame's whose value was `value`: expressions
    /// may read it (`SizeExpr::Item`).
    pub fn int_input(&mut self, t: &TensorData, value: i64) -> Option<SizeExpr> {
        let v = self.value_of(t)?;
        if !self.int_inputs.iter().any(|(w, _)| *w == v) {
            self.int_inputs.push((v, value));
        }
        Some(SizeExpr::Item(v))
    }

    /// That the fakes `a` and `b` have one shape, as comparisons of their dimensions checked
    /// per call (each an expression of the graph's values where it may change from call to
    /// call), for a program that relies on it (an update in place, which must fit its
    /// target): a read of their sizes would fix a dynamic graph's. `None` where either is not
    /// a fake or their ranks differ.
    pub fn same_shape_checks(&self, a: &TensorData, b: &TensorData) -> Option<Vec<SizeCheck>> {
        self.value_of(a)?;
        self.value_of(b)?;
        if a.ndim() != b.ndim() {
            return None;
        }
        let mut checks = Vec::new();
        for d in 0..a.ndim() {
            let (x, y) = (self.size_expr(a, d), self.size_expr(b, d));
            if x.is_none() && y.is_none() {
                continue;
            }
            // Static on one side: its size as recorded.
            let constant = |t: &TensorData| SizeExpr::Const(t.unwatched_shape()[d] as i64);
            checks.push(SizeCheck {
                lhs: x.unwrap_or_else(|| constant(a)),
                cmp: SizeCmp::Eq,
                rhs: y.unwrap_or_else(|| constant(b)),
                outcome: true,
            });
        }
        Some(checks)
    }

    /// A comparison of sizes the simulation relied on, checked before each call.
    pub fn check(&mut self, check: SizeCheck) {
        if !self.graph.checks.contains(&check) {
            log::debug!(target: crate::log_targets::GUARDS, "size check: {check}");
            self.graph.checks.push(check);
        }
    }

    pub fn keep(&mut self, t: TensorData) {
        self.kept.push(t);
    }

    /// What `t` stands for, if it is a fake.
    pub fn value_of(&self, t: &TensorData) -> Option<Value> {
        let &(v, mark) = self.by_address.get(&address(t))?;
        let (marked, described) = (mark_of(t) == mark, self.graph.describes(v, t));
        if marked && described {
            return Some(v);
        }
        log::debug!(
            target: crate::log_targets::GRAPH,
            "a {:?} tensor of shape {:?} at the address of a dropped fake of {v} is not that fake ({})",
            t.dtype(),
            t.unwatched_shape(),
            if described { "its meta, not its mark" } else { "not its meta" }
        );
        None
    }

    /// Where the graph and the fakes were, to roll back to.
    pub fn mark(&self) -> Mark {
        Mark(
            self.graph.inputs.len(),
            self.graph.consts.len(),
            self.graph.nodes.len(),
            self.graph.checks.len(),
        )
    }

    /// Forget everything recorded since `mark`.
    pub fn rollback(&mut self, mark: Mark) {
        let Mark(inputs, consts, nodes, checks) = mark;
        self.graph.checks.truncate(checks);
        self.dynamic_inputs.retain(|i| i.0 < inputs);
        self.int_inputs
            .retain(|(v, _)| matches!(v, Value::Input(i) if *i < inputs));
        self.graph.inputs.truncate(inputs);
        self.graph.consts.truncate(consts);
        self.graph.nodes.truncate(nodes);
        self.by_address.retain(|_, (v, _)| match v {
            Value::Input(i) => *i < inputs,
            Value::Const(i) => *i < consts,
            Value::Node(i) => *i < nodes,
        });
    }

    fn record(
        &mut self,
        op: &str,
        args: &[&TensorData],
        attrs: &Attrs,
    ) -> Option<Result<TensorData, TensorError>> {
        let known: Vec<Option<Value>> = args.iter().map(|t| self.value_of(t)).collect();
        // Constants only: computed now, as constant folding would; but random numbers are
        // drawn when the graph runs, each call its own.
        if known.iter().all(Option::is_none) && !crate::tensor::registry().draws(op) {
            return None;
        }
        let inputs: Vec<Value> = known
            .into_iter()
            .zip(args)
            .map(|(v, t)| v.unwrap_or_else(|| self.graph.constant((*t).clone())))
            .collect();
        let applied = match self.keep_nodes {
            true => self.graph.apply_node(op, &inputs, attrs.clone()),
            false => self.graph.apply(op, &inputs, attrs.clone()),
        };
        Some(applied.and_then(|v| self.fake(v)))
    }
}

/// `f()` with the ops it records on constants kept as nodes (see `Recorder::keep_nodes`).
pub fn unfolded<R>(f: impl FnOnce() -> R) -> R {
    let before = ACTIVE.with(|a| {
        a.borrow_mut()
            .as_mut()
            .map(|r| std::mem::replace(&mut r.keep_nodes, true))
    });
    let out = f();
    ACTIVE.with(|a| {
        if let (Some(r), Some(b)) = (a.borrow_mut().as_mut(), before) {
            r.keep_nodes = b;
        }
    });
    out
}

/// The registry's interception point (`registry::Interceptor`), installed by `start`: called
/// before the registry runs an op: while a recording is active and an argument
/// is a fake, the op is recorded and a fake result returned.
fn intercept(
    op: &str,
    args: &[&TensorData],
    attrs: &Attrs,
) -> Option<Result<TensorData, TensorError>> {
    ACTIVE.with(|a| {
        a.borrow_mut()
            .as_mut()
            .and_then(|r| r.record(op, args, attrs))
    })
}

/// The registry's annotation point (`registry::Annotator`): a view's op made again while
/// recording takes the per-call attributes of the node that first made the view.
fn annotate(t: &TensorData, note: &(dyn std::any::Any + Send + Sync)) -> bool {
    ACTIVE.with(|a| {
        let mut active = a.borrow_mut();
        let Some(r) = active.as_mut() else {
            return true;
        };
        if r.value_of(t).is_none() {
            return true; // computed, not recorded
        }
        note.downcast_ref::<Vec<SymAttr>>()
            .is_some_and(|sym| r.attach(t, sym.clone()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::{Attr, DType, Scalar, registry};

    /// A draw made while recording is a node, not a constant drawn at translation time; one
    /// nothing reads stays in the graph as an output; each run of the graph draws anew.
    #[test]
    fn draws_are_nodes_run_per_call_even_unread() {
        let draw = |op: &str, n: i64| {
            let attrs = Attrs::new()
                .with("shape", Attr::Ints(vec![n]))
                .with("dtype", Attr::DType(DType::Float64));
            registry().call(op, &[], &attrs).unwrap()
        };
        let recording = start().expect("no recording under way");
        let _unread = draw("randn", 2);
        let read = draw("rand", 3);
        let v = with(|r| r.value_of(&read)).expect("a draw is a fake of the graph");
        let doubled = registry().call("add", &[&read, &read], &Attrs::new());
        let out = with(|r| r.value_of(&doubled.unwrap())).unwrap();
        let mut g = recording.finish();
        g.outputs = vec![out];
        g.prune();
        let ops: Vec<&str> = g.nodes.iter().map(|n| n.op.as_str()).collect();
        assert_eq!(ops, ["randn", "rand", "add"], "{g}");
        assert_eq!(g.outputs.len(), 2, "the unread draw is an output: {g}");
        assert!(matches!(v, Value::Node(1)));
        let (a, b) = (g.run(&[]).unwrap(), g.run(&[]).unwrap());
        assert_eq!(a[0].shape(), [3]);
        assert_ne!(a[0], b[0], "each run draws anew");
    }

    /// Under `unfolded`, an op on a constant's stand-in and the ops after it are nodes (their
    /// attributes may become expressions); outside, the same ops fold.
    #[test]
    fn ops_on_constants_are_nodes_only_while_unfolded() {
        let _recording = start().expect("no recording under way");
        let one = TensorData::full(&[1, 3], Scalar::Float(1.0), DType::Float64);
        let expand = Attrs::new().with("shape", Attr::Ints(vec![4, 3]));
        let c = with(|r| {
            let c = r.graph.constant(one.clone());
            r.stand_in(c)
        })
        .unwrap();
        let folded = registry().call("expand", &[&c], &expand).unwrap();
        assert!(matches!(
            with(|r| r.value_of(&folded)),
            Some(Value::Const(_))
        ));
        let kept = unfolded(|| registry().call("expand", &[&c], &expand).unwrap());
        assert!(matches!(with(|r| r.value_of(&kept)), Some(Value::Node(_))));
        assert_eq!(kept.shape(), [4, 3]);
        let after = registry().call("expand", &[&c], &expand).unwrap();
        assert!(
            matches!(with(|r| r.value_of(&after)), Some(Value::Const(_))),
            "restored"
        );
    }

    /// A tensor the allocator places where a fake that was dropped during the recording was
    /// (a native function drops its inner ops' fake results) is not taken for that fake,
    /// whether or not its shape and dtype are the fake's. (The allocator hands a freed
    /// block of one size to the next request of that size: the address is reused here.)
    #[test]
    fn a_tensor_where_a_dropped_fake_was_is_not_that_fake() {
        let _recording = start().expect("no recording under way");
        let (mut reused, mut taken) = (0, 0);
        for shape in [[2, 6], [3, 4], [2, 6]] {
            let meta = Meta {
                shape: vec![2, 6],
                dtype: DType::Float64,
            };
            let fake = with(|r| r.input(meta)).unwrap();
            let at = address(&fake);
            drop(fake);
            let t = TensorData::full(&shape, Scalar::Float(1.5), DType::Float64);
            reused += usize::from(address(&t) == at);
            taken += usize::from(with(|r| r.value_of(&t)).is_some());
        }
        assert_eq!(taken, 0, "{reused} of 3 at a dropped fake's address");
    }
}
