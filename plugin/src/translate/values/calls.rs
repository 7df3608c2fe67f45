//! Calls during a simulation: user functions are simulated inline (arguments bound as
//! Python binds them; a failure rolls the translation back to the call), builtins the
//! simulation understands are modelled, tensor functions and methods run on fakes, and pure
//! builtins run on plain values.

use std::cell::RefCell;
use std::rc::Rc;

use rustpython_vm::builtins::{PyCode, PyDict, PyFunction, PyStr, PyType};
use rustpython_vm::bytecode::CodeFlags;
use rustpython_vm::{AsObject, Py, PyObjectRef, PyRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::executor::{SimFrame, Slot};
use crate::translate::guards::Check;
use crate::translate::source::Source;
use crate::translate::state::{MAX_INLINE_DEPTH, SimResult, State, Unsupported, unsupported};
use crate::translate::values::located_output::InlinedFrame;
use crate::translate::values::tensor_functions::{
    ModuleFunction, TENSOR_META, changes_its_tensor, module_function_name,
};
use crate::translate::values::{CellRef, Globals, SimGen, Var, is_plain};

/// A function to simulate inline, whatever made it.
struct Callee {
    code: PyRef<PyCode>,
    globals: Globals,
    defaults: Vec<Var>,
    kwdefaults: Vec<(String, Var)>,
    closure: Vec<CellRef>,
    /// The callable it was read as, which the replacement can load (see `SimGen::made_by`).
    made_from: Option<Var>,
}

impl State<'_> {
    pub fn call_value(
        &mut self,
        callable: &Var,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
        _caller: &SimFrame,
    ) -> SimResult<Var> {
        self.invoke(callable, args, kwargs)
    }

    /// Call `callable` with `args` and `kwargs` as Python would: a function written in Python
    /// is simulated inline, a class written in Python makes an instance (its `__init__`
    /// inlined), an instance is called through its `__call__`, a bound method with its
    /// object; builtins and tensor functions the simulation knows are modelled or run on
    /// fakes and plain values.
    pub fn invoke(
        &mut self,
        callable: &Var,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
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
                    made_from: Some(callable.clone()),
                };
                self.inline(callee, args, kwargs)
            }
            Var::Method(owner, name) => self.container_method(owner, name, args, kwargs),
            Var::Bound(b) => {
                let mut all = vec![b.1.clone()];
                all.extend(args);
                self.invoke(&b.0, all, kwargs)
            }
            Var::Partial(p) => {
                let mut all = p.args.clone();
                all.extend(args);
                let mut kw = p.kwargs.clone();
                for (k, v) in kwargs {
                    kw.retain(|(k2, _)| *k2 != k);
                    kw.push((k, v));
                }
                self.invoke(&p.func, all, kw)
            }
            Var::Object(_) => self.call_instance(callable, args, kwargs),
            Var::Lazy(o, _) | Var::Obj(o) => {
                let o = o.clone();
                if let Some(r) = self.python_draw(callable, &o, &args, &kwargs)? {
                    return Ok(r);
                }
                if let [owner, rest @ ..] = args.as_slice()
                    && let Some(r) = self.tensor_method_operator(callable, owner, rest, &kwargs)?
                {
                    return Ok(r);
                }
                if o.downcast_ref::<PyFunction>().is_some() {
                    if let Some(r) = self.deferred_log(&o, &args, &kwargs)? {
                        return Ok(r);
                    }
                    self.warm_log_level(&o, &args);
                    if crate::translate::frame_disabled::frames_disabled(&o, vm) {
                        return unsupported(
                            Kind::Call,
                            "a function disabled with symtrace.disable(recursive=False)",
                        );
                    }
                    let source = match callable {
                        Var::Lazy(_, s) => Some(s.clone()),
                        _ => None,
                    };
                    match &source {
                        Some(s) if self.rely_on_nested_function(&o, s) => {}
                        _ => {
                            self.obj(callable)?; // its identity
                        }
                    }
                    let mut callee = self.python_callee(&o, source)?;
                    callee.made_from = Some(callable.clone());
                    return self.inline(callee, args, kwargs);
                }
                if let Some(inner) = crate::translate::traced_wrappers::wrapped(&o) {
                    // The wrapper's identity fixes what it wraps, read through it (a source
                    // of the frame's, so that the replacement holds neither).
                    self.obj(callable)?;
                    let source = match callable {
                        Var::Lazy(_, s) => {
                            Source::NativeAttr(Box::new(s.clone()), "__wrapped__".into())
                        }
                        _ => Source::object(inner.clone()),
                    };
                    return self.invoke(&Var::Lazy(inner, source), args, kwargs);
                }
                if let Var::Lazy(_, source) = callable
                    && let Some(parts) = self.caller_callable(&o, source)?
                {
                    return self.invoke(&parts, args, kwargs);
                }
                if let Some(r) = self.weak_reference_call(callable, &o, &args, &kwargs)? {
                    return Ok(r);
                }
                if let Some(class) = o.downcast_ref::<PyType>() {
                    if let Some(made) = self.call_class(callable, class, &args, &kwargs)? {
                        return Ok(made);
                    }
                } else if crate::translate::values::objects::is_user_instance(&o, vm) {
                    return self.call_instance(callable, args, kwargs);
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
                if let Some(name) = crate::translate::values::itertools::itertools_name(&o, vm) {
                    self.obj(callable)?;
                    return self.itertools_call(name, &args, &kwargs);
                }
                if let Some(r) = self.getter_made(&o, &args, &kwargs)? {
                    self.obj(callable)?;
                    return Ok(r);
                }
                if let Some(r) = self.getter_call(callable, &o, &args)? {
                    return Ok(r);
                }
                if let Some(r) = self.deque_call(&o, &args, &kwargs)? {
                    self.obj(callable)?;
                    return Ok(r);
                }
                if let Some(r) = self.collections_call(&o, &args, &kwargs)? {
                    self.obj(callable)?;
                    return Ok(r);
                }
                if o.class().is(vm.ctx.types.wrapper_descriptor_type)
                    && let Some(r) = self.native_method_call(callable, &o, &args, &kwargs)?
                {
                    return Ok(r);
                }
                if let Some(r) = self.native_descriptor_get(&o, &args, &kwargs) {
                    self.obj(callable)?;
                    return Ok(r);
                }
                if let Some(r) = self.object_protocol_call(&o, &args, &kwargs)? {
                    self.obj(callable)?;
                    return Ok(r);
                }
                if kwargs.is_empty()
                    && let Some(r) = self.made_dict_native_call(&o, &args)?
                {
                    self.obj(callable)?;
                    return Ok(r);
                }
                if let Some(name) = self.builtin_name(&o) {
                    self.obj(callable)?;
                    return self.builtin(&name, args, kwargs);
                }
                if let Some(name) = module_function_name(&o, vm) {
                    if name == "graph_break" {
                        return unsupported(Kind::Requested, "symtrace.graph_break()");
                    }
                    match ModuleFunction::of(&name) {
                        ModuleFunction::Pure => {}
                        ModuleFunction::Random => {
                            return unsupported(
                                Kind::SideEffect,
                                format!("symtrace.{name} sets the random number generator's state"),
                            );
                        }
                        ModuleFunction::Stateful => {
                            return unsupported(
                                Kind::SideEffect,
                                format!(
                                    "symtrace.{name} reads or changes state a translation cannot guard or replay"
                                ),
                            );
                        }
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
                    if let Some(r) = self.native_method_call(callable, &o, &args, &kwargs)? {
                        return Ok(r);
                    }
                    if args.first().is_some_and(|a| self.is_tensor(a)) {
                        if changes_its_tensor(&name) {
                            return self.tensor_changed_in_place(&name, &args, &kwargs);
                        }
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
                if let Some(r) = self.count_elements_call(&o, &args, &kwargs)? {
                    self.obj(callable)?;
                    return Ok(r);
                }
                if let Some(r) = self.heap_queue_call(&o, &args, &kwargs)? {
                    self.obj(callable)?;
                    return Ok(r);
                }
                if let Some(r) = self.library_call(&o, &args, &kwargs)? {
                    self.obj(callable)?;
                    return Ok(r);
                }
                if let Some(r) = self.cached_call(callable, &o, &args, &kwargs)? {
                    if let Var::Lazy(_, source) = callable {
                        self.guard(source, Check::is(o.clone()));
                    }
                    return Ok(r);
                }
                unsupported(
                    Kind::Call,
                    format!("a call to {} (not simulated)", describe(&o, vm)),
                )
            }
            other => unsupported(Kind::Call, format!("a call to a {}", other.kind())),
        }
    }

    /// A caller's bound method or `functools.partial`, taken apart as the call would use it:
    /// each part read (and guarded) through the object, so that a later call sees a change.
    fn caller_callable(&mut self, o: &PyObjectRef, source: &Source) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let partial = crate::translate::loaded_modules::loaded_attr("functools", "partial", vm);
        let is_partial = partial.is_some_and(|p| o.class().is(&p));
        if !is_partial && !o.class().is(vm.ctx.types.bound_method_type) {
            return Ok(None);
        }
        self.guard(source, Check::type_is(o.class().to_owned()));
        let part = |name: &'static str| -> SimResult<Var> {
            let v = o
                .get_attr(name, vm)
                .map_err(|_| Unsupported::new(Kind::Value, format!("{name} of a callable")))?;
            let read = Source::NativeAttr(Box::new(source.clone()), name.to_owned());
            Ok(Var::Lazy(v, read))
        };
        if !is_partial {
            return Ok(Some(Var::Bound(Rc::new((
                part("__func__")?,
                part("__self__")?,
            )))));
        }
        let args = self.items(&part("args")?)?;
        let kwargs = self
            .dict_entries(&part("keywords")?)?
            .into_iter()
            .map(|(k, v)| (k.downcast_ref::<PyStr>().expect("a str key").to_string(), v))
            .collect();
        Ok(Some(Var::Partial(Rc::new(
            crate::translate::values::Partial {
                func: part("func")?,
                args,
                kwargs,
            },
        ))))
    }

    /// An instance called: its class's `__call__`, inlined.
    fn call_instance(
        &mut self,
        instance: &Var,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        let Some(inst) = self.instance(instance)? else {
            return unsupported(Kind::Call, format!("a call to a {}", instance.kind()));
        };
        let class = self.inst_class(&inst);
        match crate::translate::values::objects::python_method(&class, "__call__", self.vm) {
            Some(f) => {
                let mut all = vec![instance.clone()];
                all.extend(args);
                self.call_function(&f, all, kwargs)
            }
            None => unsupported(
                Kind::Raises,
                format!("'{}' object is not callable (TypeError)", class.name()),
            ),
        }
    }

    /// A class called: a class written in Python makes an instance; a named tuple class its
    /// tuple (its `__new__` inlined). `None` for other classes.
    fn call_class(
        &mut self,
        callable: &Var,
        class: &Py<PyType>,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let is_user = crate::translate::values::objects::instantiable_class(class, vm);
        let named = self.namedtuple_fields(class).is_some();
        if !is_user && !named {
            return Ok(None);
        }
        self.obj(callable)?; // the class's identity
        if named {
            // `__new__` is a static method of the class: its function.
            let Some(new) = crate::translate::values::objects::python_new(class, vm) else {
                return Ok(None);
            };
            self.guard_class(Source::object(class.to_owned().into()), class)?;
            let mut all = vec![Var::Obj(class.to_owned().into())];
            all.extend(args.iter().cloned());
            return self.call_function(&new, all, kwargs.to_vec()).map(Some);
        }
        self.instantiate(class, args.to_vec(), kwargs.to_vec())
    }

    /// Call a function written in Python that the simulation found itself (on a class whose
    /// version it guards, on a tensor's class...): inlined, its globals read through it.
    pub fn call_function(
        &mut self,
        f: &PyObjectRef,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        let callee = self.python_callee(f, None)?;
        self.inline(callee, args, kwargs)
    }

    /// What the simulation needs to inline `func`: its code, defaults, closure and globals.
    /// Its globals are the translated frame's own (`G[...]`), or read through `source`, or,
    /// for a function the simulation found itself (fixed by a guard on what holds it),
    /// through the function object.
    fn python_callee(&mut self, func: &PyObjectRef, source: Option<Source>) -> SimResult<Callee> {
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
        let through = source.unwrap_or_else(|| Source::object(func.clone()));
        let own = self.frame_globals.as_ref().is_some_and(|g| g.is(&globals));
        let globals = Globals {
            dict: globals,
            owner: (!own).then(|| through.clone()),
        };
        let defaults = self.inlined_defaults(get("__defaults__")?, &code, &through);
        // Keyword-only defaults live in a dict, which may change in place: each is read
        // through it, guarded where it is used.
        let mut kwdefaults = Vec::new();
        if let Ok(d) = get("__kwdefaults__")?.downcast::<PyDict>() {
            let all = Source::NativeAttr(Box::new(through.clone()), "__kwdefaults__".into());
            for (k, v) in &*d {
                let k = k
                    .downcast_ref::<PyStr>()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                kwdefaults.push((
                    k.clone(),
                    Var::Lazy(v, Source::Key(Box::new(all.clone()), k)),
                ));
            }
        }
        let closure = self.inlined_closure(&get("__closure__")?, &code, &through);
        Ok(Callee {
            code,
            globals,
            defaults,
            kwdefaults,
            closure,
            made_from: None,
        })
    }

    /// Simulate a call of `callee` inline; on failure the translation rolls back to here.
    fn inline(
        &mut self,
        callee: Callee,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        // Under a handler (of this frame or one further out), what the call raises goes there.
        let qualname = callee.code.qualname.as_str().to_owned();
        match self.inline_catching(callee, args, kwargs, self.under_handler)? {
            Ok(v) => Ok(v),
            Err(exc) => self.raise_from_call(exc, &qualname),
        }
    }

    /// Call `f` (written in Python) inline, and return what it raises as `Err(exception)`
    /// instead of failing: for the lookups that catch an AttributeError (`hasattr`,
    /// `getattr` with a default).
    pub fn call_function_catching(
        &mut self,
        f: &PyObjectRef,
        args: Vec<Var>,
    ) -> SimResult<Result<Var, Var>> {
        let callee = self.python_callee(f, None)?;
        self.inline_catching(callee, args, Vec::new(), true)
    }

    fn inline_catching(
        &mut self,
        callee: Callee,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
        catch: bool,
    ) -> SimResult<Result<Var, Var>> {
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
            let made_by = (callee.made_from.clone()).map(|f| (f, args.clone(), kwargs.clone()));
            let frame = self.bind(&callee, args, kwargs)?;
            self.inlined.push(code.qualname.as_str().to_owned());
            let qualname = code.qualname.as_str().to_owned();
            return Ok(Ok(Var::Gen(Rc::new(RefCell::new(SimGen {
                frame: Some(frame),
                started: false,
                done: false,
                qualname,
                made_by,
            })))));
        }
        if self.depth >= MAX_INLINE_DEPTH {
            return unsupported(
                Kind::Limit,
                format!("calls nested deeper than {MAX_INLINE_DEPTH}"),
            );
        }
        let checkpoint = self.checkpoint();
        self.depth += 1;
        let outer = self.under_handler;
        let caller_position = self.position;
        let result = self.bind(&callee, args, kwargs).and_then(|mut frame| {
            self.inlined_frames.push(InlinedFrame {
                code: code.clone(),
                globals: frame.globals.dict.clone(),
                caller_position,
            });
            let r = self.run_to_end(&mut frame, catch);
            self.inlined_frames.pop();
            r
        });
        self.under_handler = outer;
        self.position = caller_position;
        self.depth -= 1;
        match result {
            Ok(r) => {
                self.inlined.push(code.qualname.as_str().to_owned());
                Ok(if r.raised { Err(r.value) } else { Ok(r.value) })
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
        frame.called_under_handler = self.under_handler;
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
}

/// The name of a function of the `symtrace` module.
/// How a break names a callable. `__qualname__` is read only where it is the VM's own
/// attribute (a function, a type whose metaclass is `type`): reading it elsewhere could run a
/// property of the user's.
fn describe(o: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> String {
    let class = o.class();
    let own = class.is(vm.ctx.types.function_type)
        || class.is(vm.ctx.types.type_type)
        || class.is(vm.ctx.types.builtin_function_or_method_type);
    let name = own
        .then(|| o.get_attr("__qualname__", vm).ok())
        .flatten()
        .and_then(|n| {
            n.downcast_ref::<PyStr>()
                .map(|s| s.to_string_lossy().into_owned())
        });
    match name {
        Some(n) => format!("{n} ({})", o.class().name()),
        None => format!("a {} object", o.class().name()),
    }
}
