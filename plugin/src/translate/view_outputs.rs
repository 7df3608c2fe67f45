//! Graph outputs that the program holds as views (`return x[0]`, `return h, h.T`, a view live
//! at a break): the graph makes each output a tensor of its own, so the replacement makes it
//! a view again once the graph has run (`compiled_graph`), of the graph input or output whose
//! elements it views: later updates of either are seen by the other, as eagerly
//! (`tensor::view_link`). A view of what only the graph holds (`(x * 2)[0]`) needs nothing,
//! unless another output views the same elements: then that base is an output too.
//!
//! The steps from base to view are the graph's own nodes on the way: their attributes as
//! recorded, or, in a graph whose sizes change, worked out per call from its inputs' sizes as
//! the graph works them out (`graph::sizes::resolve`).

use crate::graph::sizes::SymAttr;
use crate::graph::sizes::{read_tensor, resolve as resolve_attrs};
use crate::graph::{Graph, Value, recorder};
use crate::tensor::view_link::positions;
use crate::tensor::{Attrs, Meta, PyTensor, TensorData, registry};
use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, unsupported};

/// The ops that make views (`tensor::view_link`), by the names the graph's nodes carry.
/// `clone` is `detach`'s step (a view of all the elements): a chain is taken with one only
/// where the view's own steps hold one (`views_of`), never a copy the program made.
const VIEW_OPS: [&str; 8] = [
    "clone",
    "index",
    "reshape",
    "transpose",
    "permute",
    "unsqueeze",
    "squeeze",
    "narrow",
];

/// An output seen to be a view while its template was built.
#[derive(Clone, Debug)]
pub struct NotedView {
    output: Value,
    base: Value,
    base_shape: Vec<usize>,
    steps: Vec<(&'static str, Attrs)>,
}

/// Output `output`, made a view of `base` once the graph has run, by the graph's nodes
/// `chain` (in order from the base: op, attributes, those worked out per call).
#[derive(Clone, Debug)]
pub struct OutputView {
    pub output: usize,
    pub base: ViewBase,
    /// The base's value in the graph, whose sizes the steps may read at each call.
    base_value: Value,
    /// The values the graph computes whose sizes the steps read, each made an output (by
    /// number) so that they can be read once the graph has run.
    read_outputs: Vec<(Value, usize)>,
    chain: Vec<(&'static str, Attrs, Vec<SymAttr>)>,
    /// The steps, when no node on the way works out its attributes per call.
    fixed: Option<Vec<(&'static str, Attrs)>>,
}

/// What an output views: a graph input or another output, by number.
#[derive(Clone, Copy, Debug)]
pub enum ViewBase {
    Input(usize),
    Output(usize),
}

/// Note the output `value` if its fake `t` is a view.
pub fn note(state: &mut State<'_>, t: &PyTensor, value: Value) -> SimResult<()> {
    let Some(link) = t.view_link() else {
        return Ok(());
    };
    let Some(base) = state.value_of(link.base()) else {
        return unsupported(Kind::Rebuild, "a view of a tensor the graph does not know");
    };
    if state.templating.views.iter().any(|v| v.output == value) {
        return Ok(());
    }
    let base_shape = link.base().read().unwatched_shape().to_vec();
    state.templating.views.push(NotedView {
        output: value,
        base,
        base_shape,
        steps: link.steps().to_vec(),
    });
    Ok(())
}

/// Make the fake `t`, a view the program holds, again from its base where the graph's way
/// from the base's value to the view's is not one of view ops (`v = x[:, 1:]; v.mul_(2)`:
/// the view stands for the product, its base for the store of it): the same elements, by
/// the view's own steps recorded from the base's value, which `views_of` can follow.
pub fn rebase(state: &mut State<'_>, t: &PyTensor) -> SimResult<()> {
    let Some(link) = t.view_link() else {
        return Ok(());
    };
    let (Some(value), Some(base)) = (state.value_of(t), state.value_of(link.base())) else {
        return Ok(());
    };
    if matches!(value, Value::Input(_))
        || recorder::with(|r| follow(&r.graph, value, base, link.steps()).is_some())
    {
        return Ok(());
    }
    // Where the steps cannot be made again, `views_of` refuses the output.
    if let Some(data) = link.remade() {
        let old = std::mem::replace(&mut *t.write(), data);
        recorder::with(|r| r.keep(old));
    }
    Ok(())
}

fn refuse<T>(what: &str) -> SimResult<T> {
    unsupported(
        Kind::Rebuild,
        format!("a view of {what} (the graph makes each output a tensor of its own)"),
    )
}

/// The nodes of `chain`, if they make the view whose own steps are `steps`: as many
/// `clone`s (`detach`) as the steps hold, never a copy the program made.
fn follow(
    graph: &Graph,
    view: Value,
    base: Value,
    steps: &[(&'static str, Attrs)],
) -> Option<Vec<usize>> {
    let clones = |ops: &mut dyn Iterator<Item = &str>| ops.filter(|o| *o == "clone").count();
    chain(graph, view, base).filter(|c| {
        clones(&mut c.iter().map(|&i| graph.nodes[i].op.as_str()))
            == clones(&mut steps.iter().map(|(op, _)| *op))
    })
}

/// The graph's nodes on the way from `base` to `view` (each node's first input, back), in
/// order from the base; `None` if the way is not one of view ops alone.
fn chain(graph: &Graph, view: Value, base: Value) -> Option<Vec<usize>> {
    let mut at = view;
    let mut nodes = Vec::new();
    while at != base {
        let Value::Node(i) = at else {
            return None;
        };
        let node = graph.nodes.get(i)?;
        if nodes.len() == 64 || !VIEW_OPS.contains(&node.op.as_str()) || node.inputs.len() != 1 {
            return None;
        }
        nodes.push(i);
        at = node.inputs[0];
    }
    nodes.reverse();
    Some(nodes)
}

/// The views the replacement makes of the graph's `outputs` (numbered as the templates
/// number them, before the graph is pruned), into `state.templating.output_views`; where
/// two outputs view what only the graph holds and one may see the other's elements, that
/// base becomes an output too (appended, read by no template), so that they are views of
/// one tensor as eagerly. `written`: see `State::written_values`.
pub fn resolve(state: &mut State<'_>, outputs: &mut Vec<Value>) -> SimResult<()> {
    let written = state.written_values();
    let noted = std::mem::take(&mut state.templating.views);
    let views = recorder::with(|r| views_of(&noted, outputs, &written, &r.graph))?;
    state.templating.output_views = views;
    Ok(())
}

fn views_of(
    noted: &[NotedView],
    outputs: &mut Vec<Value>,
    written: &[(Value, Option<usize>)],
    graph: &Graph,
) -> SimResult<Vec<OutputView>> {
    let mut found: Vec<(&NotedView, usize, Vec<usize>, Option<ViewBase>)> = Vec::new();
    let mut hidden: Vec<(&NotedView, bool)> = Vec::new();
    for v in noted {
        let Some(output) = outputs.iter().position(|o| *o == v.output) else {
            continue;
        };
        let Some(chain) = follow(graph, v.output, v.base, &v.steps) else {
            return refuse("a tensor the program holds, made by ops the view cannot follow");
        };
        let caller = written.iter().find(|(w, _)| *w == v.base).map(|(_, i)| *i);
        let base = match (caller, v.base) {
            (Some(Some(i)), _) => Some(ViewBase::Input(i)),
            (Some(None), _) => return refuse("a tensor of the caller's the graph does not read"),
            (None, Value::Input(i)) => Some(ViewBase::Input(i)),
            (None, b) => outputs.iter().position(|o| *o == b).map(ViewBase::Output),
        };
        if base.is_none() {
            let per_call = chain.iter().any(|&i| !graph.nodes[i].sym.is_empty());
            hidden.push((v, per_call));
        }
        found.push((v, output, chain, base));
    }
    // Views of one base the graph alone holds that may share an element (or whose sizes
    // change per call): the base is made an output, and they views of it.
    let mut shown: Vec<Value> = Vec::new();
    for (i, (a, pa)) in hidden.iter().enumerate() {
        for (b, pb) in &hidden[i + 1..] {
            if a.base == b.base && !shown.contains(&a.base) && (*pa || *pb || overlap(a, b)) {
                shown.push(a.base);
            }
        }
    }
    let mut views = Vec::new();
    for (v, output, chain, base) in found {
        let base = match base {
            Some(base) => base,
            None if shown.contains(&v.base) => match outputs.iter().position(|o| *o == v.base) {
                Some(j) => ViewBase::Output(j),
                None => {
                    outputs.push(v.base);
                    ViewBase::Output(outputs.len() - 1)
                }
            },
            None => continue,
        };
        views.push(output_view(graph, outputs, output, (base, v.base), &chain));
    }
    Ok(views)
}

/// Output `output`, a view of `base` by the graph's nodes `chain`; what the graph computes
/// and the steps read the sizes of (a view's `B, T` read off an embedding's output) is made
/// an output too.
fn output_view(
    graph: &Graph,
    outputs: &mut Vec<Value>,
    output: usize,
    (base, base_value): (ViewBase, Value),
    chain: &[usize],
) -> OutputView {
    let mut read = Vec::new();
    chain
        .iter()
        .flat_map(|&i| &graph.nodes[i].sym)
        .for_each(|s| s.values(&mut read));
    let mut read_outputs = Vec::new();
    for r in read {
        if matches!(r, Value::Input(_))
            || r == base_value
            || read_outputs.iter().any(|(v, _)| *v == r)
        {
            continue;
        }
        let j = outputs.iter().position(|o| *o == r).unwrap_or_else(|| {
            outputs.push(r);
            outputs.len() - 1
        });
        read_outputs.push((r, j));
    }
    let chain: Vec<_> = chain
        .iter()
        .map(|&i| {
            let n = &graph.nodes[i];
            (op_name(&n.op), n.attrs.clone(), n.sym.clone())
        })
        .collect();
    let per_call = chain.iter().any(|(_, _, sym)| !sym.is_empty());
    let fixed = (!per_call).then(|| {
        chain
            .iter()
            .map(|(op, attrs, _)| (*op, attrs.clone()))
            .collect()
    });
    OutputView {
        output,
        base,
        base_value,
        read_outputs,
        chain,
        fixed,
    }
}

fn op_name(op: &str) -> &'static str {
    VIEW_OPS
        .iter()
        .find(|o| **o == op)
        .expect("a chain holds view ops")
}

impl OutputView {
    /// The steps from the base to the view for a call with `inputs`: each node's attributes
    /// worked out as the graph works them out (`None` where they cannot be).
    pub fn steps_for(
        &self,
        inputs: &[&TensorData],
        outs: &[TensorData],
        base: &TensorData,
    ) -> Option<Vec<(&'static str, Attrs)>> {
        if let Some(fixed) = &self.fixed {
            return Some(fixed.clone());
        }
        let dim = |v: Value, r| match v {
            v if v == self.base_value => read_tensor(base, r),
            Value::Input(i) => read_tensor(inputs.get(i)?, r),
            v => {
                let &(_, j) = self.read_outputs.iter().find(|(w, _)| *w == v)?;
                read_tensor(outs.get(j)?, r)
            }
        };
        let (mut shape, mut dtype) = (base.unwatched_shape().to_vec(), base.dtype());
        let mut steps = Vec::with_capacity(self.chain.len());
        for (op, attrs, sym) in &self.chain {
            let attrs = resolve_attrs(attrs, sym, Some(&shape), &dim)?;
            let meta = registry()
                .infer(op, &[Meta { shape, dtype }], &attrs)
                .ok()?;
            (shape, dtype) = (meta.shape, meta.dtype);
            steps.push((*op, attrs));
        }
        Some(steps)
    }
}

/// Whether two views of one base share an element (or it cannot be told).
fn overlap(a: &NotedView, b: &NotedView) -> bool {
    let (Some(p), Some(q)) = (
        positions(&a.base_shape, &a.steps),
        positions(&b.base_shape, &b.steps),
    ) else {
        return true;
    };
    let mut seen = std::collections::HashSet::with_capacity(p.len());
    seen.extend(p.iter().copied());
    q.iter().any(|i| seen.contains(i))
}
