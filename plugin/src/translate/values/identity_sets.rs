//! Objects of the caller held in a set by identity: a module in the `memo` of
//! `named_modules`, a parameter in the set that drops repeated ones. The set made in the
//! simulation holds the objects themselves (their hash is their identity, so the set's
//! answers are the interpreter's own), and the simulation remembers the source of each.
//!
//! What the answers rely on is which sources give one object: a source that gives an object
//! already held is guarded to be the source it was first read from (`SameAs`); the first
//! sources of all such objects are guarded pairwise distinct, by one `Distinct` check at the
//! end of the translation (a relation per pair would be quadratic in the modules of a
//! model). Identities are not pinned: another model of the same classes hits the same entry.

use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;

/// Whether a set holds `o` by its identity: its class hashes and compares as `object` does
/// (a user class that defines neither), or hashes as `object` does and is a tensor (whose
/// `==` a set never calls: equal hashes are one object).
pub fn hashes_by_identity(o: &PyObjectRef, vm: &VirtualMachine) -> bool {
    let class = o.class();
    let inherited = |name: &str| {
        let object_slot = vm.ctx.types.object_type.get_attr(vm.ctx.intern_str(name));
        match (class.get_attr(vm.ctx.intern_str(name)), object_slot) {
            (Some(a), Some(b)) => a.is(&b),
            _ => false,
        }
    };
    let user = class
        .slots
        .flags
        .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE);
    let tensor = o.downcast_ref::<crate::tensor::PyTensor>().is_some();
    (user || tensor) && inherited("__hash__") && (tensor || inherited("__eq__"))
}

impl State<'_> {
    /// What a set of the simulation's holds for `v`: a plain value, or an object of the
    /// caller's held by identity (remembered, with the source it came from).
    pub fn set_element(&mut self, set: Option<&PyObjectRef>, v: &Var) -> SimResult<PyObjectRef> {
        let vm = self.vm;
        // A class (`{list, tuple}`, `type(v)`): a plain value to a set, fixed by its guard.
        if let Some(class) = self.plain_class(v) {
            return Ok(class);
        }
        let identity = match v {
            Var::Lazy(o, source) if hashes_by_identity(o, vm) => Some((o, source)),
            _ => None,
        };
        // Plain values and objects held by identity are not mixed: a plain value's hash
        // could equal an object's, and then `==` would run between them.
        if let Some(set) = set {
            let held = vm.extract_elements_with(set, Ok).map_err(|_| {
                crate::translate::state::Unsupported::new(Kind::Internal, "a set's items")
            })?;
            if held
                .iter()
                .any(|h| self.identity_source(h).is_some() != identity.is_some())
            {
                return unsupported(
                    Kind::Value,
                    "a set of plain values and objects held by identity",
                );
            }
        }
        let Some((o, source)) = identity else {
            return self.plain_obj(v, "a set element");
        };
        let class = o.class().to_owned();
        self.guard(source, Check::type_is(class.clone()));
        if class
            .slots
            .flags
            .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE)
        {
            // Its class keeps hashing and comparing as `object` does.
            self.guard_class(Source::object(class.clone().into()), &class)?;
        }
        match self.identity_source(o) {
            Some(first) if first != *source => self.guard(source, Check::SameAs(first)),
            Some(_) => {}
            None => self.identities.push((o.clone(), source.clone())),
        }
        Ok(o.clone())
    }

    /// The source an object held by identity was first read from.
    pub fn identity_source(&self, o: &PyObjectRef) -> Option<Source> {
        self.identities
            .iter()
            .find(|(x, _)| x.is(o))
            .map(|(_, s)| s.clone())
    }

    /// An item of a set of the simulation's, as the simulation holds it.
    pub fn set_member(&self, o: PyObjectRef) -> Var {
        match self.identity_source(&o) {
            Some(source) => Var::Lazy(o, source),
            None => Var::Obj(o),
        }
    }

    /// Whether the set `s` holds objects by identity (it is then no plain value).
    pub fn holds_identities(&self, s: &PyObjectRef) -> bool {
        self.vm
            .extract_elements_with(s, Ok)
            .is_ok_and(|items: Vec<PyObjectRef>| {
                items.iter().any(|i| self.identity_source(i).is_some())
            })
    }

    /// The guard the answers of sets holding objects by identity rely on (see the module's
    /// comment): added once the translation is done.
    pub fn distinct_identities_guard(&mut self) {
        if let [(_, first), rest @ ..] = self.identities.as_slice()
            && !rest.is_empty()
        {
            let others = rest.iter().map(|(_, s)| s.clone()).collect();
            let guard =
                crate::translate::guards::guard::Guard::new(first.clone(), Check::Distinct(others));
            log::trace!(target: crate::log_targets::GUARDS, "{guard}");
            self.guards.push(guard);
        }
    }
}
