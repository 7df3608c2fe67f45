//! Builtins the simulation models: `len`, `isinstance`, `type`, `range`, `zip`,
//! `enumerate`, `reversed`, `tuple`, `list`, `dict`, `getattr`, `sum`, and the pure ones
//! computed on plain values.

use std::cell::RefCell;
use std::rc::Rc;

use rustpython_vm::builtins::{PyStr, PyType};
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::Check;
use crate::translate::math_functions::MathFn;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::{Var, ViewKind, is_plain};

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
        // `max(s.shape[0] for s in seqs)`: `min` and `max` iterate a generator to its end,
        // as the list of what it yields would be iterated (sizes among them kept as sizes).
        let args = match (name, args.as_slice()) {
            ("min" | "max", [g @ Var::Gen(_)]) if kwargs.is_empty() => {
                vec![Var::list(self.items(g)?)]
            }
            _ => args,
        };
        let only_pos = |n: usize| -> SimResult<()> {
            if !kwargs.is_empty() || args.len() != n {
                return unsupported(Kind::Call, format!("{name}() with these arguments"));
            }
            Ok(())
        };
        match name {
            "len" => {
                only_pos(1)?;
                if let Some(n) = self.call_dunder(&args[0], "__len__", Vec::new())? {
                    return Ok(n);
                }
                if let Some(n) = self.deferred_list_len(&args[0])? {
                    return Ok(n);
                }
                if let Some(n) = self.caller_set_len(&args[0])? {
                    return Ok(Var::Obj(vm.ctx.new_int(n).into()));
                }
                let n = match &args[0] {
                    Var::Tuple(_)
                    | Var::List(_)
                    | Var::Dict(_)
                    | Var::View(..)
                    | Var::CallerView(_)
                    | Var::Set(_)
                    | Var::Deque(_)
                    | Var::NamedTuple(..) => self.items(&args[0])?.len(),
                    Var::Lazy(o, s) if crate::translate::state::is_dict(o, vm) => {
                        self.caller_dict_len(o, s)?
                    }
                    // Tuples, lists and named tuples: the items lazy_items guards.
                    Var::Lazy(o, s) if self.lazy_items(o, s)?.is_some() => {
                        self.lazy_items(o, s)?.expect("sequence").len()
                    }
                    t if self.is_tensor(t)
                        && let Some(n) = self.symbolic_meta("len", &args[..1])? =>
                    {
                        return Ok(n);
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
            "callable" => {
                only_pos(1)?;
                Ok(Var::Obj(
                    vm.ctx.new_bool(self.callable_of(&args[0])?).into(),
                ))
            }
            "isinstance" => {
                only_pos(2)?;
                let hit = self.isinstance(&args[0], &args[1])?;
                Ok(Var::Obj(vm.ctx.new_bool(hit).into()))
            }
            "type" => {
                only_pos(1)?;
                Ok(Var::Obj(self.type_of(&args[0])?))
            }
            "issubclass" => {
                only_pos(2)?;
                let hit = self.issubclass(&args[0], &args[1])?;
                Ok(Var::Obj(vm.ctx.new_bool(hit).into()))
            }
            "hasattr" => {
                only_pos(2)?;
                let name = self.attr_name(&args[1], "hasattr")?;
                let found = self.try_attr(&args[0], &name)?;
                Ok(Var::Obj(vm.ctx.new_bool(found.is_some()).into()))
            }
            "setattr" => {
                only_pos(3)?;
                let name = self.attr_name(&args[1], "setattr")?;
                self.set_attr(&args[0], &name, args[2].clone())?;
                Ok(Var::Obj(vm.ctx.none()))
            }
            "delattr" => {
                only_pos(2)?;
                let name = self.attr_name(&args[1], "delattr")?;
                self.del_attr(&args[0], &name)?;
                Ok(Var::Obj(vm.ctx.none()))
            }
            "iter" => {
                only_pos(1)?;
                self.iterator_of(&args[0])
            }
            "next" => {
                if !kwargs.is_empty() || !(1..=2).contains(&args.len()) {
                    return unsupported(Kind::Call, "next() with these arguments");
                }
                let item = match self.next_item(&args[0]) {
                    // A native iterator made before the frame (`itertools.count()` in a
                    // global, a caller's list iterator) has a position the simulation
                    // cannot know: the call runs as written between two graphs, and what
                    // follows captures with the item it gave.
                    Err(e)
                        if e.kind == Kind::Value
                            && matches!(args[0], Var::Obj(_) | Var::Lazy(..)) =>
                    {
                        return unsupported(
                            Kind::Call,
                            format!(
                                "next() of a {} made outside the frame (its position is known only at run time)",
                                args[0].kind()
                            ),
                        );
                    }
                    item => item?,
                };
                match item {
                    Some(v) => Ok(v),
                    None => match args.get(1) {
                        Some(default) => Ok(default.clone()),
                        // Raised as Python raises it: a `try` around it may handle it (a
                        // context manager's `__exit__` stepping its generator to the end).
                        None => self.raise_native(
                            vm.ctx.exceptions.stop_iteration,
                            Vec::new(),
                            "next() of an exhausted iterator (StopIteration)".to_owned(),
                        ),
                    },
                }
            }
            "range" => {
                let o = self.builtins_obj(name)?;
                self.plain_call(&o, args, kwargs, "range()")
            }
            "map" | "filter" => {
                if !kwargs.is_empty() {
                    return unsupported(Kind::Call, format!("{name}() with keyword arguments"));
                }
                return match (name, args.as_slice()) {
                    ("map", [func, rest @ ..]) => self.map_of(func, rest),
                    ("filter", [func, it]) => self.filter_of(func, it),
                    _ => unsupported(
                        Kind::Raises,
                        format!("{name}() with these arguments (TypeError)"),
                    ),
                };
            }
            "zip" | "enumerate" | "reversed" | "tuple" | "list" => {
                let allowed = match name {
                    "enumerate" => "start",
                    "zip" => "strict",
                    _ => "",
                };
                if kwargs.iter().any(|(k, _)| k != allowed) {
                    return unsupported(Kind::Call, format!("{name}() with keyword arguments"));
                }
                let items: Vec<Var> = match name {
                    "zip" => {
                        let strict = match kwargs.first() {
                            Some((_, v)) => self.truth(v)?,
                            None => false,
                        };
                        return self.zip_of(&args, strict);
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
                        return self.enumerate_of(it, start);
                    }
                    "reversed" => {
                        let [x] = args.as_slice() else {
                            return unsupported(Kind::Call, "reversed() with these arguments");
                        };
                        return self.reversed_of(x);
                    }
                    _ => match args.as_slice() {
                        [] => Vec::new(),
                        [x] => self.items(x)?,
                        _ => {
                            return unsupported(
                                Kind::Call,
                                format!("{name}() with these arguments"),
                            );
                        }
                    },
                };
                Ok(match name {
                    "tuple" => Var::tuple(items),
                    _ => Var::list(items),
                })
            }
            "set" => {
                let items = match args.as_slice() {
                    [] if kwargs.is_empty() => Vec::new(),
                    [x] if kwargs.is_empty() => self.items(x)?,
                    _ => return unsupported(Kind::Call, "set() with these arguments"),
                };
                self.new_set(&items)
            }
            "dict" => {
                let entries = self.dict_arguments(&args, kwargs)?;
                Ok(Var::Dict(Rc::new(RefCell::new(entries))))
            }
            // `vars(o)` is `o.__dict__` (what the object model reads of an instance).
            "vars" if args.len() == 1 && kwargs.is_empty() => self.attr_of(&args[0], "__dict__"),
            "getattr" => {
                if !kwargs.is_empty() || !(2..=3).contains(&args.len()) {
                    return unsupported(Kind::Call, "getattr() with these arguments");
                }
                let name = self.attr_name(&args[1], "getattr")?;
                match args.get(2) {
                    None => self.attr_of(&args[0], &name),
                    Some(default) => Ok(self
                        .try_attr(&args[0], &name)?
                        .unwrap_or_else(|| default.clone())),
                }
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
            "id" if let ([x], []) = (args.as_slice(), kwargs.as_slice())
                && let Some(r) = self.identity_number(x)? =>
            {
                Ok(r)
            }
            "abs"
                if let [a] = &args[..]
                    && let Some(r) = self.user_unary("__abs__", a)? =>
            {
                Ok(r)
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
            // Of a number the replacement computes again: formatted again, as an f-string's.
            "format"
                if let ([v, Var::Obj(spec)], []) = (args.as_slice(), kwargs.as_slice())
                    && let Some(spec) = spec.downcast_ref::<PyStr>()
                    && let Some(r) = self.deferred_format(v, &spec.to_string_lossy())? =>
            {
                Ok(r)
            }
            "sorted" if let Some(r) = self.sorted_entries(&args, &kwargs)? => Ok(r),
            "sorted" if let Some(r) = self.sorted_pairs(&args, &kwargs)? => Ok(r),
            "sorted" | "min" | "max"
                if let Some(r) = self.keyed_builtin(name, &args, &kwargs)? =>
            {
                Ok(r)
            }
            "min" | "max" | "float" | "int" | "pow" | "divmod" | "abs" | "round"
                if let Some(r) = self.number_builtin(name, &args, &kwargs)? =>
            {
                Ok(r)
            }
            // `bool(x)` is the truth `if x:` takes (of a caller's dict, an instance, a counter).
            "bool" if kwargs.is_empty() && args.len() == 1 && !self.is_tensor(&args[0]) => {
                let truth = self.truth(&args[0])?;
                Ok(Var::Obj(vm.ctx.new_bool(truth).into()))
            }
            n if PURE_BUILTINS.contains(&n) => {
                let mut args = self.enum_conversion_args(n, args)?;
                if let ("sorted" | "min" | "max" | "any" | "all" | "frozenset", [Var::Dict(d)]) =
                    (n, args.as_slice())
                {
                    // These only iterate their argument: a dict made here is its keys.
                    args = vec![Var::View(d.clone(), ViewKind::Keys)];
                } else if let ("sorted" | "min" | "max" | "any" | "all" | "frozenset", [o]) =
                    (n, args.as_slice())
                    && (matches!(o, Var::Object(_))
                        || matches!(o, Var::Lazy(d, _) if crate::translate::state::is_dict(d, vm)))
                {
                    // An instance made here: what its iteration gives (`__iter__` inlined); a
                    // caller's dict: its keys, guarded.
                    args = vec![Var::list(self.items(o)?)];
                }
                let o = self.builtins_obj(n)?;
                self.plain_call(&o, args, kwargs, &format!("{n}()"))
            }
            "print" => self.deferred_print(args, kwargs),
            n => unsupported(
                Kind::Call,
                format!("a call to builtin {n}() (not simulated)"),
            ),
        }
    }

    fn attr_name(&mut self, v: &Var, what: &str) -> SimResult<String> {
        let name = self.plain_obj(v, what)?;
        match name.downcast_ref::<PyStr>().and_then(|s| s.to_str()) {
            Some(s) => Ok(s.to_owned()),
            None => unsupported(
                Kind::Raises,
                format!("{what}(): attribute name must be string (TypeError)"),
            ),
        }
    }

    /// `owner.name`, or `None` where the read raises AttributeError (what `hasattr` and
    /// `getattr` with a default see). Whether it is there is decided from what holds it,
    /// guarded as a read would be; a class's `__getattr__` is inlined and an AttributeError
    /// it raises caught.
    fn try_attr(&mut self, owner: &Var, name: &str) -> SimResult<Option<Var>> {
        let vm = self.vm;
        if let Some(inst) = self.instance(owner)? {
            return self.instance_attr_or_missing(owner, &inst, name);
        }
        if let Some(entry) = self.function_entry(owner, name)? {
            return Ok(entry);
        }
        let present = match owner {
            Var::Lazy(o, source) if o.class().is(vm.ctx.types.module_type) => {
                if let Some(written) = self.module_global_written(o, name)? {
                    return Ok(written);
                }
                let found = o
                    .dict()
                    .is_some_and(|d| d.get_item_opt(name, vm).ok().flatten().is_some());
                if !found {
                    self.obj(owner)?;
                    self.guard(&source.clone().attr(name), Check::Absent);
                }
                found
            }
            _ if self.is_tensor(owner) => {
                let class = <crate::tensor::PyTensor as rustpython_vm::PyPayload>::class(&vm.ctx);
                self.guard_class(Source::object(class.to_owned().into()), class)?;
                class.get_attr(vm.ctx.intern_str(name)).is_some()
            }
            Var::Obj(o) | Var::Lazy(o, _)
                if o.downcast_ref::<PyType>().is_some() || is_plain(o, vm) =>
            {
                let o = self.obj(owner)?;
                if let Some(c) = o.downcast_ref::<PyType>() {
                    self.guard_class(Source::object(o.clone()), c)?;
                }
                o.get_attr(&vm.ctx.new_str(name), vm).is_ok()
            }
            _ => true,
        };
        if present {
            self.attr_of(owner, name).map(Some)
        } else {
            Ok(None)
        }
    }

    /// A call of one of `object`'s or `tuple`'s own slots, which user code calls directly:
    /// `object.__setattr__(obj, name, value)` (`__delattr__`), as a frozen dataclass or a
    /// module's `__init__` does, and `tuple.__new__(cls, items)`, as a named tuple's `__new__`
    /// does. `None` for anything else.
    pub(super) fn object_protocol_call(
        &mut self,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let t = &vm.ctx.types;
        let is = |class: &rustpython_vm::Py<PyType>, name: &str| {
            class
                .get_attr(vm.ctx.intern_str(name))
                .is_some_and(|x| x.is(f))
        };
        if !kwargs.is_empty() {
            return Ok(None);
        }
        if is(t.object_type, "__setattr__") || is(t.object_type, "__delattr__") {
            let setting = is(t.object_type, "__setattr__");
            let (owner, name) = match args {
                [o, n, _] if setting => (o, n),
                [o, n] if !setting => (o, n),
                _ => return unsupported(Kind::Call, "object.__setattr__ with these arguments"),
            };
            let name = self.attr_name(name, "object.__setattr__")?;
            let Some(inst) = self.instance(owner)? else {
                return unsupported(
                    Kind::SideEffect,
                    format!("object.__setattr__ on a {}", owner.kind()),
                );
            };
            let value = if setting { Some(args[2].clone()) } else { None };
            self.object_setattr(owner, &inst, &name, value)?;
            return Ok(Some(Var::Obj(vm.ctx.none())));
        }
        if is(t.object_type, "__getattribute__")
            && let [owner, name] = args
            && self.has_custom_lookup(owner)
        {
            let name = self.attr_name(name, "object.__getattribute__")?;
            return self.object_getattribute(owner, &name).map(Some);
        }
        if is(t.object_type, "__init__") {
            // `super().__init__()` reaching `object`: nothing to do, with nothing passed.
            return match args {
                [owner] if self.instance(owner)?.is_some() => Ok(Some(Var::Obj(vm.ctx.none()))),
                _ => Ok(None),
            };
        }
        if is(t.tuple_type, "__new__") {
            let [cls, items] = args else {
                return Ok(None);
            };
            let cls = self.obj(cls)?;
            let Some(class) = cls.downcast_ref::<PyType>() else {
                return Ok(None);
            };
            if self.namedtuple_fields(class).is_none() {
                return Ok(None);
            }
            let items = self.items(items)?;
            return Ok(Some(Var::NamedTuple(class.to_owned(), Rc::new(items))));
        }
        if f.class().is(t.builtin_function_or_method_type)
            && let Ok(owner) = f.get_attr("__self__", vm)
            && owner.is(t.dict_type)
            && f.get_attr("__name__", vm).ok().and_then(|n| {
                n.downcast_ref::<PyStr>()
                    .map(|s| s.to_string_lossy() == "fromkeys")
            }) == Some(true)
        {
            // `dict.fromkeys(keys, value=None)`.
            let (keys, value) = match args {
                [k] => (k, Var::Obj(vm.ctx.none())),
                [k, v] => (k, v.clone()),
                _ => return unsupported(Kind::Call, "dict.fromkeys with these arguments"),
            };
            let mut entries = Vec::new();
            for k in self.items(keys)? {
                let k = self.key(&k)?;
                crate::translate::values::dict_insert(&mut entries, k, value.clone(), vm)?;
            }
            return Ok(Some(Var::Dict(Rc::new(RefCell::new(entries)))));
        }
        Ok(None)
    }

    /// Functions of the standard library that the simulation models: `math`'s on plain
    /// numbers (computed now), `operator`'s as the operators they name, `functools.reduce`
    /// folding with the simulated call. `None` for anything else.
    pub(super) fn library_call(
        &mut self,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let Some((module, name)) = crate::translate::loaded_modules::module_function(f, self.vm)
        else {
            return Ok(None);
        };
        match module.as_str() {
            "math" => {
                if kwargs.is_empty()
                    && let Some(r) = self.size_math(&name, args)?
                {
                    return Ok(Some(r));
                }
                if kwargs.is_empty()
                    && let Some(f) = MathFn::of(&name)
                    && let Some(r) = self.deferred_math(f, args)?
                {
                    return Ok(Some(r));
                }
                for a in args {
                    if self.is_tensor(a) {
                        return unsupported(Kind::Call, format!("math.{name} of a tensor"));
                    }
                }
                self.plain_call(f, args.to_vec(), kwargs.to_vec(), &format!("math.{name}"))
                    .map(Some)
            }
            "_operator" | "operator" => {
                if !kwargs.is_empty() {
                    return Ok(None);
                }
                let op = match name.trim_matches('_') {
                    "add" => BinaryOperator::Add,
                    "sub" => BinaryOperator::Subtract,
                    "mul" => BinaryOperator::Multiply,
                    "truediv" => BinaryOperator::TrueDivide,
                    "floordiv" => BinaryOperator::FloorDivide,
                    "mod" => BinaryOperator::Remainder,
                    "pow" => BinaryOperator::Power,
                    "matmul" => BinaryOperator::MatrixMultiply,
                    "and" => BinaryOperator::And,
                    "or" => BinaryOperator::Or,
                    "xor" => BinaryOperator::Xor,
                    "lshift" => BinaryOperator::Lshift,
                    "rshift" => BinaryOperator::Rshift,
                    "getitem" => {
                        let [a, b] = args else { return Ok(None) };
                        return self.subscript(a, b).map(Some);
                    }
                    _ => {
                        if args.iter().all(|a| !self.is_tensor(a)) {
                            return self
                                .plain_call(
                                    f,
                                    args.to_vec(),
                                    Vec::new(),
                                    &format!("operator.{name}"),
                                )
                                .map(Some);
                        }
                        return Ok(None);
                    }
                };
                let [a, b] = args else { return Ok(None) };
                self.binary(op, a, b).map(Some)
            }
            "_warnings" | "warnings" if name == "warn" => {
                self.deferred_warning(f, args, kwargs).map(Some)
            }
            "_functools" | "functools" if name == "reduce" => {
                if !kwargs.is_empty() || !(2..=3).contains(&args.len()) {
                    return unsupported(Kind::Call, "functools.reduce with these arguments");
                }
                let mut items = self.items(&args[1])?.into_iter();
                let mut acc = match args.get(2) {
                    Some(init) => init.clone(),
                    None => match items.next() {
                        Some(first) => first,
                        None => {
                            return unsupported(
                                Kind::Raises,
                                "reduce() of empty iterable with no initial value (TypeError)",
                            );
                        }
                    },
                };
                for item in items {
                    acc = self.invoke(&args[0], vec![acc, item], Vec::new())?;
                }
                Ok(Some(acc))
            }
            _ => Ok(None),
        }
    }

    pub(crate) fn builtins_obj(&self, name: &str) -> SimResult<PyObjectRef> {
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
    "abs",
    "all",
    "ascii",
    "any",
    "bool",
    "chr",
    "divmod",
    "float",
    "format",
    "hash",
    "int",
    "max",
    "min",
    "ord",
    "pow",
    "repr",
    "round",
    "sorted",
    "str",
    "hex",
    "bin",
    "oct",
    "callable",
    "slice",
    "frozenset",
];
