//! Whether a graph recorded at one size runs at another: the values that depend on its
//! dynamic inputs, and what would have baked one of their sizes into the recording.

use super::ir::{Graph, Value};
use super::sizes::{Read, SizeCheck, SizeCmp, SizeExpr, read_shape, read_tensor, resolve};
use crate::tensor::{Meta, registry};

/// Why the sizes of `dynamic` inputs are in the graph (`None`: they are not, and the graph
/// may be marked dynamic). `read` are the values whose sizes the program read while it was
/// recorded (see `tensor::size_reads`).
pub fn size_leak(graph: &mut Graph, dynamic: &[usize], read: &[Value]) -> Option<String> {
    let mut node_dynamic = vec![false; graph.nodes.len()];
    let is_dynamic = |v: &Value, node_dynamic: &[bool]| match v {
        Value::Input(i) => dynamic.contains(i),
        Value::Const(_) => false,
        Value::Node(i) => node_dynamic[*i],
    };
    let mut checks: Vec<SizeCheck> = Vec::new();
    for (j, node) in graph.nodes.iter().enumerate() {
        if node.sym.is_empty() && !node.inputs.iter().any(|v| is_dynamic(v, &node_dynamic)) {
            continue;
        }
        node_dynamic[j] = true;
        // Its sizes, if it holds any, are worked out again for each call.
        let size_free =
            !node.sym.is_empty() || registry().get(&node.op).is_some_and(|op| op.size_free);
        if !size_free {
            match rank_checks(graph, &node.op, node) {
                Some(more) => checks.extend(more),
                None => return Some(format!("op {} holds sizes in its attributes", node.op)),
            }
        }
    }
    // The program saw the shape of each value it read. A node's shape is worked out again
    // at each call's sizes (`fits`): the graph holds wherever it comes out as the program saw
    // it (a per-channel statistic of a batch of any size), checked dimension by dimension. A
    // dynamic input read as such pins its sizes.
    for v in read.iter().filter(|v| is_dynamic(v, &node_dynamic)) {
        let Value::Node(i) = v else {
            return Some(
                "the program reads a size (shape, size(), len, numel, a tensor made in its shape)"
                    .to_owned(),
            );
        };
        for (d, &n) in graph.nodes[*i].meta.shape.iter().enumerate() {
            let check = SizeCheck {
                lhs: SizeExpr::Dim(*v, d),
                cmp: SizeCmp::Eq,
                rhs: SizeExpr::Const(n as i64),
                outcome: true,
            };
            if !checks.contains(&check) {
                checks.push(check);
            }
        }
    }
    graph.checks.extend(checks);
    None
}

/// The checks under which an op that holds sizes in its attributes does at another call's
/// sizes what it did when it was recorded: `squeeze` drops a dimension where it is 1, so each
/// dimension it may drop must be 1 again where it was 1 (a linear head's last dimension),
/// and not 1 where it was not (a dynamic dimension, at least 2 by its guard). `None` for an
/// op that holds sizes otherwise.
fn rank_checks(graph: &Graph, op: &str, node: &super::ir::Node) -> Option<Vec<SizeCheck>> {
    if op == "narrow" {
        return narrow_checks(graph, node);
    }
    if op == "index" || op == "index_put" {
        return index_checks(graph, node);
    }
    // `reshape(-1)` (`flatten`, `view(-1)`) holds no size: it flattens at any size.
    if op == "reshape" && node.attrs.ints("shape").ok().as_deref() == Some(&[-1][..]) {
        return Some(Vec::new());
    }
    if op != "squeeze" {
        return None;
    }
    let input = *node.inputs.first()?;
    let shape = graph.meta(input).shape;
    let rank = shape.len() as i64;
    let dims: Vec<usize> = match node.attrs.opt_int("dim").ok()? {
        None => (0..shape.len()).collect(),
        Some(_) if rank == 0 => Vec::new(),
        Some(d) if (-rank..rank).contains(&d) => vec![d.rem_euclid(rank) as usize],
        Some(_) => return None,
    };
    Some(
        dims.into_iter()
            .map(|d| SizeCheck {
                lhs: SizeExpr::Dim(input, d),
                cmp: SizeCmp::Eq,
                rhs: SizeExpr::Const(1),
                outcome: shape[d] == 1,
            })
            .collect(),
    )
}

/// `narrow` holds its start and length, within the one dimension it narrows, and passes
/// every other through: it does at other sizes what it did while that dimension keeps its
/// size (an `unbind` of the 3 parts of a `qkv` projection, whatever the sequence's length),
/// checked per call; a narrowed dimension that changes is held at its size.
fn narrow_checks(graph: &Graph, node: &super::ir::Node) -> Option<Vec<SizeCheck>> {
    let input = *node.inputs.first()?;
    let shape = graph.meta(input).shape;
    let d = crate::tensor::shape::normalize_dim(node.attrs.int("dim").ok()?, shape.len()).ok()?;
    Some(vec![SizeCheck {
        lhs: SizeExpr::Dim(input, d),
        cmp: SizeCmp::Eq,
        rhs: SizeExpr::Const(shape[d] as i64),
        outcome: true,
    }])
}

/// A basic index (`x[0]`, `h[..., :c]`, `t[:, 1:3] = v`) holds an int or a slice's bounds in
/// each dimension it addresses, and takes the others whole: it does at other sizes what it
/// did while each int is within its dimension and each sliced dimension keeps its size (the
/// rows of an edge list of any length, the channels of a batch of any size), checked per
/// call.
fn index_checks(graph: &Graph, node: &super::ir::Node) -> Option<Vec<SizeCheck>> {
    let input = *node.inputs.first()?;
    let shape = graph.meta(input).shape;
    let code = node.attrs.ints("index").ok()?;
    let dims = crate::tensor::ops::select::addressed_dims(&shape, &code)?;
    Some(
        dims.into_iter()
            .map(|(d, int)| {
                // An int (counted from the end where negative) only needs the dimension to
                // hold it; a slice's bounds, its recorded size.
                let (cmp, bound) = match int {
                    Some(k) if k >= 0 => (SizeCmp::Gt, k),
                    Some(k) => (SizeCmp::Ge, -k),
                    None => (SizeCmp::Eq, shape[d] as i64),
                };
                SizeCheck {
                    lhs: SizeExpr::Dim(input, d),
                    cmp,
                    rhs: SizeExpr::Const(bound),
                    outcome: true,
                }
            })
            .collect(),
    )
}

/// Whether the graph's shape inference holds for inputs described by `inputs`, and the size
/// checks pass: for a dynamic graph, what the guards checked before it runs at new sizes. An
/// op whose shapes do not fit at these sizes (a broadcast against a constant of the recorded
/// size) would raise inside the graph, where eager code raises at that op, after what came
/// before it: such a call does not fit the entry. `Err` says what does not fit.
/// `items` are the values of the graph's integer number inputs (see `sizes::SizeExpr::Item`).
pub fn fits(graph: &Graph, inputs: &[Meta], items: &[Option<i64>]) -> Result<(), String> {
    let mut metas: Vec<Meta> = Vec::with_capacity(graph.nodes.len());
    for (j, node) in graph.nodes.iter().enumerate() {
        let meta_of = |v: &Value, metas: &[Meta]| match v {
            Value::Input(i) => inputs[*i].clone(),
            Value::Const(i) => Meta::of(&graph.consts[*i]),
            Value::Node(i) => metas[*i].clone(),
        };
        let args: Vec<Meta> = node.inputs.iter().map(|v| meta_of(v, &metas)).collect();
        let resolved;
        let attrs = if node.sym.is_empty() {
            &node.attrs
        } else {
            let first = args.first().map(|m| m.shape.as_slice());
            let dim = |v: Value, r: Read| read_of(graph, inputs, items, &metas, v, r);
            resolved = resolve(&node.attrs, &node.sym, first, &dim).ok_or_else(|| {
                format!("the sizes of node {j} ({}) cannot be worked out", node.op)
            })?;
            &resolved
        };
        match registry().infer(&node.op, &args, attrs) {
            Ok(m) if crate::tensor::shape::check_size(&m.shape).is_ok() => metas.push(m),
            _ => return Err(format!("node {j} ({}) does not fit these sizes", node.op)),
        }
    }
    let dim = |v: Value, r: Read| read_of(graph, inputs, items, &metas, v, r);
    match graph.checks.iter().find(|c| !c.passes(&dim)) {
        Some(c) => Err(format!("the size check {c} fails")),
        None => Ok(()),
    }
}

fn read_of(
    graph: &Graph,
    inputs: &[Meta],
    items: &[Option<i64>],
    metas: &[Meta],
    v: Value,
    r: Read,
) -> Option<i64> {
    match v {
        Value::Input(i) => read_shape(&inputs.get(i)?.shape, items.get(i).copied().flatten(), r),
        Value::Const(i) => read_tensor(graph.consts.get(i)?, r),
        Value::Node(i) => read_shape(&metas.get(i)?.shape, None, r),
    }
}
