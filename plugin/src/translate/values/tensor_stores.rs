//! Item assignment into a tensor (`y[:, 0] = 0`): on a tensor the graph computed, the op
//! `index_put`, whose result takes the tensor's place.

use rustpython_vm::builtins::{PyList, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef, PyRef};

use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::{Var, is_plain};

impl State<'_> {
    /// `t[key] = value` on a tensor the graph computed: recorded as `index_put`, whose result
    /// takes `t`'s place (every name for `t` sees it, as every name for the tensor sees the
    /// eager store; symtrace's indexing copies, so no other tensor shares its elements). An
    /// input's elements belong to the caller, and a tensor made from constants would become
    /// a graph value the replacement still holds as a constant: both are refused, as is an
    /// index that is a tensor.
    pub(super) fn tensor_setitem(
        &mut self,
        t: &PyRef<PyTensor>,
        key: &Var,
        value: Var,
    ) -> SimResult<()> {
        let vm = self.vm;
        match self.value_of(t) {
            Some(crate::graph::Value::Input(_)) => {
                return unsupported(
                    Kind::SideEffect,
                    "item assignment into an input tensor (a side effect)",
                );
            }
            None => {
                return unsupported(
                    Kind::Value,
                    "item assignment into a tensor that is not a graph value",
                );
            }
            Some(_) => {}
        }
        let key = self.obj(key)?;
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
        let target: PyObjectRef = t.clone().into();
        target
            .set_item(&*key, value, vm)
            .map_err(|_| Unsupported::new(Kind::Raises, "item assignment into a tensor raises"))
    }
}
