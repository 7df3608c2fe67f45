//! How the replacement makes again a function the simulation made (a lambda, a nested
//! `def`) that outlives the call: returned, stored, or a local at a break. MAKE_FUNCTION of
//! its code, in the frame's globals as Python made it; its defaults and annotations built
//! from their templates; its closure the replacement's own cells, the same cells the frame's
//! other closures and its resume function hold, into which the replacement stores what the
//! simulation left there (`breaks::closure_cells`). A cell of an inlined call has no cell in
//! the replacement: such a function is not made again.

use std::rc::Rc;

use crate::translate::state::{Kind, SimResult, State, unsupported};
use crate::translate::templates::Template;
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
        let Some((name, own)) = state
            .templating
            .frame_cells
            .iter()
            .find(|(_, c)| Rc::ptr_eq(c, cell))
            .map(|(n, c)| (n.clone(), !c.borrow().existing))
        else {
            return unsupported(
                Kind::Rebuild,
                "a function closing over a variable of an inlined call",
            );
        };
        state.templating.closes_over_own_cells |= own;
        closure.push(name);
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
