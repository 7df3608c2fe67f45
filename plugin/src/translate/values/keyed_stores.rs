//! `d[k] = v` into the caller's dict by an int that changes per call (outputs kept by step,
//! `self.outputs[self.step] = y`; a memo keyed by a position): replayed as written with the
//! key computed per call, the numbers it is computed from guarded to stay ints, not by their
//! values, so that each step is not a translation of its own (the recompile limit, then the
//! frame as written). Nothing the simulation reads follows such a store: a read of that dict
//! later in the same call fixes its key by its value first (`fix_changing_keys`), as every
//! key was fixed before, and the effects refuse a read that did not; another dict of its class
//! read is guarded to be another one.

use rustpython_vm::PyObject;

use crate::translate::breaks::reason::Kind;
use crate::translate::source::KeyConst;
use crate::translate::state::{SimResult, State, Unsupported};
use crate::translate::values::Var;

impl State<'_> {
    /// `key` as the key of a store into a caller's dict that is replayed with the key
    /// computed per call: an int computed from ints of the frame's, one of which at least
    /// changes per call (their types guarded). `None`: not such a key.
    pub(crate) fn changing_key(&mut self, key: &Var) -> Option<Var> {
        let n = self.num_operand(key)?;
        n.dynamic_int(&self.spec)?;
        self.guard_leaf_types(&n);
        Some(Var::Num(n))
    }

    /// Before a read of the caller's dict `o`: the keys of the call's stores into it by a key
    /// that changes per call, fixed by their values, so that the read follows those stores
    /// as it follows a constant key's.
    pub(crate) fn fix_changing_keys(&mut self, o: &PyObject) -> SimResult<()> {
        for (at, n) in self.effects.changing_keys(o) {
            let value = self.force_number(&n)?;
            let key = KeyConst::of(&value, &self.vm.ctx)
                .ok_or_else(|| Unsupported::new(Kind::Limit, "a dict key too large for a guard"))?;
            self.effects.fix_key(at, key);
        }
        Ok(())
    }
}
