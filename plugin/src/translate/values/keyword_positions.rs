//! The keyword arguments of the size-taking tensor methods the simulation works out itself
//! (`x.view(size=(B, T))`, `x.narrow(dim=1, start=0, length=T)`, `x.split(split_size=2)`),
//! moved to their positions, so that a keyword spelling keeps its sizes as expressions as the
//! positional one does instead of fixing them.

use rustpython_vm::PyObjectRef;

use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;

/// For each method, the names each position after the tensor may be given by.
const POSITIONS: &[(&str, &[&[&str]])] = &[
    ("view", &[&["size"]]),
    ("reshape", &[&["shape"]]),
    ("expand", &[&["size"]]),
    ("narrow", &[&["dim"], &["start"], &["length"]]),
    (
        "split",
        &[&["split_size_or_sections", "split_size"], &["dim"]],
    ),
    ("chunk", &[&["chunks"], &["dim"]]),
];

/// `args` and `kwargs` with the keywords that name the next positions moved there, in
/// order (`None`: nothing to move).
fn moved_to_positions(
    name: &str,
    args: &[Var],
    kwargs: &[(String, Var)],
) -> Option<(Vec<Var>, Vec<(String, Var)>)> {
    if kwargs.is_empty() || args.is_empty() {
        return None;
    }
    let (_, params) = POSITIONS.iter().find(|(n, _)| *n == name)?;
    let mut args = args.to_vec();
    let mut rest = kwargs.to_vec();
    // Position 0 is the tensor.
    for (i, names) in params.iter().enumerate() {
        if args.len() > i + 1 {
            continue;
        }
        let Some(k) = rest.iter().position(|(k, _)| names.contains(&k.as_str())) else {
            break;
        };
        args.push(rest.remove(k).1);
    }
    (rest.len() < kwargs.len()).then_some((args, rest))
}

impl State<'_> {
    /// A size-taking tensor function or method called with sizes that may change, or on a
    /// tensor whose sizes may, by position or by keyword (see `symbolic_call_positional`).
    pub(crate) fn symbolic_call(
        &mut self,
        what: &str,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let name = what.rsplit('.').next().unwrap_or(what);
        match moved_to_positions(name, args, kwargs) {
            Some((args, kwargs)) => self.symbolic_call_positional(what, f, &args, &kwargs),
            None => self.symbolic_call_positional(what, f, args, kwargs),
        }
    }
}
