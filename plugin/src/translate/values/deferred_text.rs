//! f-strings of numbers that change from call to call (`f"step {self.step}"`, `f"{lr:.3g}"`):
//! formatted now, such a string would fix the number by value, and a counter printed each
//! step would make every call translate again. Where a formatted value is a number the
//! simulation already keeps deferred (`Var::Num`), or a float or changing int read from the
//! frame (guarded by type only, as a number input is), the string stays a `Var::Text` of its
//! parts, and the replacement formats it again from them (`Template::Text`: FORMAT_SIMPLE
//! or FORMAT_WITH_SPEC, then BUILD_STRING), as the program does (`!s`, `!r` and `!a` of
//! such a number are its text with no spec). Any other use of the string
//! (a key, a comparison, a method) asks for its value (`State::obj`): the parts are forced
//! then, with their guards, as an f-string always was.

use std::rc::Rc;

use rustpython_vm::builtins::PyStr;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::state::{SimResult, State, Unsupported};
use crate::translate::templates::Template;
use crate::translate::values::Var;

/// A piece of a deferred string: text known now, or a value and the format spec it is
/// formatted with when the replacement runs.
#[derive(Debug, Clone)]
pub enum TextPart {
    Lit(String),
    Formatted(Var, String),
}

impl State<'_> {
    /// `format(v, spec)` kept deferred, where `v` is a number that changes from call to call;
    /// `None` where it is formatted now.
    pub(crate) fn deferred_format(&mut self, v: &Var, spec: &str) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let t = &vm.ctx.types;
        let now = match v {
            Var::Num(n) => n.value.clone(),
            Var::Lazy(o, source) => {
                let float = o.class().is(t.float_type);
                if !(float || o.class().is(t.int_type)) || !self.spec.number_is_input(source, float)
                {
                    return Ok(None);
                }
                o.clone()
            }
            // A nested f-string: formatting a str with no spec is the str.
            Var::Text(_) if spec.is_empty() => return Ok(Some(v.clone())),
            _ => return Ok(None),
        };
        // A spec that fits the value now fits every value of its type, but for `c` (an int
        // out of the characters' range raises).
        if spec.ends_with('c') || vm.format(&now, vm.ctx.new_str(spec)).is_err() {
            return Ok(None);
        }
        if let Var::Lazy(o, source) = v {
            self.guard(source, Check::type_is(o.class().to_owned()));
        }
        Ok(Some(Var::Text(Rc::new(vec![TextPart::Formatted(
            v.clone(),
            spec.to_owned(),
        )]))))
    }

    /// BUILD_STRING of `parts`, kept deferred if one of them is; `None` where none is.
    pub(crate) fn deferred_concat(&mut self, parts: &[Var]) -> Option<Var> {
        if !parts.iter().any(|p| matches!(p, Var::Text(_))) {
            return None;
        }
        let mut joined = Vec::new();
        for p in parts {
            match p {
                Var::Text(ps) => joined.extend(ps.iter().cloned()),
                Var::Obj(o) if let Some(s) = o.downcast_ref::<PyStr>() => {
                    joined.push(TextPart::Lit(s.to_string_lossy().into_owned()))
                }
                _ => return None,
            }
        }
        Some(Var::Text(Rc::new(joined)))
    }

    /// The string a deferred one is now: each part formatted, its value forced (guarded).
    pub(crate) fn forced_text(&mut self, parts: &[TextPart]) -> SimResult<PyObjectRef> {
        let vm = self.vm;
        let mut s = String::new();
        for p in parts {
            match p {
                TextPart::Lit(l) => s.push_str(l),
                TextPart::Formatted(v, spec) => {
                    let o = self.obj(v)?;
                    let f = vm
                        .format(&o, vm.ctx.new_str(spec.as_str()))
                        .map_err(|_| Unsupported::new(Kind::Raises, "formatting raises"))?;
                    s.push_str(&f.to_string_lossy());
                }
            }
        }
        Ok(vm.ctx.new_str(s).into())
    }
}

/// The template of a deferred string, each part's value built by `build`.
pub fn text_template(
    parts: &[TextPart],
    vm: &rustpython_vm::VirtualMachine,
    mut build: impl FnMut(&Var) -> SimResult<Template>,
) -> SimResult<Template> {
    let mut built = Vec::with_capacity(parts.len());
    for p in parts {
        built.push(match p {
            TextPart::Lit(l) => (Template::Const(vm.ctx.new_str(l.as_str()).into()), None),
            TextPart::Formatted(v, spec) => (build(v)?, Some(spec.clone())),
        });
    }
    Ok(Template::Text(built))
}
