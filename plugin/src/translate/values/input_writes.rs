//! In-place updates of the caller's tensors: `cache[:, pos] = k`, `count += 1`, a buffer a
//! module updates in `forward`. The update is simulated on the tensor's fake, which from then
//! on stands for the update's result (what later reads in the call see); the replacement
//! copies the fake's final value into the caller's tensor after the graph
//! (`Effect::WriteBack`, `t[...] = value`), so the tensor stays the object the caller holds,
//! as eagerly, and a value built from the fake is that object again. TorchDynamo does the same
//! for mutated inputs: the graph stays functional and the results are copied back.
//!
//! What the simulation relies on: no other tensor it read is the one it updated (another name
//! for it would have a fake of its own, which the update does not change). At trace time a
//! name read before the update is refused, and a name read after it is given the updated fake
//! (guarded `SameAs` the first); later calls are guarded `NotSameAs` for every other tensor
//! read (`written_inputs_guard`).

use rustpython_vm::{AsObject, PyObjectRef, PyRef};

use crate::graph::{Value, recorder};
use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;

/// What an updated tensor held before the update, for a rollback: the value its fake stood
/// for, or the data of a tensor the call made from constants (`t = zeros(3); t += x`).
pub enum Prior {
    Value(Value),
    Data(crate::tensor::TensorData),
}

impl State<'_> {
    /// Before `t` is updated in place: remember what it stands for (a rollback makes it
    /// stand for that again) and, on the first update of a tensor of the caller's, record
    /// its write-back. A tensor the call made from constants becomes a fake of that constant
    /// first (from then on, every value that holds it is a graph value: `templates`).
    pub(crate) fn before_update(&mut self, t: &PyRef<PyTensor>) -> SimResult<()> {
        // A view shares its base's elements: its update writes through into the base (an
        // item store `base[index] = view`, or a `put` at the view's positions, recorded when
        // the update ends). Views of an updated tensor are made again when read.
        if let Some(link) = t.view_link() {
            if !link.writes_back() {
                return unsupported(
                    Kind::SideEffect,
                    "an in-place update of a view whose elements' places in its base are unknown",
                );
            }
            let base = link.base().clone();
            self.before_update(&base)?;
        }
        let Some(value) = self.value_of(t) else {
            let data = t.read().clone();
            let stand_in = recorder::with(|r| {
                let c = r.graph.constant(data.clone());
                r.stand_in(c)
            });
            let Some(stand_in) = stand_in else {
                return unsupported(
                    Kind::Internal,
                    "an in-place update of a tensor that cannot have a stand-in",
                );
            };
            let old = std::mem::replace(&mut *t.write(), stand_in);
            t.touch();
            recorder::with(|r| r.keep(old));
            self.keep_alive(t);
            self.updates.push((t.clone(), Prior::Data(data)));
            return Ok(());
        };
        if matches!(value, Value::Input(_)) && self.written_source(t).is_none() {
            self.first_write(t)?;
        }
        self.updates.push((t.clone(), Prior::Value(value)));
        Ok(())
    }

    fn first_write(&mut self, t: &PyRef<PyTensor>) -> SimResult<()> {
        let Some((source, obj)) = self
            .tensors
            .iter()
            .find(|(_, (f, _))| f.is(t))
            .map(|(s, (_, o))| (s.clone(), o.clone()))
        else {
            return unsupported(
                Kind::SideEffect,
                "an in-place update of a graph input that is not a tensor of the frame",
            );
        };
        // A cache's tensor may be one the graph also reads under another key (`f(1)` and
        // `f(1.0)`): an update of one would not be seen through the other.
        if source.has_draw() {
            return unsupported(
                Kind::SideEffect,
                "an in-place update of a tensor an lru_cache holds",
            );
        }
        if let Some((other, _)) = self
            .tensors
            .iter()
            .find(|(_, (f, o))| !f.is(t) && crate::tensor::object::shares_elements(o, &obj))
        {
            return unsupported(
                Kind::SideEffect,
                format!("an in-place update of {source}, which the call also read as {other}"),
            );
        }
        self.written.push((source.clone(), t.clone(), obj));
        self.effects.write_back(source, Var::Tensor(t.clone()));
        Ok(())
    }

    /// Per tensor of the caller's the call updated: the value its fake stands for now, and
    /// the graph input it is read as (`view_outputs::resolve`).
    pub(crate) fn written_values(&self) -> Vec<(Value, Option<usize>)> {
        self.written
            .iter()
            .filter_map(|(source, fake, _)| {
                let input = self.inputs.iter().position(|s| s == source);
                Some((self.value_of(fake)?, input))
            })
            .collect()
    }

    /// The source of the caller's tensor whose fake is `t`, if the call updated it.
    pub(crate) fn written_source(&self, t: &PyTensor) -> Option<Source> {
        self.written
            .iter()
            .find(|(_, f, _)| std::ptr::eq::<PyTensor>(&***f, t))
            .map(|(s, _, _)| s.clone())
    }

    /// The caller's tensor `v` is, and its source: read from the frame, or its fake.
    pub(crate) fn caller_tensor(&self, v: &Var) -> Option<(PyObjectRef, Source)> {
        match v {
            Var::Lazy(o, source) if o.downcast_ref::<PyTensor>().is_some() => {
                Some((o.clone(), source.clone()))
            }
            Var::Tensor(t) => self
                .tensors
                .iter()
                .find(|(_, (f, _))| f.is(t))
                .map(|(s, (_, o))| (o.clone(), s.clone())),
            _ => None,
        }
    }

    /// `o`, read from `source`, is a tensor the call updated under another name: its fake.
    pub(crate) fn written_alias(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
    ) -> Option<PyRef<PyTensor>> {
        let (first, fake) = self
            .written
            .iter()
            .find(|(_, _, w)| w.is(o))
            .map(|(s, f, _)| (s.clone(), f.clone()))?;
        self.guard(source, Check::SameAs(first));
        Some(fake)
    }

    /// The fake of the tensor `o`, read before from another source (a parameter as
    /// `self.weight` and from `parameters()`): one tensor is one fake, the second source
    /// guarded `SameAs` the first, so that an update through either is seen through the
    /// other, as eagerly.
    pub(crate) fn read_alias(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
    ) -> Option<PyRef<PyTensor>> {
        let first = self
            .inputs
            .iter()
            .find(|s| self.tensors.get(*s).is_some_and(|(_, w)| w.is(o)))?
            .clone();
        let fake = self.tensors[&first].0.clone();
        self.guard(source, Check::SameAs(first));
        Some(fake)
    }

    /// The fake `target` takes the place of `result` (computed out of place: `t op= x`,
    /// a masked store), as an in-place update changes the tensor's elements: its type and
    /// shape stay (an update that would change them casts or raises eagerly: refused).
    pub(crate) fn take_result(&mut self, target: &PyRef<PyTensor>, result: Var) -> SimResult<()> {
        let Var::Tensor(r) = result else {
            return unsupported(Kind::Internal, "an in-place update gives no tensor");
        };
        let reads = crate::tensor::size_reads::mark();
        let (old_meta, new_meta, fit) = {
            let (x, y) = (target.read(), r.read());
            let fit = recorder::with(|rec| rec.same_shape_checks(&x, &y));
            (
                crate::tensor::Meta::of(&x),
                crate::tensor::Meta::of(&y),
                fit,
            )
        };
        if old_meta != new_meta {
            return unsupported(
                Kind::Raises,
                "an in-place update that changes the dtype or shape (it casts or raises)",
            );
        }
        // That the result fits is checked per call, not read: a read would fix the sizes.
        if let Some(checks) = fit {
            crate::tensor::size_reads::forget_since(reads);
            recorder::with(|rec| checks.into_iter().for_each(|c| rec.check(c)));
        }
        self.keep_alive(&r);
        self.before_update(target)?;
        let new = std::mem::replace(
            &mut *r.write(),
            crate::tensor::TensorData::Bool(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[]), false)),
        );
        // A view's update writes through into its base when it ends (`PyTensor::update`).
        let old = if target.view_link().is_some() {
            std::mem::replace(&mut *target.update(), new)
        } else {
            let old = std::mem::replace(&mut *target.write(), new);
            target.touch();
            old
        };
        recorder::with(|rec| rec.keep(old));
        Ok(())
    }

    /// Make each fake updated since the `n`th update stand again for what it stood for (its
    /// earliest entry comes last; one whose value was rolled back too is left alone: it was
    /// made after the rollback's mark, and what stands for nothing is not a graph value).
    pub(crate) fn undo_updates(&mut self, n: usize) {
        while self.updates.len() > n {
            let Some((fake, prior)) = self.updates.pop() else {
                break;
            };
            let data = match prior {
                Prior::Value(value) => recorder::with(|r| r.stand_in(value)),
                Prior::Data(data) => Some(data),
            };
            if let Some(data) = data {
                let old = std::mem::replace(&mut *fake.write(), data);
                fake.touch();
                recorder::with(|r| r.keep(old));
            }
        }
    }

    /// Every other tensor the call read is not a tensor it updated (see the module's comment).
    pub(crate) fn written_inputs_guard(&mut self) {
        let written: Vec<(Source, PyRef<PyTensor>)> = self
            .written
            .iter()
            .map(|(s, f, _)| (s.clone(), f.clone()))
            .collect();
        for (w, fake) in written {
            let others: Vec<Source> = self
                .inputs
                .iter()
                .filter(|s| matches!(self.tensors.get(*s), Some((f, _)) if !f.is(&fake)))
                .cloned()
                .collect();
            for s in others {
                self.guard(&s, Check::NotSameAs(w.clone()));
            }
        }
    }
}
