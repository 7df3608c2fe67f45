//! How replacement code calls its compiled graph. It passes the distinct roots of the input
//! tensors' sources (`L['layers']`, not `L['layers'][0][0]`, `L['layers'][0][1]`, ...), and
//! the graph reads the tensors under them (tuple and list items, dictionary keys) natively:
//! the guards have just checked those containers, so the reads are plain lookups, not a
//! dozen interpreted subscripts. The graph returns its lone output itself, or the tuple of
//! its outputs, which the replacement returns as it is when that is the frame's result.

use rustpython_vm::builtins::{PyStrInterned, PyTuple};
use rustpython_vm::{PyObject, PyObjectRef, VirtualMachine};
use smallvec::SmallVec;

use crate::translate::source::{Source, exact_dict, item};

/// One step from a root down to an input tensor.
#[derive(Clone, Debug)]
pub enum PathStep {
    Item(usize),
    Key(&'static PyStrInterned),
}

#[derive(Clone, Debug)]
pub struct GraphCall {
    /// What the replacement code loads and passes, in order.
    pub roots: Vec<Source>,
    /// Per graph input: the root it is read from and the steps down to it.
    inputs: Vec<(usize, Vec<PathStep>)>,
    /// The graph returns its outputs as a tuple (otherwise its one output itself).
    pub returns_tuple: bool,
}

impl GraphCall {
    pub fn new(input_sources: &[Source], n_outputs: usize, vm: &VirtualMachine) -> Self {
        let mut roots: Vec<Source> = Vec::new();
        let inputs = input_sources
            .iter()
            .map(|source| {
                let mut steps = Vec::new();
                let mut s = source;
                loop {
                    match s {
                        Source::Item(_, i) => steps.push(PathStep::Item(*i)),
                        Source::Key(_, k) => {
                            steps.push(PathStep::Key(vm.ctx.intern_str(k.as_str())))
                        }
                        _ => break,
                    }
                    s = s.parent().expect("items and keys have a parent");
                }
                steps.reverse();
                let root = roots.iter().position(|r| r == s).unwrap_or_else(|| {
                    roots.push(s.clone());
                    roots.len() - 1
                });
                (root, steps)
            })
            .collect();
        GraphCall {
            roots,
            inputs,
            returns_tuple: n_outputs != 1,
        }
    }

    /// The input objects, read from the roots passed. Each is borrowed from a root, from a
    /// tuple under it, or from `held`, which keeps what was read out of a list or a dictionary
    /// (another thread may replace those entries) until the caller is done.
    pub fn gather<'a>(
        &self,
        roots: &'a [PyObjectRef],
        held: &'a mut SmallVec<[PyObjectRef; 8]>,
        vm: &VirtualMachine,
    ) -> Result<SmallVec<[&'a PyObject; 8]>, String> {
        if roots.len() != self.roots.len() {
            return Err(format!(
                "the graph takes {} arguments, got {}",
                self.roots.len(),
                roots.len()
            ));
        }
        let mut objects = SmallVec::with_capacity(self.inputs.len());
        for (root, steps) in &self.inputs {
            match walk(&roots[*root], steps, held, vm) {
                // SAFETY: the object is kept alive by `roots`, by a tuple kept alive by them
                // (a tuple's items never change), or by `held`; moving a `PyObjectRef` inside
                // `held` does not move the object it points to.
                Some(v) => objects.push(unsafe { &*v }),
                None => return Err(format!("an input under {} is missing", self.roots[*root])),
            }
        }
        Ok(objects)
    }
}

/// The object `steps` below `v`. Tuple items are borrowed on the way down (a reference count
/// is an atomic operation, and a tuple keeps its items); list items and dictionary values,
/// which another thread may replace, are pushed onto `held`.
fn walk(
    v: &PyObject,
    steps: &[PathStep],
    held: &mut SmallVec<[PyObjectRef; 8]>,
    vm: &VirtualMachine,
) -> Option<*const PyObject> {
    let Some((step, rest)) = steps.split_first() else {
        return Some(v);
    };
    let owned = match step {
        PathStep::Item(i) => match v.downcast_ref::<PyTuple>() {
            Some(t) => return walk(t.as_slice().get(*i)?, rest, held, vm),
            None => item(v, *i)?,
        },
        PathStep::Key(k) => exact_dict(v, vm)?.get_item_opt(*k, vm).ok().flatten()?,
    };
    let next: *const PyObject = &*owned;
    held.push(owned);
    // SAFETY: `held` keeps the object alive; pushing more does not move it.
    walk(unsafe { &*next }, rest, held, vm)
}
