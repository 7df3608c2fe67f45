//! Templates: how the replacement code rebuilds a value the simulation holds (loaded from
//! the frame, a constant, a graph output, or a container of them), the frame's state at a
//! break, and the side effects to replay; and the checks that what it rebuilds is what the
//! original would have had (a container made in the call and held twice would become two).

use std::collections::HashMap;
use std::rc::Rc;

use rustpython_vm::bytecode::Opcode;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::graph::{Value, recorder};
use crate::tensor::PyTensor;
use crate::translate::breaks::closure_cells::{CellStore, frame_cells, own_cell_stores};
use crate::translate::constant_templates::constant_template;
use crate::translate::exception_templates;
use crate::translate::executor::{SimFrame, Slot};
use crate::translate::function_templates::{ClosureCell, cell_templates, function_template};
use crate::translate::held_once::held_once;
use crate::translate::iterator_templates::{
    dict_iterator_template, dict_view_template, generator_template, stepper_template,
};
use crate::translate::object_templates::instance_template;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{Kind, SimResult, State, Unsupported, unsupported};
use crate::translate::values::numbers::{Num, NumExpr};
use crate::translate::values::template_strings::tstr_template;
use crate::translate::values::{CellRef, Var, is_literal};
use crate::translate::values::{deferred_text::text_template, deques::deque_template};

/// What the replacement returns, built from the graph's outputs.
#[derive(Clone, Debug)]
pub enum Template {
    /// A value read from the frame (identity preserved: the argument itself).
    Load(Source),
    /// A plain constant.
    Const(PyObjectRef),
    /// The graph's output number k.
    Out(usize),
    Tuple(Vec<Template>),
    List(Vec<Template>),
    Dict(Vec<(PyObjectRef, Template)>),
    /// `iter(t)`.
    Iter(Box<Template>),
    /// `class(*args)`: an exception made during the simulation, made again; a bound method
    /// (`MethodType(function, object)`); a named tuple (`tuple.__new__(class, items)`).
    New(PyObjectRef, Vec<Template>),
    /// An instance of a class written in Python made during the simulation: made again
    /// without running its `__init__` (what it did is its attributes), as
    /// `object.__new__(class)` with its dictionary filled in.
    Object(PyObjectRef, Vec<(PyObjectRef, Template)>),
    /// A value that a replayed effect stored into this source and nothing changed since,
    /// loaded back after the effect (not a value read before it, as `Load`).
    Reload(Source),
    /// A value read before a side effect changed where it was read from, and used after
    /// it: the replacement loads it before it replays the effects (`State::early`, by
    /// number), as the simulation read it.
    Early(usize),
    /// `t.shape[d]`: a dimension of a tensor, read at run time (a size of a dynamic graph,
    /// returned or stored).
    Dim(Box<Template>, usize),
    /// A value made in the call and held more than once (`Templating::shared`, by
    /// position): built where it is first met, loaded again wherever it is met after.
    Shared(usize, Box<Template>),
    /// A str formatted again (see `values::deferred_text`): each part built, then formatted
    /// with its spec (`None`: a literal, as it is), then joined.
    Text(Vec<(Template, Option<String>)>),
    /// `a op b`: a deferred number computed again (see `values::numbers`).
    BinOp(
        rustpython_vm::bytecode::BinaryOperator,
        Box<Template>,
        Box<Template>,
    ),
    /// The values built in order, then one instruction (`op`, its argument) that makes the
    /// value from them: a template string and its interpolations (`template_strings`).
    Instr(Opcode, u32, Vec<Template>),
    /// A function made in the call, made again (see `function_templates`): MAKE_FUNCTION of
    /// `code`, its closure the replacement's own cells or cells made again, then each
    /// attribute set with SET_FUNCTION_ATTRIBUTE's flag (defaults, keyword defaults,
    /// annotations).
    Function {
        code: PyObjectRef,
        closure: Vec<ClosureCell>,
        attributes: Vec<(u32, Template)>,
    },
}

/// A side effect as the replacement replays it (see `side_effects`): targets are read from
/// the frame, values built from templates.
pub type Replay = Effect<Template>;

/// What building a translation's templates keeps between them.
#[derive(Debug, Default)]
pub struct Templating {
    /// How many side effects the replacement has replayed where the template being built
    /// is evaluated (a deferred number must not read what they changed).
    pub replay_point: usize,
    /// Sources the replacement loads before it replays the side effects: values the
    /// simulation read before an effect changed them, used after it (`Template::Early`).
    pub early: Vec<Source>,
    /// Values made during the call that what the replacement rebuilds holds more than once
    /// (`held_once::made_address`): built once, the same object wherever held
    /// (`Template::Shared`, by position here).
    pub shared: Vec<usize>,
    /// Tensors computed from constants (no fake), each with the graph constant it is made
    /// again from: one held twice (a local and the argument of the breaking call) is one
    /// object, so that a call updating it in place updates what the other holder sees.
    pub constants: Vec<(rustpython_vm::PyObjectRef, Value)>,
    /// The translated frame's cells and free variables, by name: what the closure of a
    /// function made in the call is made of again (`function_templates`).
    pub frame_cells: Vec<(String, CellRef)>,
    /// A function made again closes over one of the frame's own cells: the replacement
    /// stores what the simulation left in them before it returns.
    pub closes_over_own_cells: bool,
    /// What the replacement stores into its own cells before it leaves (returns, or calls the
    /// resume function): what the simulation left there (`breaks::closure_cells`).
    pub cell_stores: Vec<CellStore<Template>>,
    /// Numbers drawn from Python's `random` module, in the program's order: the replacement
    /// draws them first, each into a local of its own (`values::python_draws`).
    pub draws: Vec<crate::translate::values::python_draws::DrawCall>,
    /// Graph outputs whose tensors carry the parameter mark (`requires_grad`), set by the
    /// call on a tensor the graph makes: the real output is marked when the graph has run.
    pub marked_outputs: Vec<usize>,
    /// Outputs that are views (`view_outputs`): made views again once the graph has run.
    pub views: Vec<crate::translate::view_outputs::NotedView>,
    /// What the replacement makes of them (`view_outputs::resolve`).
    pub output_views: Vec<crate::translate::view_outputs::OutputView>,
}

/// The frame's state at a break, as templates: what the replacement passes on.
pub struct FrameAtBreak {
    pub replays: Vec<Replay>,
    /// Every local in slot order (`None`: unbound).
    pub locals: Vec<Option<Template>>,
    /// The stack under `split`, and from it (`None`: a NULL).
    pub kept: Vec<Option<Template>>,
    pub consumed: Vec<Option<Template>>,
}

impl FrameAtBreak {
    /// Slots of the locals unbound at the break.
    pub fn unbound_slots(&self) -> Vec<usize> {
        self.locals
            .iter()
            .enumerate()
            .filter(|(_, l)| l.is_none())
            .map(|(i, _)| i)
            .collect()
    }
}

/// Templates of the frame's locals and stack (split at `split`) and of the recorded side
/// effects; the tensors among them become the graph's outputs.
pub fn frame_state(
    state: &mut State<'_>,
    frame: &SimFrame,
    split: usize,
    nlocals: usize,
) -> SimResult<FrameAtBreak> {
    if frame.handling_exception() {
        return Err(Unsupported::new(
            Kind::Rebuild,
            "inside an except or finally block handling an exception",
        ));
    }
    let n_effects = state.effects.log.len();
    state.templating.frame_cells = frame_cells(frame);
    let cell_stores = own_cell_stores(frame, nlocals);
    stored_values_held_once(
        state,
        frame
            .stack
            .iter()
            .chain(frame.slots[..nlocals].iter().filter_map(|s| match s {
                Slot::Val(v) => Some(v),
                _ => None,
            }))
            .chain(cell_stores.iter().filter_map(|c| c.value.as_ref())),
    )?;
    let mut outputs: Vec<Value> = Vec::new();
    let mut numbered: HashMap<Value, usize> = HashMap::new();
    let replays = replays(state, &mut outputs, &mut numbered)?;
    state.templating.replay_point = n_effects;
    let mut template = |state: &mut State<'_>, v: &Var| -> SimResult<Option<Template>> {
        match v {
            Var::Null => Ok(None),
            v => {
                let mut t = build(state, v, &mut outputs, &mut numbered)?;
                load_early(state, n_effects, &mut t);
                Ok(Some(t))
            }
        }
    };
    let mut locals = Vec::with_capacity(nlocals);
    for slot in &frame.slots[..nlocals] {
        locals.push(match slot {
            Slot::Empty => None,
            Slot::Val(v) => Some(
                template(state, v)?
                    .ok_or_else(|| Unsupported::new(Kind::Internal, "a local holds NULL"))?,
            ),
            // A parameter that is a cell: the resume function reaches it in its closure.
            Slot::Cell(_) => None,
        });
    }
    let stack = state.native_method_forms(frame.stack.clone());
    let kept = stack[..split]
        .iter()
        .map(|v| template(state, v))
        .collect::<Result<Vec<_>, _>>()?;
    let consumed = stack[split..]
        .iter()
        .map(|v| template(state, v))
        .collect::<Result<Vec<_>, _>>()?;
    cell_templates(state, cell_stores, &mut outputs, &mut numbered)?;
    crate::translate::view_outputs::resolve(state, &mut outputs)?;
    recorder::with(|r| r.graph.outputs = outputs);
    Ok(FrameAtBreak {
        replays,
        locals,
        kept,
        consumed,
    })
}

/// `held_once` of what the side effects store and of `more` (the frame's state); the tuples
/// held more than once noted to be built once.
fn stored_values_held_once<'a>(
    state: &mut State<'_>,
    more: impl Iterator<Item = &'a Var>,
) -> SimResult<()> {
    let mut values: Vec<&Var> = state.effects.log.iter().flat_map(Effect::values).collect();
    for v in more {
        values.push(v);
    }
    let shared = held_once(values.into_iter(), &state.templating.frame_cells)?;
    state.templating.shared = shared;
    Ok(())
}

/// The template of what a frame that ran to its end returns (or, `raised`, raises), and the
/// side effects to replay before it; the tensors among them become the graph's outputs.
pub fn returned_template(
    state: &mut State<'_>,
    value: &Var,
    raised: bool,
    frame: &SimFrame,
) -> SimResult<(Template, Vec<Replay>)> {
    state.templating.frame_cells = frame_cells(frame);
    let cell_stores = own_cell_stores(frame, frame.code.varnames.len());
    // Before any template is built: a value that holds itself is turned away here.
    stored_values_held_once(
        state,
        [value]
            .into_iter()
            .chain(cell_stores.iter().filter_map(|c| c.value.as_ref())),
    )?;
    let mut outputs: Vec<Value> = Vec::new();
    let mut index: HashMap<Value, usize> = HashMap::new();
    let replays = replays(state, &mut outputs, &mut index)?;
    state.templating.replay_point = state.effects.log.len();
    let mut template = if raised {
        exception_templates::raised_template(state, value, &mut outputs, &mut index)?
    } else {
        build(state, value, &mut outputs, &mut index)?
    };
    load_early(state, state.effects.log.len(), &mut template);
    // A function returned (or stored) closes over the frame's cells: they hold what the
    // simulation left there when it is called.
    if state.templating.closes_over_own_cells {
        cell_templates(state, cell_stores, &mut outputs, &mut index)?;
    }
    crate::translate::view_outputs::resolve(state, &mut outputs)?;
    recorder::with(|r| r.graph.outputs = outputs);
    Ok((template, replays))
}

/// The recorded side effects as the replacement replays them. Each value is built from what
/// the frame holds when the effect is replayed, so none may be read from what an earlier
/// effect changed.
fn replays(
    state: &mut State<'_>,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Vec<Replay>> {
    let effects = state.effects.log.clone();
    let mut replays = Vec::with_capacity(effects.len());
    for (k, effect) in effects.iter().enumerate() {
        // An object read before an earlier effect changed where it was read from: the
        // replacement changes that object, loaded before the effects.
        if let Some(target) = effect.target()
            && state.effects.stale(k, target)
            && !state.templating.early.contains(target)
        {
            state.templating.early.push(target.clone());
        }
        state.templating.replay_point = k;
        replays.push(match effect {
            Effect::WriteBack {
                target,
                value: Var::Tensor(t),
            } => Effect::WriteBack {
                target: target.clone(),
                value: graph_value(state, t, outputs, index)?,
            },
            _ => effect.try_map(|v| {
                let mut t = build(state, v, outputs, index)?;
                load_early(state, k, &mut t);
                Ok(t)
            })?,
        });
    }
    Ok(replays)
}

/// Makes each load in `t` of a value that one of the first `after` side effects changed (a
/// value read before the effect and used after it) a load made before the effects.
pub(super) fn load_early(state: &mut State<'_>, after: usize, t: &mut Template) {
    match t {
        Template::Load(s) if state.effects.stale(after, s) => {
            let k = match state.templating.early.iter().position(|e| e == s) {
                Some(k) => k,
                None => {
                    state.templating.early.push(s.clone());
                    state.templating.early.len() - 1
                }
            };
            *t = Template::Early(k);
        }
        Template::Tuple(items)
        | Template::List(items)
        | Template::New(_, items)
        | Template::Instr(_, _, items) => {
            items.iter_mut().for_each(|i| load_early(state, after, i))
        }
        Template::Iter(item) | Template::Dim(item, _) | Template::Shared(_, item) => {
            load_early(state, after, item)
        }
        Template::BinOp(_, a, b) => {
            load_early(state, after, a);
            load_early(state, after, b);
        }
        Template::Text(parts) => parts
            .iter_mut()
            .for_each(|(p, _)| load_early(state, after, p)),
        Template::Object(_, entries) | Template::Dict(entries) => entries
            .iter_mut()
            .for_each(|(_, v)| load_early(state, after, v)),
        Template::Function {
            attributes,
            closure,
            ..
        } => {
            let made = closure.iter_mut().filter_map(|c| match c {
                ClosureCell::Made(t) => Some(t),
                ClosureCell::Frame(_) => None,
            });
            attributes
                .iter_mut()
                .map(|(_, v)| v)
                .chain(made)
                .for_each(|v| load_early(state, after, v))
        }
        Template::Load(_)
        | Template::Const(_)
        | Template::Out(_)
        | Template::Reload(_)
        | Template::Early(_) => {}
    }
}

/// A deferred number, computed again where the replacement evaluates it; or its value, when
/// a side effect replayed before that point changed what it is computed from.
fn number_template(
    state: &mut State<'_>,
    n: &Rc<Num>,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    // Stored by a replayed effect, and not changed since: loaded back from where it went.
    let point = state.templating.replay_point;
    for (j, e) in state.effects.log[..point].iter().enumerate().rev() {
        if let Some((s, Var::Num(m))) = e.stored()
            && Rc::ptr_eq(m, n)
            && !state.effects.changed_between(j + 1, point, &s)
        {
            return Ok(Template::Reload(s));
        }
    }
    // A size the graph computes: read again from the tensors it is a dimension of, where
    // the expression allows; otherwise the replacement has it only as a checked constant.
    if n.has_size() {
        return Ok(
            match crate::translate::sized_numbers::sized_number(state, n, outputs, index) {
                Some(t) => t,
                None => Template::Const(state.force_number(n)?),
            },
        );
    }
    // What a replayed effect changed since is loaded before the effects (`load_early`).
    fn expr(n: &Num, vm: &rustpython_vm::VirtualMachine) -> Option<Template> {
        Some(match &n.expr {
            NumExpr::Read(_, s) => Template::Load(s.clone()),
            NumExpr::Const(o) => Template::Const(o.clone()),
            NumExpr::Op(op, a, b) => {
                Template::BinOp(*op, Box::new(expr(a, vm)?), Box::new(expr(b, vm)?))
            }
            NumExpr::Math(f, a) => f.template(expr(a, vm)?, vm)?,
            NumExpr::Size(_) | NumExpr::Apply(..) => unreachable!("sizes are forced above"),
        })
    }
    match expr(n, state.vm) {
        Some(t) => Ok(t),
        None => Ok(Template::Const(state.force_number(n)?)),
    }
}

/// The template of the value the fake `t` stands for in the graph.
fn graph_value(
    state: &mut State<'_>,
    t: &PyTensor,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    crate::translate::view_outputs::rebase(state, t)?;
    Ok(match state.value_of(t) {
        Some(Value::Input(i)) => Template::Load(state.inputs[i].clone()),
        Some(value) => {
            crate::translate::view_outputs::note(state, t, value)?;
            let fresh = !index.contains_key(&value);
            let k = *index.entry(value).or_insert_with(|| {
                outputs.push(value);
                outputs.len() - 1
            });
            // One output is one object: each fake that stands for it must agree on the mark.
            let marked = &mut state.templating.marked_outputs;
            match (t.requires_grad_flag(), marked.contains(&k)) {
                (true, false) if fresh => marked.push(k),
                (true, true) | (false, false) => {}
                _ => {
                    return unsupported(
                        Kind::Rebuild,
                        "one tensor the graph makes, held with and without the parameter mark",
                    );
                }
            }
            Template::Out(k)
        }
        None => return unsupported(Kind::Rebuild, "returns a tensor the graph does not know"),
    })
}

/// The template of a returned value; tensor outputs are numbered in `outputs`.
pub(super) fn build(
    state: &mut State<'_>,
    v: &Var,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    // A value made in the call that holds itself (a tree's parent links) cannot be made again
    // from templates, which make each value anew: `held_once` turns most such cycles away
    // first; the bound on nesting stops the rest (a partial or an exception that holds
    // itself) and very deep values.
    let _level = crate::translate::nesting::Level::enter()?;
    let t = build_value(state, v, outputs, index)?;
    // Made in the call and held more than once: built once, the same object wherever held.
    let at = crate::translate::held_once::made_address(v);
    Ok(
        match at.and_then(|p| state.templating.shared.iter().position(|&q| q == p)) {
            Some(k) => Template::Shared(k, Box::new(t)),
            None => t,
        },
    )
}

fn build_value(
    state: &mut State<'_>,
    v: &Var,
    outputs: &mut Vec<Value>,
    index: &mut HashMap<Value, usize>,
) -> SimResult<Template> {
    let vm = state.vm;
    let mut out = |value: Value, outputs: &mut Vec<Value>| -> usize {
        *index.entry(value).or_insert_with(|| {
            outputs.push(value);
            outputs.len() - 1
        })
    };
    Ok(match v {
        Var::Num(n) => number_template(state, n, outputs, index)?,
        Var::Text(parts) => text_template(parts, vm, |v| build(state, v, outputs, index))?,
        Var::Lazy(_, s) => Template::Load(s.clone()),
        Var::Obj(o) if let Some(t) = constant_template(o, vm) => t,
        Var::Obj(o) if let Some(made) = state.made_exception(o) => {
            if made.raised {
                return unsupported(
                    Kind::Rebuild,
                    "an exception that was raised, kept (made again, it would lose its __traceback__)",
                );
            }
            exception_templates::exception_template(state, &made.clone(), outputs, index)?
        }
        // A tensor made from constants and then updated in place: a graph value now.
        Var::Obj(o)
            if let Some(t) = o.downcast_ref::<PyTensor>()
                && state.value_of(t).is_some() =>
        {
            graph_value(state, t, outputs, index)?
        }
        Var::Obj(o) if o.downcast_ref::<PyTensor>().is_some() => {
            // A tensor computed from constants: a new tensor on every call, as eagerly.
            let known = state.templating.constants.iter().find(|(k, _)| k.is(o));
            let c = match known {
                Some((_, c)) => *c,
                None => {
                    let data = o.downcast_ref::<PyTensor>().expect("tensor").read().clone();
                    let c = recorder::with(|r| r.graph.constant(data));
                    state.templating.constants.push((o.clone(), c));
                    c
                }
            };
            Template::Out(out(c, outputs))
        }
        // The caller's tensor, updated in place: that object (its value is written back).
        Var::Tensor(t) if let Some(source) = state.written_source(t) => Template::Load(source),
        Var::Tensor(t) => graph_value(state, t, outputs, index)?,
        Var::Tuple(items) => Template::Tuple(
            items
                .iter()
                .map(|i| build(state, i, outputs, index))
                .collect::<SimResult<_>>()?,
        ),
        // An iterator the simulation made (a `for` loop's, at a loop split): what it has left
        // to give, iterated again. Only `FOR_ITER` sees it, so its type does not show.
        Var::Iter(items) => {
            let items = items.borrow().iter().cloned().collect::<Vec<_>>();
            Template::Iter(Box::new(Template::Tuple(
                items
                    .iter()
                    .map(|i| build(state, i, outputs, index))
                    .collect::<SimResult<_>>()?,
            )))
        }
        Var::List(items) => {
            let items = items.borrow().clone();
            Template::List(
                items
                    .iter()
                    .map(|i| build(state, i, outputs, index))
                    .collect::<SimResult<_>>()?,
            )
        }
        Var::Dict(d) if let Some((class, factory)) = state.dict_kind(d) => {
            let entries = d.borrow().clone();
            let mut pairs = Vec::with_capacity(entries.len());
            for (k, val) in &entries {
                pairs.push((k.clone(), build(state, val, outputs, index)?));
            }
            match factory {
                // defaultdict(factory, {...})
                Some(f) => Template::New(
                    class.into(),
                    vec![build(state, &f, outputs, index)?, Template::Dict(pairs)],
                ),
                // OrderedDict(((k, v), ...)): the order is the pairs'.
                None => Template::New(
                    class.into(),
                    vec![Template::Tuple(
                        pairs
                            .into_iter()
                            .map(|(k, v)| Template::Tuple(vec![Template::Const(k), v]))
                            .collect(),
                    )],
                ),
            }
        }
        Var::Partial(p) if p.kwargs.is_empty() => {
            let partial = crate::translate::loaded_modules::loaded_attr("functools", "partial", vm)
                .ok_or_else(|| Unsupported::new(Kind::Internal, "functools.partial"))?;
            let mut args = vec![build(state, &p.func, outputs, index)?];
            for a in &p.args {
                args.push(build(state, a, outputs, index)?);
            }
            Template::New(partial, args)
        }
        Var::Dict(entries) => {
            let entries = entries.borrow().clone();
            let mut t = Vec::new();
            for (k, val) in &entries {
                if !is_literal(k, vm) && !crate::translate::values::is_plain_class(k, &vm.ctx) {
                    return unsupported(Kind::Rebuild, "returns a dict with a non-constant key");
                }
                t.push((k.clone(), build(state, val, outputs, index)?));
            }
            Template::Dict(t)
        }
        Var::Object(o) => instance_template(o, vm, |v| build(state, v, outputs, index))?,
        Var::Stepper(s) => stepper_template(state, s, outputs, index)?,
        Var::View(d, kind) => dict_view_template(state, d, *kind, outputs, index)?,
        Var::DictIter(it) => dict_iterator_template(state, it, outputs, index)?,
        Var::Gen(g) => generator_template(state, g, outputs, index)?,
        Var::TStr(t) => tstr_template(t, |v| build(state, v, outputs, index))?,
        Var::Deque(d) => deque_template(d, vm, |v| build(state, v, outputs, index))?,
        Var::Set(s) => {
            let items = vm
                .extract_elements_with(s, Ok)
                .map_err(|_| Unsupported::new(Kind::Internal, "the items of a set"))?;
            let mut held = Vec::with_capacity(items.len());
            for item in items {
                held.push(match state.identity_source(&item) {
                    Some(source) => build(state, &Var::Lazy(item, source), outputs, index)?,
                    None => Template::Const(item),
                });
            }
            Template::New(
                vm.ctx.types.set_type.to_owned().into(),
                vec![Template::Tuple(held)],
            )
        }
        // A native method bound (`native_descriptor_get`): what its `__get__` makes, a
        // method-wrapper or a builtin method as eager code holds.
        Var::Bound(b)
            if let Var::Obj(d) = &b.0
                && (d.class().is(vm.ctx.types.method_descriptor_type)
                    || d.class().is(vm.ctx.types.wrapper_descriptor_type)) =>
        {
            let get = d
                .get_attr("__get__", vm)
                .map_err(|_| Unsupported::new(Kind::Internal, "a descriptor without __get__"))?;
            Template::New(get, vec![build(state, &b.1, outputs, index)?])
        }
        Var::Bound(b) => Template::New(
            vm.ctx.types.bound_method_type.to_owned().into(),
            vec![
                build(state, &b.0, outputs, index)?,
                build(state, &b.1, outputs, index)?,
            ],
        ),
        // A method of a list, dict, set or deque taken for a call (a break at an argument of
        // `log.append(...)`): `getattr(owner, name)`, the bound method eager code holds.
        Var::Method(owner, name) => {
            let getattr = vm
                .builtins
                .get_attr("getattr", vm)
                .map_err(|_| Unsupported::new(Kind::Internal, "builtins.getattr is missing"))?;
            Template::New(
                getattr,
                vec![
                    build(state, owner, outputs, index)?,
                    Template::Const(vm.ctx.new_str(*name).into()),
                ],
            )
        }
        Var::NamedTuple(class, items) => {
            let new = vm
                .ctx
                .types
                .tuple_type
                .get_attr(vm.ctx.intern_str("__new__"))
                .ok_or_else(|| Unsupported::new(Kind::Internal, "tuple.__new__ is missing"))?;
            let items = items
                .iter()
                .map(|i| build(state, i, outputs, index))
                .collect::<SimResult<_>>()?;
            Template::New(
                new,
                vec![
                    Template::Const(class.clone().into()),
                    Template::Tuple(items),
                ],
            )
        }
        // A class (`type(x)`, a class attribute): it existed before the call.
        Var::Obj(o)
            if o.downcast_ref::<rustpython_vm::builtins::PyType>()
                .is_some() =>
        {
            Template::Const(o.clone())
        }
        Var::Obj(o) => {
            return unsupported(
                Kind::Rebuild,
                format!("returns a {} made during the call", o.class().name()),
            );
        }
        Var::Func(f) => function_template(state, f, |state, v| build(state, v, outputs, index))?,
        // A cell an inlined call made, held by functions made again (`function_templates`).
        Var::Cell(c) if !c.borrow().existing => {
            let held = c.borrow().value.clone();
            let content = match held {
                Some(v) => vec![build(state, &v, outputs, index)?],
                None => Vec::new(),
            };
            Template::New(vm.ctx.types.cell_type.to_owned().into(), content)
        }
        other => return unsupported(Kind::Rebuild, format!("returns a {}", other.kind())),
    })
}
