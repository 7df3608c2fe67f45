//! Template strings (PEP 750, `t"hello {name}"`): the `Template` and its `Interpolation`s made
//! during the simulation. A template formats nothing: it holds its values as they are (a
//! tensor, an argument), so making one relies on nothing; what the program reads of it
//! (`strings`, `interpolations`, `values`, its parts in order, an interpolation's fields) is
//! read from what the simulation made, and the replacement makes it again with the VM's own
//! BUILD_INTERPOLATION and BUILD_TEMPLATE (`tstr_template`). A template or interpolation of
//! the caller's is read through its native fields, its type guarded.

use std::rc::Rc;

use rustpython_vm::builtins::{PyStr, PyTuple};
use rustpython_vm::bytecode::{BinaryOperator, Opcode};
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::templates::Template;
use crate::translate::values::Var;

/// A template string's part made during the simulation.
#[derive(Debug)]
pub enum TStr {
    /// `Template`: its literal strings (one more than its interpolations, empty ones kept:
    /// a constant tuple of str) and its interpolations (each a `TStr::Interpolation`, or an
    /// interpolation of the caller's).
    Template {
        strings: PyObjectRef,
        interpolations: Vec<Var>,
    },
    /// `Interpolation(value, expression, conversion, format_spec)`: `conversion` as
    /// BUILD_INTERPOLATION numbers it (0 none, 1 `s`, 2 `r`, 3 `a`), `format_spec` a str (a
    /// constant, or formatted from changing numbers: `{x:.{digits}f}`).
    Interpolation {
        value: Var,
        expression: PyObjectRef,
        conversion: u32,
        format_spec: Var,
    },
}

impl TStr {
    pub fn class_name(&self) -> &'static str {
        match self {
            TStr::Template { .. } => "Template",
            TStr::Interpolation { .. } => "Interpolation",
        }
    }

    /// Its class.
    pub fn class(&self, vm: &VirtualMachine) -> PyObjectRef {
        match self {
            TStr::Template { .. } => vm.ctx.types.template_type.to_owned().into(),
            TStr::Interpolation { .. } => vm.ctx.types.interpolation_type.to_owned().into(),
        }
    }

    /// The values it holds, which the replacement builds when it makes it again.
    pub fn held(&self) -> Vec<&Var> {
        match self {
            TStr::Template { interpolations, .. } => interpolations.iter().collect(),
            TStr::Interpolation {
                value, format_spec, ..
            } => vec![value, format_spec],
        }
    }
}

/// The fields a caller's template or interpolation is read by (all immutable).
const TEMPLATE_FIELDS: [&str; 3] = ["strings", "interpolations", "values"];
const INTERPOLATION_FIELDS: [&str; 4] = ["value", "expression", "conversion", "format_spec"];

impl State<'_> {
    /// BUILD_INTERPOLATION's value from what it pops.
    pub fn make_interpolation(
        &mut self,
        value: Var,
        expression: Var,
        format_spec: Option<Var>,
        conversion: u32,
    ) -> SimResult<Var> {
        let vm = self.vm;
        let expression = match expression {
            Var::Obj(o) if o.downcast_ref::<PyStr>().is_some() => o,
            _ => return unsupported(Kind::Opcode, "BUILD_INTERPOLATION of a non-constant text"),
        };
        if conversion > 3 {
            return unsupported(
                Kind::Opcode,
                "BUILD_INTERPOLATION with an unknown conversion",
            );
        }
        let format_spec = match format_spec {
            None => Var::Obj(vm.ctx.empty_str.to_owned().into()),
            Some(spec @ Var::Text(_)) => spec,
            Some(spec) => {
                let o = self.obj(&spec)?;
                if !o.class().is(vm.ctx.types.str_type) {
                    return unsupported(Kind::Raises, "a format spec that is not a str");
                }
                spec
            }
        };
        Ok(Var::TStr(Rc::new(TStr::Interpolation {
            value,
            expression,
            conversion,
            format_spec,
        })))
    }

    /// BUILD_TEMPLATE's value from its strings and interpolations.
    pub fn make_template(&mut self, strings: Var, interpolations: Var) -> SimResult<Var> {
        let vm = self.vm;
        let strings = match strings {
            Var::Obj(o)
                if o.downcast_ref::<PyTuple>()
                    .is_some_and(|t| t.iter().all(|s| s.class().is(vm.ctx.types.str_type))) =>
            {
                o
            }
            _ => return unsupported(Kind::Opcode, "BUILD_TEMPLATE of non-constant strings"),
        };
        let interpolations = match &interpolations {
            Var::Tuple(items) => items.to_vec(),
            Var::Obj(o) if o.downcast_ref::<PyTuple>().is_some_and(|t| t.is_empty()) => Vec::new(),
            _ => return unsupported(Kind::Opcode, "BUILD_TEMPLATE of non-tuple interpolations"),
        };
        let count = strings.downcast_ref::<PyTuple>().map_or(0, |t| t.len());
        if count != interpolations.len() + 1 {
            return unsupported(Kind::Opcode, "BUILD_TEMPLATE of mismatched parts");
        }
        Ok(Var::TStr(Rc::new(TStr::Template {
            strings,
            interpolations,
        })))
    }

    /// An attribute of a template or an interpolation (made here, or the caller's); `None`
    /// for another value.
    pub fn tstr_attr(&mut self, owner: &Var, name: &str) -> SimResult<Option<Var>> {
        let vm = self.vm;
        if let Var::Lazy(o, source) = owner {
            let fields: &[&str] = if o.class().is(vm.ctx.types.template_type) {
                &TEMPLATE_FIELDS
            } else if o.class().is(vm.ctx.types.interpolation_type) {
                &INTERPOLATION_FIELDS
            } else {
                return Ok(None);
            };
            if !fields.contains(&name) {
                return Ok(None);
            }
            self.guard(source, Check::type_is(o.class().to_owned()));
            if name == "values" {
                // A getter that makes a new tuple per read: guards read it through the
                // interpolations, a member, instead.
                let interpolations = self.tstr_attr(owner, "interpolations")?.expect("a field");
                let mut values = Vec::new();
                for i in self.items(&interpolations)? {
                    values.push(self.attr_of(&i, "value")?);
                }
                return Ok(Some(Var::tuple(values)));
            }
            let v = o
                .get_attr(&vm.ctx.new_str(name), vm)
                .map_err(|_| Unsupported::new(Kind::Internal, format!("Template.{name}")))?;
            let read = Source::NativeAttr(Box::new(source.clone()), name.to_owned());
            return Ok(Some(Var::Lazy(v, read)));
        }
        let Var::TStr(t) = owner else {
            return Ok(None);
        };
        Ok(Some(match (&**t, name) {
            (TStr::Template { strings, .. }, "strings") => Var::Obj(strings.clone()),
            (TStr::Template { interpolations, .. }, "interpolations") => {
                Var::tuple(interpolations.clone())
            }
            (TStr::Template { interpolations, .. }, "values") => {
                let mut values = Vec::with_capacity(interpolations.len());
                for i in interpolations {
                    values.push(self.attr_of(i, "value")?);
                }
                Var::tuple(values)
            }
            (TStr::Interpolation { value, .. }, "value") => value.clone(),
            (TStr::Interpolation { expression, .. }, "expression") => Var::Obj(expression.clone()),
            (TStr::Interpolation { conversion, .. }, "conversion") => Var::Obj(match conversion {
                1 => vm.ctx.new_str("s").into(),
                2 => vm.ctx.new_str("r").into(),
                3 => vm.ctx.new_str("a").into(),
                _ => vm.ctx.none(),
            }),
            (TStr::Interpolation { format_spec, .. }, "format_spec") => format_spec.clone(),
            (t, _) => {
                return unsupported(
                    Kind::Value,
                    format!("attribute {name} of a {}", t.class_name()),
                );
            }
        }))
    }

    /// A template's parts in the order iterating it gives them: each string that is not
    /// empty, and each interpolation, in turn.
    pub fn tstr_items(&mut self, t: &TStr) -> SimResult<Vec<Var>> {
        let TStr::Template {
            strings,
            interpolations,
        } = t
        else {
            return unsupported(Kind::Value, "iteration over an Interpolation");
        };
        let strings = strings
            .downcast_ref::<PyTuple>()
            .expect("checked when made");
        let mut parts = Vec::with_capacity(strings.len() + interpolations.len());
        for (k, s) in strings.iter().enumerate() {
            if s.downcast_ref::<PyStr>().is_some_and(|s| !s.is_empty()) {
                parts.push(Var::Obj(s.clone()));
            }
            if let Some(i) = interpolations.get(k) {
                parts.push(i.clone());
            }
        }
        Ok(parts)
    }

    /// `a + b` of two templates made here: the last string of `a` joined to the first of
    /// `b`, as `Template.__add__` joins them; `None` for other operands.
    pub fn tstr_binary(&mut self, op: BinaryOperator, a: &Var, b: &Var) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let (Var::TStr(a), Var::TStr(b)) = (a, b) else {
            return Ok(None);
        };
        if !matches!(op, BinaryOperator::Add | BinaryOperator::InplaceAdd) {
            return Ok(None);
        }
        let (
            TStr::Template {
                strings: sa,
                interpolations: ia,
            },
            TStr::Template {
                strings: sb,
                interpolations: ib,
            },
        ) = (&**a, &**b)
        else {
            return unsupported(Kind::Value, "operator + on an Interpolation");
        };
        let text = |o: &PyObjectRef| -> Vec<String> {
            o.downcast_ref::<PyTuple>()
                .expect("checked when made")
                .iter()
                .map(|s| {
                    s.downcast_ref::<PyStr>()
                        .expect("a str")
                        .as_wtf8()
                        .to_string()
                })
                .collect()
        };
        let (mut first, second) = (text(sa), text(sb));
        let joined = first.pop().unwrap_or_default() + &second[0];
        first.push(joined);
        first.extend(second.into_iter().skip(1));
        let strings = first
            .into_iter()
            .map(|s| vm.ctx.new_str(s).into())
            .collect::<Vec<PyObjectRef>>();
        Ok(Some(Var::TStr(Rc::new(TStr::Template {
            strings: vm.ctx.new_tuple(strings).into(),
            interpolations: ia.iter().chain(ib).cloned().collect(),
        }))))
    }
}

/// How the replacement makes a template or interpolation again, each value it holds built by
/// `build`: the VM's own instructions, as the original made it.
pub fn tstr_template(
    t: &TStr,
    mut build: impl FnMut(&Var) -> SimResult<Template>,
) -> SimResult<Template> {
    Ok(match t {
        TStr::Template {
            strings,
            interpolations,
        } => {
            let mut made = Vec::with_capacity(interpolations.len());
            for i in interpolations {
                made.push(build(i)?);
            }
            Template::Instr(
                Opcode::BuildTemplate,
                0,
                vec![Template::Const(strings.clone()), Template::Tuple(made)],
            )
        }
        TStr::Interpolation {
            value,
            expression,
            conversion,
            format_spec,
        } => Template::Instr(
            Opcode::BuildInterpolation,
            conversion << 2 | 1,
            vec![
                build(value)?,
                Template::Const(expression.clone()),
                build(format_spec)?,
            ],
        ),
    })
}
