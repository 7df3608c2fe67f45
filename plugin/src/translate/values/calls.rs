//! Calls during a simulation: user functions are simulated inline (arguments bound as
//! Python binds them; a failure rolls the translation back to the call), builtins the
//! simulation understands are modelled, tensor functions and methods run on fakes, and pure
//! builtins run on plain values.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rustpython_vm::builtins::{PyCode, PyDict, PyFunction, PyStr, PyTuple, PyType};
use rustpython_vm::bytecode::{BinaryOperator, CodeFlags};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyRef};

use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::executor::{SimFrame, Slot};
use crate::translate::guards::guard::Check;
use crate::translate::source::Source;
use crate::translate::state::{MAX_INLINE_DEPTH, SimResult, State, Unsupported, unsupported};
use crate::translate::values::{CellRef, CellState, Globals, SimGen, Var, is_plain};

/// Builtins that compute on plain values without side effects.
const PURE_BUILTINS: &[&str] = &[
    "abs", "all", "any", "bool", "chr", "divmod", "float", "hash", "int", "max", "min", "ord",
    "pow", "repr", "round", "sorted", "str", "hex", "bin", "oct", "callable",
];

/// Tensor functions that are not pure: random numbers change the generator's state.
const IMPURE_TENSOR_FUNCTIONS: &[&str] = &["manual_seed", "rand", "randn"];

/// Tensor methods and functions whose result depends only on their tensors' dtype and shape.
const TENSOR_META: &[&str] = &[
    "dim",
    "numel",
    "is_floating_point",
    "__len__",
    "zeros_like",
    "ones_like",
];

/// A function to simulate inline, whatever made it.
struct Callee {
    code: PyRef<PyCode>,
    globals: Globals,
    defaults: Vec<Var>,
    kwdefaults: Vec<(String, Var)>,
    closure: Vec<CellRef>,
}

impl State<'_> {
    pub fn call_value(
        &mut self,
        callable: &Var,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
        caller: &SimFrame,
    ) -> SimResult<Var> {
        let vm = self.vm;
        match callable {
            Var::Func(f) => {
                let defaults = match &f.defaults {
                    Some(d) => self.items(d)?,
                    None => Vec::new(),
                };
                let kwdefaults = match &f.kwdefaults {
                    Some(d) => self
                        .dict_entries(d)?
                        .into_iter()
                        .map(|(k, v)| {
                            (
                                k.downcast_ref::<PyStr>()
                                    .map(|s| s.to_string_lossy().into_owned())
                                    .unwrap_or_default(),
                                v,
                            )
                        })
                        .collect(),
                    None => Vec::new(),
                };
                let callee = Callee {
                    code: f.code.clone(),
                    globals: f.globals.clone(),
                    defaults,
                    kwdefaults,
                    closure: f.closure.clone(),
                };
                self.inline(callee, args, kwargs)
            }
            Var::Method(owner, name) => self.container_method(owner, name, args, kwargs),
            Var::Lazy(o, _) | Var::Obj(o) => {
                let o = o.clone();
                if o.downcast_ref::<PyFunction>().is_some() {
                    let source = match callable {
                        Var::Lazy(_, s) => Some(s.clone()),
                        _ => None,
                    };
                    self.obj(callable)?; // its identity
                    let callee = self.python_callee(&o, source, caller)?;
                    return self.inline(callee, args, kwargs);
                }
                if let Some(class) = self.exception_class(&o) {
                    if !kwargs.is_empty() {
                        return unsupported(
                            Kind::Call,
                            format!("{}() with keyword arguments", class.name()),
                        );
                    }
                    self.obj(callable)?; // its identity
                    return self.new_exception(class, args);
                }
                if let Some(name) = self.builtin_name(&o) {
                    self.obj(callable)?;
                    return self.builtin(&name, args, kwargs);
                }
                if let Some(name) = tensor_function_name(&o, vm) {
                    if IMPURE_TENSOR_FUNCTIONS.contains(&name.as_str()) {
                        return unsupported(
                            Kind::SideEffect,
                            format!("symtrace.{name} (random numbers: a side effect)"),
                        );
                    }
                    self.obj(callable)?;
                    let meta = TENSOR_META.contains(&name.as_str());
                    return self.native_call(&o, args, kwargs, &format!("symtrace.{name}"), meta);
                }
                if o.class().is(vm.ctx.types.method_descriptor_type) {
                    let name = o
                        .get_attr("__name__", vm)
                        .ok()
                        .and_then(|n| {
                            n.downcast_ref::<PyStr>()
                                .map(|s| s.to_string_lossy().into_owned())
                        })
                        .unwrap_or_default();
                    if args.first().is_some_and(|a| self.is_tensor(a)) {
                        let meta = TENSOR_META.contains(&name.as_str());
                        return self.native_call(&o, args, kwargs, &format!("Tensor.{name}"), meta);
                    }
                }
                if o.class().is(vm.ctx.types.builtin_function_or_method_type)
                    && let Ok(owner) = o.get_attr("__self__", vm)
                    && is_plain(&owner, vm)
                {
                    // A method of a plain value (`", ".join`, `"{}".format`).
                    return self.plain_call(&o, args, kwargs, "a method of a plain value");
                }
                unsupported(
                    Kind::Call,
                    format!("a call to {} (not simulated)", describe(&o, vm)),
                )
            }
            other => unsupported(Kind::Call, format!("a call to a {}", other.kind())),
        }
    }

    fn python_callee(
        &mut self,
        func: &PyObjectRef,
        source: Option<Source>,
        caller: &SimFrame,
    ) -> SimResult<Callee> {
        let vm = self.vm;
        let get = |name: &'static str| {
            func.get_attr(name, vm)
                .map_err(|_| Unsupported::new(Kind::Value, format!("function without {name}")))
        };
        let code = get("__code__")?
            .downcast::<PyCode>()
            .map_err(|_| Unsupported::new(Kind::Value, "__code__ is not code"))?;
        let globals = get("__globals__")?
            .downcast::<PyDict>()
            .map_err(|_| Unsupported::new(Kind::Value, "__globals__ is not a dict"))?;
        let globals = if globals.is(&caller.globals.dict) && caller.globals.owner.is_none() {
            Globals {
                dict: globals,
                owner: None,
            }
        } else {
            match &source {
                Some(s) => Globals {
                    dict: globals,
                    owner: Some(s.clone()),
                },
                None => return unsupported(Kind::Call, "a method of another module"),
            }
        };
        let defaults = match get("__defaults__")?.downcast::<PyTuple>() {
            Ok(t) => t
                .as_slice()
                .iter()
                .map(|d| self.default_value(d))
                .collect::<SimResult<Vec<_>>>()?,
            Err(_) => Vec::new(),
        };
        let mut kwdefaults = Vec::new();
        if let Ok(d) = get("__kwdefaults__")?.downcast::<PyDict>() {
            for (k, v) in &*d {
                let k = k
                    .downcast_ref::<PyStr>()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                kwdefaults.push((k, self.default_value(&v)?));
            }
        }
        let mut closure = Vec::new();
        if let Ok(cells) = get("__closure__")?.downcast::<PyTuple>() {
            let Some(source) = &source else {
                return unsupported(Kind::Value, "a closure read without a source");
            };
            for (i, cell) in cells.as_slice().iter().enumerate() {
                let value = cell
                    .get_attr("cell_contents", vm)
                    .ok()
                    .map(|v| Var::Lazy(v, Source::Closure(Box::new(source.clone()), i)));
                closure.push(Rc::new(RefCell::new(CellState {
                    value,
                    existing: true,
                    home: None,
                })));
            }
        }
        Ok(Callee {
            code,
            globals,
            defaults,
            kwdefaults,
            closure,
        })
    }

    fn default_value(&mut self, d: &PyObjectRef) -> SimResult<Var> {
        if is_plain(d, self.vm) {
            Ok(Var::Obj(d.clone()))
        } else {
            unsupported(
                Kind::Value,
                format!("a default argument of type {}", d.class().name()),
            )
        }
    }

    /// Simulate a call of `callee` inline; on failure the translation rolls back to here.
    fn inline(
        &mut self,
        callee: Callee,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        let code = callee.code.clone();
        if code.flags.intersects(
            CodeFlags::COROUTINE | CodeFlags::ASYNC_GENERATOR | CodeFlags::ITERABLE_COROUTINE,
        ) {
            return unsupported(
                Kind::Call,
                format!("a call to coroutine function {}", code.qualname.as_str()),
            );
        }
        if code.flags.contains(CodeFlags::GENERATOR) {
            // The call only makes the generator: its frame runs as its consumer asks for items.
            let frame = self.bind(&callee, args, kwargs)?;
            self.inlined.push(code.qualname.as_str().to_owned());
            let qualname = code.qualname.as_str().to_owned();
            return Ok(Var::Gen(Rc::new(RefCell::new(SimGen {
                frame: Some(frame),
                started: false,
                done: false,
                qualname,
            }))));
        }
        if self.depth >= MAX_INLINE_DEPTH {
            return unsupported(
                Kind::Limit,
                format!("calls nested deeper than {MAX_INLINE_DEPTH}"),
            );
        }
        let checkpoint = self.checkpoint();
        self.depth += 1;
        let result = self
            .bind(&callee, args, kwargs)
            .and_then(|mut frame| self.run(&mut frame));
        self.depth -= 1;
        match result {
            Ok(r) => {
                self.inlined.push(code.qualname.as_str().to_owned());
                Ok(r.value)
            }
            Err(e) => {
                self.rollback(checkpoint);
                log::debug!(target: crate::log_targets::INLINE, "inlining {} failed, rolled back: {e}", code.qualname.as_str());
                Err(e)
            }
        }
    }

    /// A frame for `callee` with its parameters bound to `args` and `kwargs`.
    fn bind(
        &mut self,
        callee: &Callee,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<SimFrame> {
        let code = &callee.code;
        let qual = code.qualname.as_str();
        let nargs = code.arg_count as usize;
        let nposonly = code.posonlyarg_count as usize;
        let nkwonly = code.kwonlyarg_count as usize;
        let varargs = code.flags.contains(CodeFlags::VARARGS);
        let varkw = code.flags.contains(CodeFlags::VARKEYWORDS);
        let names: Vec<String> = code
            .varnames
            .iter()
            .map(|n| n.as_str().to_owned())
            .collect();
        let mut bound: Vec<Option<Var>> = vec![None; nargs + nkwonly];
        let mut extra = Vec::new();
        for (i, a) in args.into_iter().enumerate() {
            if i < nargs {
                bound[i] = Some(a);
            } else if varargs {
                extra.push(a);
            } else {
                return unsupported(
                    Kind::Raises,
                    format!("{qual}() takes {nargs} positional arguments (TypeError)"),
                );
            }
        }
        let mut extra_kw: Vec<(PyObjectRef, Var)> = Vec::new();
        for (k, v) in kwargs {
            match names[..nargs + nkwonly].iter().position(|n| *n == k) {
                Some(i) if i >= nposonly => {
                    if bound[i].is_some() {
                        return unsupported(
                            Kind::Raises,
                            format!("{qual}() got multiple values for argument {k:?} (TypeError)"),
                        );
                    }
                    bound[i] = Some(v);
                }
                _ if varkw => extra_kw.push((self.vm.ctx.new_str(k).into(), v)),
                _ => {
                    return unsupported(
                        Kind::Raises,
                        format!("{qual}() got an unexpected keyword argument {k:?} (TypeError)"),
                    );
                }
            }
        }
        let first_default = nargs - callee.defaults.len().min(nargs);
        for (slot, default) in bound[first_default..nargs]
            .iter_mut()
            .zip(&callee.defaults[callee.defaults.len() - (nargs - first_default)..])
        {
            if slot.is_none() {
                *slot = Some(default.clone());
            }
        }
        for i in nargs..nargs + nkwonly {
            if bound[i].is_none() {
                bound[i] = callee
                    .kwdefaults
                    .iter()
                    .find(|(k, _)| *k == names[i])
                    .map(|(_, v)| v.clone());
            }
        }
        if let Some(i) = bound.iter().position(Option::is_none) {
            return unsupported(
                Kind::Raises,
                format!("{qual}() missing argument {:?} (TypeError)", names[i]),
            );
        }
        let mut frame =
            SimFrame::new(code.clone(), callee.globals.clone(), callee.closure.clone())?;
        for (i, v) in bound.into_iter().enumerate() {
            frame.slots[i] = Slot::Val(v.expect("bound"));
        }
        let mut next = nargs + nkwonly;
        if varargs {
            frame.slots[next] = Slot::Val(Var::tuple(extra));
            next += 1;
        }
        if varkw {
            frame.slots[next] = Slot::Val(Var::Dict(Rc::new(RefCell::new(extra_kw))));
        }
        Ok(frame)
    }

    /// The name of `o` if it is one of the interpreter's builtins.
    fn builtin_name(&self, o: &PyObjectRef) -> Option<String> {
        let vm = self.vm;
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

    fn builtin(
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
                    Var::Tuple(_) | Var::List(_) | Var::Dict(_) => self.items(&args[0])?.len(),
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

    /// Run native `f` on plain values.
    fn plain_call(
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

    /// Run a tensor function or method on fakes and plain values.
    fn native_call(
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
            from_fakes |= self.is_tensor(a) || contains_tensor(a);
            let o = self.obj(a)?;
            if !(o.downcast_ref::<PyTensor>().is_some()
                || is_plain(&o, vm)
                || o.class().is(vm.ctx.types.list_type)
                || o.downcast_ref::<crate::tensor::PyDType>().is_some())
            {
                return unsupported(Kind::Value, format!("{what} on a {}", o.class().name()));
            }
            pos.push(o);
        }
        let mut kw = Vec::new();
        for (k, v) in &kwargs {
            from_fakes |= self.is_tensor(v);
            kw.push((k.clone(), self.obj(v)?));
        }
        let kw: rustpython_vm::function::KwArgs = kw.into_iter().collect();
        let r = f.call(FuncArgs::new(pos, kw), vm);
        if meta_only {
            return self.native_result(r, false, what);
        }
        self.native_result(r, from_fakes, what)
    }

    fn container_method(
        &mut self,
        owner: &Var,
        name: &'static str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        let vm = self.vm;
        if !kwargs.is_empty() {
            return unsupported(Kind::Call, format!("{name}() with keyword arguments"));
        }
        let none = || Var::Obj(vm.ctx.none());
        match (owner, name, args.as_slice()) {
            (Var::List(l), "append", [x]) => {
                l.borrow_mut().push(x.clone());
                Ok(none())
            }
            (Var::List(l), "extend", [x]) => {
                let items = self.items(x)?;
                l.borrow_mut().extend(items);
                Ok(none())
            }
            (Var::List(l), "insert", [i, x]) => {
                let i = self
                    .plain_obj(i, "insert")?
                    .try_index(vm)
                    .map_err(|_| Unsupported::new(Kind::Raises, "index"))?
                    .try_to_primitive::<i64>(vm)
                    .map_err(|_| Unsupported::new(Kind::Raises, "index"))?;
                let mut l = l.borrow_mut();
                let n = l.len() as i64;
                let j = if i < 0 { (i + n).max(0) } else { i.min(n) } as usize;
                l.insert(j, x.clone());
                Ok(none())
            }
            (Var::Lazy(o, source), "append" | "extend" | "insert", _)
                if args.len() == if name == "insert" { 2 } else { 1 } =>
            {
                if name == "extend" {
                    self.items(&args[0])?; // what extend reads, checked readable now
                }
                self.guard(
                    source,
                    crate::translate::guards::guard::Check::TypeIs(o.class().to_owned()),
                );
                self.effects.mutate(
                    o,
                    crate::translate::side_effects::Effect::Method {
                        target: source.clone(),
                        method: name,
                        args,
                    },
                );
                Ok(none())
            }
            (Var::Dict(d), "update", [other]) => {
                for (k, v) in self.dict_entries(other)? {
                    crate::translate::values::dict_insert(&mut d.borrow_mut(), k, v, vm)?;
                }
                Ok(none())
            }
            (Var::Lazy(o, source), "update", [other]) if o.class().is(vm.ctx.types.dict_type) => {
                // What update reads, checked readable now; keys of the caller's dict are strs.
                if self
                    .dict_entries(other)?
                    .iter()
                    .any(|(k, _)| !k.class().is(vm.ctx.types.str_type))
                {
                    return unsupported(
                        Kind::Value,
                        "an update of a dict of the caller with a key that is not a str",
                    );
                }
                self.guard(
                    source,
                    crate::translate::guards::guard::Check::TypeIs(o.class().to_owned()),
                );
                self.effects.mutate(
                    o,
                    crate::translate::side_effects::Effect::Method {
                        target: source.clone(),
                        method: name,
                        args,
                    },
                );
                Ok(none())
            }
            (Var::List(l), "pop", []) => l.borrow_mut().pop().ok_or_else(|| {
                Unsupported::new(Kind::Raises, "pop from an empty list (IndexError)")
            }),
            (Var::List(l), "copy", []) => Ok(Var::list(l.borrow().clone())),
            (Var::Dict(d), "items", []) => Ok(Var::list(
                d.borrow()
                    .iter()
                    .map(|(k, v)| Var::tuple(vec![Var::Obj(k.clone()), v.clone()]))
                    .collect(),
            )),
            (Var::Dict(d), "keys", []) => Ok(Var::list(
                d.borrow()
                    .iter()
                    .map(|(k, _)| Var::Obj(k.clone()))
                    .collect(),
            )),
            (Var::Dict(d), "values", []) => Ok(Var::list(
                d.borrow().iter().map(|(_, v)| v.clone()).collect(),
            )),
            (Var::Dict(d), "get", [k, rest @ ..]) if rest.len() <= 1 => {
                let k = self.key(k)?;
                let found = d
                    .borrow()
                    .iter()
                    .find(|(k2, _)| vm.bool_eq(k2, &k).unwrap_or(false))
                    .map(|(_, v)| v.clone());
                Ok(found.unwrap_or_else(|| rest.first().cloned().unwrap_or_else(none)))
            }
            (Var::Dict(d), "copy", []) => Ok(Var::Dict(Rc::new(RefCell::new(d.borrow().clone())))),
            _ => unsupported(
                Kind::Call,
                format!("{}.{name}() with these arguments", owner.kind()),
            ),
        }
    }
}

fn contains_tensor(v: &Var) -> bool {
    match v {
        Var::Tensor(_) => true,
        Var::Tuple(t) => t.iter().any(contains_tensor),
        Var::List(l) => l.borrow().iter().any(contains_tensor),
        Var::Lazy(o, _) => {
            o.downcast_ref::<PyTensor>().is_some()
                || o.downcast_ref::<PyTuple>().is_some()
                || o.class().name().to_string() == "list"
        }
        _ => false,
    }
}

/// The name of a function of the `symtrace` module.
fn tensor_function_name(o: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> Option<String> {
    if !o.class().is(vm.ctx.types.builtin_function_or_method_type) {
        return None;
    }
    let module = o.get_attr("__module__", vm).ok()?;
    if module.downcast_ref::<PyStr>()?.to_string_lossy() != "symtrace" {
        return None;
    }
    let name = o.get_attr("__name__", vm).ok()?;
    Some(name.downcast_ref::<PyStr>()?.to_string_lossy().into_owned())
}

fn describe(o: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> String {
    let name = o.get_attr("__qualname__", vm).ok().and_then(|n| {
        n.downcast_ref::<PyStr>()
            .map(|s| s.to_string_lossy().into_owned())
    });
    match name {
        Some(n) => format!("{n} ({})", o.class().name()),
        None => format!("a {} object", o.class().name()),
    }
}
