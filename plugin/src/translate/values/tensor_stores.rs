//! Item assignment into a tensor (`y[:, 0] = 0`): the op `index_put`, whose result takes the
//! tensor's place (on the caller's tensor, written back after the graph: `input_writes`).

use rustpython_vm::builtins::{PyList, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef, PyRef};

use crate::graph::sizes::SymAttr;
use crate::tensor::{PyTensor, size_reads};
use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::{Var, is_plain};

impl State<'_> {
    /// `t[key] = value` on a fake: recorded as `index_put`, whose result takes `t`'s place
    /// (every name for `t` sees it, as every name for the tensor sees the eager store;
    /// symtrace's indexing copies, so no other tensor shares its elements). A tensor made
    /// from constants would become a graph value the replacement still holds as a constant:
    /// refused (`before_update`), as is an index that is a tensor.
    pub(super) fn tensor_setitem(
        &mut self,
        t: &PyRef<PyTensor>,
        key: &Var,
        value: Var,
    ) -> SimResult<()> {
        let vm = self.vm;
        let fake = Var::Tensor(t.clone());
        // An index of sizes that may change (`cache[:, pos:pos + T] = k`): resolved per call.
        let symbolic = self.symbolic_key(&fake, key)?;
        let key = match &symbolic {
            Some((_, k, _)) => k.clone(),
            None => self.obj(key)?,
        };
        let items = match key.downcast_ref::<PyTuple>() {
            Some(k) => k.as_slice().to_vec(),
            None => vec![key.clone()],
        };
        if items
            .iter()
            .any(|i| i.downcast_ref::<PyTensor>().is_some() || i.downcast_ref::<PyList>().is_some())
        {
            return unsupported(
                Kind::Value,
                "item assignment into a tensor with a tensor or list index",
            );
        }
        let value = self.obj(&value)?;
        if value.is(t) {
            // Read as a copy by the store: a copy of a stand-in is not a graph value.
            return unsupported(Kind::Value, "a tensor assigned into itself");
        }
        if !(is_plain(&value, vm) || value.downcast_ref::<PyTensor>().is_some()) {
            return unsupported(
                Kind::Value,
                format!(
                    "item assignment of a {} into a tensor",
                    value.class().name()
                ),
            );
        }
        self.before_update(t)?;
        let reads = size_reads::mark();
        let target: PyObjectRef = t.clone().into();
        target
            .set_item(&*key, value, vm)
            .map_err(|_| Unsupported::new(Kind::Raises, "item assignment into a tensor raises"))?;
        if let Some((index, _, items)) = symbolic
            && self.attach_more(&fake, SymAttr::Index(index), &items)?
        {
            size_reads::forget_since(reads);
        }
        Ok(())
    }
}
