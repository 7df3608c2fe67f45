//! How replacement code calls its compiled graph. It passes the distinct roots of the input
//! tensors' sources (`L['layers']`, not `L['layers'][0][0]`, `L['layers'][0][1]`, ...), and
//! the graph reads the tensors under them (tuple and list items, dictionary keys, instance
//! dictionaries, attributes) natively: the guards have just checked those containers, so the
//! reads are plain lookups, not a dozen interpreted subscripts per module. The graph returns its lone output itself, or the tuple of
//! its outputs, which the replacement returns as it is when that is the frame's result.

use rustpython_vm::builtins::{PyStrInterned, PyTuple};
use rustpython_vm::{PyObject, PyObjectRef, PyResult, VirtualMachine};
use smallvec::SmallVec;

use crate::translate::source::{Source, dict_storage, item};

/// One step from a root down to an input tensor.
#[derive(Clone, Debug)]
pub enum PathStep {
    Item(usize),
    Key(&'static PyStrInterned),
    /// The object's instance dictionary (a module's parameters and submodules live there).
    InstanceDict,
    /// An attribute, read as `LOAD_ATTR` reads it (whatever it runs and raises).
    Attr(&'static PyStrInterned),
}

#[derive(Clone, Debug)]
pub struct GraphCall {
    /// Where each graph input is read from.
    pub sources: Vec<Source>,
    /// What the replacement code loads and passes, in order.
    pub roots: Vec<Source>,
    /// Per graph input: the root it is read from and the steps down to it.
    inputs: Vec<(usize, Vec<PathStep>)>,
    /// The graph returns its outputs as a tuple (otherwise its one output itself).
    pub returns_tuple: bool,
    /// The outputs to mark as parameters (`requires_grad`) once made: the call marked them.
    pub marked_outputs: Vec<usize>,
    /// The outputs to make views of an input or another output once made (`view_outputs`).
    pub output_views: Vec<crate::translate::view_outputs::OutputView>,
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
                        Source::InstanceDict(_) => steps.push(PathStep::InstanceDict),
                        Source::Attr(_, name) => {
                            steps.push(PathStep::Attr(vm.ctx.intern_str(name.as_str())))
                        }
                        _ => break,
                    }
                    s = s
                        .parent()
                        .expect("items, keys and attributes have a parent");
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
            sources: input_sources.to_vec(),
            roots,
            inputs,
            returns_tuple: n_outputs != 1,
            marked_outputs: Vec::new(),
            output_views: Vec::new(),
        }
    }

    /// The input objects, read from the roots passed. Each is borrowed from a root, from a
    /// tuple under it, or from `held`, which keeps what was read out of a list or a dictionary
    /// (another thread may replace those entries) until the caller is done.
    pub fn gather<'a, R: std::ops::Deref<Target = PyObject>>(
        &self,
        roots: &'a [R],
        held: &'a mut SmallVec<[PyObjectRef; 8]>,
        vm: &VirtualMachine,
    ) -> PyResult<SmallVec<[&'a PyObject; 8]>> {
        if roots.len() != self.roots.len() {
            return Err(vm.new_type_error(format!(
                "a compiled graph: the graph takes {} arguments, got {}",
                self.roots.len(),
                roots.len()
            )));
        }
        let mut objects = SmallVec::with_capacity(self.inputs.len());
        for (root, steps) in &self.inputs {
            match walk(&roots[*root], steps, held, vm)? {
                // SAFETY: the object is kept alive by `roots`, by a tuple kept alive by them
                // (a tuple's items never change), or by `held`; moving a `PyObjectRef` inside
                // `held` does not move the object it points to.
                Some(v) => objects.push(unsafe { &*v }),
                None => {
                    return Err(vm.new_type_error(format!(
                        "a compiled graph: an input under {} is missing",
                        self.roots[*root]
                    )));
                }
            }
        }
        Ok(objects)
    }
}

/// The object `steps` below `v`, `None` where one is missing, or what an attribute read
/// raised. Tuple items are borrowed on the way down (a reference count is an atomic
/// operation, and a tuple keeps its items); list items, dictionary values, instance
/// dictionaries and attributes, which another thread may replace, are pushed onto `held`.
fn walk(
    v: &PyObject,
    steps: &[PathStep],
    held: &mut SmallVec<[PyObjectRef; 8]>,
    vm: &VirtualMachine,
) -> PyResult<Option<*const PyObject>> {
    let Some((step, rest)) = steps.split_first() else {
        return Ok(Some(v));
    };
    let owned = match step {
        PathStep::Item(i) => match v.downcast_ref::<PyTuple>() {
            Some(t) => match t.as_slice().get(*i) {
                Some(x) => return walk(x, rest, held, vm),
                None => None,
            },
            None => item(v, *i, vm),
        },
        PathStep::Key(k) => {
            dict_storage(v, vm).and_then(|d| d.inner_getitem_opt(*k, vm).ok().flatten())
        }
        PathStep::InstanceDict => v.dict().map(Into::into),
        PathStep::Attr(name) => Some(v.get_attr(*name, vm)?),
    };
    let Some(owned) = owned else {
        return Ok(None);
    };
    let next: *const PyObject = &*owned;
    held.push(owned);
    // SAFETY: `held` keeps the object alive; pushing more does not move it.
    walk(unsafe { &*next }, rest, held, vm)
}
