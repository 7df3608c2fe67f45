//! Views that share their base's elements, as torch's do: `m[i][j] = v`, `w[0].fill_(0)`,
//! `x.view(-1).mul_(2)`, `h = x[:, 0]` read after `x` changed.
//!
//! A symtrace tensor owns its elements (an ndarray array), so a view here is a tensor of its
//! own that remembers how it was made from its base (the ops of the registry that, applied to
//! the base's data, give the view's) and which version of the base it was made from:
//! - read after the base changed (its version moved on), it is made again from the base;
//! - changed in place, it writes its elements back into the base, at the positions that the
//!   same ops give when applied to the base's positions (`0..n` in the base's shape), so any
//!   chain of index, slice, transpose, permute, reshape, squeeze and narrow writes back
//!   without an inverse of its own.
//!
//! Only the program's own updates (`update`) write through; a tracer's stand-ins are swapped
//! with `write`, which never does.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ndarray::{ArrayD, IxDyn};
use rustpython_vm::PyRef;

use super::index::Index;
use super::ops::scatter::put_into;
use super::ops::select::encode_index;
use super::{Attr, Attrs, PyTensor, TResult, TensorData, registry};

/// How a view was made from its base, and from which of the base's versions.
pub struct ViewLink {
    pub(super) base: PyRef<PyTensor>,
    /// The ops, in order, that make the view's data from the base's.
    steps: Vec<(&'static str, Attrs)>,
    /// The base's version the view's data was last made from or written into.
    seen: AtomicU64,
    /// Per step, what a tracer noted of the node that made it (`note_last_step`): the
    /// per-call attributes (`x[:, :n]`, `narrow(1, pos, 1)` with `n`, `pos` numbers that
    /// change) that the step, made again in the graph, takes too.
    notes: Mutex<Vec<Option<Note>>>,
}

/// What a tracer notes of a step (opaque here: the graph's per-call attributes).
pub type Note = Arc<dyn Any + Send + Sync>;

impl std::fmt::Debug for ViewLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewLink")
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

impl ViewLink {
    /// The link of a view made from `base` by `op` with `attrs`: a view of a view is a view
    /// of the first base, with the ops of both.
    pub fn new(base: &PyRef<PyTensor>, op: &'static str, attrs: Attrs) -> Self {
        Self::with_steps(base, &[(op, attrs)])
    }

    /// The link of a view made from `base` by `steps`, read as a view of `base`'s base when
    /// `base` is a view itself (a graph's output that views its input).
    pub fn with_steps(base: &PyRef<PyTensor>, steps: &[(&'static str, Attrs)]) -> Self {
        let (root, mut all, mut notes) = match base.view_link() {
            Some(link) => (link.base.clone(), link.steps.clone(), link.notes().clone()),
            None => (base.clone(), Vec::new(), Vec::new()),
        };
        all.extend(steps.iter().cloned());
        notes.resize(all.len(), None);
        let seen = AtomicU64::new(root.version());
        Self {
            base: root,
            steps: all,
            seen,
            notes: Mutex::new(notes),
        }
    }

    fn notes(&self) -> std::sync::MutexGuard<'_, Vec<Option<Note>>> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Note what a tracer knows of the node that made the view (`op` with `attrs`, its last
    /// step): the step, made again in the graph (a refresh, a write-back), takes it too, so
    /// that the view lies where it lies at each call. `false`: the last step is not that op.
    pub fn note_last_step(&self, op: &str, attrs: &Attrs, note: Note) -> bool {
        let matches = self
            .steps
            .last()
            .is_some_and(|(o, a)| *o == op && a == attrs);
        if matches && let Some(last) = self.notes().last_mut() {
            *last = Some(note);
        }
        matches
    }

    /// The tensor whose elements these are (never itself a view).
    pub fn base(&self) -> &PyRef<PyTensor> {
        &self.base
    }

    /// The basic index of the base's elements the view is, if it is one (`t[i]`, `t[:, 0]`,
    /// `narrow`), for a base of `shape`: the attributes of an item store into the base.
    fn index_form(&self, shape: &[usize]) -> Option<Attrs> {
        // A step whose place is worked out per call is made again with its note (`put`).
        if self.notes().iter().any(Option::is_some) {
            return None;
        }
        match self.steps.as_slice() {
            [("index", attrs)] => Some(attrs.clone()),
            [("narrow", attrs)] => {
                let dim = super::shape::normalize_dim(attrs.int("dim").ok()?, shape.len()).ok()?;
                let n = *shape.get(dim)? as i64;
                let start = attrs.int("start").ok()?;
                let start = if start < 0 { start + n } else { start };
                let length = attrs.int("length").ok()?;
                let mut index: Vec<Index> = shape[..dim]
                    .iter()
                    .map(|&s| Index::Slice(0, s as i64, 1))
                    .collect();
                index.push(Index::Slice(start, start + length, 1));
                Some(Attrs::new().with("index", Attr::Ints(encode_index(&index))))
            }
            _ => None,
        }
    }

    pub fn steps(&self) -> &[(&'static str, Attrs)] {
        &self.steps
    }

    /// The view's elements' positions in a base of `shape` (row-major), in the view's order.
    pub fn positions(&self, shape: &[usize]) -> Option<ArrayD<i64>> {
        positions(shape, &self.steps)
    }

    /// Whether the view's elements are a run of its base's, in order (torch's contiguous
    /// view: a reshape of it stays a view, `contiguous()` is itself; a transpose's is not).
    pub fn contiguous(&self) -> bool {
        let shape = self.base.read().unwatched_shape().to_vec();
        positions(&shape, &self.steps).is_some_and(|p| {
            let first = p.iter().next().copied().unwrap_or(0);
            p.iter().zip(first..).all(|(&q, k)| q == k)
        })
    }

    /// The view's elements' positions in `base` (row-major), in the view's order, made from
    /// `base` by ops of the registry: a tracer whose stand-in `base` is records them, so that
    /// the graph works them out at each call's sizes.
    fn positions_in(&self, base: &TensorData) -> Option<TensorData> {
        // Not the program's size reads (see `positions`).
        let reads = super::size_reads::mark();
        let out = registry()
            .call("element_positions", &[base], &Attrs::new())
            .and_then(|all| self.apply_recorded(&all))
            .ok()
            .filter(|p| matches!(p, TensorData::Int64(_)));
        super::size_reads::forget_since(reads);
        out
    }

    /// The view's data made again, if the base changed since it was made: `None` if not.
    pub(super) fn refreshed(&self) -> Option<TensorData> {
        let base = self.base.read();
        let version = self.base.version();
        if self.seen.load(Ordering::Acquire) == version {
            return None;
        }
        let data = self.apply_recorded(&base).ok()?;
        self.seen.store(version, Ordering::Release);
        Some(data)
    }

    /// The view's data made again from its base, whatever the versions (a tracer records
    /// the steps from the base's stand-in: see `translate::view_outputs::rebase`).
    pub fn remade(&self) -> Option<TensorData> {
        let base = self.base.read();
        let data = self.apply_recorded(&base).ok()?;
        self.seen.store(self.base.version(), Ordering::Release);
        Some(data)
    }

    /// Whether an update of the view can be written into its base: its elements' positions
    /// in the base can be worked out (every step is an op of the registry on int64 data).
    pub fn writes_back(&self) -> bool {
        let shape = self.base.read().unwatched_shape().to_vec();
        self.index_form(&shape).is_some() || self.positions(&shape).is_some()
    }

    /// Write `data`, the view's elements, into the base: an item store (`base[index] =
    /// data`) where the view is one index, else `put` at the view's positions (the ops a
    /// tracer records for them).
    pub(super) fn write_through(&self, data: &TensorData) {
        let shape = self.base.read().unwatched_shape().to_vec();
        {
            let mut base = self.base.update();
            let stored = self.index_form(&shape).is_some_and(|attrs| {
                let attrs = &attrs;
                registry()
                    .update("index_put", &mut base, &[data], attrs, |t| {
                        *t = registry().compute("index_put", &[t, data], attrs)?;
                        Ok(())
                    })
                    .is_ok()
            });
            if !stored && let Some(index) = self.positions_in(&base) {
                let _ = registry().update("put", &mut base, &[&index, data], &Attrs::new(), |t| {
                    let TensorData::Int64(index) = &index else {
                        unreachable!("checked by positions_in")
                    };
                    put_into(t, index, data)
                });
            }
        }
        self.seen.store(self.base.version(), Ordering::Release);
    }

    /// The steps applied to `data` (recorded by a tracer whose stand-in `data` is), each that
    /// has a note given it (`note_last_step`).
    fn apply_recorded(&self, data: &TensorData) -> TResult<TensorData> {
        let notes = self.notes().clone();
        let mut out: Option<TensorData> = None;
        for ((op, attrs), note) in self.steps.iter().zip(notes) {
            let input = out.as_ref().unwrap_or(data);
            let made = registry().call(op, &[input], attrs)?;
            // The note's attributes are those the step was first recorded with, at the same
            // sizes: a tracer that refused them would hold this place at every call.
            if let Some(note) = note {
                assert!(
                    registry::annotate(&made, &*note),
                    "a view's op {op}, made again, does not take its per-call attributes"
                );
            }
            out = Some(made);
        }
        Ok(out.unwrap_or_else(|| data.clone()))
    }
}

/// `steps` applied to `data`, real data, in order (computed, never recorded: also while a
/// tracer is busy with its recorder).
fn apply(steps: &[(&'static str, Attrs)], data: &TensorData) -> TResult<TensorData> {
    let mut out: Option<TensorData> = None;
    for (op, attrs) in steps {
        out = Some(registry().compute(op, &[out.as_ref().unwrap_or(data)], attrs)?);
    }
    Ok(out.unwrap_or_else(|| data.clone()))
}

/// The positions, in a base of `shape` (row-major), of the elements of the view `steps`
/// make of it, in the view's order.
pub fn positions(shape: &[usize], steps: &[(&'static str, Attrs)]) -> Option<ArrayD<i64>> {
    let n = shape.iter().product::<usize>();
    let all = ArrayD::from_shape_vec(IxDyn(shape), (0..n as i64).collect()).ok()?;
    // The sizes of these temporaries are nobody's: a tracer that notes size reads by address
    // would take a later tensor at one of their addresses for one whose sizes were read.
    let reads = super::size_reads::mark();
    let out = match apply(steps, &TensorData::Int64(all)) {
        Ok(TensorData::Int64(p)) => Some(p),
        _ => None,
    };
    super::size_reads::forget_since(reads);
    out
}
