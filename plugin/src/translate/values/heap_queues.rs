//! `heapq` on a list made in the call whose items are plain values (a beam search's
//! `(score, index)` pairs, sizes): the native function runs on a real list of those items,
//! and the simulation's list then holds what the function left in it, in its order, as the
//! program's list would. Items that hold tensors would be compared by their values
//! (data-dependent), and a caller's list is changed only through `caller_lists`: neither is
//! taken here, and the call runs as written.

use rustpython_vm::builtins::PyList;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::{Var, is_plain};

/// The functions of `_heapq` that change their list in place and compare only its items.
const IN_PLACE: &[&str] = &[
    "heappush",
    "heappop",
    "heapify",
    "heappushpop",
    "heapreplace",
    "heappush_max",
    "heappop_max",
    "heapify_max",
    "heappushpop_max",
    "heapreplace_max",
];

impl State<'_> {
    /// `heapq.<name>(list, ...)` for a list made in the call; `None` where `f` is not one of
    /// those functions or the list is not one the simulation made.
    pub(crate) fn heap_queue_call(
        &mut self,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some((module, name)) = crate::translate::loaded_modules::module_function(f, vm) else {
            return Ok(None);
        };
        if module != "_heapq" || !IN_PLACE.contains(&name.as_str()) || !kwargs.is_empty() {
            return Ok(None);
        }
        let Some(Var::List(items)) = args.first() else {
            return Ok(None);
        };
        let items = items.clone();
        // Each item as an object, paired with the value the simulation holds: the function
        // only moves items, and each comes back as the value it was (a list stays itself).
        let mut held: Vec<(PyObjectRef, Var)> = Vec::new();
        for v in items.borrow().clone().iter().chain(&args[1..]) {
            let o = self.obj(v)?;
            if !compares_natively(&o, vm) {
                return unsupported(
                    Kind::DataDependent,
                    format!("heapq.{name} comparing items that are not plain values"),
                );
            }
            held.push((o, v.clone()));
        }
        let pushed = held.split_off(held.len() - (args.len() - 1));
        let list: PyObjectRef = vm
            .ctx
            .new_list(held.iter().map(|(o, _)| o.clone()).collect())
            .into();
        let mut call_args = vec![list.clone()];
        call_args.extend(pushed.iter().map(|(o, _)| o.clone()));
        held.extend(pushed);
        let result = f.call(call_args, vm);
        let back = |o: &PyObjectRef| {
            held.iter()
                .find(|(h, _)| h.is(o))
                .map_or_else(|| Var::Obj(o.clone()), |(_, v)| v.clone())
        };
        let left = list
            .downcast_ref::<PyList>()
            .expect("a list")
            .borrow_vec()
            .iter()
            .map(back)
            .collect();
        *items.borrow_mut() = left;
        match result {
            Ok(r) => Ok(Some(back(&r))),
            // `heappop([])`, items of types that do not compare: raised as Python raises it.
            Err(e) => {
                let t = &vm.ctx.exceptions;
                let class = [t.index_error, t.type_error]
                    .into_iter()
                    .find(|c| e.class().is(*c));
                let message = e
                    .as_object()
                    .str(vm)
                    .map(|m| m.to_string())
                    .unwrap_or_default();
                match class {
                    Some(class) => {
                        let args = e.args().iter().map(|a| Var::Obj(a.clone())).collect();
                        self.raise_native(class, args, format!("heapq.{name}: {message}"))
                    }
                    None => unsupported(Kind::Raises, format!("heapq.{name} raises {message}")),
                }
            }
        }
    }
}

/// Whether comparing `o` with another such value runs no code of the user's: a plain value,
/// or a list or tuple of such values (a beam's `(score, tokens)`).
fn compares_natively(o: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> bool {
    let t = &vm.ctx.types;
    if is_plain(o, vm) {
        return true;
    }
    if o.class().is(t.list_type) {
        let items = o
            .downcast_ref::<PyList>()
            .expect("a list")
            .borrow_vec()
            .to_vec();
        return items.iter().all(|i| compares_natively(i, vm));
    }
    o.class().is(t.tuple_type)
        && o.downcast_ref::<rustpython_vm::builtins::PyTuple>()
            .expect("a tuple")
            .iter()
            .all(|i| compares_natively(i, vm))
}
