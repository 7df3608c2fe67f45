//! How the replacement makes again a function the simulation made (a lambda, a nested
//! `def`) that outlives the call: returned, stored, or a local at a break. MAKE_FUNCTION of
//! its code, in the frame's globals as Python made it; its defaults and annotations built
//! from their templates; its closure the replacement's own cells, the same cells the frame's
//! other closures and its resume function hold, into which the replacement stores what the
//! simulation left there (`breaks::closure_cells`). A cell an inlined call made (a helper
//! that returns a closure) is made again with what it holds, one cell for all the functions
//! that hold it; a real closure's cell reached through an inlined function is not.

use std::collections::HashMap;
use std::rc::Rc;

use crate::graph::Value;
use crate::translate::breaks::closure_cells::CellStore;
use crate::translate::state::{Kind, SimResult, State, unsupported};
use crate::translate::templates::{Template, build, load_early};
use crate::translate::values::{SimFunction, Var};

/// SET_FUNCTION_ATTRIBUTE's flags (as CPython's): positional defaults, keyword-only
/// defaults, the closure.
const DEFAULTS: u32 = 0x01;
const KEYWORD_DEFAULTS: u32 = 0x02;
pub const CLOSURE: u32 = 0x08;

/// The template of `f`; `build` makes the templates of what it holds.
pub fn function_template(
    state: &mut State<'_>,
    f: &SimFunction,
    mut build: impl FnMut(&mut State<'_>, &Var) -> SimResult<Template>,
) -> SimResult<Template> {
    if f.globals.owner.is_some() {
        return unsupported(
            Kind::Rebuild,
            "a function made by a call into another module's function",
        );
    }
    let mut closure = Vec::with_capacity(f.closure.len());
    for cell in &f.closure {
        let frame_cell = state
            .templating
            .frame_cells
            .iter()
            .find(|(_, c)| Rc::ptr_eq(c, cell))
            .map(|(n, c)| (n.clone(), !c.borrow().existing));
        match frame_cell {
            Some((name, own)) => {
                state.templating.closes_over_own_cells |= own;
                closure.push(ClosureCell::Frame(name));
            }
            // An inlined call's own variable: nothing but functions made in the call holds it.
            None if !cell.borrow().existing => {
                let made = build(state, &Var::Cell(cell.clone()))?;
                closure.push(ClosureCell::Made(made));
            }
            None => {
                return unsupported(
                    Kind::Rebuild,
                    "a function closing over a free variable of an inlined function",
                );
            }
        }
    }
    let mut attributes = Vec::new();
    for (flag, value) in [(DEFAULTS, &f.defaults), (KEYWORD_DEFAULTS, &f.kwdefaults)] {
        if let Some(v) = value {
            attributes.push((flag, build(state, v)?));
        }
    }
    if let Some((flag, v)) = &f.annotations {
        attributes.push((*flag, build(state, v)?));
    }
    Ok(Template::Function {
        code: f.code.clone().into(),
        closure,
        attributes,
    })
}

/// A cell of a function made again: the replacement's own, by name, or one an inlined call
/// made, made again (`types.CellType(value)`, shared by the functions that hold it).
#[derive(Clone, Debug)]
pub enum ClosureCell {
    Frame(String),
    Made(Template),
}

/// `state.templating.cell_stores`: the templates of `stores`, built as the frame's state is
/// (after the side effects).
pub(super) fn cell_templates(
    state: &mut State<'_>,
    stores: Vec<CellStore<Var>>,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<()> {
    let after = state.effects.log.len();
    for c in stores {
        let value = match &c.value {
            Some(v) => {
                let mut t = build(state, v, outputs, index)?;
                load_early(state, after, &mut t);
                Some(t)
            }
            None => None,
        };
        state.templating.cell_stores.push(CellStore {
            name: c.name,
            value,
        });
    }
    Ok(())
}
