//! Builtins the simulation models: `len`, `isinstance`, `type`, `range`, `zip`,
//! `enumerate`, `reversed`, `tuple`, `list`, `dict`, `getattr`, `sum`, and the pure ones
//! computed on plain values.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rustpython_vm::builtins::{PyDict, PyStr, PyTuple, PyType};
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::{Var, is_plain};

impl State<'_> {
    /// The name of `o` if it is one of the interpreter's builtins. Only a builtin function
    /// or a type whose metaclass is `type` is asked its `__name__`: on any other object the
    /// attribute could be a property, and the simulation never runs user code.
    pub(super) fn builtin_name(&self, o: &PyObjectRef) -> Option<String> {
        let vm = self.vm;
        let class = o.class();
        if !class.is(vm.ctx.types.builtin_function_or_method_type)
            && !class.is(vm.ctx.types.type_type)
        {
            return None;
        }
        let name = o.get_attr("__name__", vm).ok()?;
        let name = name.downcast_ref::<PyStr>()?.to_string_lossy().into_owned();
        let found = vm
            .builtins
            .dict()
            .get_item_opt(name.as_str(), vm)
            .ok()
            .flatten()?;
        found.is(o).then_some(name)
    }

    pub(super) fn builtin(
        &mut self,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        let vm = self.vm;
        let only_pos = |n: usize| -> SimResult<()> {
            if !kwargs.is_empty() || args.len() != n {
                return unsupported(Kind::Call, format!("{name}() with these arguments"));
            }
            Ok(())
        };
        match name {
            "len" => {
                only_pos(1)?;
                let n = match &args[0] {
                    Var::Tuple(_) | Var::List(_) | Var::Dict(_) | Var::View(..) => {
                        self.items(&args[0])?.len()
                    }
                    Var::Lazy(o, s) if crate::translate::state::is_dict(o, vm) => {
                        self.effects.check_readable(o)?;
                        let n = o.downcast_ref::<PyDict>().expect("dict").__len__();
                        self.guard(s, Check::TypeIs(o.class().to_owned()));
                        self.guard(s, Check::Len(n));
                        n
                    }
                    Var::Lazy(o, s)
                        if o.class().is(vm.ctx.types.tuple_type)
                            || o.class().is(vm.ctx.types.list_type) =>
                    {
                        self.lazy_items(o, s)?.expect("sequence").len()
                    }
                    other => {
                        let o = self.obj(other)?;
                        if !(is_plain(&o, vm) || o.downcast_ref::<PyTensor>().is_some()) {
                            return unsupported(
                                Kind::Value,
                                format!("len() of a {}", o.class().name()),
                            );
                        }
                        o.length(vm)
                            .map_err(|_| Unsupported::new(Kind::Raises, "len() raises"))?
                    }
                };
                Ok(Var::Obj(vm.ctx.new_int(n).into()))
            }
            "isinstance" => {
                only_pos(2)?;
                let t = self.type_of(&args[0])?;
                let classes = self.obj(&args[1])?;
                let t = t
                    .downcast::<PyType>()
                    .map_err(|_| Unsupported::new(Kind::Value, "type"))?;
                let classes: Vec<PyObjectRef> = match classes.downcast_ref::<PyTuple>() {
                    Some(c) => c.as_slice().to_vec(),
                    None => vec![classes.clone()],
                };
                let mut hit = false;
                for c in &classes {
                    let Some(c) = c.downcast_ref::<PyType>() else {
                        return unsupported(Kind::Call, "isinstance() with a non-class");
                    };
                    if c.class().is(vm.ctx.types.type_type) {
                        hit |= t.fast_issubclass(c);
                    } else {
                        return unsupported(Kind::Call, "isinstance() with a metaclass");
                    }
                }
                Ok(Var::Obj(vm.ctx.new_bool(hit).into()))
            }
            "type" => {
                only_pos(1)?;
                Ok(Var::Obj(self.type_of(&args[0])?))
            }
            "range" => {
                let o = self.builtins_obj(name)?;
                self.plain_call(&o, args, kwargs, "range()")
            }
            "zip" | "enumerate" | "reversed" | "tuple" | "list" => {
                if !kwargs.is_empty()
                    && (name != "enumerate" || kwargs.iter().any(|(k, _)| k != "start"))
                {
                    return unsupported(Kind::Call, format!("{name}() with keyword arguments"));
                }
                let items: Vec<Var> = match name {
                    "zip" => {
                        let lists = args
                            .iter()
                            .map(|a| self.items(a))
                            .collect::<SimResult<Vec<_>>>()?;
                        let n = lists.iter().map(Vec::len).min().unwrap_or(0);
                        (0..n)
                            .map(|i| Var::tuple(lists.iter().map(|l| l[i].clone()).collect()))
                            .collect()
                    }
                    "enumerate" => {
                        let start = match (args.get(1), kwargs.first()) {
                            (Some(s), _) | (None, Some((_, s))) => self
                                .plain_obj(s, "enumerate start")?
                                .try_index(vm)
                                .map_err(|_| Unsupported::new(Kind::Raises, "start"))?
                                .try_to_primitive::<i64>(vm)
                                .map_err(|_| Unsupported::new(Kind::Raises, "start"))?,
                            _ => 0,
                        };
                        let Some(it) = args.first() else {
                            return unsupported(Kind::Value, "enumerate()");
                        };
                        let items = self.items(it)?;
                        items
                            .into_iter()
                            .enumerate()
                            .map(|(i, v)| {
                                Var::tuple(vec![
                                    Var::Obj(vm.ctx.new_int(start + i as i64).into()),
                                    v,
                                ])
                            })
                            .collect()
                    }
                    _ => {
                        let items = match args.as_slice() {
                            [] if name != "reversed" => Vec::new(),
                            [x] => self.items(x)?,
                            _ => {
                                return unsupported(
                                    Kind::Call,
                                    format!("{name}() with these arguments"),
                                );
                            }
                        };
                        if name == "reversed" {
                            items.into_iter().rev().collect()
                        } else {
                            items
                        }
                    }
                };
                Ok(match name {
                    "tuple" => Var::tuple(items),
                    "list" => Var::list(items),
                    _ => Var::Iter(Rc::new(RefCell::new(VecDeque::from(items)))),
                })
            }
            "dict" => {
                let mut entries = Vec::new();
                if let [m] = args.as_slice() {
                    entries = self.dict_entries(m)?;
                } else if !args.is_empty() {
                    return unsupported(Kind::Call, "dict() with these arguments");
                }
                for (k, v) in kwargs {
                    crate::translate::values::dict_insert(
                        &mut entries,
                        vm.ctx.new_str(k).into(),
                        v,
                        vm,
                    )?;
                }
                Ok(Var::Dict(Rc::new(RefCell::new(entries))))
            }
            "getattr" => {
                if !kwargs.is_empty() || !(2..=3).contains(&args.len()) {
                    return unsupported(Kind::Call, "getattr() with these arguments");
                }
                let name = self.plain_obj(&args[1], "getattr")?;
                let Some(name) = name.downcast_ref::<PyStr>() else {
                    return unsupported(Kind::Call, "getattr() with a non-string name");
                };
                self.attr_of(&args[0], &name.to_string_lossy())
            }
            "sum" => {
                if args.is_empty() || args.len() > 2 {
                    return unsupported(Kind::Call, "sum() with these arguments");
                }
                let items = self.items(&args[0])?;
                let mut acc = match (args.get(1), kwargs.iter().find(|(k, _)| k == "start")) {
                    (Some(s), _) | (None, Some((_, s))) => s.clone(),
                    _ => Var::Obj(vm.ctx.new_int(0).into()),
                };
                for i in &items {
                    acc = self.binary(BinaryOperator::Add, &acc, i)?;
                }
                Ok(acc)
            }
            "abs" if args.len() == 1 && self.is_tensor(&args[0]) => {
                let o = self.obj(&args[0])?;
                self.native_result(vm._abs(&o), true, "abs()")
            }
            "str" | "repr"
                if args.len() == 1
                    && kwargs.is_empty()
                    && let Some(shown) = self.show_exception(name, &args[0]) =>
            {
                shown
            }
            n if PURE_BUILTINS.contains(&n) => {
                let o = self.builtins_obj(n)?;
                self.plain_call(&o, args, kwargs, &format!("{n}()"))
            }
            n => unsupported(
                Kind::Call,
                format!("a call to builtin {n}() (not simulated)"),
            ),
        }
    }

    fn builtins_obj(&self, name: &str) -> SimResult<PyObjectRef> {
        self.vm
            .builtins
            .dict()
            .get_item_opt(name, self.vm)
            .ok()
            .flatten()
            .ok_or_else(|| Unsupported::new(Kind::Internal, format!("no builtin {name}")))
    }
}

/// Builtins that compute on plain values without side effects.
const PURE_BUILTINS: &[&str] = &[
    "abs", "all", "any", "bool", "chr", "divmod", "float", "hash", "int", "max", "min", "ord",
    "pow", "repr", "round", "sorted", "str", "hex", "bin", "oct", "callable",
];
