//! Attributes of the caller's classes: stores into them (`Counter.calls += 1`,
//! `type(self).seen = n`, `cls.registry = ...` in a class method), and what the guards of a
//! class become when its version tag cannot serve.
//!
//! A store into a user class (made by `type`, a heap type with the plain lookup) is a side
//! effect like a store into an instance: recorded, replayed after the graph, and followed by
//! later lookups of the name, on the class and through its instances (`class_written`).
//!
//! The replay changes the class's version tag, so the version guard of a class the call
//! writes would miss on every call after it. Such a class, and one whose version made an
//! earlier entry of the code object miss, is guarded entry by entry instead
//! (`guards::class_entries`): its non-scalar entries by identity, its scalar entries by kind,
//! and each scalar the simulation read from it by value where it was read (`class_reads`).
//! A scalar whose value made an entry miss is read as a number from the class
//! (`Source::ClassAttr`), so that a counter on a class translates twice, not once per call,
//! as a counter on an instance or in a global does.

use std::sync::Arc;

use rustpython_vm::builtins::{PyType, PyTypeRef};
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::class_entries::{ClassEntries, is_scalar};
use crate::translate::guards::guard::Check;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;
use crate::translate::values::objects::is_user_class;

impl State<'_> {
    /// `owner.name = value` where `owner` is a user class: recorded as a side effect (`true`),
    /// or not a class this handles (`false`).
    pub(super) fn class_store(&mut self, owner: &Var, name: &str, value: Var) -> SimResult<bool> {
        let vm = self.vm;
        let Some((o, source)) = owner.object_and_source() else {
            return Ok(false);
        };
        let Some(class) = o.downcast_ref::<PyType>() else {
            return Ok(false);
        };
        if !is_user_class(class, vm) {
            return Ok(false);
        }
        if name.starts_with("__") && name.ends_with("__") {
            // `type` has data descriptors of such names (`__name__`, `__bases__`...), and
            // the class's special methods change its slots.
            return unsupported(
                Kind::SideEffect,
                format!("a store of {name} into class {}", class.name()),
            );
        }
        let class = class.to_owned();
        self.obj(owner)?; // the class's identity
        let effect = Effect::SetAttr {
            target: source,
            name: name.to_owned(),
            value: value.clone(),
            on_class: true,
        };
        self.effects.mutate(&o, effect);
        self.class_writes.push((class, name.to_owned(), value));
        Ok(true)
    }

    /// What a lookup of `name` on `class` finds of the stores the call made: the newest
    /// store into the first class of its MRO that has either a store or an entry of that
    /// name (`None`: the lookup finds what the namespaces hold).
    pub(super) fn class_written(&self, class: &PyType, name: &str) -> Option<Var> {
        if self.class_writes.is_empty() {
            return None;
        }
        let interned = self.vm.ctx.interned_str(name);
        for k in class.mro.read().iter() {
            if let Some((_, _, v)) = self
                .class_writes
                .iter()
                .rev()
                .find(|(c, n, _)| c.is(k) && n == name)
            {
                return Some(v.clone());
            }
            if interned.is_some_and(|i| k.attributes.contains(i)) {
                return None;
            }
        }
        None
    }

    /// The data `d`, found for `name` on `through` (read from `through_source`), as the
    /// simulation uses it. A scalar is a constant, guarded by value where the class is
    /// guarded entry by entry; or, once its value made an entry miss, a number read from the
    /// namespace that holds it. A tensor is read from that namespace (a graph input).
    pub(super) fn class_data(
        &mut self,
        through: &PyTypeRef,
        through_source: Source,
        name: &str,
        d: PyObjectRef,
    ) -> Var {
        let vm = self.vm;
        let owner = vm.ctx.interned_str(name).and_then(|i| {
            through
                .mro
                .read()
                .iter()
                .find(|k| k.attributes.contains(i))
                .cloned()
        });
        let holder = match owner {
            Some(k) if !k.is(through) => Source::object(k.into()),
            _ => through_source,
        };
        let source = Source::ClassAttr(Box::new(holder), name.to_owned());
        let t = &vm.ctx.types;
        let dunder = name.starts_with("__") && name.ends_with("__");
        let number = d.class().is(t.int_type) || d.class().is(t.float_type);
        let tensor = !is_scalar(&d, vm);
        if !dunder && (tensor || (number && self.spec.number_is_input(&source, false))) {
            if tensor {
                self.class_reads.push((d.clone(), source.clone()));
            }
            return Var::Lazy(d, source);
        }
        self.class_reads.push((d.clone(), source));
        Var::Obj(d)
    }

    /// The guards of the classes the call wrote, and of those whose version made an entry
    /// miss: entry by entry instead of by version, and the scalars read from them by value.
    pub(crate) fn class_entries_guards(&mut self) -> SimResult<()> {
        let vm = self.vm;
        let mut written: Vec<PyTypeRef> = Vec::new();
        for (c, _, _) in &self.class_writes {
            if !written.iter().any(|w| w.is(c)) {
                written.push(c.clone());
            }
        }
        let affected = |k: &PyTypeRef| k.mro.read().iter().any(|m| written.iter().any(|w| w.is(m)));
        let mut by_entries: Vec<PyTypeRef> = Vec::new();
        for g in self.guards.iter_mut() {
            if !matches!(g.check, Check::Version(_)) {
                continue;
            }
            let Some((_, class)) = self.versioned.iter().find(|(s, _)| *s == g.source) else {
                continue;
            };
            let volatile = self.spec.changed.contains(&g.source);
            if !volatile && !affected(class) {
                continue;
            }
            let own = |k: &PyTypeRef| affected(k) || (volatile && k.is(class));
            if let Some(entries) = ClassEntries::record(class, own, vm) {
                g.check = Check::Entries(Arc::new(entries));
                if !by_entries.iter().any(|c| c.is(class)) {
                    by_entries.push(class.clone());
                }
            }
        }
        if by_entries.is_empty() {
            return Ok(());
        }
        // Every data read from a class, not only from those: a read through a class guarded
        // by version may have found its value on a base that is now guarded by entries.
        let reads = self.class_reads.clone();
        for (d, source) in reads {
            if is_scalar(&d, vm) {
                self.rely_leaf(&d, &source)?;
            } else {
                self.guard(&source, Check::type_is(d.class().to_owned()));
            }
        }
        Ok(())
    }
}

/// Whether a value the call stored into a class is found through an instance as itself:
/// nothing that could bind or run as a descriptor.
pub(super) fn is_descriptor_free(v: &Var) -> bool {
    match v {
        Var::Obj(o) | Var::Lazy(o, _) => o.class().slots.descr_get.load().is_none(),
        Var::Num(_) | Var::Tensor(_) | Var::Tuple(_) | Var::List(_) | Var::Dict(_) => true,
        _ => false,
    }
}
