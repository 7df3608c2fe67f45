//! Item assignment into a tensor (`y[:, 0] = 0`): the op `index_put`, whose result takes the
//! tensor's place (on the caller's tensor, written back after the graph: `input_writes`).

use rustpython_vm::builtins::{PyList, PyTuple};
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{AsObject, PyObjectRef, PyRef};

use crate::graph::sizes::SymAttr;
use crate::tensor::{DType, PyTensor, size_reads};
use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::{Var, is_plain};

impl State<'_> {
    /// Whether `key` is a tuple index with a bool tensor among its items: the indices of
    /// its true elements are read from its values (`mixed_index`), which a graph cannot
    /// keep (a mask alone, `t[mask]`, is an op of its own).
    pub(super) fn mask_among_indices(&self, key: &Var) -> bool {
        matches!(key, Var::Tuple(items)
            if items.iter().any(|i| self.tensor_dtype(i) == Some(DType::Bool)))
    }

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
        if self.tensor_dtype(key) == Some(DType::Bool) {
            return self.masked_store(t, key, value);
        }
        if self.mask_among_indices(key) {
            return unsupported(
                Kind::DataDependent,
                "a bool mask among other indices selects a data-dependent set of elements",
            );
        }
        let fake = Var::Tensor(t.clone());
        if self.mixed_symbolic_setitem(&fake, key, value.clone())? {
            return Ok(());
        }
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

        // Int tensors and lists among `:` and `...` are the op `index_dims_put` (the native
        // store records it); a bool list is a mask the store does not record.
        if items.iter().any(|i| {
            i.downcast_ref::<PyList>().is_some_and(|l| {
                l.borrow_vec()
                    .iter()
                    .any(|b| b.class().is(vm.ctx.types.bool_type))
            })
        }) {
            return unsupported(
                Kind::Value,
                "item assignment into a tensor with a list of bools as index",
            );
        }
        let value = match self.store_input(&fake, &value)? {
            Some(input) => input,
            None => value,
        };
        let value = self.obj(&value)?;
        let base_of_t = t.view_link().is_some_and(|l| value.is(l.base()));
        if value.is(t) || base_of_t {
            // Read as a copy by the store (the view's base too): a copy of a stand-in is not a
            // graph value.
            return unsupported(Kind::Value, "a tensor assigned into itself or a view of it");
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

    /// `t[mask] = v` with a bool mask over `t`'s leading dimensions and a number (or a 0-d
    /// tensor of `t`'s type): the elements the mask selects all take `v`, whatever the data,
    /// so the shape is known: `t.masked_fill(mask[..., None, ...], v)`. The mask's sizes are
    /// `t`'s, checked per call where they may change (eagerly, another mask raises); a value
    /// that the store would cast (a float into an int tensor) is refused.
    fn masked_store(&mut self, t: &PyRef<PyTensor>, mask: &Var, value: Var) -> SimResult<()> {
        let vm = self.vm;
        let target = Var::Tensor(t.clone());
        let (mask_shape, shape, dtype) = {
            let m = self.obj(mask)?;
            let m = m.downcast_ref::<PyTensor>().expect("a mask").read();
            let d = t.read();
            (m.shape().to_vec(), d.shape().to_vec(), d.dtype())
        };
        if mask_shape.len() > shape.len() {
            return unsupported(Kind::Raises, "a mask with more dimensions than the tensor");
        }
        let sizes = (self.symbolic_sizes(mask)?, self.symbolic_sizes(&target)?);
        for d in 0..mask_shape.len() {
            let equal = match &sizes {
                (None, None) => mask_shape[d] == shape[d],
                (m, s) => {
                    let size = |v: &Option<Vec<Var>>, n: usize| match v {
                        Some(v) => v[d].clone(),
                        None => self.int_var(n as i64),
                    };
                    let (a, b) = (size(m, mask_shape[d]), size(s, shape[d]));
                    match self.size_compare(PyComparisonOp::Eq, &a, &b)? {
                        Some(eq) => eq,
                        None => mask_shape[d] == shape[d],
                    }
                }
            };
            if !equal {
                return unsupported(
                    Kind::Raises,
                    "a mask whose sizes are not the tensor's (IndexError)",
                );
            }
        }
        let v = self.obj(&value)?;
        let fits = match v.downcast_ref::<PyTensor>() {
            Some(x) => {
                let x = x.read();
                x.shape().is_empty() && x.dtype() == dtype
            }
            None if v.class().is(vm.ctx.types.bool_type) => true,
            None if v.class().is(vm.ctx.types.int_type) => dtype != DType::Bool,
            None if v.class().is(vm.ctx.types.float_type) => dtype.is_float(),
            None => false,
        };
        if !fits {
            return unsupported(
                Kind::Value,
                format!(
                    "a masked store of a {} into a {} tensor",
                    v.class().name(),
                    dtype.name()
                ),
            );
        }
        let extra = shape.len() - mask_shape.len();
        let mask = if extra == 0 {
            mask.clone()
        } else {
            let mut key = vec![vm.ctx.ellipsis.clone().into()];
            key.extend((0..extra).map(|_| vm.ctx.none()));
            let key = Var::Obj(vm.ctx.new_tuple(key).into());
            self.binary(rustpython_vm::bytecode::BinaryOperator::Subscr, mask, &key)?
        };
        let (callable, this) = self.method_of(&target, "masked_fill")?;
        let args = match this {
            Var::Null => vec![mask, value],
            this => vec![this, mask, value],
        };
        let result = self.invoke(&callable, args, Vec::new())?;
        self.take_result(t, result)
    }
}
