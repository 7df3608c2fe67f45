//! The guard of a class whose version tag cannot serve: one the call itself stores into
//! (`Counter.calls += 1`: the replay changes the version on every call), or one whose version
//! made an earlier entry of the code object miss. Instead of the version, the class's own
//! namespace is compared entry by entry, and those of its bases that nothing changed keep
//! their version tags.
//!
//! A data entry (an int, float, bool, str or `None`, or a tensor) is checked to still be one,
//! not to be the same object: data is not a descriptor, so what a lookup of another name, or
//! a lookup through an instance, found stays what it finds; and each one the simulation read
//! is guarded where it was read (`State::class_reads`: a scalar by value, a tensor by its
//! type, and by its dtype and shape where the graph takes it). Any other entry is the same
//! object; no entry comes or goes (the count is equal).

use std::fmt;

use rustpython_vm::builtins::{PyStrInterned, PyType, PyTypeRef};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyObject, VirtualMachine};

use crate::tensor::PyTensor;
use crate::translate::guards::ident::Ident;

/// What a class's own entry must still be.
#[derive(Clone, Debug)]
enum Entry {
    /// An int, float, bool, str, `None` or tensor (exactly), of any value.
    Data,
    /// This object.
    Is(Ident),
}

/// What one class of the MRO must still hold.
#[derive(Clone, Debug)]
enum Class {
    /// Its version tag (nonzero): nothing of it or its bases changed.
    Version(u32),
    /// Its namespace: this many entries, these among them.
    Entries(usize, Vec<(&'static PyStrInterned, Entry)>),
}

/// A class with this MRO, each class of it as recorded.
#[derive(Clone, Debug)]
pub struct ClassEntries {
    mro: Vec<(Ident, Class)>,
}

/// Whether `v` is a scalar (exactly an int, float, bool or str, or `None`).
pub fn is_scalar(v: &PyObject, vm: &VirtualMachine) -> bool {
    let (c, t) = (v.class(), &vm.ctx.types);
    c.is(t.int_type) || c.is(t.float_type) || c.is(t.bool_type) || c.is(t.str_type) || vm.is_none(v)
}

/// Whether `v` is data that no lookup treats as a descriptor: a scalar or a tensor (exactly).
pub fn is_data(v: &PyObject, vm: &VirtualMachine) -> bool {
    // Exactly a tensor: a subclass is a heap type. (Not `downcast_ref_if_exact`, which needs
    // the Tensor class, not there before symtrace is imported.)
    is_scalar(v, vm)
        || (v.downcast_ref::<PyTensor>().is_some()
            && !v.class().slots.flags.has_feature(PyTypeFlags::HEAPTYPE))
}

fn namespace_len(class: &PyType) -> Option<usize> {
    class.attributes.as_dict().map(|d| d.__len__())
}

impl ClassEntries {
    /// `class` as it is now: the classes of its MRO for which `by_entries` holds recorded
    /// entry by entry, the others by version. `None` where that cannot be done (a key that
    /// is not a str, a namespace that is not a dict, version tags exhausted).
    pub fn record(
        class: &PyTypeRef,
        by_entries: impl Fn(&PyTypeRef) -> bool,
        vm: &VirtualMachine,
    ) -> Option<ClassEntries> {
        let mro = class.mro_collect();
        let mut out = Vec::with_capacity(mro.len());
        for k in mro {
            let state = if by_entries(&k) {
                let n = namespace_len(&k)?;
                let mut entries = Vec::with_capacity(n);
                for (key, value) in k.attributes.entries() {
                    let name = key.downcast_ref::<rustpython_vm::builtins::PyStr>()?;
                    let name = vm.ctx.interned_str(name)?;
                    let entry = if is_data(&value, vm) {
                        Entry::Data
                    } else {
                        Entry::Is(value.into())
                    };
                    entries.push((name, entry));
                }
                Class::Entries(n, entries)
            } else {
                match k.version_for_specialization(vm) {
                    0 => return None,
                    tag => Class::Version(tag),
                }
            };
            out.push((k.into(), state));
        }
        Some(ClassEntries { mro: out })
    }

    /// Whether `v` is a class that still holds what was recorded.
    pub fn holds(&self, v: &PyObject, vm: &VirtualMachine) -> bool {
        let Some(t) = v.downcast_ref::<PyType>() else {
            return false;
        };
        let mro = t.mro.read();
        mro.len() == self.mro.len()
            && mro.iter().zip(&self.mro).all(|(k, (want, state))| {
                want.is(k.as_object())
                    && match state {
                        Class::Version(tag) => {
                            k.tp_version_tag.load(std::sync::atomic::Ordering::Acquire) == *tag
                        }
                        Class::Entries(n, entries) => {
                            namespace_len(k) == Some(*n)
                                && entries
                                    .iter()
                                    .all(|(name, e)| match k.attributes.get(name) {
                                        Some(v) => match e {
                                            Entry::Data => is_data(&v, vm),
                                            Entry::Is(o) => o.is(&v),
                                        },
                                        None => false,
                                    })
                        }
                    }
            })
    }
}

impl ClassEntries {
    /// Every object the record compares by identity: the classes of the MRO, the entries.
    pub fn idents_mut(&mut self, f: &mut impl FnMut(&mut Ident)) {
        for (class, state) in &mut self.mro {
            f(class);
            if let Class::Entries(_, entries) = state {
                for (_, e) in entries {
                    if let Entry::Is(o) = e {
                        f(o);
                    }
                }
            }
        }
    }

    /// What `v` shows of the first difference from the record (for a failing guard's report).
    pub fn difference(&self, v: &PyObject, vm: &VirtualMachine) -> String {
        let Some(t) = v.downcast_ref::<PyType>() else {
            return format!("a {}", v.class().name());
        };
        let mro = t.mro.read();
        if mro.len() != self.mro.len()
            || mro
                .iter()
                .zip(&self.mro)
                .any(|(k, (w, _))| !w.is(k.as_object()))
        {
            return format!("{} with other bases", t.name());
        }
        for (k, (_, state)) in mro.iter().zip(&self.mro) {
            match state {
                Class::Version(tag) => {
                    let now = k.tp_version_tag.load(std::sync::atomic::Ordering::Acquire);
                    if now != *tag {
                        return format!("{} at version {now}", k.name());
                    }
                }
                Class::Entries(n, entries) => {
                    if namespace_len(k) != Some(*n) {
                        return format!(
                            "{} with {} entries",
                            k.name(),
                            namespace_len(k).unwrap_or(0)
                        );
                    }
                    for (name, e) in entries {
                        let ok = match (k.attributes.get(name), e) {
                            (Some(v), Entry::Data) => is_data(&v, vm),
                            (Some(v), Entry::Is(o)) => o.is(&v),
                            (None, _) => false,
                        };
                        if !ok {
                            return format!("{}.{} changed", k.name(), name.as_str());
                        }
                    }
                }
            }
        }
        "it unchanged".to_owned()
    }
}

impl fmt::Display for ClassEntries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .mro
            .iter()
            .map(|(k, state)| match state {
                Class::Version(tag) => format!("{} at version {tag}", k.class_name()),
                Class::Entries(n, _) => format!("{} with its {n} entries", k.class_name()),
            })
            .collect();
        write!(f, "{}", parts.join(", "))
    }
}
