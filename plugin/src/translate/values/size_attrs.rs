//! `symtrace.call_op(name, *inputs, **attrs)` with sizes that may change among its int
//! attributes: `F.pad(x, (0, block - T))` pads to a block whatever `T` is. The op runs on this
//! call's values and its node takes those attributes as expressions worked out per call (shape
//! inference runs again on each call's sizes, as for a view's). Where the node cannot take
//! them, the sizes are forced, as any other use of a size forces it.

use rustpython_vm::PyObjectRef;

use crate::graph::sizes::SymAttr;
use crate::tensor::size_reads;
use crate::translate::state::{SimResult, State};
use crate::translate::values::Var;

impl State<'_> {
    /// `call_op` whose keyword attributes hold sizes that may change (`None`: some attribute
    /// is not an int or a sequence of ints; the caller runs it as usual, forcing them).
    pub(super) fn symbolic_op_attrs(
        &mut self,
        what: &str,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let mut values = Vec::with_capacity(kwargs.len());
        let mut syms = Vec::new();
        let mut used = Vec::new();
        for (name, v) in kwargs {
            if !self.contains_symbolic(v) {
                values.push((name.clone(), v.clone()));
                continue;
            }
            if matches!(v, Var::Tuple(_) | Var::List(_)) {
                let items = self.items(v)?;
                let Some(exprs) = self.size_operands(&items)? else {
                    return Ok(None);
                };
                let hints = exprs.iter().map(|(_, h)| self.int_var(*h)).collect();
                values.push((name.clone(), Var::Tuple(std::rc::Rc::new(hints))));
                syms.push(SymAttr::Ints(
                    name.clone(),
                    exprs.into_iter().map(|(e, _)| e).collect(),
                ));
                used.extend(items);
            } else {
                let Some((expr, hint)) = self.size_operand(v)? else {
                    return Ok(None);
                };
                values.push((name.clone(), self.int_var(hint)));
                syms.push(SymAttr::Int(name.clone(), expr));
                used.push(v.clone());
            }
        }
        let reads = size_reads::mark();
        let r = self.native_call_as_is(f, args.to_vec(), values, what, false)?;
        let mut attached = true;
        for sym in syms {
            attached &= self.attach_more(&r, sym, &used)?;
        }
        if attached {
            size_reads::forget_since(reads);
        }
        Ok(Some(r))
    }
}
