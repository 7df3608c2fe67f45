//! How the replacement makes again an iterator the simulation steps (a `for` loop's at a
//! loop split, one held in a local at a graph break), in the state it had reached.

use std::collections::HashMap;
use std::rc::Rc;

use rustpython_vm::AsObject;
use rustpython_vm::bytecode::Opcode;

use crate::graph::Value;
use crate::translate::state::{Kind, SimResult, State, Unsupported, unsupported};
use crate::translate::templates::{Template, build};
use crate::translate::values::Var;

/// An iterator the simulation steps, as the replacement makes it again at a graph break: one
/// over a list made in the call iterates what it has left (a fresh list where nothing else
/// holds it; the list itself, built once, where something does: `held_once`); one over a
/// caller's list or dict is `itertools.islice` of it past what it gave (the dict unchanged
/// so far: `Stepper::Caller` checks it); `enumerate` and `zip` of their iterators made again.
pub(super) fn stepper_template(
    state: &mut State<'_>,
    s: &Rc<std::cell::RefCell<crate::translate::values::iterators::Stepper>>,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    use crate::translate::values::iterators::Stepper;
    let vm = state.vm;
    let s = s.borrow();
    let list_of = |state: &mut State<'_>,
                   items: Vec<Var>,
                   outputs: &mut Vec<Value>,
                   index: &mut HashMap<Value, usize>|
     -> SimResult<Template> {
        let items = items
            .iter()
            .map(|i| build(state, i, outputs, index))
            .collect::<SimResult<_>>()?;
        Ok(Template::Iter(Box::new(Template::List(items))))
    };
    match &*s {
        // Over a list held elsewhere too (a local the loop iterates): the list built once,
        // its iterator made over it at the position reached, so that both see one list.
        Stepper::List { list, next }
            if state
                .templating
                .shared
                .contains(&(Rc::as_ptr(list) as usize)) =>
        {
            let over = build(state, &Var::List(list.clone()), outputs, index)?;
            match next {
                0 => Ok(Template::Iter(Box::new(over))),
                _ => islice_from(over, *next, vm),
            }
        }
        Stepper::List { list, next } => {
            let rest: Vec<Var> = list.borrow().iter().skip(*next).cloned().collect();
            list_of(state, rest, outputs, index)
        }
        Stepper::ListReversed { list, next } => {
            let rest: Vec<Var> = match next {
                Some(i) => list.borrow().iter().take(i + 1).rev().cloned().collect(),
                None => Vec::new(),
            };
            list_of(state, rest, outputs, index)
        }
        // The deque's own iterator (or reverse iterator) at the position reached
        // (`type(iter(d))(d, next)`, the constructor its pickling uses): it reports the length
        // left and raises at a change of the deque, as the one it stands for does. Changed
        // since that one was made, the deque made again would not make its next step raise.
        Stepper::Deque {
            deque,
            next,
            changes,
            reversed,
        } => {
            if deque.borrow().changes != *changes {
                return unsupported(
                    Kind::Rebuild,
                    "an iterator over a deque that changed since, at a graph break",
                );
            }
            let over = build(state, &Var::Deque(deque.clone()), outputs, index)?;
            let iterator_type =
                crate::translate::loaded_modules::loaded_attr("collections", "deque", vm)
                    .and_then(|d| d.call((), vm).ok())
                    .and_then(|d| match reversed {
                        true => vm.call_method(&d, "__reversed__", ()).ok(),
                        false => d.get_iter(vm).ok().map(Into::into),
                    })
                    .map(|i| i.class().to_owned())
                    .ok_or_else(|| Unsupported::new(Kind::Internal, "the deque iterator type"))?;
            Ok(Template::New(
                iterator_type.into(),
                vec![over, Template::Const(vm.ctx.new_int(*next).into())],
            ))
        }
        // The set's own iterator, made again where the one it stands for has yielded
        // nothing and its set is as it was then (its hint, which any change of the set
        // sets to 0, is the same; an empty set's says nothing).
        Stepper::Set {
            native,
            set,
            hint,
            next,
        } => {
            let unchanged = *hint > 0
                && crate::translate::values::iterators::length_hint(native, vm) == Some(*hint);
            if *next > 0 || !unchanged {
                return unsupported(
                    Kind::Rebuild,
                    "an iterator over a set made in the call, stepped or the set changed since \
                     or empty, at a graph break",
                );
            }
            let set = build(state, &Var::Set(set.clone()), outputs, index)?;
            Ok(Template::Iter(Box::new(set)))
        }
        Stepper::Caller {
            origin: Some(origin),
            consumed,
            watch,
            stores,
            ..
        } => {
            use crate::translate::values::iterators::CallerOrigin;
            // Made again after the replayed stores: only where none came after the original
            // was made (it would raise, or give what a fresh one does not).
            let changed = watch
                .iter()
                .zip(stores)
                .any(|((o, _), stored)| state.changed_since(o, *stored, Some(origin), *consumed));
            let list = watch
                .first()
                .is_some_and(|(o, _)| o.class().is(vm.ctx.types.list_type));
            // A list's iterator reads it by position, as the one made again does.
            if changed && !(list && matches!(origin, CallerOrigin::Direct(_))) {
                return unsupported(
                    Kind::Rebuild,
                    "an iterator over a dict or a reversed list of the caller's that the call \
                     changed, at a graph break",
                );
            }
            let over = match origin {
                CallerOrigin::Direct(source) => Template::Load(source.clone()),
                // `type(d).values(d)`: the class's own method (a dict-like's reads are the
                // dict's), not one an instance could shadow.
                CallerOrigin::View(source, kind) => {
                    let (dict, _) = watch
                        .first()
                        .ok_or_else(|| Unsupported::new(Kind::Internal, "a view's dict"))?;
                    let method = dict
                        .class()
                        .get_attr(vm.ctx.intern_str(kind.method()))
                        .ok_or_else(|| Unsupported::new(Kind::Internal, "a dict view's method"))?;
                    Template::New(method, vec![Template::Load(source.clone())])
                }
                CallerOrigin::Reversed(source) => {
                    let reversed = vm.builtins.get_attr("reversed", vm).map_err(|_| {
                        Unsupported::new(Kind::Internal, "builtins.reversed is missing")
                    })?;
                    Template::New(reversed, vec![Template::Load(source.clone())])
                }
            };
            islice_from(over, *consumed, vm)
        }
        Stepper::Caller { origin: None, .. } => unsupported(
            Kind::Rebuild,
            "an iterator over containers of the caller's, at a graph break",
        ),
        Stepper::Enumerate { inner, count } => Ok(Template::New(
            vm.ctx.types.enumerate_type.to_owned().into(),
            vec![
                build(state, inner, outputs, index)?,
                Template::Const(vm.ctx.new_int(*count).into()),
            ],
        )),
        // Made again without its keyword, it would no longer check the lengths.
        Stepper::Zip { strict: true, .. } => {
            unsupported(Kind::Rebuild, "a zip(strict=True) at a graph break")
        }
        Stepper::Zip { inners, .. } => Ok(Template::New(
            vm.ctx.types.zip_type.to_owned().into(),
            inners
                .iter()
                .map(|i| build(state, i, outputs, index))
                .collect::<SimResult<_>>()?,
        )),
        Stepper::Map { func, inners } => Ok(Template::New(
            vm.ctx.types.map_type.to_owned().into(),
            std::iter::once(func)
                .chain(inners)
                .map(|i| build(state, i, outputs, index))
                .collect::<SimResult<_>>()?,
        )),
        Stepper::Filter { func, inner } => Ok(Template::New(
            vm.ctx.types.filter_type.to_owned().into(),
            vec![
                build(state, func, outputs, index)?,
                build(state, inner, outputs, index)?,
            ],
        )),
        Stepper::Tool(t) => itertool_template(state, t, outputs, index),
    }
}

/// A view of a dict made in the call (`d.items()` held in a local): the class's own method
/// of the dict built once (`dict.items(d)`), so that the view reads the dict the replacement
/// holds.
pub(super) fn dict_view_template(
    state: &mut State<'_>,
    d: &crate::translate::values::DictRef,
    kind: crate::translate::values::ViewKind,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    let vm = state.vm;
    let class = match state.dict_kind(d) {
        Some((class, _)) => class,
        None => vm.ctx.types.dict_type.to_owned(),
    };
    let method = class
        .get_attr(vm.ctx.intern_str(kind.method()))
        .ok_or_else(|| Unsupported::new(Kind::Internal, "a dict view's method"))?;
    let over = build(state, &Var::Dict(d.clone()), outputs, index)?;
    Ok(Template::New(method, vec![over]))
}

/// An iterator over a dict made in the call, or one of its views (`for k, v in
/// losses.items()`, the dict held in a local too): made again over the dict built once, past
/// what it gave. Only where the dict's keys are those it started with: the original's next
/// step would raise otherwise, which a fresh iterator would not.
pub(super) fn dict_iterator_template(
    state: &mut State<'_>,
    it: &Rc<std::cell::RefCell<crate::translate::values::DictIter>>,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    let vm = state.vm;
    let (dict, kind, next) = {
        let it = it.borrow();
        let keys: Vec<usize> = it.dict.borrow().iter().map(|(k, _)| k.get_id()).collect();
        if keys != it.keys {
            return unsupported(
                Kind::Rebuild,
                "an iterator over a dict made in the call whose keys changed since, at a graph \
                 break",
            );
        }
        (it.dict.clone(), it.kind, it.next)
    };
    let view = dict_view_template(state, &dict, kind, outputs, index)?;
    match next {
        0 => Ok(Template::Iter(Box::new(view))),
        _ => islice_from(view, next, vm),
    }
}

/// A lazy itertools iterator made again as the same itertools object over what its inputs
/// have left, in the state it had reached.
fn itertool_template(
    state: &mut State<'_>,
    t: &crate::translate::values::itertools::Itertool,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    use crate::translate::values::itertools::{Itertool, itertools_object};
    let vm = state.vm;
    let int = |n: i64| Template::Const(vm.ctx.new_int(n).into());
    let none = || Template::Const(vm.ctx.none());
    let new = |name: &str, args: Vec<Template>| -> SimResult<Template> {
        Ok(Template::New(itertools_object(name, vm)?, args))
    };
    match t {
        // chain.from_iterable(chain((current,), outer)): the input being read first.
        Itertool::Chain { current, outer } => {
            let current: Vec<Template> = match current {
                Some(c) => vec![build(state, c, outputs, index)?],
                None => Vec::new(),
            };
            let outer = build(state, outer, outputs, index)?;
            let inputs = new("chain", vec![Template::Tuple(current), outer])?;
            new("chain.from_iterable", vec![inputs])
        }
        // The same islice over what its input has left: its positions counted from there.
        Itertool::Islice {
            inner,
            read,
            next,
            stop,
            step,
        } => {
            let Some(inner) = inner else {
                return new("islice", vec![Template::Tuple(Vec::new()), int(0)]);
            };
            let stop = match stop {
                Some(stop) => int(stop.saturating_sub(*read) as i64),
                None => none(),
            };
            let inner = build(state, inner, outputs, index)?;
            new(
                "islice",
                vec![inner, int((next - read) as i64), stop, int(*step as i64)],
            )
        }
        Itertool::Count { next, step } => new("count", vec![int(*next), int(*step)]),
        Itertool::Repeat { item } => {
            let item = build(state, item, outputs, index)?;
            new("repeat", vec![item])
        }
        Itertool::Pairwise { inner, prev } => {
            let inner = build(state, inner, outputs, index)?;
            let inner = match prev {
                Some(p) => {
                    let p = build(state, p, outputs, index)?;
                    new("chain", vec![Template::Tuple(vec![p]), inner])?
                }
                None => inner,
            };
            new("pairwise", vec![inner])
        }
        Itertool::Starmap { func, inner } => {
            let func = build(state, func, outputs, index)?;
            let inner = build(state, inner, outputs, index)?;
            new("starmap", vec![func, inner])
        }
        Itertool::Accumulate { total: Some(_), .. } => unsupported(
            Kind::Rebuild,
            "an itertools.accumulate partly consumed, at a graph break",
        ),
        Itertool::Accumulate {
            inner,
            func,
            total: None,
            initial,
        } => {
            let inner = build(state, inner, outputs, index)?;
            let func = match func {
                Some(f) => build(state, f, outputs, index)?,
                None => none(),
            };
            let mut args = vec![inner, func];
            if let Some(i) = initial {
                // `initial` is keyword-only: given through a chain in front of the inputs.
                let i = build(state, i, outputs, index)?;
                args[0] = new("chain", vec![Template::Tuple(vec![i]), args.remove(0)])?;
            }
            new("accumulate", args)
        }
    }
}

/// A generator the simulation made and has not started, as the replacement makes it again:
/// the call that made it, made again (a generator function's call runs none of its code), its
/// callable loaded as the frame read it. One it started has a frame part-way: refused.
pub(super) fn generator_template(
    state: &mut State<'_>,
    g: &Rc<std::cell::RefCell<crate::translate::values::SimGen>>,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    let g = g.borrow();
    let (false, Some((f, args, kwargs))) = (g.started, &g.made_by) else {
        return unsupported(
            Kind::Rebuild,
            format!("holds the generator {} part-way", g.qualname),
        );
    };
    let vm = state.vm;
    let mut parts = vec![
        build(state, f, outputs, index)?,
        Template::Instr(Opcode::PushNull, 0, Vec::new()),
    ];
    for a in args {
        parts.push(build(state, a, outputs, index)?);
    }
    let mut names = Vec::with_capacity(kwargs.len());
    for (k, v) in kwargs {
        parts.push(build(state, v, outputs, index)?);
        names.push(vm.ctx.new_str(k.as_str()).into());
    }
    parts.push(Template::Const(vm.ctx.new_tuple(names).into()));
    let argc = (args.len() + kwargs.len()) as u32;
    Ok(Template::Instr(Opcode::CallKw, argc, parts))
}

/// `itertools.islice(over, start, None)`: an iterator over what `over` builds, from `start`.
fn islice_from(
    over: Template,
    start: usize,
    vm: &rustpython_vm::VirtualMachine,
) -> SimResult<Template> {
    let islice = crate::translate::loaded_modules::loaded_attr("itertools", "islice", vm)
        .ok_or_else(|| Unsupported::new(Kind::Internal, "itertools.islice is missing"))?;
    Ok(Template::New(
        islice,
        vec![
            over,
            Template::Const(vm.ctx.new_int(start).into()),
            Template::Const(vm.ctx.none()),
        ],
    ))
}
