//! Sets made during the simulation: set displays and comprehensions (BUILD_SET, SET_ADD,
//! SET_UPDATE), `set(...)`, their operators, methods, membership, length and iteration. A
//! set holds plain values only; it is a real set object that the simulation owns, so that
//! hashing, equality and the order of iteration are the interpreter's own (its operations
//! run no user code on plain values). The replacement makes it again as `set(items)`, its
//! items in that order.

use rustpython_vm::builtins::{PyFrozenSet, PySet};
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObject, PyObjectRef, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::operators::{is_inplace, not_inplace};
use crate::translate::values::{Var, is_plain};

/// Whether `o` is a set or frozenset of plain values.
pub fn is_plain_set(o: &PyObject, vm: &VirtualMachine) -> bool {
    let items = |it: PyObjectRef| -> bool {
        vm.extract_elements_with(&it, Ok)
            .is_ok_and(|items: Vec<PyObjectRef>| items.iter().all(|x| is_plain(x, vm)))
    };
    (o.downcast_ref::<PySet>().is_some() || o.downcast_ref::<PyFrozenSet>().is_some())
        && items(o.to_owned())
}

impl State<'_> {
    /// A new set of `items` (plain values).
    pub fn new_set(&mut self, items: &[Var]) -> SimResult<Var> {
        let vm = self.vm;
        let mut objs: Vec<PyObjectRef> = Vec::with_capacity(items.len());
        for i in items {
            let held = vm.ctx.new_tuple(objs.clone()).into();
            objs.push(self.set_element(Some(&held), i)?);
        }
        let set = vm
            .ctx
            .types
            .set_type
            .as_object()
            .call((vm.ctx.new_tuple(objs),), vm)
            .map_err(|_| Unsupported::new(Kind::Raises, "an unhashable set element (TypeError)"))?;
        Ok(Var::Set(set))
    }

    /// Add `items` to the set `s` (SET_ADD, SET_UPDATE, `s.add`).
    pub fn set_add(&mut self, s: &Var, items: &[Var]) -> SimResult<()> {
        let Var::Set(set) = s else {
            return unsupported(Kind::Opcode, format!("SET_ADD to a {}", s.kind()));
        };
        for i in items {
            let o = self.set_element(Some(set), i)?;
            self.vm.call_method(set, "add", (o,)).map_err(|_| {
                Unsupported::new(Kind::Raises, "an unhashable set element (TypeError)")
            })?;
        }
        Ok(())
    }

    /// `a op b` where one is a set made here: computed on the sets (or frozensets) natively;
    /// a set result is a new set of the simulation's.
    pub fn set_binary(&mut self, op: BinaryOperator, a: &Var, b: &Var) -> SimResult<Option<Var>> {
        let vm = self.vm;
        if !matches!(a, Var::Set(_)) && !matches!(b, Var::Set(_)) {
            return Ok(None);
        }
        let inplace = is_inplace(op);
        if inplace
            && let Var::Lazy(o, _) = a
            && o.class().is(vm.ctx.types.set_type)
        {
            return unsupported(
                Kind::SideEffect,
                "an in-place operator on a caller's set (it keeps the set's identity)",
            );
        }
        let (x, y) = (self.set_operand(a)?, self.set_operand(b)?);
        let r = crate::translate::values::operators::binary_vm(not_inplace(op), &x, &y, vm)
            .map_err(|e| {
                Unsupported::new(
                    Kind::Raises,
                    format!("a set operator raises {}", e.class().name()),
                )
            })?;
        let r = self.set_result(r);
        // `s |= t` changes `s` in place: the set is the simulation's own.
        if inplace && let (Var::Set(target), Var::Set(made)) = (a, &r) {
            vm.call_method(target, "clear", ())
                .and_then(|_| vm.call_method(target, "update", (made.clone(),)))
                .map_err(|_| Unsupported::new(Kind::Internal, "an in-place set operator"))?;
            return Ok(Some(a.clone()));
        }
        Ok(Some(r))
    }

    fn set_operand(&mut self, v: &Var) -> SimResult<PyObjectRef> {
        match v {
            Var::Set(s) => Ok(s.clone()),
            other => {
                let o = self.obj(other)?;
                if is_plain(&o, self.vm) || is_plain_set(&o, self.vm) {
                    Ok(o)
                } else {
                    unsupported(
                        Kind::Value,
                        format!("a set operator with a {}", o.class().name()),
                    )
                }
            }
        }
    }

    fn set_result(&self, r: PyObjectRef) -> Var {
        if r.downcast_ref::<PySet>().is_some() {
            Var::Set(r)
        } else {
            // `s.pop()`: an item, maybe one held by identity.
            self.set_member(r)
        }
    }

    /// A method of a set made here, called with plain values (or sets): run on it natively.
    pub fn set_method(
        &mut self,
        set: &PyObjectRef,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        let vm = self.vm;
        if !kwargs.is_empty() {
            return unsupported(Kind::Call, format!("set.{name}() with keyword arguments"));
        }
        let mut objs = Vec::with_capacity(args.len());
        if let ("add" | "discard" | "remove", [element]) = (name, args.as_slice()) {
            objs.push(self.set_element(Some(set), element)?);
        }
        for a in args.iter().skip(objs.len()) {
            objs.push(self.set_operand(a).or_else(|_| {
                // An iterable of plain values (`s.update([1, 2])`).
                let items = self.items(a)?;
                let items = items
                    .iter()
                    .map(|i| self.plain_obj(i, "a set element"))
                    .collect::<SimResult<Vec<_>>>()?;
                Ok::<_, Unsupported>(vm.ctx.new_tuple(items).into())
            })?);
        }
        let method = set
            .get_attr(&vm.ctx.new_str(name), vm)
            .map_err(|_| Unsupported::new(Kind::Raises, format!("set has no method {name:?}")))?;
        let r = method
            .call(
                FuncArgs::new(objs, rustpython_vm::function::KwArgs::default()),
                vm,
            )
            .map_err(|e| {
                Unsupported::new(
                    Kind::Raises,
                    format!(
                        "set.{name} raises {} (it raises again when run)",
                        e.class().name()
                    ),
                )
            })?;
        Ok(self.set_result(r))
    }
}
