//! A tensor's basic index by sizes that change from call to call (`x[:T]`, `x[:, T - 1]`,
//! `mask[:T, :T]` of a constant mask): its node resolves the index against each call's
//! sizes, as `slice.indices` does; a slice built of such sizes stays symbolic until a
//! tensor is indexed by it.

use std::rc::Rc;

use rustpython_vm::builtins::{PySlice, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef, PyPayload};

use crate::graph::recorder;
use crate::graph::sizes::{SizeExpr, SymAttr, SymIndex};
use crate::tensor::{DType, PyTensor, size_reads};
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;

impl State<'_> {
    /// `t[key]` with sizes that may change in a basic index (`x[:T]`, `x[:, T - 1]`), or of a
    /// tensor whose sizes may: its node resolves the index against each call's sizes, as
    /// `slice.indices` does (`None`: not such an index).
    pub(crate) fn symbolic_getitem(&mut self, t: &Var, key: &Var) -> SimResult<Option<Var>> {
        // A tensor made here from constants (`tril(ones(8, 8))[:T, :T]`) is lifted to a
        // constant node, so that its view by sizes that change is a node that takes them.
        let keyed = match key {
            Var::Tuple(items) => items.iter().any(|i| self.is_symbolic(i)),
            other => self.is_symbolic(other),
        };
        let (t, lifted) = match keyed {
            true => self.in_graph(t)?,
            false => (t.clone(), false),
        };
        let Some((index, key_obj, items)) = self.symbolic_key(&t, key)? else {
            return Ok(None);
        };
        let reads = size_reads::mark();
        let fake = self.obj(&t)?;
        let indexed = match lifted {
            true => recorder::unfolded(|| fake.get_item(&*key_obj, self.vm)),
            false => fake.get_item(&*key_obj, self.vm),
        };
        let r = self.native_result(indexed, true, "indexing")?;
        if self.attach_more(&r, SymAttr::Index(index), &items)? {
            size_reads::forget_since(reads);
        }
        Ok(Some(r))
    }

    /// `t[:, [0, T - 1]]`: a list of ints among which a size or a number that changes per
    /// call, as an index, is the int64 tensor `st.tensor` makes of it (`tensor_of_input`),
    /// so that the index follows each call's numbers instead of fixing them (`None`: no such
    /// list in the key). A list of bools is a mask and one of floats raises: both left.
    pub(crate) fn index_by_number_lists(&mut self, t: &Var, key: &Var) -> SimResult<Option<Var>> {
        let listed = match key {
            Var::Tuple(items) => items.iter().any(|i| matches!(i, Var::List(_))),
            other => matches!(other, Var::List(_)),
        };
        if !listed || !self.is_tensor(t) {
            return Ok(None);
        }
        let int = self.vm.ctx.types.int_type;
        let exact_int = |v: &Var| match v {
            Var::Num(n) => n.value.class().is(int),
            Var::Lazy(o, _) | Var::Obj(o) => o.class().is(int),
            _ => false,
        };
        let (mut items, tupled) = match key {
            Var::Tuple(items) => (items.to_vec(), true),
            other => (vec![other.clone()], false),
        };
        let mut changed = false;
        for item in &mut items {
            let Var::List(l) = &*item else { continue };
            let ints = {
                let l = l.borrow();
                !l.is_empty() && l.iter().all(exact_int)
            };
            if ints
                && let Some(index) =
                    self.tensor_of_input("symtrace.tensor", std::slice::from_ref(item), &[])?
            {
                *item = index;
                changed = true;
            }
        }
        if !changed {
            return Ok(None);
        }
        let key = match tupled {
            true => Var::tuple(items),
            false => items.pop().expect("one item"),
        };
        self.binary(rustpython_vm::bytecode::BinaryOperator::Subscr, t, &key)
            .map(Some)
    }

    /// `t[1:, idx]`, `x[:T, i, None]`: int tensors among basic indices of a tensor whose
    /// sizes may change, or by sizes. The native index resolves the basic part against this
    /// call's sizes, which would fix them; so the key is taken apart as the native index
    /// takes it: the basic index with a full slice at each tensor, symbolic as any other
    /// (`symbolic_getitem`), then the tensors at the dimensions of its result they stand at,
    /// every other dimension whole (`None`: not such a key).
    pub(crate) fn mixed_symbolic_getitem(&mut self, t: &Var, key: &Var) -> SimResult<Option<Var>> {
        let Some((sliced, rest)) = self.mixed_key_split(t, key)? else {
            return Ok(None);
        };
        self.binary(
            rustpython_vm::bytecode::BinaryOperator::Subscr,
            &sliced,
            &rest,
        )
        .map(Some)
    }

    /// `t[1:, idx] = v`: the basic part taken as above, a view of `t` whose node follows each
    /// call's sizes, and the value stored into the view at the tensors, written through to `t`
    /// (`false`: not such a key).
    pub(crate) fn mixed_symbolic_setitem(
        &mut self,
        t: &Var,
        key: &Var,
        value: Var,
    ) -> SimResult<bool> {
        let Some((sliced, rest)) = self.mixed_key_split(t, key)? else {
            return Ok(false);
        };
        let Var::Tensor(part) = &sliced else {
            return Ok(false);
        };
        self.tensor_setitem(&part.clone(), &rest, value)?;
        Ok(true)
    }

    /// The basic part of a mixed key applied to `t` (symbolic), and the rest of the key: the
    /// tensors where they stand in its result.
    fn mixed_key_split(&mut self, t: &Var, key: &Var) -> SimResult<Option<(Var, Var)>> {
        let vm = self.vm;
        let Var::Tuple(items) = key else {
            return Ok(None);
        };
        let advanced = |s: &Self, v: &Var| s.tensor_dtype(v) == Some(DType::Int64);
        if !items.iter().any(|i| advanced(self, i)) || !self.is_fake(t) {
            return Ok(None);
        }
        if !items.iter().any(|i| self.is_symbolic(i)) && self.varying_fake(t)?.is_none() {
            return Ok(None);
        }
        let Some(ndim) = self
            .obj(t)?
            .downcast_ref::<PyTensor>()
            .map(|f| f.read().ndim())
        else {
            return Ok(None);
        };
        let full = || -> Var {
            Var::Obj(
                PySlice {
                    start: None,
                    stop: vm.ctx.none(),
                    step: None,
                }
                .into_pyobject(vm),
            )
        };
        let is_none = |v: &Var| matches!(v, Var::Obj(o) if vm.is_none(o));
        let is_ellipsis = |v: &Var| matches!(v, Var::Obj(o) if o.is(&vm.ctx.ellipsis));
        let is_slice = |v: &Var| {
            matches!(v, Var::SymSlice(_))
                || matches!(v, Var::Obj(o) if o.downcast_ref::<PySlice>().is_some())
        };
        // The dimensions of the basic result each tensor stands at: one per slice, `None` and
        // tensor before it, none per int, and what `...` spans.
        let consumed = items
            .iter()
            .filter(|i| !is_none(i) && !is_ellipsis(i))
            .count();
        let mut basic = Vec::with_capacity(items.len());
        let mut taken: Vec<(usize, Var)> = Vec::new();
        let mut dim = 0;
        for item in items.iter() {
            if advanced(self, item) {
                taken.push((dim, item.clone()));
                basic.push(full());
                dim += 1;
                continue;
            }
            if self.is_tensor(item) {
                // A mask or a float tensor: the native index says what it does.
                return Ok(None);
            }
            dim += match item {
                i if is_ellipsis(i) => ndim.saturating_sub(consumed),
                i if is_none(i) || is_slice(i) => 1,
                _ => 0,
            };
            basic.push(item.clone());
        }
        // Only full slices besides the tensors: the native index reads no size.
        let whole = |v: &Var| {
            matches!(v, Var::Obj(o) if o.downcast_ref::<PySlice>().is_some_and(|s| {
                s.start.as_ref().is_none_or(|a| vm.is_none(a))
                    && vm.is_none(&s.stop)
                    && s.step.as_ref().is_none_or(|a| vm.is_none(a))
            }))
        };
        if basic.iter().all(whole) {
            return Ok(None);
        }
        let basic = Var::Tuple(Rc::from(basic));
        let Some(sliced) = self.symbolic_getitem(t, &basic)? else {
            return Ok(None);
        };
        let last = taken.last().map_or(0, |(d, _)| *d);
        let mut rest: Vec<Var> = (0..=last).map(|_| full()).collect();
        for (d, index) in taken {
            rest[d] = index;
        }
        Ok(Some((sliced, Var::Tuple(Rc::from(rest)))))
    }

    /// A basic index of the fake `t` that its node must resolve against each call's sizes
    /// (see `symbolic_getitem`): the symbolic index, the index at this call's sizes, and the
    /// values it was made from (`None`: the recorded index holds at every call).
    pub(super) fn symbolic_key(
        &mut self,
        t: &Var,
        key: &Var,
    ) -> SimResult<Option<(Vec<SymIndex>, PyObjectRef, Vec<Var>)>> {
        let vm = self.vm;
        if !self.is_fake(t) {
            return Ok(None);
        }
        let (items, tuple) = match key {
            Var::Tuple(items) => (items.to_vec(), true),
            // A constant tuple (`x[:, 0]`).
            Var::Obj(o) if o.class().is(vm.ctx.types.tuple_type) => {
                let t = o.downcast_ref::<PyTuple>().expect("tuple");
                (t.as_slice().iter().cloned().map(Var::Obj).collect(), true)
            }
            other => (vec![other.clone()], false),
        };
        let symbolic = items.iter().any(|i| self.is_symbolic(i));
        if !symbolic && self.varying_fake(t)?.is_none() {
            return Ok(None);
        }
        let mut index = Vec::with_capacity(items.len());
        let mut hint = Vec::with_capacity(items.len());
        let none = || -> PyObjectRef { vm.ctx.none() };
        for item in &items {
            let (i, h) = match item {
                Var::Obj(o) if vm.is_none(o) => (SymIndex::NewAxis, none()),
                Var::Obj(o) if o.is(&vm.ctx.ellipsis) => {
                    (SymIndex::Ellipsis, vm.ctx.ellipsis.clone().into())
                }
                Var::Obj(o) if o.downcast_ref::<PySlice>().is_some() => {
                    let s = o.downcast_ref::<PySlice>().expect("slice");
                    let parts = [
                        s.start.clone().map_or(Var::Obj(none()), Var::Obj),
                        Var::Obj(s.stop.clone()),
                        s.step.clone().map_or(Var::Obj(none()), Var::Obj),
                    ];
                    match self.slice_parts(&parts)? {
                        Some(p) => p,
                        None => return Ok(None),
                    }
                }
                Var::SymSlice(parts) => match self.slice_parts(&parts[..])? {
                    Some(p) => p,
                    None => return Ok(None),
                },
                other => match self.size_operand(other)? {
                    Some((e, h)) => (SymIndex::Int(e), self.vm.ctx.new_int(h).into()),
                    None => return Ok(None),
                },
            };
            index.push(i);
            hint.push(h);
        }
        let key_obj: PyObjectRef = if tuple {
            vm.ctx.new_tuple(hint).into()
        } else {
            hint.pop().expect("one item")
        };
        Ok(Some((index, key_obj, items)))
    }

    /// A slice's parts (None, ints or sizes) as a symbolic slice and the slice of their values.
    fn slice_parts(&mut self, parts: &[Var]) -> SimResult<Option<(SymIndex, PyObjectRef)>> {
        let vm = self.vm;
        let mut exprs: [Option<SizeExpr>; 3] = [None, None, None];
        let mut values: [Option<PyObjectRef>; 3] = [None, None, None];
        for (k, p) in parts.iter().enumerate().take(3) {
            if matches!(p, Var::Obj(o) if vm.is_none(o)) {
                continue;
            }
            match self.size_operand(p)? {
                Some((e, h)) => {
                    exprs[k] = Some(e);
                    values[k] = Some(vm.ctx.new_int(h).into());
                }
                None => return Ok(None),
            }
        }
        let [a, b, c] = values;
        let slice = PySlice {
            start: a,
            stop: b.unwrap_or_else(|| vm.ctx.none()),
            step: c,
        };
        Ok(Some((SymIndex::Slice(exprs), slice.into_pyobject(vm))))
    }

    /// A slice built with sizes that may change (`:T`): kept symbolic for a tensor's index.
    pub(crate) fn symbolic_slice(&mut self, parts: Vec<Var>) -> Option<Var> {
        if !parts.iter().any(|p| self.is_symbolic(p)) {
            return None;
        }
        let mut p = parts.into_iter();
        let none = || Var::Obj(self.vm.ctx.none());
        let (a, b, c) = (
            p.next().unwrap_or_else(none),
            p.next().unwrap_or_else(none),
            p.next().unwrap_or_else(none),
        );
        Some(Var::SymSlice(Rc::new([a, b, c])))
    }

    /// The slice a symbolic slice is, its sizes forced.
    pub(crate) fn forced_slice(&mut self, parts: &[Var; 3]) -> SimResult<PyObjectRef> {
        let mut objs = Vec::with_capacity(3);
        for p in parts {
            objs.push(self.obj(p)?);
        }
        let vm = self.vm;
        let slice = PySlice {
            start: Some(objs[0].clone()),
            stop: objs[1].clone(),
            step: Some(objs[2].clone()),
        };
        Ok(slice.into_pyobject(vm))
    }
}
