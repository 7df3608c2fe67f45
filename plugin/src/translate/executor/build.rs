//! Building values: tuples, lists, dicts, strings and slices, the appends and merges of
//! comprehensions and calls, unpacking, formatting, template strings.

use std::cell::RefCell;
use std::rc::Rc;

use rustpython_vm::builtins::{PySlice, PyStr};
use rustpython_vm::bytecode::{ConvertValueOparg, Opcode};
use rustpython_vm::{PyObjectRef, PyPayload};

use super::{Flow, Handler, SimFrame};
use crate::bytecode::decode::Instr;
use crate::translate::state::{Kind, SimResult, State, Unsupported, unsupported};
use crate::translate::values::{Var, dict_insert, is_plain};

impl State<'_> {
    pub(super) fn build_tuple(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let items = f.popn(x.arg as usize)?;
        f.push(Var::tuple(items));
        Ok(Flow::Next)
    }

    pub(super) fn build_list(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let items = f.popn(x.arg as usize)?;
        f.push(Var::list(items));
        Ok(Flow::Next)
    }

    pub(super) fn build_map(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let flat = f.popn(2 * x.arg as usize)?;
        let mut entries: Vec<(PyObjectRef, Var)> = Vec::new();
        for pair in flat.chunks(2) {
            let key = self.key(&pair[0])?;
            dict_insert(&mut entries, key, pair[1].clone(), self.vm)?;
        }
        f.push(Var::Dict(Rc::new(RefCell::new(entries))));
        Ok(Flow::Next)
    }

    pub(super) fn build_string(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let parts = f.popn(x.arg as usize)?;
        if let Some(text) = self.deferred_concat(&parts) {
            f.push(text);
            return Ok(Flow::Next);
        }
        let mut s = String::new();
        for p in &parts {
            let o = self.obj(p)?;
            match o.downcast_ref::<PyStr>() {
                Some(x) => s.push_str(&x.to_string_lossy()),
                None => return unsupported(Kind::Opcode, "BUILD_STRING of a non-string"),
            }
        }
        f.push(Var::Obj(self.vm.ctx.new_str(s).into()));
        Ok(Flow::Next)
    }

    pub(super) fn build_interpolation(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let spec = if x.arg & 1 != 0 { Some(f.pop()?) } else { None };
        let expression = f.pop()?;
        let value = f.pop()?;
        let made = self.make_interpolation(value, expression, spec, x.arg >> 2)?;
        f.push(made);
        Ok(Flow::Next)
    }

    pub(super) fn build_template(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let interpolations = f.pop()?;
        let strings = f.pop()?;
        let made = self.make_template(strings, interpolations)?;
        f.push(made);
        Ok(Flow::Next)
    }

    pub(super) fn build_slice(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let vm = self.vm;
        let parts = f.popn(x.arg as usize)?;
        if let Some(slice) = self.symbolic_slice(parts.to_vec()) {
            f.push(slice);
            return Ok(Flow::Next);
        }
        let objs = parts
            .iter()
            .map(|p| self.obj(p))
            .collect::<SimResult<Vec<_>>>()?;
        if !objs.iter().all(|o| is_plain(o, vm)) {
            return unsupported(Kind::Value, "a slice of non-constant bounds");
        }
        let slice = PySlice {
            start: Some(objs[0].clone()),
            stop: objs[1].clone(),
            step: objs.get(2).cloned(),
        };
        f.push(Var::Obj(slice.into_pyobject(vm)));
        Ok(Flow::Next)
    }

    pub(super) fn list_append(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = f.pop()?;
        match f.top(x.arg as usize)? {
            Var::List(l) => l.borrow_mut().push(v),
            _ => return unsupported(Kind::Opcode, "LIST_APPEND to a non-list"),
        }
        Ok(Flow::Next)
    }

    pub(super) fn list_extend(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = f.pop()?;
        let items = self.items(&v)?;
        match f.top(x.arg as usize)? {
            Var::List(l) => l.borrow_mut().extend(items),
            _ => return unsupported(Kind::Opcode, "LIST_EXTEND to a non-list"),
        }
        Ok(Flow::Next)
    }

    pub(super) fn build_set(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let items = f.popn(x.arg as usize)?;
        let s = self.new_set(&items)?;
        f.push(s);
        Ok(Flow::Next)
    }

    /// SET_ADD (a set comprehension) and SET_UPDATE (`{*a, *b}`).
    pub(super) fn set_add_or_update(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = f.pop()?;
        let items = if x.op == rustpython_vm::bytecode::Opcode::SetAdd {
            vec![v]
        } else {
            self.items(&v)?
        };
        let s = f.top(x.arg as usize)?.clone();
        self.set_add(&s, &items)?;
        Ok(Flow::Next)
    }

    pub(super) fn map_add(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let value = f.pop()?;
        let key = f.pop()?;
        let key = self.key(&key)?;
        match f.top(x.arg as usize)?.clone() {
            Var::Dict(d) => dict_insert(&mut d.borrow_mut(), key, value, self.vm)?,
            _ => return unsupported(Kind::Opcode, "MAP_ADD to a non-dict"),
        }
        Ok(Flow::Next)
    }

    /// DICT_UPDATE, and DICT_MERGE (`**kwargs` of a call: a repeated key raises).
    pub(super) fn dict_update(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let vm = self.vm;
        let other = f.pop()?;
        let entries = self.dict_entries(&other)?;
        let Var::Dict(d) = f.top(x.arg as usize)?.clone() else {
            return unsupported(Kind::Opcode, "DICT_UPDATE of a non-dict");
        };
        for (k, v) in entries {
            let repeated = d
                .borrow()
                .iter()
                .any(|(k2, _)| vm.bool_eq(k2, &k).unwrap_or(false));
            if x.op == Opcode::DictMerge && repeated {
                return unsupported(Kind::Raises, "duplicate keyword argument (TypeError)");
            }
            dict_insert(&mut d.borrow_mut(), k, v, vm)?;
        }
        Ok(Flow::Next)
    }

    pub(super) fn unpack_sequence(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let v = f.pop()?;
        let items = self.items(&v)?;
        if items.len() != x.arg as usize {
            return unsupported(
                Kind::Raises,
                format!(
                    "unpacking {} values into {} (ValueError)",
                    items.len(),
                    x.arg
                ),
            );
        }
        f.stack.extend(items.into_iter().rev());
        Ok(Flow::Next)
    }

    pub(super) fn unpack_ex(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let before = (x.arg & 0xff) as usize;
        let after = (x.arg >> 8) as usize;
        let v = f.pop()?;
        let items = self.items(&v)?;
        if items.len() < before + after {
            return unsupported(Kind::Raises, "not enough values to unpack (ValueError)");
        }
        let middle = items[before..items.len() - after].to_vec();
        let mut out: Vec<Var> = items[..before].to_vec();
        out.push(Var::list(middle));
        out.extend(items[items.len() - after..].iter().cloned());
        f.stack.extend(out.into_iter().rev());
        Ok(Flow::Next)
    }

    /// FORMAT_SIMPLE and FORMAT_WITH_SPEC (f-strings) of plain values.
    pub(super) fn format_value(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let vm = self.vm;
        let spec = if x.op == Opcode::FormatWithSpec {
            Some(f.pop()?)
        } else {
            None
        };
        let v = f.pop()?;
        let spec_text = match &spec {
            None => Some(String::new()),
            Some(Var::Obj(s)) => s
                .downcast_ref::<PyStr>()
                .map(|s| s.to_string_lossy().into_owned()),
            Some(_) => None,
        };
        if let Some(spec_text) = spec_text
            && let Some(text) = self.deferred_format(&v, &spec_text)?
        {
            f.push(text);
            return Ok(Flow::Next);
        }
        let o = self.plain_obj(&v, "formatting")?;
        let spec = match spec {
            Some(s) => self
                .plain_obj(&s, "a format spec")?
                .downcast::<PyStr>()
                .map_err(|_| Unsupported::new(Kind::Value, "format spec"))?,
            None => vm.ctx.new_str(""),
        };
        let r = vm
            .format(&o, spec)
            .map_err(|_| Unsupported::new(Kind::Raises, "formatting raises"))?;
        f.push(Var::Obj(r.into()));
        Ok(Flow::Next)
    }

    pub(super) fn convert_value(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let vm = self.vm;
        let v = f.pop()?;
        let conv = ConvertValueOparg::try_from(x.arg)
            .map_err(|_| Unsupported::new(Kind::Internal, "bad conversion"))?;
        // `!s`, `!r` and `!a` of an int or a float are its text with no spec: deferred as
        // that (`deferred_text`) where the number changes from call to call.
        if matches!(v, Var::Num(_) | Var::Lazy(..))
            && let Some(text) = self.deferred_format(&v, "")?
        {
            f.push(text);
            return Ok(Flow::Next);
        }
        let o = self.plain_obj(&v, "a conversion")?;
        let r = match conv {
            ConvertValueOparg::Str => o.str(vm).map(Into::into),
            ConvertValueOparg::Repr => o.repr(vm).map(Into::into),
            ConvertValueOparg::Ascii => {
                rustpython_vm::stdlib::builtins::ascii(o, vm).map(Into::into)
            }
            ConvertValueOparg::None => Ok(o),
        };
        let r = r.map_err(|_| Unsupported::new(Kind::Raises, "conversion raises"))?;
        f.push(Var::Obj(r));
        Ok(Flow::Next)
    }
}
