//! Library constructors called in the frame whose results the simulation holds as values of
//! its own: `collections.OrderedDict` and `defaultdict` (dicts made here, their kinds kept in
//! `State::dict_kinds`) and `functools.partial` (`Var::Partial`). A deque is `deques`'.

use std::cell::RefCell;
use std::rc::Rc;

use rustpython_vm::builtins::PyType;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::Var;

impl State<'_> {
    /// `OrderedDict(...)`, `defaultdict(factory, ...)` and `functools.partial(f, ...)` made in
    /// the frame: dicts of those classes (kept in `State::dict_kinds`) and a partial
    /// application. `None` for another callable.
    pub(super) fn collections_call(
        &mut self,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let named = |module: &str, name: &str| {
            crate::translate::loaded_modules::loaded_attr(module, name, vm).is_some_and(|c| c.is(f))
        };
        if named("functools", "partial") {
            let Some((func, rest)) = args.split_first() else {
                return unsupported(Kind::Raises, "partial() needs a callable (TypeError)");
            };
            return Ok(Some(Var::Partial(Rc::new(
                crate::translate::values::Partial {
                    func: func.clone(),
                    args: rest.to_vec(),
                    kwargs: kwargs.to_vec(),
                },
            ))));
        }
        let (class, factory, rest) = if named("collections", "OrderedDict") {
            (f.clone(), None, args)
        } else if named("collections", "defaultdict") {
            match args.split_first() {
                Some((factory, rest)) => (f.clone(), Some(factory.clone()), rest),
                None => (f.clone(), Some(Var::Obj(vm.ctx.none())), args),
            }
        } else {
            return Ok(None);
        };
        let class = class
            .downcast::<PyType>()
            .map_err(|_| Unsupported::new(Kind::Internal, "a dict class"))?;
        let entries = self.dict_arguments(rest, kwargs.to_vec())?;
        let d = Rc::new(RefCell::new(entries));
        self.dict_kinds.push((d.clone(), class, factory));
        Ok(Some(Var::Dict(d)))
    }
}
