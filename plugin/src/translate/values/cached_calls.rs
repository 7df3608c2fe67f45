//! A call to a function wrapped by `functools.lru_cache` (or `cache`): TorchDynamo traces
//! the wrapped function and ignores the cache; so does the simulation, where that cannot
//! change the answer.
//!
//! The cache hands back what the function returned when it was first called with equal
//! arguments; computing it again gives the same answer if the function's result depends on
//! its arguments alone and the call changes nothing. So the call is followed only when:
//! - its arguments are values (numbers, sizes, strings, `None`, dtypes, tuples of them),
//!   which the cache keys by value: not objects keyed by identity whose state may change;
//! - the function reads no name whose value may have changed since the cache was filled:
//!   every global it (or a function it calls, found the same way) names is a module, a
//!   function, a class or a builtin, no attribute it names is data of a module or class
//!   written in Python (of a module written in Rust, anything but a number, a str or a
//!   tuple of them: `sys.argv` changes), its defaults are values, and it has no free
//!   variables (`fixed_names`);
//! - the simulated call made no side effect, drew no random number and wrote no caller's
//!   tensor, and returned a value of the same kinds.
//!
//! Otherwise the call runs as written (a break). The replacement calls the wrapper again
//! with the same arguments where the program called it, its result dropped
//! (`OutputCall::CacheLookup`): a hit, or on a miss the pure function, so that the cache's
//! contents and `cache_info()` are the program's.
//!
//! A tensor returned (a causal mask, a table of positions, made once per size) is one object
//! the cache shares with every caller, which the program may have updated in place since:
//! computing it again could differ. The replacement looks it up first instead, as it makes
//! random draws, and the graph takes what the cache gives as an input (`cached_tensor`).

use rustpython_vm::builtins::{PyCode, PyDict, PyFunction, PyModule, PyStr, PyTuple, PyType};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyObjectRef, PyRef, VirtualMachine};

use crate::tensor::{Meta, PyTensor};
use crate::translate::breaks::reason::Kind;
use crate::translate::effect::OutputCall;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;
use crate::translate::values::python_draws::DrawCall;

/// Why a call is not followed when it returns a tensor that only a lookup can give.
const SHARED: &str = "returns a value the cache would share between calls";

/// How deep `fixed_names` follows the functions a cached function names.
const DEPTH: usize = 4;

impl State<'_> {
    /// `wrapper(*args, **kwargs)` for an `lru_cache` wrapper: the wrapped function inlined,
    /// where the cache cannot tell (see the module's comment); `None` for any other callable.
    pub(super) fn cached_call(
        &mut self,
        callable: &Var,
        wrapper: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some(wrapped) = cache_wrapped(wrapper, vm) else {
            return Ok(None);
        };
        let what = describe_cached(&wrapped, vm);
        for (i, a) in args.iter().chain(kwargs.iter().map(|(_, v)| v)).enumerate() {
            // A method's `self`, which its code never reads: the cache keys it by identity,
            // and the result does not depend on it.
            if i == 0
                && !args.is_empty()
                && first_parameter_unused(&wrapped, vm)
                && self.identity_key(a)?.is_some()
            {
                continue;
            }
            if !self.is_cache_value(a) {
                return unsupported(
                    Kind::Call,
                    format!(
                        "{what} with a {} argument (the cache keys it by identity)",
                        a.kind()
                    ),
                );
            }
        }
        if let Err(why) = fixed_names(&wrapped, DEPTH, &mut Vec::new(), None, vm) {
            return unsupported(Kind::Call, format!("{what}: {why}"));
        }
        let checkpoint = self.checkpoint();
        let effects = self.effects.mark();
        let (written, draws) = (self.written.len(), self.templating.draws.len());
        let drawn = graph_draws();
        let result = self.invoke(&Var::Obj(wrapped), args.to_vec(), kwargs.to_vec())?;
        // The lookups of the caches it calls are the call's own to make: on a hit, none.
        if self.effects.mark() != effects && self.effects.only_cache_lookups_since(effects) {
            self.effects.rollback(effects);
        }
        let why = if self.effects.mark() != effects {
            Some("changes what existed before the call")
        } else if self.written.len() != written || self.templating.draws.len() != draws {
            Some("writes a caller's tensor or draws a random number")
        } else if graph_draws() != drawn {
            Some("draws random numbers")
        } else if !self.is_cache_value(&result) {
            Some(SHARED)
        } else {
            None
        };
        if let Some(why) = why {
            let tensor = match &result {
                Var::Tensor(t) if why == SHARED => Some(Meta::of(&t.read())),
                Var::Obj(o) if why == SHARED => {
                    o.downcast_ref::<PyTensor>().map(|t| Meta::of(&t.read()))
                }
                _ => None,
            };
            self.rollback(checkpoint);
            if let Some(meta) = tensor
                && let Some(looked_up) = self.cached_tensor(callable, args, kwargs, meta)?
            {
                return Ok(Some(looked_up));
            }
            return unsupported(Kind::Call, format!("{what} {why}"));
        }
        self.effects.output(Effect::Output {
            call: OutputCall::CacheLookup(wrapper.clone()),
            args: args.to_vec(),
            kwargs: kwargs.to_vec(),
        });
        Ok(Some(result))
    }

    /// The tensor the cache hands back, as a graph input: the replacement looks it up first,
    /// as it makes draws (`python_draws`), and the graph reads it from there, so that the
    /// program's tensor is read (updated in place since, or not) and no copy of it is made.
    /// Each call is a lookup of its own, as in the program (`cache_info()` counts them): two
    /// of one key are two inputs, one object at run time, which nothing may tell apart (`is`
    /// would need a guard, an in-place update of either is refused).
    /// `None` where it cannot: a keyword argument, or calls made first are refused
    /// (`Specialization::python_draws_break`).
    fn cached_tensor(
        &mut self,
        callable: &Var,
        args: &[Var],
        kwargs: &[(String, Var)],
        meta: Meta,
    ) -> SimResult<Option<Var>> {
        // Where the replacement loads the wrapper: where the frame read it, or the wrapper
        // itself where the simulation knew it (a static method found on a guarded class).
        let function = match callable {
            Var::Lazy(_, source) => source.clone(),
            Var::Obj(wrapper) => Source::object(wrapper.clone()),
            _ => return Ok(None),
        };
        if !kwargs.is_empty() || self.spec.python_draws_break {
            return Ok(None);
        }
        let mut plain = Vec::with_capacity(args.len());
        for a in args {
            plain.push(self.plain_obj(a, "an argument of a cached function")?);
        }
        let k = self.templating.draws.len();
        self.templating.draws.push(DrawCall {
            function,
            args: plain,
        });
        log::debug!(target: crate::log_targets::GRAPH, "an lru_cache's tensor looked up by the replacement as {}", Source::Draw(k));
        Ok(Some(Var::Tensor(
            self.first_call_input(meta, Source::Draw(k))?,
        )))
    }

    /// A value an `lru_cache` keys by value and no one can change: a number, a size, a str,
    /// `None`, a bool, a dtype, or a tuple of them.
    fn is_cache_value(&self, v: &Var) -> bool {
        let vm = self.vm;
        match v {
            Var::Num(_) | Var::Text(_) => true,
            Var::Tuple(items) => items.iter().all(|i| self.is_cache_value(i)),
            Var::Obj(o) | Var::Lazy(o, _) => is_value_object(o, vm),
            _ => false,
        }
    }
}

fn is_value_object(o: &PyObjectRef, vm: &VirtualMachine) -> bool {
    let t = &vm.ctx.types;
    let c = o.class();
    if [
        t.int_type,
        t.float_type,
        t.str_type,
        t.bool_type,
        t.none_type,
        t.bytes_type,
    ]
    .iter()
    .any(|k| c.is(*k))
        || o.downcast_ref::<crate::tensor::object::PyDType>().is_some()
    {
        return true;
    }
    c.is(t.tuple_type)
        && o.downcast_ref::<PyTuple>()
            .is_some_and(|items| items.iter().all(|i| is_value_object(i, vm)))
}

/// Whether no instruction of the function `f` reads or writes its first parameter (nor
/// makes it a cell for a nested function).
fn first_parameter_unused(f: &PyObjectRef, vm: &VirtualMachine) -> bool {
    use crate::bytecode::opcodes::{local_slots, uses_cell_slot};
    let Some(code) = f
        .get_attr("__code__", vm)
        .ok()
        .and_then(|c| c.downcast::<PyCode>().ok())
    else {
        return false;
    };
    if code.arg_count == 0 {
        return false;
    }
    let Ok(decoded) = crate::bytecode::decode::decode(&code) else {
        return false;
    };
    decoded.prologue.iter().chain(&decoded.instrs).all(|x| {
        let local = local_slots(x.op, x.arg).is_some_and(|s| s.contains(&Some(0)));
        !local && !(uses_cell_slot(x.op) && x.arg == 0)
    })
}

/// Whether `d` is an `lru_cache` wrapper.
pub(crate) fn is_cache_wrapper(d: &PyObjectRef, vm: &VirtualMachine) -> bool {
    cache_wrapped(d, vm).is_some()
}

/// The function an `lru_cache` wrapper calls (its `__wrapped__`, which `update_wrapper`
/// sets), read from its dict; `None` for anything else.
fn cache_wrapped(v: &PyObjectRef, vm: &VirtualMachine) -> Option<PyObjectRef> {
    let class = v.class();
    if class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
        || class.name().to_string() != "_lru_cache_wrapper"
    {
        return None;
    }
    v.dict()?.get_item_opt("__wrapped__", vm).ok().flatten()
}

fn graph_draws() -> usize {
    let registry = crate::tensor::registry();
    crate::graph::recorder::with(|r| {
        r.graph
            .nodes
            .iter()
            .filter(|n| registry.draws(&n.op))
            .count()
    })
}

fn describe_cached(f: &PyObjectRef, vm: &VirtualMachine) -> String {
    let name = f
        .get_attr("__qualname__", vm)
        .ok()
        .and_then(|n| {
            n.downcast_ref::<PyStr>()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "?".to_owned());
    format!("the lru_cache-wrapped {name}")
}

/// Whether `f` (a Python function) reads only names whose values are fixed (see the
/// module's comment), following the functions it names `depth` deep; why not otherwise.
/// `within`: the class `f` was found in, whose attributes it may read through `cls`.
fn fixed_names(
    f: &PyObjectRef,
    depth: usize,
    seen: &mut Vec<usize>,
    within: Option<&PyObjectRef>,
    vm: &VirtualMachine,
) -> Result<(), String> {
    if f.downcast_ref::<PyFunction>().is_none() {
        return Err(format!("wraps a {}", f.class().name()));
    }
    if seen.contains(&(f.get_id())) {
        return Ok(());
    }
    seen.push(f.get_id());
    if depth == 0 {
        return Err("calls functions nested too deep to check".to_owned());
    }
    let code = f
        .get_attr("__code__", vm)
        .ok()
        .and_then(|c| c.downcast::<PyCode>().ok())
        .ok_or("a function without code")?;
    if !code.freevars.is_empty() {
        return Err("reads free variables, which may change".to_owned());
    }
    // A default the function reads may be an object changed since (`table=[]`).
    for defaults in ["__defaults__", "__kwdefaults__"] {
        let Ok(d) = f.get_attr(defaults, vm) else {
            continue;
        };
        let values: Vec<PyObjectRef> = match d.downcast_ref::<PyDict>() {
            Some(d) => d.values_vec(),
            None if vm.is_none(&d) => Vec::new(),
            None => vec![d],
        };
        if !values.iter().all(|v| is_value_object(v, vm)) {
            return Err("has a default that is not a value".to_owned());
        }
    }
    let globals: PyRef<PyDict> = f
        .get_attr("__globals__", vm)
        .ok()
        .and_then(|g| g.downcast::<PyDict>().ok())
        .ok_or("a function without globals")?;
    let mut codes = Vec::new();
    crate::bytecode::corpus::nested_codes(code, &mut codes);
    let mut owners: Vec<PyObjectRef> = within.into_iter().cloned().collect();
    let mut names: Vec<String> = Vec::new();
    for c in &codes {
        for name in c.names.iter() {
            let name = name.as_str().to_owned();
            match globals.get_item_opt(name.as_str(), vm).ok().flatten() {
                Some(v) => {
                    fixed_value(&v, &name, depth, seen, None, vm)?;
                    owners.push(v);
                }
                None => names.push(name),
            }
        }
    }
    // The other names are attributes (or builtins): each that a module or class written in
    // Python holds is fixed too (looked up in their dicts, which runs no code).
    for owner in &owners {
        let class = owner.downcast_ref::<PyType>().is_some().then_some(owner);
        for name in &names {
            if let Some(v) = python_entry(owner, name, vm) {
                fixed_value(&v, name, depth, seen, class, vm)
                    .map_err(|why| format!("{why}, of {}", describe_owner(owner, vm)))?;
            }
        }
    }
    Ok(())
}

/// `v`, bound to `name`: a binding programs make once, the functions among them followed
/// (`class`: the class it was found in).
fn fixed_value(
    v: &PyObjectRef,
    name: &str,
    depth: usize,
    seen: &mut Vec<usize>,
    class: Option<&PyObjectRef>,
    vm: &VirtualMachine,
) -> Result<(), String> {
    let t = &vm.ctx.types;
    let c = v.class();
    if v.downcast_ref::<PyFunction>().is_some() {
        return fixed_names(v, depth - 1, seen, class, vm);
    }
    if let Some(wrapped) = cache_wrapped(v, vm) {
        return fixed_names(&wrapped, depth - 1, seen, None, vm);
    }
    let inner = if c.is(t.staticmethod_type) || c.is(t.classmethod_type) {
        Some("__func__")
    } else if c.is(t.property_type) {
        Some("fget")
    } else {
        None
    };
    if let Some(inner) = inner {
        return match v.get_attr(inner, vm) {
            Ok(f) if vm.is_none(&f) => Ok(()),
            Ok(f) => fixed_value(&f, name, depth, seen, class, vm),
            Err(_) => Err(format!("reads {name}, a {} without {inner}", c.name())),
        };
    }
    let fixed = v.downcast_ref::<PyModule>().is_some()
        || v.downcast_ref::<PyType>().is_some()
        || c.is(t.builtin_function_or_method_type)
        || c.is(t.method_descriptor_type);
    match fixed {
        true => Ok(()),
        false => Err(format!("reads {name}, a {}", c.name())),
    }
}

/// `owner.name` where `owner` is a module, or a class written in Python, from its dicts; of
/// a module written in Rust, only what may change (not a number, str or tuple of them).
fn python_entry(owner: &PyObjectRef, name: &str, vm: &VirtualMachine) -> Option<PyObjectRef> {
    if let Some(m) = owner.downcast_ref::<PyModule>() {
        let dict = m.dict();
        let native = dict.get_item_opt("__file__", vm).ok().flatten().is_none();
        let v = dict.get_item_opt(name, vm).ok().flatten()?;
        return (!native || !is_value_object(&v, vm)).then_some(v);
    }
    let c = owner.downcast_ref::<PyType>()?;
    if !c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) {
        return None;
    }
    let key = vm.ctx.intern_str(name);
    c.mro_map_collect(|c| c.to_owned())
        .iter()
        .find_map(|c| c.get_direct_attr(key))
}

fn describe_owner(o: &PyObjectRef, vm: &VirtualMachine) -> String {
    o.get_attr("__name__", vm)
        .ok()
        .and_then(|n| {
            n.downcast_ref::<PyStr>()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| o.class().name().to_string())
}
