//! Calls and the functions they call: CALL, CALL_KW, CALL_FUNCTION_EX (arguments gathered as
//! Python gathers them; what is called is `values::calls`), MAKE_FUNCTION and
//! SET_FUNCTION_ATTRIBUTE (a function made during the simulation).

use std::rc::Rc;

use rustpython_vm::builtins::{PyCode, PyStr, PyTuple};
use rustpython_vm::bytecode::{MakeFunctionFlag, Opcode};

use super::{Flow, Handler, SimFrame};
use crate::bytecode::decode::Instr;
use crate::translate::state::{Kind, SimResult, State, Unsupported, unsupported};
use crate::translate::values::{SimFunction, Var};

impl State<'_> {
    /// CALL and CALL_KW: `callable, self or NULL, *args[, kwnames]`.
    pub(super) fn call(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let kwnames: Vec<String> = if x.op == Opcode::CallKw {
            let names = f.pop()?;
            let Var::Obj(t) = names else {
                return unsupported(Kind::Internal, "keyword names");
            };
            let t = t
                .downcast::<PyTuple>()
                .map_err(|_| Unsupported::new(Kind::Internal, "keyword names"))?;
            t.as_slice()
                .iter()
                .map(|n| {
                    n.downcast_ref::<PyStr>()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default()
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut args = f.popn(x.arg as usize)?;
        let this = f.pop()?;
        let callable = f.pop()?;
        if !matches!(this, Var::Null) {
            args.insert(0, this);
        }
        let npos = args.len() - kwnames.len();
        let kwargs: Vec<(String, Var)> = kwnames.into_iter().zip(args.split_off(npos)).collect();
        let r = self.call_value(&callable, args, kwargs, f)?;
        f.push(r);
        Ok(Flow::Next)
    }

    /// `f(*args, **kwargs)`.
    pub(super) fn call_function_ex(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let kwargs = f.pop()?;
        let args = f.pop()?;
        let this = f.pop()?;
        let callable = f.pop()?;
        let mut pos = self.items(&args)?;
        if !matches!(this, Var::Null) {
            pos.insert(0, this);
        }
        let kw = match kwargs {
            Var::Null => Vec::new(),
            other => self
                .dict_entries(&other)?
                .into_iter()
                .map(|(k, v)| {
                    k.downcast_ref::<PyStr>()
                        .map(|s| (s.to_string_lossy().into_owned(), v))
                        .ok_or_else(|| Unsupported::new(Kind::Value, "keywords must be strings"))
                })
                .collect::<SimResult<Vec<_>>>()?,
        };
        let r = self.call_value(&callable, pos, kw, f)?;
        f.push(r);
        Ok(Flow::Next)
    }

    pub(super) fn make_function(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let code = f.pop()?;
        let Var::Obj(code) = code else {
            return unsupported(Kind::Opcode, "MAKE_FUNCTION of a non-code");
        };
        let code = code
            .downcast::<PyCode>()
            .map_err(|_| Unsupported::new(Kind::Opcode, "MAKE_FUNCTION of a non-code"))?;
        let func = SimFunction {
            code,
            defaults: None,
            kwdefaults: None,
            annotations: None,
            closure: Vec::new(),
            globals: f.globals.clone(),
        };
        f.push(Var::Func(Rc::new(func)));
        Ok(Flow::Next)
    }

    pub(super) fn set_function_attribute(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let func = f.pop()?;
        let value = f.pop()?;
        let Var::Func(func) = func else {
            return unsupported(Kind::Opcode, "SET_FUNCTION_ATTRIBUTE on a non-function");
        };
        let mut new = SimFunction {
            code: func.code.clone(),
            defaults: func.defaults.clone(),
            kwdefaults: func.kwdefaults.clone(),
            annotations: func.annotations.clone(),
            closure: func.closure.clone(),
            globals: func.globals.clone(),
        };
        match MakeFunctionFlag::try_from(x.arg) {
            Ok(MakeFunctionFlag::Defaults) => new.defaults = Some(value),
            Ok(MakeFunctionFlag::KwOnlyDefaults) => new.kwdefaults = Some(value),
            Ok(MakeFunctionFlag::Closure) => {
                new.closure = self
                    .items(&value)?
                    .into_iter()
                    .map(|c| match c {
                        Var::Cell(c) => Ok(c),
                        _ => unsupported(Kind::Value, "a closure of non-cells"),
                    })
                    .collect::<SimResult<Vec<_>>>()?;
            }
            Ok(MakeFunctionFlag::Annotations | MakeFunctionFlag::Annotate) => {
                new.annotations = Some((x.arg, value));
            }
            _ => return unsupported(Kind::Opcode, "a function with type parameters"),
        }
        f.push(Var::Func(Rc::new(new)));
        Ok(Flow::Next)
    }
}
