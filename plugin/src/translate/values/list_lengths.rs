//! `len()` of a caller's list whose length changes from call to call (a history the call
//! appends to, `self.hist.append(v); n = len(self.hist)`): once a miss showed the length
//! changing, it is a deferred number read per call (`Source::Len`) plus the appends the call
//! made so far, not a constant guarded by value, so that each call is not a translation of
//! its own. Only while the call reads none of the list's items: a read of them guards the
//! length by value, as before.

use std::rc::Rc;

use rustpython_vm::builtins::PyList;
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::guards::guard::Check;
use crate::translate::side_effects::ListChange;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;
use crate::translate::values::numbers::{Num, NumExpr};

impl State<'_> {
    /// `len(v)` as a deferred number, when `v` is such a list; of a list whose length has not
    /// changed between calls, after changes the call replays as written, the constant its
    /// length on entry and the appends make. `None`: not such a list, or a list of
    /// unchanging length the call has not changed (`len` reads it as any sequence).
    pub(crate) fn deferred_list_len(&mut self, v: &Var) -> SimResult<Option<Var>> {
        let Some((o, source)) = self.caller_list(v) else {
            return Ok(None);
        };
        if self.effects.shadow_of(&o).is_some() {
            return Ok(None);
        }
        // Appended to through another name, it is that list only while the guards say so,
        // and its length is read through that name: the replacement reads it before it
        // replays the appends (`Effect::changes`). Any other list the call changed is
        // guarded to be another one.
        let (through, appended, replayed) = match self.effects.replayed_changes(&o) {
            Some((target, changes)) => {
                let appends = changes
                    .iter()
                    .filter(|c| matches!(c, ListChange::Append(_)))
                    .count();
                (target, appends, true)
            }
            None => (source.clone(), 0, false),
        };
        let length = Source::Len(Box::new(through.clone()));
        let changing = self.spec.number_is_input(&length, false);
        // A length that has not changed between calls is a constant; read after changes the
        // call replays as written, it is counted without reading the items (whose shadow
        // would fix the index of a store at a changing index by its value).
        if !changing && !replayed {
            return Ok(None);
        }
        if through != source {
            self.guard(&source, Check::SameAs(through.clone()));
        }
        for other in self.effects.apart_from(&o) {
            if other != through {
                self.guard(&source, Check::NotSameAs(other));
            }
        }
        self.guard(&source, Check::type_is(o.class().to_owned()));
        // The list as it was on entry: the call's appends are replayed after it.
        let at_entry = o
            .downcast_ref::<PyList>()
            .expect("a list")
            .borrow_vec()
            .len();
        let int = |n: usize| -> PyObjectRef { self.vm.ctx.new_int(n).into() };
        if !changing {
            self.guard(&through, Check::Len(at_entry));
            return Ok(Some(Var::Obj(int(at_entry + appended))));
        }
        let entry = Rc::new(Num {
            value: int(at_entry),
            expr: NumExpr::Read(int(at_entry), length),
            ops: 0,
        });
        if appended == 0 {
            return Ok(Some(Var::Num(entry)));
        }
        let added = Rc::new(Num {
            value: int(appended),
            expr: NumExpr::Const(int(appended)),
            ops: 0,
        });
        Ok(Some(Var::Num(Rc::new(Num {
            value: int(at_entry + appended),
            expr: NumExpr::Op(BinaryOperator::Add, entry, added),
            ops: 1,
        }))))
    }
}
