//! `collections._count_elements(mapping, iterable)`, the native helper of `Counter.update`
//! and `Counter(iterable)`: simulated as its Python definition in `collections` reads, which
//! the native one computes the same as (`mapping_get = mapping.get`, then
//! `mapping[elem] = mapping_get(elem, 0) + 1` for each element), so that counting a frame's
//! tokens or labels is followed like any other store into the mapping.

use rustpython_vm::PyObjectRef;
use rustpython_vm::bytecode::BinaryOperator;

use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;

impl State<'_> {
    /// `_count_elements(mapping, iterable)`; `None` for any other function or arguments.
    pub(crate) fn count_elements_call(
        &mut self,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some((module, name)) = crate::translate::loaded_modules::module_function(f, vm) else {
            return Ok(None);
        };
        let [mapping, iterable] = args else {
            return Ok(None);
        };
        if module != "_collections" || name != "_count_elements" || !kwargs.is_empty() {
            return Ok(None);
        }
        // Looked up as a method, as the loop's calls of it find it.
        let (get, bound) = self.method_of(mapping, "get")?;
        let zero = Var::Obj(vm.ctx.new_int(0).into());
        let one = Var::Obj(vm.ctx.new_int(1).into());
        for elem in self.items(iterable)? {
            let mut get_args = match &bound {
                Var::Null => Vec::new(),
                this => vec![this.clone()],
            };
            get_args.extend([elem.clone(), zero.clone()]);
            let count = self.invoke(&get, get_args, Vec::new())?;
            let count = self.binary(BinaryOperator::Add, &count, &one)?;
            self.set_item(mapping, &elem, count)?;
        }
        Ok(Some(Var::Obj(vm.ctx.none())))
    }
}
