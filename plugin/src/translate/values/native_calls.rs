//! Calls of native functions on the simulation's values: plain values computed now, and
//! the tensor functions and methods run on fakes (the registry records each op), after the
//! numbers that change per call become graph inputs where an op takes them as scalars.

use rustpython_vm::PyObjectRef;
use rustpython_vm::function::FuncArgs;

use crate::translate::state::{Kind, SimResult, State, unsupported};
use crate::translate::values::Var;
use crate::translate::values::tensor_functions::native_operand;

impl State<'_> {
    /// Run native `f` on plain values.
    pub(super) fn plain_call(
        &mut self,
        f: &PyObjectRef,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
        what: &str,
    ) -> SimResult<Var> {
        let vm = self.vm;
        let mut pos = Vec::new();
        for a in &args {
            pos.push(self.plain_obj(a, what)?);
        }
        let mut kw = Vec::new();
        for (k, v) in &kwargs {
            kw.push((k.clone(), self.plain_obj(v, what)?));
        }
        let kw: rustpython_vm::function::KwArgs = kw.into_iter().collect();
        let r = f.call(FuncArgs::new(pos, kw), vm);
        self.native_result(r, false, what)
    }

    /// Run a tensor function or method on fakes and plain values; with sizes that change
    /// from call to call, as `sizes` says.
    pub(super) fn native_call(
        &mut self,
        f: &PyObjectRef,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
        what: &str,
        meta_only: bool,
    ) -> SimResult<Var> {
        let (args, kwargs) = self.scalars_as_inputs(what, args, kwargs)?;
        if let Some(r) = self.full_of_input(what, f, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.tensor_of_input(what, &args, &kwargs)? {
            return Ok(r);
        }
        if let Some(r) = self.symbolic_call(what, f, &args, &kwargs)? {
            return Ok(r);
        }
        self.native_call_as_is(f, args, kwargs, what, meta_only)
    }

    /// Run a tensor function or method on fakes and plain values (sizes forced).
    pub(super) fn native_call_as_is(
        &mut self,
        f: &PyObjectRef,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
        what: &str,
        meta_only: bool,
    ) -> SimResult<Var> {
        let vm = self.vm;
        let mut from_fakes = false;
        let mut pos = Vec::new();
        for a in &args {
            let o = self.obj(a)?;
            from_fakes |= self.holds_fake(&o);
            if !native_operand(&o, vm) {
                return unsupported(Kind::Value, format!("{what} on a {}", o.class().name()));
            }
            pos.push(o);
        }
        let mut kw = Vec::new();
        for (k, v) in &kwargs {
            let o = self.obj(v)?;
            if k == "generator" && !vm.is_none(&o) {
                return unsupported(
                    Kind::SideEffect,
                    format!(
                        "{what} draws from a Generator, whose own stream a graph does not hold"
                    ),
                );
            }
            from_fakes |= self.holds_fake(&o);
            kw.push((k.clone(), o));
        }
        let kw: rustpython_vm::function::KwArgs = kw.into_iter().collect();
        let r = f.call(FuncArgs::new(pos, kw), vm);
        if meta_only {
            return self.native_result(r, false, what);
        }
        self.native_result(r, from_fakes, what)
    }
}
