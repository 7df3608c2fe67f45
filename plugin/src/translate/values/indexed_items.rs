//! An item of the caller's list or tuple at an index that changes per call (a sampler's
//! `self.sigmas[self.step]`, a ring of buffers' `self.bufs[self.i % n]`): read from a source
//! that subscripts the sequence with the index's own source (`Source::At`). A number is a
//! deferred number, a tensor a graph input: the replacement reads the item per call, and the
//! guards check that it is in range and of the same type (a tensor's dtype and sizes), not
//! which item it is: one translation for every step instead of one per step.

use std::rc::Rc;

use rustpython_vm::builtins::PyInt;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload};

use crate::tensor::PyTensor;
use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::numbers::{Num, NumExpr};

impl State<'_> {
    /// `seq[index]` read per call, where `seq` is the caller's list or tuple (read from
    /// `source`, unchanged by the call so far), `index` an int that changes per call and the
    /// item an int, a float or a tensor (`None`: not such a read; the index is forced).
    pub(crate) fn item_at_changing_index(
        &mut self,
        seq: &PyObjectRef,
        source: &Source,
        index: &Var,
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let t = &vm.ctx.types;
        let list = seq.class().is(t.list_type);
        if !list && !seq.class().is(t.tuple_type) {
            return Ok(None);
        }
        let Some(n) = self.num_operand(index) else {
            return Ok(None);
        };
        let Some(index_source) = n.dynamic_int(&self.spec) else {
            return Ok(None);
        };
        // A list the call changed is read from its shadow, item by item.
        if list && self.list_shadow(seq, source)?.is_some() {
            return Ok(None);
        }
        let items = vm.extract_elements_with(seq, Ok).unwrap_or_default();
        let Some(position) = n
            .value
            .downcast_ref::<PyInt>()
            .and_then(|i| num_traits::ToPrimitive::to_i64(i.as_bigint()))
            .map(|i| if i < 0 { i + items.len() as i64 } else { i })
            .filter(|i| (0..items.len() as i64).contains(i))
        else {
            // Out of range: the read raises as written, with the index fixed.
            return Ok(None);
        };
        let item = items[position as usize].clone();
        let number = item.class().is(t.int_type) || item.class().is(t.float_type);
        // (A tensor's class exists: asked only of a tensor, before symtrace is imported too.)
        let tensor =
            item.downcast_ref::<PyTensor>().is_some() && item.class().is(PyTensor::class(&vm.ctx));
        if !number && !tensor {
            return Ok(None);
        }
        self.check_readable(seq, source)?;
        self.guard(source, Check::type_is(seq.class().to_owned()));
        if let NumExpr::Read(o, s) = &n.expr {
            self.guard(s, Check::type_is(o.class().to_owned()));
        }
        let at = source.clone().at(index_source);
        log::debug!(target: crate::log_targets::GUARDS, "{at} is read per call: its index changes");
        if tensor {
            // A graph input, guarded on its dtype and sizes as any input is.
            return Ok(Some(Var::Lazy(item, at)));
        }
        self.guard(&at, Check::type_is(item.class().to_owned()));
        Ok(Some(Var::Num(Rc::new(Num {
            value: item.clone(),
            expr: NumExpr::Read(item, at),
            ops: 0,
        }))))
    }
}
