//! Methods of a list made during the simulation, or of the shadow of a caller's list (see
//! `caller_lists`): done to its items as Python does them to a list's.

use rustpython_vm::builtins::{PyInt, PyList};
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::{ListRef, Var};

impl State<'_> {
    /// `list.name(*args, **kwargs)` on the items `l` (of keyword arguments, only `sort`'s
    /// `reverse`).
    pub(super) fn list_method(
        &mut self,
        l: &ListRef,
        name: &'static str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        let vm = self.vm;
        if name == "sort"
            && let Some(r) = self.keyed_list_sort(l, &kwargs)?
        {
            return Ok(r);
        }
        let reverse = match (name, kwargs.as_slice()) {
            (_, []) => false,
            ("sort", [(k, v)]) if k == "reverse" => self.truth(v)?,
            _ => {
                return unsupported(
                    Kind::Call,
                    format!("list.{name}() with these keyword arguments"),
                );
            }
        };
        let none = || Var::Obj(vm.ctx.none());
        let owner = &Var::List(l.clone());
        match (name, args.as_slice()) {
            ("append", [x]) => {
                l.borrow_mut().push(x.clone());
                Ok(none())
            }
            ("extend", [x]) => {
                let items = self.items(x)?;
                l.borrow_mut().extend(items);
                Ok(none())
            }
            ("insert", [i, x]) => {
                let i = self
                    .plain_obj(i, "insert")?
                    .try_index(vm)
                    .map_err(|_| Unsupported::new(Kind::Raises, "index"))?
                    .try_to_primitive::<i64>(vm)
                    .map_err(|_| Unsupported::new(Kind::Raises, "index"))?;
                let mut l = l.borrow_mut();
                let n = l.len() as i64;
                let j = if i < 0 { (i + n).max(0) } else { i.min(n) } as usize;
                l.insert(j, x.clone());
                Ok(none())
            }
            ("pop", []) => l.borrow_mut().pop().ok_or_else(|| {
                Unsupported::new(Kind::Raises, "pop from an empty list (IndexError)")
            }),
            ("pop", [i]) => {
                let i = self.plain_obj(i, "pop")?;
                let mut l = l.borrow_mut();
                let j = list_position(&i, l.len(), vm)?;
                Ok(l.remove(j))
            }
            // Of plain values: as native code finds them.
            ("count" | "index", _) => {
                let o = self.plain_obj(owner, "a list")?;
                let args = args
                    .iter()
                    .map(|a| self.plain_obj(a, "an argument"))
                    .collect::<SimResult<Vec<_>>>()?;
                let r = vm.call_method(&o, name, args);
                self.native_result(r, false, name)
            }
            // Plain values, sorted as native code sorts them (stable, by `<`).
            ("sort", []) => {
                let o = self.plain_obj(owner, "list.sort")?;
                let kw = [("reverse".to_owned(), vm.ctx.new_bool(reverse).into())];
                let sort_args = rustpython_vm::function::FuncArgs::new(
                    Vec::new(),
                    rustpython_vm::function::KwArgs::from_iter(kw),
                );
                let r = vm.call_method(&o, "sort", sort_args);
                self.native_result(r, false, "list.sort")?;
                let sorted = o
                    .downcast_ref::<PyList>()
                    .ok_or_else(|| Unsupported::new(Kind::Internal, "list.sort of a list"))?
                    .borrow_vec()
                    .iter()
                    .map(|x| Var::Obj(x.clone()))
                    .collect();
                *l.borrow_mut() = sorted;
                Ok(none())
            }
            ("clear", []) => {
                l.borrow_mut().clear();
                Ok(none())
            }
            ("reverse", []) => {
                l.borrow_mut().reverse();
                Ok(none())
            }
            ("remove", [x]) => {
                let at = self.position_of(l, x)?;
                l.borrow_mut().remove(at);
                Ok(none())
            }
            ("copy", []) => Ok(Var::list(l.borrow().clone())),
            _ => unsupported(Kind::Call, format!("list.{name}() with these arguments")),
        }
    }

    /// Where `list.remove(x)` finds `x`: the first item that is `x` or equals it. Items are
    /// compared as plain values (a tensor's `==` would not give a truth value), or by
    /// identity.
    fn position_of(&mut self, list: &ListRef, x: &Var) -> SimResult<usize> {
        let vm = self.vm;
        let items = list.borrow().clone();
        for (i, item) in items.iter().enumerate() {
            if let (Var::Tensor(a), Var::Tensor(b)) = (item, x)
                && a.is(b)
            {
                return Ok(i);
            }
            let (a, b) = (
                self.plain_obj(item, "list.remove")?,
                self.plain_obj(x, "list.remove")?,
            );
            if a.is(&b)
                || vm
                    .bool_eq(&a, &b)
                    .map_err(|_| Unsupported::new(Kind::Raises, "=="))?
            {
                return Ok(i);
            }
        }
        unsupported(Kind::Raises, "list.remove(x): x not in list (ValueError)")
    }
}

/// The positions a slice picks out of `len` items, and where a plain slice (step 1) starts,
/// as `slice.indices` works them out.
pub(super) fn slice_positions(
    key: &PyObjectRef,
    len: usize,
    vm: &VirtualMachine,
) -> SimResult<(Vec<usize>, Option<usize>)> {
    let bad = |_| Unsupported::new(Kind::Raises, "a bad slice");
    let bounds = vm.call_method(key, "indices", (len,)).map_err(bad)?;
    let [start, stop, step]: [isize; 3] = vm
        .extract_elements_with(&bounds, |o| o.try_index(vm)?.try_to_primitive::<isize>(vm))
        .map_err(bad)?
        .try_into()
        .map_err(|_| Unsupported::new(Kind::Internal, "slice.indices"))?;
    let mut at = Vec::new();
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        at.push(i as usize);
        i += step;
    }
    Ok((at, (step == 1).then_some(start as usize)))
}

/// `list[key] = new` for a slice `key`: a plain slice is replaced by the new items, whatever
/// their number; an extended one takes exactly one item per position, or raises.
pub(super) fn store_slice(
    list: &mut Vec<Var>,
    key: &PyObjectRef,
    new: Vec<Var>,
    vm: &VirtualMachine,
) -> SimResult<()> {
    let (at, plain_start) = slice_positions(key, list.len(), vm)?;
    if let Some(start) = plain_start {
        let end = start + at.len();
        list.splice(start..end, new);
        return Ok(());
    }
    if at.len() != new.len() {
        return unsupported(
            Kind::Raises,
            "an extended slice store of another number of items (ValueError)",
        );
    }
    for (j, v) in at.into_iter().zip(new) {
        list[j] = v;
    }
    Ok(())
}

/// The position an int index names in a sequence of `len` items (negative from the end).
pub(crate) fn list_position(
    key: &PyObjectRef,
    len: usize,
    vm: &VirtualMachine,
) -> SimResult<usize> {
    let i = key
        .downcast_ref::<PyInt>()
        .ok_or_else(|| Unsupported::new(Kind::Value, "an index that is not an int"))?;
    let i = i
        .try_to_primitive::<i64>(vm)
        .map_err(|_| Unsupported::new(Kind::Limit, "index too large"))?;
    let n = len as i64;
    let j = if i < 0 { i + n } else { i };
    if j < 0 || j >= n {
        return unsupported(Kind::Raises, "index out of range (IndexError)");
    }
    Ok(j as usize)
}
