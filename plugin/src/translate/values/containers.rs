//! Containers: subscripts of tuples, lists and dicts (made during the simulation, or read
//! from the frame), item stores and deletes (on the caller's: side effects), iteration and
//! the entries of mappings.

use rustpython_vm::builtins::{PyInt, PySlice};
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, is_dict, unsupported};
use crate::translate::values::caller_dicts::CallerKey;
use crate::translate::values::dict_arguments::has_keys;
use crate::translate::values::dict_subclasses::dict_method_is_dicts;
use crate::translate::values::list_methods::{list_position, slice_positions, store_slice};
use crate::translate::values::objects::python_method;
use crate::translate::values::{Var, is_plain};

impl State<'_> {
    pub(super) fn subscript(&mut self, a: &Var, b: &Var) -> SimResult<Var> {
        let vm = self.vm;
        match a {
            Var::Tuple(_) | Var::List(_) => {
                let items = self.items(a)?;
                let key = self.plain_obj(b, "an index")?;
                self.item_of(&items, &key, matches!(a, Var::List(_)))
            }
            Var::Dict(d) => {
                let key = self.key(b)?;
                if let Some(v) = crate::translate::values::dict_entry(d, &key, vm) {
                    return Ok(v);
                }
                // A defaultdict makes the missing value with its factory, and keeps it.
                match self.dict_kind(d) {
                    Some((_, Some(factory))) if !matches!(&factory, Var::Obj(o) if vm.is_none(o)) =>
                    {
                        let v = self.invoke(&factory, Vec::new(), Vec::new())?;
                        crate::translate::values::dict_insert(
                            &mut d.borrow_mut(),
                            key,
                            v.clone(),
                            vm,
                        )?;
                        Ok(v)
                    }
                    _ => self.raise_native(
                        vm.ctx.exceptions.key_error,
                        vec![b.clone()],
                        "a missing key (KeyError)".to_owned(),
                    ),
                }
            }
            Var::Deque(d) => self.deque_item(d, b),
            Var::NamedTuple(_, items) => {
                let key = self.plain_obj(b, "an index")?;
                self.item_of(items, &key, false)
            }
            Var::Lazy(o, source) if is_dict(o, vm) => {
                let k = self.caller_key(b, "a dictionary read")?;
                match self.caller_dict_read(o, source, &k)? {
                    Some(v) => Ok(v),
                    None => self.caller_dict_missing(a, o, source, b, k.shown()),
                }
            }
            // Tuples, lists and named tuples: the items lazy_items guards.
            Var::Lazy(o, source) if self.lazy_items(o, source)?.is_some() => {
                let items = self.lazy_items(o, source)?.expect("a sequence");
                let key = self.plain_obj(b, "an index")?;
                self.item_of(&items, &key, o.class().is(vm.ctx.types.list_type))
            }
            _ if let Some(r) = self.call_dunder(a, "__getitem__", vec![b.clone()])? => Ok(r),
            _ => {
                let tensors = self.is_tensor(a) || self.is_tensor(b);
                if self.is_tensor(a) && self.mask_among_indices(b) {
                    return unsupported(
                        Kind::DataDependent,
                        "a bool mask among other indices selects a data-dependent set of elements",
                    );
                }
                if self.is_tensor(a)
                    && self.is_fake(b)
                    && self.tensor_dtype(b) == Some(crate::tensor::DType::Bool)
                {
                    return unsupported(
                        Kind::DataDependent,
                        "a bool mask computed in the graph selects a data-dependent number of elements",
                    );
                }
                let fakes = self.is_fake(a) || self.is_fake(b);
                let (x, y) = (self.obj(a)?, self.obj(b)?);
                if !tensors && (!is_plain(&x, vm) || !is_plain(&y, vm)) {
                    return unsupported(
                        Kind::Value,
                        format!("subscript of a {}", x.class().name()),
                    );
                }
                self.native_result(x.get_item(&*y, vm), fakes, "indexing")
            }
        }
    }

    /// `items[key]` of a list's or a tuple's items; an int out of range raises IndexError as
    /// Python's does (a handler of the frame may catch it: `try: y = xs[3] except IndexError:`).
    fn item_of(&mut self, items: &[Var], key: &PyObjectRef, list: bool) -> SimResult<Var> {
        let r = index_items(items, key, list, self.vm);
        match &r {
            Err(e) if e.kind == Kind::Raises && key.downcast_ref::<PyInt>().is_some() => {
                let what = if list { "list" } else { "tuple" };
                let message = format!("{what} index out of range");
                let arg = Var::Obj(self.vm.ctx.new_str(message.as_str()).into());
                self.raise_native(
                    self.vm.ctx.exceptions.index_error,
                    vec![arg],
                    format!("{message} (IndexError)"),
                )
            }
            _ => r,
        }
    }

    pub fn set_item(&mut self, container: &Var, key: &Var, value: Var) -> SimResult<()> {
        let vm = self.vm;
        if let Some((o, source)) = self.caller_list(container) {
            if self.store_at_changing_index(&o, &source, key, &value)? {
                return Ok(());
            }
            let items = self.shadow_list(&o, &source)?;
            return self.set_item(&Var::List(items), key, value);
        }
        match container {
            Var::List(l) => {
                let k = self.plain_obj(key, "an index")?;
                if k.downcast_ref::<PySlice>().is_some() {
                    let new = self.items(&value)?;
                    return store_slice(&mut l.borrow_mut(), &k, new, vm);
                }
                let mut l = l.borrow_mut();
                let j = list_position(&k, l.len(), vm)?;
                l[j] = value;
                Ok(())
            }
            Var::Dict(d) => {
                let k = self.key(key)?;
                crate::translate::values::dict_insert(&mut d.borrow_mut(), k, value, vm)
            }
            // A caller's dict: replayed as written.
            Var::Lazy(o, source) if is_dict(o, vm) => {
                // A str, an int or a tuple of them (a cache keyed by a shape) is hashed
                // natively; an object of the caller's hashed by identity is loaded from its
                // source by the replay. Reads by the key follow the store.
                let key = match self.identity_key(key)? {
                    Some(_) => key.clone(),
                    // An int that changes per call: the replay computes it (`keyed_stores`).
                    None if let Some(k) = self.changing_key(key) => k,
                    None => {
                        let k = self.plain_obj(key, "a key")?;
                        if crate::translate::source::KeyConst::of(&k, &vm.ctx).is_none() {
                            return unsupported(
                                Kind::Value,
                                "a store into a dict of the caller with a key that is not a str, an int, a tuple of them or an object hashed by identity",
                            );
                        }
                        Var::Obj(k)
                    }
                };
                self.guard(source, Check::type_is(o.class().to_owned()));
                self.effects.mutate(
                    o,
                    Effect::SetItem {
                        target: source.clone(),
                        key,
                        value,
                    },
                );
                Ok(())
            }
            Var::Tensor(t) => self.tensor_setitem(t, key, value),
            // An instance made in the call: its class's `__setitem__` (or its entries').
            Var::Object(_) => {
                match self.call_dunder(container, "__setitem__", vec![key.clone(), value])? {
                    Some(_) => Ok(()),
                    None => unsupported(
                        Kind::Raises,
                        format!(
                            "'{}' object does not support item assignment (TypeError)",
                            container.kind()
                        ),
                    ),
                }
            }
            // A tensor made from constants in the frame (`out = st.zeros(n, k)`): it becomes a
            // graph value, as an in-place update makes it (`before_update`).
            Var::Obj(o) if o.downcast_ref::<PyTensor>().is_some() => {
                let t = o.clone().downcast::<PyTensor>().expect("a tensor");
                self.tensor_setitem(&t, key, value)
            }
            // The caller's tensor: changed through its fake, written back after the graph.
            Var::Lazy(o, _) if o.downcast_ref::<PyTensor>().is_some() => {
                match self.obj(container)?.downcast::<PyTensor>() {
                    Ok(fake) => self.tensor_setitem(&fake, key, value),
                    Err(_) => unsupported(Kind::Internal, "the fake of a tensor"),
                }
            }
            _ => unsupported(
                Kind::SideEffect,
                format!(
                    "item assignment into a {} (a side effect that is not replayed)",
                    container.kind()
                ),
            ),
        }
    }

    /// `slice(start, stop)` of plain values (STORE_SLICE's key).
    pub fn slice_of(&mut self, start: &Var, stop: &Var) -> SimResult<Var> {
        let vm = self.vm;
        let (start, stop) = (
            self.plain_obj(start, "a slice bound")?,
            self.plain_obj(stop, "a slice bound")?,
        );
        let s = vm
            .ctx
            .types
            .slice_type
            .as_object()
            .call((start, stop), vm)
            .map_err(|_| Unsupported::new(Kind::Raises, "slice() raises"))?;
        Ok(Var::Obj(s))
    }

    /// `del container[key]`: in a list or dict made during the simulation, done there; in one
    /// of the caller, a side effect replayed as written (an index out of range, or a missing
    /// key, raises then, at the same point among the effects as it would have).
    pub fn del_item(&mut self, container: &Var, key: &Var) -> SimResult<()> {
        let vm = self.vm;
        if let Some((o, source)) = self.caller_list(container) {
            let items = self.shadow_list(&o, &source)?;
            return self.del_item(&Var::List(items), key);
        }
        match container {
            Var::List(l) => {
                let k = self.plain_obj(key, "an index")?;
                let mut l = l.borrow_mut();
                if k.downcast_ref::<PySlice>().is_some() {
                    let (at, _) = slice_positions(&k, l.len(), vm)?;
                    let mut at = at;
                    at.sort_unstable();
                    for j in at.into_iter().rev() {
                        l.remove(j);
                    }
                    return Ok(());
                }
                let j = list_position(&k, l.len(), vm)?;
                l.remove(j);
                Ok(())
            }
            Var::Dict(d) => {
                let k = self.key(key)?;
                let mut d = d.borrow_mut();
                let at = d
                    .iter()
                    .position(|(k2, _)| vm.bool_eq(k2, &k).unwrap_or(false))
                    .ok_or_else(|| {
                        Unsupported::new(Kind::Raises, "del of a missing key (KeyError)")
                    })?;
                d.remove(at);
                Ok(())
            }
            Var::Object(_) => {
                match self.call_dunder(container, "__delitem__", vec![key.clone()])? {
                    Some(_) => Ok(()),
                    None => unsupported(
                        Kind::Raises,
                        format!(
                            "'{}' object does not support item deletion (TypeError)",
                            container.kind()
                        ),
                    ),
                }
            }
            Var::Lazy(o, source)
                if is_dict(o, vm) && dict_method_is_dicts(o.class(), "__delitem__", vm) =>
            {
                // A str, an int, `None`, a dtype or a tuple of them, or an object of the
                // caller's hashed by identity: followed key by key, as stores are.
                let ck = self.caller_key(key, "a delete from a dict of the caller")?;
                // Replayed after the graph, a delete raises where the replacement replays it:
                // as it would, where no handler covers it. Under a handler it must not raise
                // there (the handler would not see it): that the key is there, after the
                // call's own stores and deletes, is checked now, and guarded.
                if self.under_handler && self.caller_dict_read(o, source, &ck)?.is_none() {
                    return unsupported(
                        Kind::Raises,
                        format!(
                            "del of {source}[{}], which is missing (KeyError)",
                            ck.shown()
                        ),
                    );
                }
                let k = match ck {
                    CallerKey::Object(..) => key.clone(),
                    _ => Var::Obj(self.plain_obj(key, "a key")?),
                };
                self.guard(source, Check::type_is(o.class().to_owned()));
                self.effects.mutate(
                    o,
                    Effect::DelItem {
                        target: source.clone(),
                        key: k,
                    },
                );
                Ok(())
            }
            _ => unsupported(
                Kind::SideEffect,
                format!(
                    "item deletion from a {} (a side effect that is not replayed)",
                    container.kind()
                ),
            ),
        }
    }

    /// The items of an iterable, in order (for loops, unpacking, `*args`).
    pub fn items(&mut self, v: &Var) -> SimResult<Vec<Var>> {
        let vm = self.vm;
        match v {
            Var::Tuple(t) => Ok(t.to_vec()),
            Var::List(l) => Ok(l.borrow().clone()),
            Var::Deque(d) => Ok(d.borrow().items.iter().cloned().collect()),
            Var::Dict(d) => Ok(d
                .borrow()
                .iter()
                .map(|(k, _)| Var::Obj(k.clone()))
                .collect()),
            Var::Iter(it) => Ok(it.borrow_mut().drain(..).collect()),
            Var::Stepper(s) => {
                let mut items = Vec::new();
                while let Some(item) = self.step_iterator(s)? {
                    if items.len() == crate::translate::state::MAX_UNROLL {
                        return unsupported(Kind::Limit, "an iterator of too many items");
                    }
                    items.push(item);
                }
                Ok(items)
            }
            Var::CallerView(view) => {
                let entries = self.lazy_dict_entries(&view.dict, &view.source)?;
                Ok(entries.iter().map(|e| view.kind.of(e)).collect())
            }
            Var::NamedTuple(_, items) => Ok(items.to_vec()),
            Var::TStr(t) => self.tstr_items(t),
            Var::Set(s) => Ok(plain_items(s, vm)?
                .into_iter()
                .map(|i| match i {
                    Var::Obj(o) => self.set_member(o),
                    other => other,
                })
                .collect()),
            Var::Object(_) => Ok(self.instance_items(v)?.expect("an instance")),
            // A tensor the call computed: its rows, as a caller's are read.
            Var::Tensor(_) => self.tensor_rows(v),
            Var::View(d, kind) => Ok(kind.items(d)),
            Var::DictIter(_) => {
                let mut items = Vec::new();
                while let Some(item) = self.next_item(v)? {
                    items.push(item);
                }
                Ok(items)
            }
            Var::Gen(_) => {
                // Consumed whole (by list(), sum(), a starred call...), as it is when run.
                let mut items = Vec::new();
                while let Some(item) = self.next_item(v)? {
                    if items.len() == crate::translate::state::MAX_UNROLL {
                        return unsupported(
                            Kind::Limit,
                            format!(
                                "a generator of more than {} items",
                                crate::translate::state::MAX_UNROLL
                            ),
                        );
                    }
                    items.push(item);
                }
                Ok(items)
            }
            Var::Lazy(o, source) => {
                if let Some(items) = self.lazy_items(o, source)? {
                    return Ok(items);
                }
                if let Some(items) = self.instance_items(v)? {
                    return Ok(items);
                }
                if is_dict(o, vm) {
                    return Ok(self
                        .lazy_dict_entries(o, source)?
                        .into_iter()
                        .map(|(k, _)| crate::translate::values::key_var(&k))
                        .collect());
                }
                if o.downcast_ref::<PyTensor>().is_some() {
                    return self.tensor_rows(v);
                }
                if let Some(members) = self.enum_class_members(o, source)? {
                    return Ok(members);
                }
                let o = self.plain_obj(v, "iteration")?;
                plain_items(&o, vm)
            }
            Var::Obj(o) => {
                if o.class().is(vm.ctx.types.range_type) || is_plain(o, vm) {
                    return plain_items(o, vm);
                }
                // A tuple of classes the call read (`type(p).__mro__`, `__bases__`): classes
                // are held as themselves, fixed with the class they were read from.
                if let Some(classes) = tuple_of_classes(o, vm) {
                    return Ok(classes.into_iter().map(Var::Obj).collect());
                }
                // A tensor made from constants (`i, j = tril_indices(3, 3)`): its rows.
                if o.downcast_ref::<PyTensor>().is_some() {
                    return self.tensor_rows(v);
                }
                // An enum class the call computed (`type(self.mode)`), fixed by its guards.
                if let Some(members) = self.enum_class_members(o, &Source::object(o.clone()))? {
                    return Ok(members);
                }
                unsupported(
                    Kind::Value,
                    format!("iteration over a {}", o.class().name()),
                )
            }
            other => unsupported(Kind::Value, format!("iteration over a {}", other.kind())),
        }
    }

    /// The entries of a mapping (for `**kwargs` and dict updates).
    pub fn dict_entries(&mut self, v: &Var) -> SimResult<Vec<(PyObjectRef, Var)>> {
        let vm = self.vm;
        match v {
            Var::Dict(d) => Ok(d.borrow().clone()),
            Var::Lazy(o, source) if is_dict(o, vm) => self.lazy_dict_entries(o, source),
            // An instance made in the call of a class written on dict, read through dict's
            // own `keys` and `__getitem__`: its entries.
            Var::Object(o)
                if o.entries.is_some()
                    && python_method(&o.class, "keys", vm).is_none()
                    && python_method(&o.class, "__getitem__", vm).is_none() =>
            {
                Ok(o.entries.as_ref().expect("checked").borrow().clone())
            }
            // Any other object with `keys`, read as the interpreter reads a mapping
            // (`merge_object`): `keys()` once, then `m[key]` for each key in its order, each
            // call simulated (an `nn.ModuleDict`, a mapping class of the program's).
            other if has_keys(other, vm) => {
                let keys = self.attr_of(other, "keys")?;
                let keys = self.invoke(&keys, Vec::new(), Vec::new())?;
                // The interpreter steps the keys between the reads: read whole first, they
                // must be what an iterator gives step by step, and unchanged by the reads.
                if matches!(
                    keys,
                    Var::Gen(_) | Var::Iter(_) | Var::Stepper(_) | Var::DictIter(_)
                ) {
                    return unsupported(
                        Kind::Value,
                        "a mapping whose keys() gives an iterator, stepped between its reads",
                    );
                }
                let listed = self.items(&keys)?;
                let mut entries = Vec::new();
                let mut read = Vec::with_capacity(listed.len());
                for k in &listed {
                    let value = self.subscript(other, k)?;
                    let key = self.key(k)?;
                    read.push(key.clone());
                    crate::translate::values::dict_insert(&mut entries, key, value, vm)?;
                }
                let again = self.items(&keys)?;
                let unchanged = again.len() == read.len()
                    && again
                        .iter()
                        .zip(&read)
                        .all(|(k, r)| self.key(k).is_ok_and(|k| k.is(r)));
                if !unchanged {
                    return unsupported(
                        Kind::Value,
                        "a mapping whose keys change while its entries are read",
                    );
                }
                Ok(entries)
            }
            other => unsupported(Kind::Value, format!("a {} used as a mapping", other.kind())),
        }
    }

    /// A dictionary key: a plain value, or a class (`plain_class`: `type(p)`, `int`).
    pub fn key(&mut self, v: &Var) -> SimResult<PyObjectRef> {
        match self.plain_class(v) {
            Some(class) => Ok(class),
            None => self.plain_obj(v, "a dictionary key"),
        }
    }

    /// `v` when it is a class whose metaclass is `type` (hashed and compared by identity, so
    /// a dict or set may hold it beside plain values): one the call computed, or the
    /// caller's, guarded to be it.
    pub fn plain_class(&mut self, v: &Var) -> Option<PyObjectRef> {
        match v {
            Var::Obj(o) if crate::translate::values::is_plain_class(o, &self.vm.ctx) => {
                Some(o.clone())
            }
            Var::Lazy(o, source) if crate::translate::values::is_plain_class(o, &self.vm.ctx) => {
                self.guard(source, Check::is(o.clone()));
                Some(o.clone())
            }
            _ => None,
        }
    }

    /// The rows of a tensor (`for row in t`), each its own indexing op; how many there are
    /// is fixed, by the tensor's guard or by a check of that one size.
    fn tensor_rows(&mut self, t: &Var) -> SimResult<Vec<Var>> {
        let reads = crate::tensor::size_reads::mark();
        let o = self.obj(t)?;
        let n = o
            .downcast_ref::<PyTensor>()
            .expect("a tensor")
            .read()
            .shape()
            .first()
            .copied()
            .ok_or_else(|| {
                Unsupported::new(Kind::Raises, "iteration over a 0-d tensor (TypeError)")
            })?;
        if n > crate::translate::state::MAX_UNROLL {
            return unsupported(Kind::Limit, "iteration over a tensor of too many rows");
        }
        // Of a tensor whose sizes may change per call, the loop reads only the number of
        // rows (`src, dst = edge_index` of an edge list of any length): that size is fixed
        // to this call's, the others stay open. (Making the fake of an input is no read.)
        let varying = match self.symbolic_sizes(t)? {
            Some(sizes) => {
                crate::tensor::size_reads::forget_since(reads);
                self.forced(&sizes[0])?;
                true
            }
            None => false,
        };
        let tensor = match t {
            Var::Lazy(..) => Var::Tensor(o.downcast::<PyTensor>().expect("a tensor")),
            other => other.clone(),
        };
        let rows = (0..n)
            .map(|i| self.subscript(&tensor, &Var::Obj(self.vm.ctx.new_int(i).into())))
            .collect();
        // Each row's index holds its int only, within the fixed first dimension (checked per
        // call, `graph::dynamic`): not a read of the sizes that stay open.
        if varying {
            crate::tensor::size_reads::forget_since(reads);
        }
        rows
    }
}

fn index_items(
    items: &[Var],
    key: &PyObjectRef,
    list: bool,
    vm: &VirtualMachine,
) -> SimResult<Var> {
    if key.downcast_ref::<PyInt>().is_some() {
        return Ok(items[list_position(key, items.len(), vm)?].clone());
    }
    if let Some(s) = key.downcast_ref::<PySlice>() {
        let idx = vm
            .ctx
            .new_list((0..items.len()).map(|i| vm.ctx.new_int(i).into()).collect());
        let picked = idx
            .as_object()
            .get_item(s.as_object(), vm)
            .map_err(|_| Unsupported::new(Kind::Raises, "bad slice"))?;
        let picked: Vec<usize> = vm
            .extract_elements_with(&picked, |o| o.try_index(vm)?.try_to_primitive::<usize>(vm))
            .map_err(|_| Unsupported::new(Kind::Raises, "bad slice"))?;
        let out: Vec<Var> = picked.into_iter().map(|i| items[i].clone()).collect();
        return Ok(if list {
            Var::list(out)
        } else {
            Var::tuple(out)
        });
    }
    unsupported(
        Kind::Value,
        format!("a sequence indexed by a {}", key.class().name()),
    )
}

/// The items of a range or a plain container. Its length is asked first (natively: these
/// types have no Python `__len__`), so that `range(10**9)` is refused before a billion
/// integers are made.
/// The items of `o` when it is exactly a tuple of classes.
fn tuple_of_classes(o: &PyObjectRef, vm: &VirtualMachine) -> Option<Vec<PyObjectRef>> {
    let items = o.downcast_ref::<rustpython_vm::builtins::PyTuple>()?;
    let classes = o.class().is(vm.ctx.types.tuple_type)
        && items.as_slice().iter().all(|c| {
            c.downcast_ref::<rustpython_vm::builtins::PyType>()
                .is_some()
        });
    classes.then(|| items.as_slice().to_vec())
}

fn plain_items(o: &PyObjectRef, vm: &VirtualMachine) -> SimResult<Vec<Var>> {
    let too_long = || {
        unsupported(
            Kind::Limit,
            format!(
                "a loop of more than {} iterations",
                crate::translate::state::MAX_UNROLL
            ),
        )
    };
    match o.length(vm) {
        Ok(n) if n <= crate::translate::state::MAX_UNROLL => {}
        Ok(_) => return too_long(),
        Err(_) => {
            return unsupported(
                Kind::Value,
                format!("iteration over a {} of unknown length", o.class().name()),
            );
        }
    }
    let items: Vec<PyObjectRef> = vm.extract_elements_with(o, Ok).map_err(|_| {
        Unsupported::new(
            Kind::Value,
            format!("iteration over a {}", o.class().name()),
        )
    })?;
    if items.len() > crate::translate::state::MAX_UNROLL {
        return too_long();
    }
    Ok(items.into_iter().map(Var::Obj).collect())
}
