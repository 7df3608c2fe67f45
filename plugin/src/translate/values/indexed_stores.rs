//! `list[i] = v` into the caller's list at an index that changes per call (a ring buffer's
//! `self.buf[self.pos] = x; self.pos = (self.pos + 1) % n`, a preallocated table of outputs
//! filled step by step): replayed as written with the index computed per call, the index
//! guarded to be in range and an int, not by its value, so that one translation serves every
//! position instead of one per position (which a ring longer than the recompile limit ran
//! as written). The list's length is guarded, as a ring's is fixed. A later read of the list
//! in the same call follows it by a shadow, which fixes the index by its value
//! (`caller_lists::list_shadow`), as before.

use rustpython_vm::builtins::{PyInt, PyList};
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;

impl State<'_> {
    /// `list[key] = value` on the caller's list `list` (read from `source`) recorded to be
    /// replayed with `key` computed per call, when `key` is an int that changes per call and
    /// in range now. `false`: not such a store (the caller fixes the index by its value).
    pub(crate) fn store_at_changing_index(
        &mut self,
        list: &PyObjectRef,
        source: &Source,
        key: &Var,
        value: &Var,
    ) -> SimResult<bool> {
        let vm = self.vm;
        // A list followed by a shadow is changed item by item, at known positions.
        if self.effects.shadow_of(list).is_some() {
            return Ok(false);
        }
        let Some(index) = self.num_operand(key) else {
            return Ok(false);
        };
        let Some(index_source) = index.dynamic_int(&self.spec) else {
            return Ok(false);
        };
        let Some(i) = index
            .value
            .downcast_ref::<PyInt>()
            .and_then(|i| num_traits::ToPrimitive::to_i64(i.as_bigint()))
        else {
            return Ok(false);
        };
        // Appended to earlier in the call through another name, it is that list only while
        // the guards say so; its appends count toward the length the store sees.
        let (through, changes) = self
            .effects
            .replayed_changes(list)
            .unwrap_or_else(|| (source.clone(), Vec::new()));
        let at_entry = list
            .downcast_ref::<PyList>()
            .expect("a list")
            .borrow_vec()
            .len();
        let appended = changes
            .iter()
            .filter(|c| matches!(c, crate::translate::side_effects::ListChange::Append(_)))
            .count();
        let length = at_entry + appended;
        // A length that changes per call is not guarded by value here; nor is a negative
        // index (counted from the end) kept symbolic.
        if !(0..length as i64).contains(&i)
            || self
                .spec
                .number_is_input(&Source::Len(Box::new(through.clone())), false)
        {
            return Ok(false);
        }
        if through != *source {
            self.guard(source, Check::SameAs(through.clone()));
        }
        for other in self.effects.apart_from(list) {
            if other != through {
                self.guard(source, Check::NotSameAs(other));
            }
        }
        self.guard(source, Check::type_is(list.class().to_owned()));
        self.guard(&through, Check::Len(at_entry));
        // Each number the index is computed from stays an int (`2.0` would make the
        // replayed store raise); the index itself stays in range.
        self.guard_leaf_types(&index);
        let int = |n: usize| -> PyObjectRef { vm.ctx.new_int(n).into() };
        self.guard(
            &index_source,
            Check::Compare(PyComparisonOp::Ge, int(0), true),
        );
        self.guard(
            &index_source,
            Check::Compare(PyComparisonOp::Lt, int(length), true),
        );
        log::debug!(target: crate::log_targets::GUARDS, "{source}[{index_source}] is stored per call: its index changes");
        self.effects.set_at(list, source, index, value.clone());
        Ok(true)
    }
}
