//! `operator.itemgetter` and `operator.attrgetter` (a sort key, `map(itemgetter(0), pairs)`):
//! made from plain items (ints, strs, tuples of them) by their native constructor, which
//! keeps them and runs nothing else, and called as what they do: each item a subscript or a
//! (dotted) attribute of the argument, simulated as the program's own would be.

use rustpython_vm::builtins::{PyStr, PyTuple};
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::{Var, is_plain};

/// Which getter `o` is (`itemgetter`, `attrgetter`), or its class.
fn getter_kind(o: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> Option<&'static str> {
    ["itemgetter", "attrgetter"].into_iter().find(|name| {
        crate::translate::loaded_modules::loaded_attr("operator", name, vm)
            .is_some_and(|c| c.is(o) || c.is(o.class()))
    })
}

impl State<'_> {
    /// `itemgetter(*items)` or `attrgetter(*names)` of plain items: the getter, made now.
    /// `None` for another callable.
    pub(super) fn getter_made(
        &mut self,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        if !getter_kind(f, vm).is_some_and(|_| f.class().is(vm.ctx.types.type_type)) {
            return Ok(None);
        }
        if args.is_empty() || !kwargs.is_empty() {
            return unsupported(Kind::Raises, "a getter of no items (TypeError)");
        }
        let mut items = Vec::with_capacity(args.len());
        for a in args {
            let o = self.plain_obj(a, "a getter's item")?;
            if !is_plain(&o, vm) {
                return unsupported(Kind::Value, "a getter of an item that is not plain");
            }
            items.push(o);
        }
        let made = f
            .call(FuncArgs::from(items), vm)
            .map_err(|_| Unsupported::new(Kind::Raises, "a getter's constructor raised"))?;
        Ok(Some(Var::Obj(made)))
    }

    /// A getter (`callable`, which is `o`) called on `args`: each of its items read from the
    /// argument, one value or a tuple of them. `None` when `o` is not a getter. A caller's
    /// getter is guarded by identity: immutable, it fixes its items.
    pub(super) fn getter_call(
        &mut self,
        callable: &Var,
        o: &PyObjectRef,
        args: &[Var],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some(kind) = getter_kind(o, vm).filter(|_| !o.class().is(vm.ctx.types.type_type))
        else {
            return Ok(None);
        };
        let [target] = args else {
            return unsupported(Kind::Raises, format!("{kind} called with these arguments"));
        };
        if let Var::Lazy(_, source) = callable {
            self.guard(source, Check::is(o.clone()));
        }
        // `__reduce__` gives `(class, items)`: what the constructor kept.
        let items = vm
            .call_method(o, "__reduce__", ())
            .ok()
            .and_then(|r| r.downcast::<PyTuple>().ok())
            .and_then(|r| r.get(1).cloned())
            .and_then(|i| i.downcast::<PyTuple>().ok())
            .ok_or_else(|| Unsupported::new(Kind::Internal, "a getter's items"))?;
        let mut got = Vec::with_capacity(items.len());
        for item in items.iter() {
            got.push(match kind {
                "itemgetter" => {
                    self.binary(BinaryOperator::Subscr, target, &Var::Obj(item.clone()))?
                }
                _ => {
                    let Some(path) = item.downcast_ref::<PyStr>() else {
                        return unsupported(Kind::Raises, "attrgetter of a name that is no str");
                    };
                    let mut v = target.clone();
                    for name in path.to_string_lossy().split('.') {
                        v = self.attr_of(&v, name)?;
                    }
                    v
                }
            });
        }
        Ok(Some(match got.len() {
            1 => got.pop().expect("one"),
            _ => Var::tuple(got),
        }))
    }
}
