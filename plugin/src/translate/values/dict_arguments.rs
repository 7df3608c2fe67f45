//! The entries `dict(*args, **kwargs)` makes (also a dict subclass's `__init__` and
//! `update`): from a mapping, or from an iterable of pairs, then the keywords.

use rustpython_vm::{PyObjectRef, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;

impl State<'_> {
    /// The entries `dict(*args, **kwargs)` makes: from a mapping, or from an iterable of
    /// pairs, then the keywords.
    pub(super) fn dict_arguments(
        &mut self,
        args: &[Var],
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Vec<(PyObjectRef, Var)>> {
        let vm = self.vm;
        let mut entries = Vec::new();
        match args {
            [] => {}
            [m @ Var::Dict(_)] => entries = self.dict_entries(m)?,
            [m @ Var::Lazy(o, _)] if crate::translate::state::is_dict(o, vm) => {
                entries = self.dict_entries(m)?
            }
            // Not a dict: a mapping when it has `keys` (read through `keys()` and its
            // `__getitem__`, as the interpreter reads it), else an iterable of pairs.
            [m] if has_keys(m, vm) => entries = self.dict_entries(m)?,
            [pairs] => {
                for pair in self.items(pairs)? {
                    match self.items(&pair)?.as_slice() {
                        [k, v] => {
                            let k = self.key(k)?;
                            crate::translate::values::dict_insert(&mut entries, k, v.clone(), vm)?;
                        }
                        _ => {
                            return unsupported(
                                Kind::Raises,
                                "dictionary update sequence element has the wrong length (ValueError)",
                            );
                        }
                    }
                }
            }
            _ => return unsupported(Kind::Call, "dict() with these arguments"),
        }
        for (k, v) in kwargs {
            crate::translate::values::dict_insert(&mut entries, vm.ctx.new_str(k).into(), v, vm)?;
        }
        Ok(entries)
    }
}

/// Whether `v`'s class has `keys` (what makes the interpreter read it as a mapping): a value
/// the simulation holds as a list, a tuple, an iterator... has none.
pub(super) fn has_keys(v: &Var, vm: &VirtualMachine) -> bool {
    let class = match v {
        Var::Object(o) => o.class.clone(),
        Var::Obj(o) | Var::Lazy(o, _) => o.class().to_owned(),
        _ => return false,
    };
    class.get_attr(vm.ctx.intern_str("keys")).is_some()
}
