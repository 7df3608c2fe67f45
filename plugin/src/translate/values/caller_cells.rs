//! Closure cells of the caller's functions that the simulation inlines: a decorator's
//! wrapper counting its calls (`nonlocal calls; calls += 1`), a counter made by a factory
//! (`inc` and `peek` over one `count`). Such a cell existed before the call, so a store
//! into it is a side effect, replayed by the replacement as `f.__closure__[i].cell_contents
//! = value` (`Effect::StoreClosureCell`); reads after it see the stored value.
//!
//! Two functions may hold one cell, and a function may be called more than once: the
//! simulation knows each cell by identity, one simulated cell per real one (reached again,
//! through the same function or another, it is the same: its stores are seen by every
//! reader), and the guards keep that true on other calls: two sources that reached one cell
//! are guarded to reach one cell, and a cell the call writes is guarded apart from every
//! other cell it reads.

use std::cell::RefCell;
use std::rc::Rc;

use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::guards::guard::Check;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State};
use crate::translate::values::{CellRef, CellState, Var};

/// A cell of the caller's that the simulation reached through an inlined function's closure.
#[derive(Clone, Debug)]
pub struct CallerCell {
    pub object: PyObjectRef,
    /// The function it was first reached through and its place in that closure.
    pub function: Source,
    pub index: usize,
    pub sim: CellRef,
    pub written: bool,
}

impl CallerCell {
    /// The cell itself, as guards compare it.
    fn cell(&self) -> Source {
        cell_of(&self.function, self.index)
    }
}

fn cell_of(function: &Source, index: usize) -> Source {
    Source::CellOf(Box::new(Source::Closure(Box::new(function.clone()), index)))
}

impl State<'_> {
    /// The simulated cell for `cell`, cell `index` of the closure of the inlined function
    /// read from `function`: the one made when it was first reached (the two sources guarded
    /// to reach one cell), or a new one holding its contents lazily.
    pub(super) fn caller_cell(
        &mut self,
        cell: &PyObjectRef,
        function: &Source,
        index: usize,
    ) -> CellRef {
        let this = cell_of(function, index);
        let known = self
            .effects
            .cells
            .iter()
            .find(|c| c.object.is(cell))
            .cloned();
        if let Some(known) = known {
            if known.cell() != this {
                self.guard(&this, Check::SameAs(known.cell()));
            }
            return known.sim;
        }
        let written: Vec<Source> = self
            .effects
            .cells
            .iter()
            .filter(|c| c.written)
            .map(CallerCell::cell)
            .collect();
        for other in written {
            self.guard(&this, Check::NotSameAs(other));
        }
        let read = Source::Closure(Box::new(function.clone()), index);
        let value = cell
            .get_attr("cell_contents", self.vm)
            .ok()
            .map(|v| Var::Lazy(v, read));
        let sim = Rc::new(RefCell::new(CellState {
            value,
            existing: true,
            home: None,
        }));
        self.effects.cells.push(CallerCell {
            object: cell.clone(),
            function: function.clone(),
            index,
            sim: sim.clone(),
            written: false,
        });
        sim
    }

    /// Records a store of `value` into `sim`, a cell of the caller's; `false` when `sim` is
    /// not one (the store is not simulated).
    pub fn store_caller_cell(&mut self, sim: &CellRef, value: &Var) -> SimResult<bool> {
        let Some(k) = self
            .effects
            .cells
            .iter()
            .position(|c| Rc::ptr_eq(&c.sim, sim))
        else {
            return Ok(false);
        };
        if !self.effects.cells[k].written {
            // Written, it must not be a cell read as another one on a later call.
            let this = self.effects.cells[k].cell();
            let others: Vec<Source> = self
                .effects
                .cells
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .map(|(_, c)| c.cell())
                .collect();
            for other in others {
                self.guard(&this, Check::NotSameAs(other));
            }
            self.effects.cells[k].written = true;
        }
        let c = &self.effects.cells[k];
        let effect = Effect::StoreClosureCell {
            function: c.function.clone(),
            index: c.index,
            value: value.clone(),
        };
        self.effects.output(effect);
        Ok(true)
    }
}
