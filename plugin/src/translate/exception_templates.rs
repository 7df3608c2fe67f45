//! How the replacement makes again an exception the simulation made: `class(*args)`, raised
//! out of the frame or held as a value.

use std::collections::HashMap;

use crate::graph::Value;
use crate::translate::state::{Kind, SimResult, State, unsupported};
use crate::translate::templates::{Template, build};
use crate::translate::values::Var;

/// The template of the exception a frame raises out of itself (the replacement raises it,
/// and the VM gives it its traceback).
pub(super) fn raised_template(
    state: &mut State<'_>,
    v: &Var,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    match v {
        Var::Obj(o) if let Some(made) = state.made_exception(o) => {
            exception_template(state, &made.clone(), outputs, index)
        }
        other => build(state, other, outputs, index),
    }
}

/// `class(*args)`, for an exception the simulation made.
pub(super) fn exception_template(
    state: &mut State<'_>,
    made: &crate::translate::values::exceptions::MadeException,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    if made.chained {
        return unsupported(
            Kind::Rebuild,
            "an exception raised while another was handled (made again, it would lose its __context__)",
        );
    }
    if made.caused {
        return unsupported(
            Kind::Rebuild,
            "an exception raised from a cause (made again, it would lose its __cause__)",
        );
    }
    if !made.attributes.is_empty() {
        return unsupported(
            Kind::Rebuild,
            "an exception the VM sets attributes on (made again, an AttributeError would lack its name and obj)",
        );
    }
    if made.crossed {
        return unsupported(
            Kind::Rebuild,
            "an exception raised out of an inlined call (made again, its traceback would lack the call)",
        );
    }
    let args = made
        .args
        .iter()
        .map(|a| build(state, a, outputs, index))
        .collect::<SimResult<_>>()?;
    Ok(Template::New(made.class.clone().into(), args))
}
