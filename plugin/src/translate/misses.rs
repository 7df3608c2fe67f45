//! What a miss teaches the specialization of a code object: the numbers whose value, the
//! tensors whose sizes, and the classes whose version made an entry miss.

use rustpython_vm::VirtualMachine;
use rustpython_vm::eval_hook::FrameView;

use crate::translate::guards::guard::{Check, Guard, GuardSet};
use crate::translate::policy::Specialization;
use crate::translate::source::Source;

/// Learn from the guard sets of the entries that missed on `frame`.
pub(crate) fn learn(
    spec: &mut Specialization,
    sets: &[&GuardSet],
    frame: &FrameView<'_>,
    vm: &VirtualMachine,
) {
    // A number whose value, or a tensor whose sizes, made an entry miss may be
    // dynamic from now on: each one that changed, not only the first guard that
    // failed (a counter and a length changing together cost one recompile, not two).
    let changed: Vec<Guard> = sets
        .iter()
        .flat_map(|set| {
            let guards = &set.guards;
            guards.iter().filter(move |g| match g.check {
                Check::EqInt(_)
                | Check::EqFloat(_)
                | Check::Len(_)
                | Check::Tensor(..)
                | Check::TensorDims(..) => !g.holds(frame, vm),
                // A class that changed, not another class in its place (the type
                // of another instance, another object under the name): the entry's
                // checks of what the source or its object is still hold.
                Check::Version(_) => {
                    !g.holds(frame, vm)
                        && guards.iter().all(|h| {
                            let identity = matches!(h.check, Check::TypeIs(_) | Check::Is(_));
                            let same = h.source == g.source
                                || matches!(&g.source, Source::TypeOf(of) if **of == h.source);
                            !(identity && same) || h.holds(frame, vm)
                        })
                }
                _ => false,
            })
        })
        .cloned()
        .collect();
    for g in &changed {
        match &g.check {
            // A class whose version changed is guarded entry by entry from now on
            // (see `values::class_stores`).
            Check::EqInt(_) | Check::EqFloat(_) | Check::Version(_) => {
                spec.value_changed(&g.source)
            }
            // A list's length, read as a number from now on (`values::list_lengths`).
            Check::Len(_) => spec.value_changed(&Source::Len(Box::new(g.source.clone()))),
            Check::Tensor(..) | Check::TensorDims(..) => {
                let was: Vec<usize> = match &g.check {
                    Check::Tensor(meta, _) => meta.shape.clone(),
                    Check::TensorDims(_, dims) => {
                        dims.iter().map(|d| d.unwrap_or(usize::MAX)).collect()
                    }
                    _ => unreachable!(),
                };
                if let Some(now) = g.source.resolve(frame, vm).and_then(|v| {
                    v.downcast_ref::<crate::tensor::PyTensor>()
                        .map(|t| t.read().shape().to_vec())
                }) {
                    spec.sizes_changed(&g.source, &was, &now);
                }
            }
            _ => {}
        }
    }
}
