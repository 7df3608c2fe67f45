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
use crate::tensor::{Attrs, Meta, Scalar, TensorData, TensorError};

/// The graph being recorded on this thread, and what its fakes stand for (looked up on every
/// op the simulation runs: a hashbrown map with its fast default hasher).
#[derive(Default)]
pub struct Recorder {
    pub graph: Graph,
    /// Inputs whose sizes may change from call to call (see `dynamic`).
    dynamic_inputs: Vec<usize>,
    by_address: HashMap<usize, Value>,
    /// Data replaced by in-place updates, kept so that its address is not reused.
    kept: Vec<TensorData>,
}

thread_local! {
    static ACTIVE: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

/// The address that identifies a tensor's data.
pub fn address(t: &TensorData) -> usize {
    crate::each_dtype!(t, a => a.as_ptr() as usize)
}

/// A stand-in of this shape and type (its elements are never read as results; its identity
/// is the address of its data). Its zeros are allocated zeroed (`vec![0; n]` is a calloc), so
/// a large one costs address space, not memory or time, until something reads it; an owned
/// ndarray array cannot alias one element to every index instead.
pub fn fake_of(meta: &Meta) -> Result<TensorData, TensorError> {
    if meta.shape.iter().product::<usize>() == 0 {
        // All empty arrays share an address; they cannot be told apart.
        return Err(TensorError::value(
            "an empty tensor cannot be traced".to_owned(),
        ));
    }
    crate::tensor::shape::check_size(&meta.shape)?;
    Ok(TensorData::full(&meta.shape, Scalar::Int(0), meta.dtype))
}

/// Start recording on this thread; `None` if a recording is already under way.
pub fn start() -> Option<RecordingGuard> {
    crate::tensor::registry::install_interceptor(intercept);
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
                    if !r.dynamic_inputs.is_empty() {
                        let read: Vec<Value> = reads
                            .iter()
                            .filter_map(|addr| r.by_address.get(addr).copied())
                            .collect();
                        match super::dynamic::size_leak(&g, &r.dynamic_inputs, &read) {
                            None => g.dynamic = true,
                            Some(why) => g.static_because = Some(why),
                        }
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

/// Run `f` on the active recorder. Panics if none is active: only the simulation calls it.
pub fn with<R>(f: impl FnOnce(&mut Recorder) -> R) -> R {
    ACTIVE.with(|a| f(a.borrow_mut().as_mut().expect("a recording is active")))
}

impl Recorder {
    /// A fake for a new graph input.
    pub fn input(&mut self, meta: Meta) -> Result<TensorData, TensorError> {
        let fake = fake_of(&meta)?;
        let v = self.graph.input(meta);
        self.by_address.insert(address(&fake), v);
        Ok(fake)
    }

    /// A fake for a new graph input whose sizes may change from call to call.
    pub fn dynamic_input(&mut self, meta: Meta) -> Result<TensorData, TensorError> {
        let fake = self.input(meta)?;
        self.dynamic_inputs.push(self.graph.inputs.len() - 1);
        Ok(fake)
    }

    pub fn keep(&mut self, t: TensorData) {
        self.kept.push(t);
    }

    /// What `t` stands for, if it is a fake.
    pub fn value_of(&self, t: &TensorData) -> Option<Value> {
        self.by_address.get(&address(t)).copied()
    }

    /// Where the graph and the fakes were, to roll back to.
    pub fn mark(&self) -> (usize, usize, usize) {
        (
            self.graph.inputs.len(),
            self.graph.consts.len(),
            self.graph.nodes.len(),
        )
    }

    /// Forget everything recorded since `mark`.
    pub fn rollback(&mut self, mark: (usize, usize, usize)) {
        let (inputs, consts, nodes) = mark;
        self.dynamic_inputs.retain(|i| *i < inputs);
        self.graph.inputs.truncate(inputs);
        self.graph.consts.truncate(consts);
        self.graph.nodes.truncate(nodes);
        self.by_address.retain(|_, v| match v {
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
        if known.iter().all(Option::is_none) {
            return None; // constants only: computed now, as constant folding would
        }
        let inputs: Vec<Value> = known
            .into_iter()
            .zip(args)
            .map(|(v, t)| v.unwrap_or_else(|| self.graph.constant((*t).clone())))
            .collect();
        let result = self.graph.apply(op, &inputs, attrs.clone()).and_then(|v| {
            let fake = fake_of(&self.graph.meta(v))?;
            self.by_address.insert(address(&fake), v);
            Ok(fake)
        });
        Some(result)
    }
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
