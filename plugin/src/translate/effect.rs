//! One side effect the simulation recorded (see `side_effects`): what it changes, how the
//! replacement replays it, and which reads of the frame's values it makes stale.

use crate::translate::key_const::str_key;
use crate::translate::source::Source;
use crate::translate::values::Var;

/// One side effect, with its values as the simulation holds them (`V` = [`Var`]) or as the
/// replacement code builds them (`V` = `codegen::Template`).
#[derive(Clone, Debug)]
pub enum Effect<V = Var> {
    /// `target.method(*args)` on a dict that existed before the call (`update`).
    Method {
        target: Source,
        method: &'static str,
        args: Vec<V>,
    },
    /// `target[key] = value` on a list or dict that existed before the call (a list's shadow
    /// is written back as `target[:] = items`).
    SetItem { target: Source, key: V, value: V },
    /// `target.name = value` on an object that existed before the call (`on_class`: a
    /// class, set through `type.__setattr__`; otherwise `object.__setattr__`, the
    /// simulation having run any `__setattr__` of the class's own).
    SetAttr {
        target: Source,
        name: String,
        value: V,
        on_class: bool,
    },
    /// `del target[key]` on a dict that existed before the call.
    DelItem { target: Source, key: V },
    /// `del target.name` on an object that existed before the call.
    DelAttr { target: Source, name: String },
    /// `global name; name = value` (`None`: `del name`): in the frame's own globals
    /// (`owner` None), or in those of an inlined function of another module, read through
    /// the function `owner` (its `__globals__`, which a function never swaps).
    StoreGlobal {
        owner: Option<Source>,
        name: String,
        value: Option<V>,
    },
    /// `nonlocal name; name = value`: a free variable of the translated frame.
    StoreCell { name: String, value: V },
    /// `nonlocal name; name = value` in an inlined function of the caller's: cell `index` of
    /// the closure of the function read from `function` (see `values::caller_cells`).
    StoreClosureCell {
        function: Source,
        index: usize,
        value: V,
    },
    /// The caller's tensor at `target`, updated in place during the call: its value at the
    /// end of the graph copied into it (`target[...] = value`), so it stays the same object.
    WriteBack { target: Source, value: V },
    /// A call for what it writes, which changes nothing the simulation reads: `print(*args, **kwargs)` (see `values::deferred_print`) or
    /// `warnings.warn(*args, **kwargs)` (see `values::deferred_warning`).
    Output {
        call: OutputCall,
        args: Vec<V>,
        kwargs: Vec<(String, V)>,
    },
}

/// The function an [`Effect::Output`] calls.
#[derive(Clone, Debug)]
pub enum OutputCall {
    /// `builtins.print`.
    Print,
    /// A function that names its caller's frame (`warnings.warn`, a logger's `_log`), the
    /// one the program called, replayed at `position`: that of the translated frame's
    /// instruction that called it (itself, or by calling the inlined function that did), so
    /// that the warning or the log record names the line the program's names.
    Located {
        function: rustpython_vm::PyObjectRef,
        position: crate::bytecode::Position,
    },
    /// An `lru_cache` wrapper called again with the arguments the simulation followed the
    /// wrapped function with (see `values::cached_calls`), its result dropped: the cache's
    /// contents and statistics as the program leaves them.
    CacheLookup(rustpython_vm::PyObjectRef),
}

impl<V> Effect<V> {
    /// Whether replaying it may raise where the simulation did not: a deletion of a key or
    /// attribute that is gone by the time the replacement runs (nothing guards its presence;
    /// the replay raises as the program would), a print whose write fails, a warning the
    /// filters make an error, a log record a filter raises on.
    pub fn may_fail(&self) -> bool {
        match self {
            Effect::DelItem { .. } | Effect::DelAttr { .. } => true,
            // A cache lookup of values, whose function the simulation ran to its end.
            Effect::Output { call, .. } => !matches!(call, OutputCall::CacheLookup(_)),
            _ => false,
        }
    }

    /// The same effect with each value mapped by `f` (in the order they are replayed).
    pub fn try_map<W, E>(&self, mut f: impl FnMut(&V) -> Result<W, E>) -> Result<Effect<W>, E> {
        Ok(match self {
            Effect::Method {
                target,
                method,
                args,
            } => Effect::Method {
                target: target.clone(),
                method,
                args: args.iter().map(&mut f).collect::<Result<_, _>>()?,
            },
            Effect::SetItem { target, key, value } => {
                let value = f(value)?;
                Effect::SetItem {
                    target: target.clone(),
                    key: f(key)?,
                    value,
                }
            }
            Effect::SetAttr {
                target,
                name,
                value,
                on_class,
            } => Effect::SetAttr {
                target: target.clone(),
                name: name.clone(),
                value: f(value)?,
                on_class: *on_class,
            },
            Effect::DelItem { target, key } => Effect::DelItem {
                target: target.clone(),
                key: f(key)?,
            },
            Effect::DelAttr { target, name } => Effect::DelAttr {
                target: target.clone(),
                name: name.clone(),
            },
            Effect::StoreGlobal { owner, name, value } => Effect::StoreGlobal {
                owner: owner.clone(),
                name: name.clone(),
                value: value.as_ref().map(f).transpose()?,
            },
            Effect::StoreCell { name, value } => Effect::StoreCell {
                name: name.clone(),
                value: f(value)?,
            },
            Effect::StoreClosureCell {
                function,
                index,
                value,
            } => Effect::StoreClosureCell {
                function: function.clone(),
                index: *index,
                value: f(value)?,
            },
            Effect::WriteBack { target, value } => Effect::WriteBack {
                target: target.clone(),
                value: f(value)?,
            },
            Effect::Output { call, args, kwargs } => Effect::Output {
                call: call.clone(),
                args: args.iter().map(&mut f).collect::<Result<_, _>>()?,
                kwargs: kwargs
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), f(v)?)))
                    .collect::<Result<_, _>>()?,
            },
        })
    }

    /// The object or name the effect changes, when it is read from the frame.
    pub fn target(&self) -> Option<&Source> {
        match self {
            Effect::Method { target, .. }
            | Effect::SetItem { target, .. }
            | Effect::SetAttr { target, .. }
            | Effect::DelItem { target, .. }
            | Effect::DelAttr { target, .. }
            | Effect::WriteBack { target, .. } => Some(target),
            // The function whose closure holds the cell: loaded before the effects if one
            // of them rebinds it, as the simulation read it.
            Effect::StoreClosureCell { function, .. } => Some(function),
            Effect::StoreGlobal { .. } | Effect::StoreCell { .. } | Effect::Output { .. } => None,
        }
    }

    /// The values it stores.
    pub fn values(&self) -> Vec<&V> {
        match self {
            Effect::Method { args, .. } => args.iter().collect(),
            Effect::SetItem { key, value, .. } => vec![key, value],
            Effect::DelItem { key, .. } => vec![key],
            Effect::DelAttr { .. } => Vec::new(),
            Effect::SetAttr { value, .. }
            | Effect::StoreCell { value, .. }
            | Effect::StoreClosureCell { value, .. }
            | Effect::WriteBack { value, .. } => vec![value],
            Effect::StoreGlobal { value, .. } => value.iter().collect(),
            Effect::Output { args, kwargs, .. } => {
                args.iter().chain(kwargs.iter().map(|(_, v)| v)).collect()
            }
        }
    }
}

impl Effect {
    /// Where a store puts its value, as a source that loads it back (a global, a free
    /// variable, an attribute, a str key of a dict), and the value.
    pub fn stored(&self) -> Option<(Source, &Var)> {
        match self {
            Effect::SetAttr {
                target,
                name,
                value,
                ..
            } => Some((target.clone().attr(name), value)),
            Effect::SetItem { target, key, value } => {
                str_key(key).map(|k| (target.clone().key(k), value))
            }
            Effect::StoreGlobal {
                owner,
                name,
                value: Some(value),
            } => Some((Source::global_in(owner.as_ref(), name), value)),
            Effect::StoreCell { name, value } => Some((Source::Free(name.clone()), value)),
            Effect::StoreClosureCell {
                function,
                index,
                value,
            } => Some((Source::Closure(Box::new(function.clone()), *index), value)),
            _ => None,
        }
    }

    /// Whether loading `source` after this effect would read something it changed: a value
    /// under a mutated object (the object itself is the same object), or a rebound name.
    pub(crate) fn changes(&self, source: &Source) -> bool {
        // What the source computes its step with (an item's changing index, `self.i` in
        // `L['self'].seqn[L['self'].i]`) is read when it is loaded, too.
        if source.operands().iter().any(|s| self.changes(s)) {
            return true;
        }
        // An effect may drop the last strong reference to a weak reference's referent
        // wherever it is held: loaded before the effects, the referent is kept alive, as
        // the frame's own variable keeps it.
        if through_weak_reference(source) && !matches!(self, Effect::Output { .. }) {
            return true;
        }
        match self {
            // Setting one attribute of an instance leaves its other attributes as they were.
            Effect::SetAttr { target, name, .. } | Effect::DelAttr { target, name } => {
                is_strictly_under(source, target) && !under_other_attr(source, target, name)
            }
            // So does a store (or delete) of one str key of a dict: its other keys stay.
            Effect::SetItem { target, key, .. } | Effect::DelItem { target, key }
                if let Some(k) = str_key(key) =>
            {
                (is_strictly_under(source, target) && !under_other_key(source, target, k))
                    || reads_an_element(source, Some(k))
            }
            Effect::Method { target, .. }
            | Effect::SetItem { target, .. }
            | Effect::DelItem { target, .. } => {
                is_strictly_under(source, target) || reads_an_element(source, None)
            }
            Effect::StoreGlobal {
                owner: None, name, ..
            } => is_under_or_at(source, &Source::Global(name.clone())),
            // Functions of one module read its globals through different owners, and its
            // importers as attributes of the module: any read of the name through a
            // function, or as an attribute, counts as changed.
            Effect::StoreGlobal {
                owner: Some(_),
                name,
                ..
            } => is_under_global_named(source, name),
            Effect::StoreCell { name, .. } => is_under_or_at(source, &Source::Free(name.clone())),
            Effect::StoreClosureCell {
                function, index, ..
            } => is_under_or_at(source, &Source::Closure(Box::new(function.clone()), *index)),
            // The tensor's elements change; its shape, dtype and identity do not.
            Effect::WriteBack { .. } => false,
            // It writes to a stream of the interpreter's own, read by nothing simulated.
            Effect::Output { .. } => false,
        }
    }
}

/// Whether `source` is, or is under, the referent of a weak reference.
fn through_weak_reference(source: &Source) -> bool {
    let mut s = Some(source);
    while let Some(at) = s {
        if matches!(at, Source::WeakTarget(_)) {
            return true;
        }
        s = at.parent();
    }
    false
}

/// Whether `source` is, or is under, a global `name` read through some function, or an
/// attribute `name` of something (a module's).
fn is_under_global_named(source: &Source, name: &str) -> bool {
    let mut s = Some(source);
    while let Some(at) = s {
        if matches!(at, Source::FnGlobal(_, n) | Source::Attr(_, n) if n == name) {
            return true;
        }
        s = at.parent();
    }
    false
}

/// Whether `source` reads an element of a container on its way (an item, a key; under a
/// str key, only that key): a change of a container may change it though it is read through
/// another name, since the guards need not tell the two containers apart when the read came
/// first (`v = self.m[0]; self.l[0] = x` with `self.m is self.l` on a later call). Loaded
/// before the effects, it is the value the simulation read.
fn reads_an_element(source: &Source, key: Option<&str>) -> bool {
    let mut s = Some(source);
    while let Some(at) = s {
        let element = match at {
            Source::Key(_, k) => key.is_none_or(|want| want == k),
            // A list's length: the list may be one the call changed through another name.
            Source::Len(_) => true,
            Source::Item(..) | Source::At(..) | Source::ConstKey(..) | Source::IdKey(..) => {
                key.is_none()
            }
            _ => false,
        };
        if element {
            return true;
        }
        s = at.parent();
    }
    false
}

/// The step of `source` directly under `root` (`source` itself or one of its ancestors).
fn child_of<'a>(source: &'a Source, root: &Source) -> Option<&'a Source> {
    let mut s = source;
    loop {
        let parent = s.parent()?;
        if parent == root {
            return Some(s);
        }
        s = parent;
    }
}

/// Whether `source` is `root.other` (or under it) for an attribute `other` that is not `name`.
fn under_other_attr(source: &Source, root: &Source, name: &str) -> bool {
    matches!(
        child_of(source, root),
        Some(Source::Attr(_, a) | Source::NativeAttr(_, a)) if a != name
    )
}

/// Whether `source` is `root[other]` (or under it) for a str key `other` that is not `key`.
fn under_other_key(source: &Source, root: &Source, key: &str) -> bool {
    matches!(child_of(source, root), Some(Source::Key(_, k)) if k != key)
}

fn is_strictly_under(source: &Source, root: &Source) -> bool {
    source.parent().is_some_and(|p| is_under_or_at(p, root))
}

fn is_under_or_at(source: &Source, root: &Source) -> bool {
    source == root || is_strictly_under(source, root)
}
