//! A guard set compiled for the code object it guards, so that a cache hit costs little: two
//! flat loops. The first reads each distinct source once, parents first (`L['layers'][0]` once
//! for the guards of `L['layers'][0][0]` and `L['layers'][0][1]`); locals are borrowed from
//! their slots and tuple items from their tuples, so most reads cost no reference-count
//! traffic (atomic with `threading`). The second runs every check on the values read.
//!
//! A dictionary read (a global, a builtin, a module attribute, a key) remembers where it found
//! its key last time and tries that entry first, and a key found absent stays known absent
//! while the dictionary's key set keeps its version stamp: no hashing, no probing on a hit.
//! An `is obj` check of an entry (a global or builtin function, a module, a module's
//! function) reads nothing while the dictionary keeps the values stamp it had when it last
//! held `obj` there (`PyDict::values_version`, which any write ends): one load, no lock, no
//! reference count. The tiny MLP's 22 guards: 1.21 → 1.11 µs a call. A module's attributes
//! are read from its dictionary as the program holds it (a module's `__dict__` is read-only),
//! not through `PyObject::dict`'s reference: the tiny MLP 2.4% faster (median of 12 paired runs).
//! The program only says whether all guards hold; naming the first failing one, on a miss,
//! reads the sources again in guard order (`Guard::holds`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

use rustpython_vm::builtins::{
    PyCode, PyDict, PyFunction, PyInt, PyIntRef, PyStrInterned, PyTuple, PyType,
};
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::{AsObject, Py, PyObject, PyObjectRef, PyPayload, VirtualMachine};
use smallvec::SmallVec;

use crate::tensor::Meta;
use crate::tensor::PyTensor;
use crate::translate::guards::guard::{Check, Guard};
use crate::translate::guards::ident::Ident;
use crate::translate::source::{CompiledRead, Source, builtins_dict, dict_storage};

#[derive(Debug)]
struct Node {
    source: Source,
    read: CompiledRead,
    /// The node this one reads from (an earlier one), or none for a read from the frame.
    parent: Option<usize>,
    /// For a dictionary read: where the key was found last time.
    hint: AtomicU16,
    /// For a dictionary read: the key-set stamp of a dictionary the key was absent from.
    absent_in: AtomicU32,
    /// For a dictionary read whose only check is `is obj`, and whose children (if any) are
    /// such reads too (a module, then the functions read from it): that object. Its entry is
    /// then compared in place, without taking a reference to the value (two atomic operations
    /// fewer), and the node's value is `obj` itself.
    expect: Option<Ident>,
    /// For an `expect` node: the values stamp (`PyDict::values_version`) of the dictionary
    /// last found to hold `obj` at the key, or 0. While the dictionary keeps that stamp, no
    /// write has happened since, and the check needs no read at all.
    stamp: AtomicU64,
    /// How many times `stamp` was taken: a dictionary written between most calls (a script's
    /// globals under a loop at module level) stops being stamped after `MAX_STAMPS`.
    stamps_taken: AtomicU16,
    /// For an attribute read from a module that a guard compares the parent with: that module
    /// and its dictionary. A module's `__dict__` cannot be replaced (it is read-only), so
    /// while the parent's value is that module, the attribute is read from the dictionary
    /// held here, without the two atomic operations of `PyObject::dict` (a reference taken,
    /// then let go).
    module_dict: Option<(Ident, ModuleDict)>,
    /// For a local of the frame: the class a check requires it to be, checked as soon as it
    /// is read. The entries of one code object made for other classes (`Module.__call__`
    /// has one per module class called) are turned down then, before the rest is read.
    early_type: Option<Ident>,
}

/// A module's dictionary, held through the module: valid while the module is alive, which a
/// read checks first (the module is compared with the node's parent). Held as an address so
/// that the program does not keep the module's contents alive.
#[derive(Debug)]
struct ModuleDict(usize);

impl ModuleDict {
    fn of(dict: &Py<PyDict>) -> Self {
        ModuleDict(dict as *const Py<PyDict> as usize)
    }

    /// # Safety
    /// The module it was taken from must be alive.
    unsafe fn get(&self) -> &Py<PyDict> {
        // SAFETY: see the contract: a module's `__dict__` is read-only, so it lives as long.
        unsafe { &*(self.0 as *const Py<PyDict>) }
    }
}

/// See `Node::stamps_taken`.
const MAX_STAMPS: u16 = 16;

#[derive(Debug)]
pub struct GuardProgram {
    /// Distinct sources, each after its parent.
    nodes: Vec<Node>,
    checks: Checks,
    /// Per node: its value, once read, lives as long as the frame and the `GuardReads` it was
    /// read into, not only as long as this program (it is not an object the program holds,
    /// nor borrowed from one). Only such values may be used after the program is let go.
    anchored: Vec<bool>,
}

/// What one run of a guard program read, per node: the value or null. A cache hit hands the
/// values of its graph's inputs on to the graph (`GuardProgram::input_node`), so that the
/// inputs the guards have just read are not read again.
pub struct GuardReads<'f> {
    /// Values read out of a list or a dictionary, held until the reads are dropped.
    owned: SmallVec<[PyObjectRef; 16]>,
    /// Each points to an object kept alive by the frame (borrowed for `'f`), by `owned`, by a
    /// tuple that is itself kept alive so (a tuple's items never change), or, for a node that
    /// is not anchored, by the program.
    values: SmallVec<[*const PyObject; 24]>,
    frame: std::marker::PhantomData<&'f PyObject>,
}

impl Default for GuardReads<'_> {
    fn default() -> Self {
        GuardReads {
            owned: SmallVec::new(),
            values: SmallVec::new(),
            frame: std::marker::PhantomData,
        }
    }
}

impl<'f> GuardReads<'f> {
    /// The value node `n` was read to (`None`: absent, unreadable, or not read).
    ///
    /// # Safety
    /// Unless the node is anchored (`GuardProgram::input_node` gives only anchored ones), the
    /// program that read it must still be alive.
    pub unsafe fn get(&self, n: usize) -> Option<&PyObject> {
        // SAFETY: see `values` and the contract above.
        self.values.get(n).and_then(|v| unsafe { v.as_ref() })
    }
}

/// The checks, each with the node it checks, in one list per kind: each list is a tight loop
/// with nothing to dispatch on. Dispatching every check on its kind (an indirect jump that the
/// processor mispredicts when the kinds alternate) cost more than the checks themselves.
/// The answer does not depend on the order: all must hold.
#[derive(Debug, Default)]
struct Checks {
    type_is: Vec<(usize, Ident)>,
    is: Vec<(usize, Ident)>,
    len: Vec<(usize, usize)>,
    tensor: Vec<(usize, u32, Meta)>,
    /// An exact int equal to this one (the same object, or the same value).
    eq_int: Vec<(usize, PyIntRef)>,
    absent: Vec<usize>,
    version: Vec<(usize, u32)>,
    /// A dict's keys, exactly; the stamp of a dict last found to have them (0: none yet).
    keys: Vec<(usize, Vec<String>, AtomicU32)>,
    /// Two nodes give the same object (`true`) or different ones (`false`).
    same: Vec<(usize, usize, bool)>,
    /// Nodes that give pairwise distinct objects.
    distinct: Vec<Vec<usize>>,
    /// The rarer ones (constants), dispatched.
    other: Vec<(usize, Check)>,
}

impl Checks {
    /// `other`: the nodes of the sources a relation (`SameAs`, `NotSameAs`, `Distinct`)
    /// compares with.
    fn push(&mut self, n: usize, check: &Check, other: &[usize], vm: &VirtualMachine) {
        match check {
            Check::Distinct(_) => self
                .distinct
                .push(std::iter::once(n).chain(other.iter().copied()).collect()),
            Check::EqInt(i) => self.eq_int.push((n, vm.ctx.new_int(*i))),
            Check::SameAs(_) | Check::NotSameAs(_) => {
                self.same
                    .push((n, other[0], matches!(check, Check::SameAs(_))))
            }
            Check::Keys(keys) => self.keys.push((n, keys.clone(), AtomicU32::new(0))),
            Check::TypeIs(t) => self.type_is.push((n, t.clone())),
            Check::Is(o) => self.is.push((n, o.clone())),
            Check::Len(len) => self.len.push((n, *len)),
            Check::Tensor(meta, id) => self.tensor.push((n, *id, meta.clone())),
            Check::Absent => self.absent.push(n),
            Check::Version(tag) => self.version.push((n, *tag)),
            other => self.other.push((n, other.clone())),
        }
    }

    /// Drop the type checks that another check of the same value implies: an int compared by
    /// value is checked to be exactly an int, a tensor's metadata to be exactly a tensor.
    fn drop_implied_types(&mut self, vm: &VirtualMachine) {
        let int = vm.ctx.types.int_type;
        // The tensor type exists once a tensor check does (not before symtrace is imported).
        let tensor = (!self.tensor.is_empty()).then(|| PyTensor::class(&vm.ctx));
        let (eq_int, tensors) = (&self.eq_int, &self.tensor);
        self.type_is.retain(|(n, t)| {
            let implied = (t.is(int.as_object()) && eq_int.iter().any(|(m, _)| m == n))
                || (tensor.is_some_and(|c| t.is(c.as_object()))
                    && tensors.iter().any(|(m, _, _)| m == n));
            !implied
        });
    }

    /// Whether all hold of `values` (per node, its value or null; see `all_hold`).
    fn all_hold(&self, values: &[*const PyObject], vm: &VirtualMachine) -> bool {
        // SAFETY: each value is null or points to an object kept alive by the caller.
        let value = |n: usize| unsafe { values[n].as_ref() };
        self.type_is
            .iter()
            .all(|(n, t)| value(*n).is_some_and(|v| t.is(v.class().as_object())))
            && self
                .is
                .iter()
                .all(|(n, o)| value(*n).is_some_and(|v| o.is(v)))
            && self.eq_int.iter().all(|(n, want)| {
                value(*n).is_some_and(|v| {
                    v.is(want)
                        || (v.class().is(vm.ctx.types.int_type)
                            && v.downcast_ref::<PyInt>()
                                .is_some_and(|x| x.as_bigint() == want.as_bigint()))
                })
            })
            && self.tensor.iter().all(|(n, id, meta)| {
                value(*n)
                    .and_then(|v| v.downcast_ref_if_exact::<PyTensor>(vm))
                    .is_some_and(|t| t.has_meta(*id, meta))
            })
            && self
                .len
                .iter()
                .all(|(n, len)| value(*n).is_some_and(|v| Check::len_of(v, vm) == Some(*len)))
            && self.absent.iter().all(|n| value(*n).is_none())
            && self.version.iter().all(|(n, tag)| {
                value(*n)
                    .and_then(|v| v.downcast_ref::<PyType>())
                    .is_some_and(|t| t.tp_version_tag.load(Ordering::Acquire) == *tag)
            })
            && self
                .same
                .iter()
                .all(|(n, m, same)| match (value(*n), value(*m)) {
                    // Two tensors that view one tensor's elements are not apart.
                    (Some(a), Some(b)) if !*same => !crate::tensor::object::shares_elements(a, b),
                    (Some(a), Some(b)) => a.is(b),
                    _ => false,
                })
            && self.distinct.iter().all(|nodes| {
                let pointers: Option<Vec<*const PyObject>> = nodes
                    .iter()
                    .map(|n| value(*n).map(|v| v as *const PyObject))
                    .collect();
                pointers.is_some_and(crate::translate::guards::guard::pairwise_distinct)
            })
            && self.keys.iter().all(|(n, keys, stamp)| {
                value(*n)
                    .and_then(|v| v.downcast_ref::<PyDict>())
                    .is_some_and(|d| {
                        if keys.is_empty() {
                            // A call's `**kwargs`, a new dict every call: its length says all,
                            // where a stamp would be taken for a dict never seen again.
                            return d.__len__() == 0;
                        }
                        let known = stamp.load(Ordering::Relaxed);
                        if known != 0 && d.keys_version() == known {
                            return true;
                        }
                        let has = crate::translate::guards::guard::dict_has_keys(d, keys, vm);
                        if has {
                            // The stamp taken now attests the keys compared, unless they
                            // changed between the two reads (then it is 0 or another).
                            let now = d.assign_keys_version(vm);
                            if crate::translate::guards::guard::dict_has_keys(d, keys, vm) {
                                stamp.store(now, Ordering::Relaxed);
                            }
                        }
                        has
                    })
            })
            && self
                .other
                .iter()
                .all(|(n, check)| check.holds(value(*n), vm))
    }
}

impl GuardProgram {
    pub fn new(guards: &[Guard], code: &Py<PyCode>, vm: &VirtualMachine) -> Self {
        let mut program = GuardProgram {
            nodes: Vec::new(),
            checks: Checks::default(),
            anchored: Vec::new(),
        };
        let mut index = HashMap::new();
        let mut checked = Vec::with_capacity(guards.len());
        for guard in guards {
            let n = program.add(&guard.source, code, vm, &mut index);
            let other: Vec<usize> = match &guard.check {
                Check::SameAs(o) | Check::NotSameAs(o) => {
                    vec![program.add(o, code, vm, &mut index)]
                }
                Check::Distinct(others) => others
                    .iter()
                    .map(|o| program.add(o, code, vm, &mut index))
                    .collect(),
                _ => Vec::new(),
            };
            program.checks.push(n, &guard.check, &other, vm);
            checked.push((n, &guard.check));
        }
        program.checks.drop_implied_types(vm);
        // Children come after their parents: from the last node back, each node's children
        // are settled when it is.
        for n in (0..program.nodes.len()).rev() {
            let children_expected = program
                .nodes
                .iter()
                .filter(|c| c.parent == Some(n))
                .all(|c| c.expect.is_some());
            let mut checks = checked.iter().filter(|(m, _)| *m == n).map(|(_, c)| *c);
            let expect = match (checks.next(), checks.next()) {
                (Some(Check::Is(obj)), None) => Some(obj.clone()),
                _ => None,
            };
            let dict_read = matches!(
                program.nodes[n].read,
                CompiledRead::Global(_)
                    | CompiledRead::Builtin(_)
                    | CompiledRead::Attr(_)
                    | CompiledRead::Key(_)
                    | CompiledRead::FnGlobal(_)
            );
            if dict_read && children_expected {
                program.nodes[n].expect = expect;
            }
        }
        // An attribute of a module that a guard compares by identity: see `module_dict`.
        for n in 0..program.nodes.len() {
            let node = &program.nodes[n];
            let module = match (&node.read, node.parent) {
                (CompiledRead::Attr(_), Some(p)) => checked.iter().find_map(|(m, c)| match c {
                    Check::Is(o) => (*m == p)
                        .then(|| o.get())
                        .flatten()
                        .filter(|o| o.class().is(vm.ctx.types.module_type))
                        .map(|m| (o, m)),
                    _ => None,
                }),
                _ => None,
            };
            let dict =
                module.and_then(|(ident, m)| Some((ident.clone(), ModuleDict::of(&*m.dict()?))));
            program.nodes[n].module_dict = dict;
        }
        for (n, check) in &checked {
            if let (Check::TypeIs(t), CompiledRead::Slot(_)) = (check, &program.nodes[*n].read) {
                program.nodes[*n].early_type = Some(t.clone());
            }
        }
        // Parents come first, so each parent's answer is known when its children ask.
        for n in 0..program.nodes.len() {
            let node = &program.nodes[n];
            let own = node.expect.is_none() && !matches!(node.read, CompiledRead::Object);
            let anchored = own && node.parent.is_none_or(|p| program.anchored[p]);
            program.anchored.push(anchored);
        }
        program
    }

    /// The node that reads `source`, if its value outlives the program (see `anchored`).
    pub fn input_node(&self, source: &Source) -> Option<usize> {
        let n = self.nodes.iter().position(|node| node.source == *source)?;
        self.anchored[n].then_some(n)
    }

    fn add(
        &mut self,
        source: &Source,
        code: &Py<PyCode>,
        vm: &VirtualMachine,
        index: &mut HashMap<Source, usize>,
    ) -> usize {
        if let Some(&i) = index.get(source) {
            return i;
        }
        let parent = source.parent().map(|p| self.add(p, code, vm, index));
        let read = source.compiled_read(code, vm);
        self.nodes.push(Node {
            source: source.clone(),
            read,
            parent,
            hint: AtomicU16::new(u16::MAX),
            absent_in: AtomicU32::new(0),
            expect: None,
            stamp: AtomicU64::new(0),
            stamps_taken: AtomicU16::new(0),
            module_dict: None,
            early_type: None,
        });
        index.insert(source.clone(), self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    /// Whether every guard holds, with what the guards read left in `reads` (emptied first).
    /// No read runs Python code or fails on a value of an unexpected type (it gives nothing),
    /// so all sources can be read before any check.
    pub fn all_hold<'f>(
        &self,
        frame: &FrameView<'f>,
        vm: &VirtualMachine,
        reads: &mut GuardReads<'f>,
    ) -> bool {
        reads.values.clear();
        reads.owned.clear();
        let GuardReads { owned, values, .. } = reads;
        // One allocation where a module's guards outgrow the inline room, not one per growth
        // (three a call for a small `nn.Sequential`'s 60 nodes).
        if self.nodes.len() > values.capacity() {
            values.reserve_exact(self.nodes.len());
        }
        for node in &self.nodes {
            // SAFETY: see `values`.
            let parent = node.parent.and_then(|p| unsafe { values[p].as_ref() });
            if let Some(expected) = &node.expect {
                let Some(expected) = (unsafe { expected.as_ptr_if_alive().as_ref() }) else {
                    return false;
                };
                let stamp = node.stamp.load(Ordering::Relaxed);
                if stamp != 0 {
                    if node.with_dict(parent, frame, vm, |d| d.values_version()) == Some(stamp) {
                        values.push(expected);
                        continue;
                    }
                    // Written since: compared below, and stamped again (up to `MAX_STAMPS`).
                    node.stamp.store(0, Ordering::Relaxed);
                }
                if let Some(same) = node.value_is(parent, frame, expected, vm) {
                    if !same {
                        return false;
                    }
                    node.take_stamp(parent, frame, expected, vm);
                    values.push(expected);
                    continue;
                }
            }
            let value: *const PyObject = match (&node.read, parent) {
                (CompiledRead::Slot(i), _) => frame.local_ref(*i).map_or(std::ptr::null(), |v| v),
                // A class is kept alive by its instance, the object by the source.
                (CompiledRead::TypeOf, Some(p)) => p.class().as_object(),
                (CompiledRead::Object, _) => match &node.source {
                    Source::Object(o) => o.0.as_ptr_if_alive(),
                    _ => std::ptr::null(),
                },
                (CompiledRead::Item(i), Some(p)) if p.downcast_ref::<PyTuple>().is_some() => p
                    .downcast_ref::<PyTuple>()
                    .and_then(|t| t.as_slice().get(*i))
                    .map_or(std::ptr::null(), |x| &**x),
                _ => match node.read_owned(parent, frame, vm) {
                    Some(v) => {
                        let ptr: *const PyObject = &*v;
                        owned.push(v);
                        ptr
                    }
                    None => std::ptr::null(),
                },
            };
            if let Some(t) = &node.early_type
                // SAFETY: see `values`.
                && unsafe { value.as_ref() }.is_some_and(|v| !t.is(v.class().as_object()))
            {
                return false;
            }
            values.push(value);
        }
        self.checks.all_hold(values, vm)
    }
}

impl Node {
    /// Whether this dictionary read gives `expected`, asked at the entry where its key was
    /// found last time; `None` when that entry no longer holds the key (the caller reads the
    /// value as usual, which finds the key's new entry).
    fn value_is(
        &self,
        parent: Option<&PyObject>,
        frame: &FrameView<'_>,
        expected: &PyObject,
        vm: &VirtualMachine,
    ) -> Option<bool> {
        let hint = self.hint.load(Ordering::Relaxed);
        if hint == u16::MAX {
            return None;
        }
        let key = match &self.read {
            CompiledRead::Global(k)
            | CompiledRead::Builtin(k)
            | CompiledRead::Attr(k)
            | CompiledRead::Key(k)
            | CompiledRead::FnGlobal(k) => *k,
            _ => return None,
        };
        self.with_dict(parent, frame, vm, |d| {
            d.hinted_value_is(key, hint, expected, vm)
        })
        .flatten()
    }

    /// `f` of the dictionary this node reads from, if it reads from one.
    fn with_dict<R>(
        &self,
        parent: Option<&PyObject>,
        frame: &FrameView<'_>,
        vm: &VirtualMachine,
        f: impl FnOnce(&Py<PyDict>) -> R,
    ) -> Option<R> {
        match (&self.read, parent) {
            (CompiledRead::Global(_), _) => Some(f(frame.globals())),
            (CompiledRead::Builtin(_), _) => frame.builtins().downcast_ref::<PyDict>().map(f),
            (CompiledRead::Attr(_), Some(p)) => match &self.module_dict {
                // SAFETY: the module is alive: it is the parent's value.
                Some((module, dict)) if module.is(p) => Some(f(unsafe { dict.get() })),
                _ => p.dict().map(|d| f(&d)),
            },
            (CompiledRead::Key(_), Some(p)) => dict_storage(p, vm).map(f),
            (CompiledRead::FnGlobal(_), Some(p)) => p
                .downcast_ref::<PyFunction>()
                .map(|func| f(func.globals_dict())),
            _ => None,
        }
    }

    /// Remember the values stamp of the dictionary that has just been found to hold
    /// `expected` at this node's key, if it still holds it under that stamp (taken first, so
    /// that a write after the comparison resets it).
    #[cold]
    fn take_stamp(
        &self,
        parent: Option<&PyObject>,
        frame: &FrameView<'_>,
        expected: &PyObject,
        vm: &VirtualMachine,
    ) {
        if self.stamps_taken.load(Ordering::Relaxed) >= MAX_STAMPS {
            return;
        }
        self.stamps_taken.fetch_add(1, Ordering::Relaxed);
        let Some(stamp) = self.with_dict(parent, frame, vm, |d| d.assign_values_version(vm)) else {
            return;
        };
        if stamp != 0
            && self.value_is(parent, frame, expected, vm) == Some(true)
            && self.with_dict(parent, frame, vm, |d| d.values_version()) == Some(stamp)
        {
            self.stamp.store(stamp, Ordering::Relaxed);
        }
    }

    /// The value this node reads to from its parent's value (or, for a root, from the frame).
    fn read_owned(
        &self,
        parent: Option<&PyObject>,
        frame: &FrameView<'_>,
        vm: &VirtualMachine,
    ) -> Option<PyObjectRef> {
        match (&self.read, parent) {
            (CompiledRead::Slot(i), _) => frame.local_ref(*i).map(|v| v.to_owned()),
            (CompiledRead::CellSlot(i), _) => frame.local_value(*i),
            (CompiledRead::Unbound, _) => None,
            (CompiledRead::Global(k), _) => self.dict_read(frame.globals(), k, vm),
            (CompiledRead::Builtin(k), _) => match frame.builtins().downcast_ref::<PyDict>() {
                Some(d) => self.dict_read(d, k, vm),
                None => self.dict_read(&*builtins_dict(frame)?, k, vm),
            },
            (CompiledRead::Object, _) => self.source.read(None, frame, vm),
            (CompiledRead::General, None) if self.parent.is_none() => {
                self.source.read(None, frame, vm)
            }
            (CompiledRead::TypeOf, Some(p)) => Some(p.class().to_owned().into()),
            (CompiledRead::InstanceDict, Some(p)) => p.dict().map(Into::into),
            (_, None) => None,
            (CompiledRead::Attr(k), Some(_)) => self
                .with_dict(parent, frame, vm, |d| self.dict_read(d, k, vm))
                .flatten(),
            (CompiledRead::Item(i), Some(p)) => crate::translate::source::item(p, *i, vm),
            (CompiledRead::Key(k), Some(p)) => self.dict_read(dict_storage(p, vm)?, k, vm),
            (CompiledRead::FnGlobal(k), Some(p)) => {
                self.dict_read(p.downcast_ref::<PyFunction>()?.globals_dict(), k, vm)
            }
            (CompiledRead::General, Some(p)) => self.source.read(Some(&p.to_owned()), frame, vm),
        }
    }

    /// `d[key]`, or `None` when absent, trying the remembered entry or absence first.
    fn dict_read(
        &self,
        d: &Py<PyDict>,
        key: &'static PyStrInterned,
        vm: &VirtualMachine,
    ) -> Option<PyObjectRef> {
        let absent_in = self.absent_in.load(Ordering::Relaxed);
        if absent_in != 0 && d.keys_version() == absent_in {
            return None;
        }
        // A subclass's entries are read from its storage: its `__getitem__` and
        // `__missing__` (a `defaultdict`'s, which stores) are Python's, not a guard's.
        let found = if d.class().is(vm.ctx.types.dict_type) {
            d.get_item_opt_refresh_hint(key, self.hint.load(Ordering::Relaxed), vm)
        } else {
            d.inner_getitem_opt(key, vm).map(|v| v.map(|v| (v, None)))
        };
        match found {
            Ok(Some((value, new_hint))) => {
                if let Some(h) = new_hint {
                    self.hint.store(h, Ordering::Relaxed);
                }
                Some(value)
            }
            Ok(None) => {
                // Remembered only if the key is still absent under the stamp taken now: a key
                // inserted since the lookup reset the stamp, or is found by the second one.
                let stamp = d.assign_keys_version(vm);
                if stamp != 0
                    && matches!(d.inner_getitem_opt(key, vm), Ok(None))
                    && d.keys_version() == stamp
                {
                    self.absent_in.store(stamp, Ordering::Relaxed);
                }
                None
            }
            Err(_) => None,
        }
    }
}
