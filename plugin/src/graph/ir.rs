//! The captured graph: tensor ops from the registry applied to the frame's input tensors and
//! to constants. Shapes and dtypes are inferred by the registry as nodes are added (what the
//! translator's simulation needs to know of a tensor), ops whose inputs are all constants are
//! folded on the spot, and the graph runs natively: lowered to loops when it can be
//! (`lowering`), otherwise op by op through the same registry.

use std::fmt;
use std::sync::{Arc, OnceLock};

use super::fuse::Role;
use super::sizes::{Read, SizeCheck, SymAttr, read_shape, read_tensor};
use crate::tensor::{Attrs, Meta, OpDef, TensorData, TensorError, registry};

/// What a graph run returns: most graphs have one or two outputs, kept inline.
pub type Outputs = smallvec::SmallVec<[TensorData; 2]>;

/// A tensor in the graph: one of the inputs, a constant, or a node's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Input(usize),
    Const(usize),
    Node(usize),
}

#[derive(Clone, Debug)]
pub struct Node {
    pub op: String,
    pub inputs: Vec<Value>,
    pub attrs: Attrs,
    pub meta: Meta,
    /// Attributes the program computed from dynamic sizes, worked out again for each call
    /// (see `sizes`); empty for almost every node.
    pub sym: Vec<SymAttr>,
}

/// What running a graph needs beyond its nodes: each node's op, looked up once, and the
/// index of the last node that reads each result (after which it is freed).
#[derive(Clone, Debug)]
struct Plan {
    ops: Vec<Arc<OpDef>>,
    last_use: Vec<usize>,
    /// The graph as loops over float64 buffers, when every node has a lowering.
    lowered: Option<super::lowering::Lowered>,
    /// Some node's attributes are worked out per call from the sizes of earlier values.
    symbolic: bool,
    /// Transposes run as strided views for the product that reads them (`consume`).
    views: Vec<bool>,
    /// Groups of elementwise ops computed in one pass (`fuse`).
    roles: Vec<super::fuse::Role>,
    /// Of a graph that does not lower whole, its runs of nodes that do (`segments`).
    segments: Vec<super::segments::Segment>,
}

#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub inputs: Vec<Meta>,
    pub consts: Vec<TensorData>,
    pub nodes: Vec<Node>,
    pub outputs: Vec<Value>,
    /// Its inputs' sizes may differ from the metas it was recorded with (dynamic dims):
    /// nothing in it holds a size, so it computes what eager code would at any size. Such a
    /// graph runs op by op (the lowering plans buffers for one size).
    pub dynamic: bool,
    /// Recorded with dynamic inputs, but their sizes went into it: why (it runs at the sizes
    /// it was recorded at only).
    pub static_because: Option<String>,
    /// What a call's sizes must satisfy to run a dynamic graph: the comparisons of sizes the
    /// program's simulation relied on (see `sizes`).
    pub checks: Vec<SizeCheck>,
    /// Made once, when the graph first runs.
    plan: OnceLock<Plan>,
    /// The numbers of its input metas (`meta_id::intern`), made when first asked for.
    input_meta_ids: OnceLock<Vec<u32>>,
    /// Of a dynamic graph, its static copies for the sizes it is called at again and again.
    copies: super::sized::Copies,
}

impl Graph {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn input(&mut self, meta: Meta) -> Value {
        self.inputs.push(meta);
        Value::Input(self.inputs.len() - 1)
    }

    pub fn constant(&mut self, t: TensorData) -> Value {
        self.consts.push(t);
        Value::Const(self.consts.len() - 1)
    }

    pub fn meta(&self, v: Value) -> Meta {
        match v {
            Value::Input(i) => self.inputs[i].clone(),
            Value::Const(i) => Meta::of(&self.consts[i]),
            Value::Node(i) => self.nodes[i].meta.clone(),
        }
    }

    /// Whether `t` has the shape and dtype of `v` (its sizes read unwatched: a tracer that
    /// looks up a fake reads no size of the program's).
    pub fn describes(&self, v: Value, t: &TensorData) -> bool {
        let (shape, dtype) = match v {
            Value::Input(i) => (&self.inputs[i].shape[..], self.inputs[i].dtype),
            Value::Const(i) => (self.consts[i].unwatched_shape(), self.consts[i].dtype()),
            Value::Node(i) => (&self.nodes[i].meta.shape[..], self.nodes[i].meta.dtype),
        };
        t.dtype() == dtype && t.unwatched_shape() == shape
    }

    /// Apply `op`: its result's shape and dtype are inferred now (an error here is the error
    /// the eager op would raise); with only constant inputs it is computed now.
    pub fn apply(
        &mut self,
        op: &str,
        inputs: &[Value],
        attrs: Attrs,
    ) -> Result<Value, TensorError> {
        // A draw from the random number generator is never folded: each call draws anew.
        if inputs.iter().all(|v| matches!(v, Value::Const(_))) && !registry().draws(op) {
            let args: Vec<&TensorData> = inputs
                .iter()
                .map(|v| match v {
                    Value::Const(i) => &self.consts[*i],
                    _ => unreachable!("all constants"),
                })
                .collect();
            // Constants are real data: folded without the tracer (which may be the caller).
            let folded = registry().compute(op, &args, &attrs)?;
            return Ok(self.constant(folded));
        }
        self.apply_node(op, inputs, attrs)
    }

    /// Apply `op` as a node, even on constants only (see `Recorder::keep_nodes`).
    pub fn apply_node(
        &mut self,
        op: &str,
        inputs: &[Value],
        attrs: Attrs,
    ) -> Result<Value, TensorError> {
        let metas: Vec<Meta> = inputs.iter().map(|v| self.meta(*v)).collect();
        let meta = registry().infer(op, &metas, &attrs)?;
        self.nodes.push(Node {
            op: op.to_owned(),
            inputs: inputs.to_vec(),
            attrs,
            meta,
            sym: Vec::new(),
        });
        Ok(Value::Node(self.nodes.len() - 1))
    }

    /// A node that makes a tensor from its attributes alone (`arange(T)` for a dynamic `T`):
    /// never folded, as its size changes from call to call.
    pub fn factory(
        &mut self,
        op: &str,
        attrs: Attrs,
        sym: Vec<SymAttr>,
    ) -> Result<Value, TensorError> {
        let meta = registry().infer(op, &[], &attrs)?;
        self.nodes.push(Node {
            op: op.to_owned(),
            inputs: Vec::new(),
            attrs,
            meta,
            sym,
        });
        Ok(Value::Node(self.nodes.len() - 1))
    }

    /// Per node, the index of the last node that reads its result; `usize::MAX` for an
    /// output (or a result nothing reads).
    pub(crate) fn last_uses(&self) -> Vec<usize> {
        let mut last_use = vec![usize::MAX; self.nodes.len()];
        for (j, node) in self.nodes.iter().enumerate() {
            for v in &node.inputs {
                if let Value::Node(i) = v {
                    last_use[*i] = j;
                }
            }
        }
        for v in &self.outputs {
            if let Value::Node(i) = v {
                last_use[*i] = usize::MAX;
            }
        }
        last_use
    }

    fn plan(&self) -> Result<&Plan, TensorError> {
        if let Some(p) = self.plan.get() {
            return Ok(p);
        }
        let ops = self
            .nodes
            .iter()
            .map(|n| {
                registry()
                    .get(&n.op)
                    .ok_or_else(|| TensorError::value(format!("no op named {:?}", n.op)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let last_use = self.last_uses();
        let lowered = match super::lowering::lower(self, &last_use) {
            Ok(l) => Some(l),
            Err(why) => {
                log::debug!(target: crate::log_targets::GRAPH, "a graph of {} nodes runs op by op: {why}", self.nodes.len());
                None
            }
        };
        let symbolic = self.nodes.iter().any(|n| !n.sym.is_empty());
        let views = super::consume::views_for_products(&self.nodes, &last_use);
        let roles = super::fuse::groups(self, &last_use);
        let segments = if lowered.is_none() && !symbolic && !self.dynamic {
            super::segments::segments(self, &last_use, |k| matches!(roles[k], Role::Alone))
        } else {
            Vec::new()
        };
        Ok(self.plan.get_or_init(|| Plan {
            ops,
            last_use,
            lowered,
            symbolic,
            views,
            roles,
            segments,
        }))
    }

    /// Every node's result, computed through the registry one node after another, as eager
    /// execution computes them: what the graph's runs are compared with.
    #[cfg(test)]
    pub(crate) fn eager_results(&self, inputs: &[TensorData]) -> Vec<TensorData> {
        let mut results: Vec<TensorData> = Vec::new();
        for node in &self.nodes {
            let args: Vec<&TensorData> = node
                .inputs
                .iter()
                .map(|v| match v {
                    Value::Input(i) => &inputs[*i],
                    Value::Const(i) => &self.consts[*i],
                    Value::Node(i) => &results[*i],
                })
                .collect();
            results.push(registry().call(&node.op, &args, &node.attrs).unwrap());
        }
        results
    }

    /// The nodes (`start..end`) of each lowered run of a graph that does not lower whole.
    #[cfg(test)]
    pub(crate) fn lowered_runs(&self) -> Vec<std::ops::Range<usize>> {
        let plan = self.plan().expect("the graph's ops exist");
        plan.segments.iter().map(|s| s.start..s.end).collect()
    }

    /// Each node's part in the groups of elementwise ops the graph runs fused.
    #[cfg(test)]
    pub(crate) fn fusion_roles(&self) -> Vec<Role> {
        self.plan().expect("the graph's ops exist").roles.clone()
    }

    /// The numbers (`meta_id::intern`) of the metas its inputs were recorded with: a tensor
    /// that remembers its input's number (`PyTensor::remembers_meta`) has that meta.
    pub fn input_meta_ids(&self) -> &[u32] {
        self.input_meta_ids.get_or_init(|| {
            self.inputs
                .iter()
                .map(crate::tensor::meta_id::intern)
                .collect()
        })
    }

    /// Run the graph on `inputs` (checked against the input metas the graph was built for).
    /// Shapes and dtypes were inferred when the graph was built, so the kernels run directly;
    /// each result is still checked against what inference said.
    pub fn run(&self, inputs: &[&TensorData]) -> Result<Outputs, TensorError> {
        self.check_inputs(inputs)?;
        self.run_checked(inputs)
    }

    /// Whether `inputs` fit the graph: one per input, each of its input's meta (at any sizes
    /// of its rank, for a dynamic graph).
    fn check_inputs(&self, inputs: &[&TensorData]) -> Result<(), TensorError> {
        if inputs.len() != self.inputs.len() {
            return Err(TensorError::type_error(format!(
                "the graph takes {} tensors, got {}",
                self.inputs.len(),
                inputs.len()
            )));
        }
        for (i, (t, meta)) in inputs.iter().zip(&self.inputs).enumerate() {
            let fits = if self.dynamic {
                meta.dtype == t.dtype() && meta.shape.len() == t.ndim()
            } else {
                meta.describes(t)
            };
            if !fits {
                return Err(TensorError::value(format!(
                    "graph input {i} is {:?}, the graph was built for {:?}",
                    Meta::of(t),
                    meta
                )));
            }
        }
        Ok(())
    }

    /// `run` on inputs the caller has found to fit the graph (of a static graph, each of its
    /// input's meta: for a tensor object, one that remembers the input's number).
    pub fn run_checked(&self, inputs: &[&TensorData]) -> Result<Outputs, TensorError> {
        debug_assert!(self.check_inputs(inputs).is_ok());
        if self.dynamic
            && let Some(copy) = self.copies.for_call(self, inputs)
        {
            return copy.run_checked(inputs);
        }
        let plan = self.plan()?;
        if !self.dynamic
            && let Some(outputs) = plan.lowered.as_ref().and_then(|l| l.run(inputs))
        {
            return Ok(outputs);
        }
        let mut results: Vec<Option<TensorData>> = Vec::with_capacity(self.nodes.len());
        // The sizes of every result, when attributes are worked out from them (a result may
        // be freed before a later node reads its sizes).
        let mut shapes: Vec<Vec<usize>> = Vec::new();
        let mut carried: smallvec::SmallVec<[(usize, TensorData); 2]> = smallvec::SmallVec::new();
        let mut segments = plan.segments.iter().peekable();
        // The nodes before this one were computed by a lowered run.
        let mut computed_to = 0;
        for (j, (node, op)) in self.nodes.iter().zip(&plan.ops).enumerate() {
            if j < computed_to {
                continue;
            }
            if let Some(segment) = segments.next_if(|s| s.start == j)
                && segment.run_into(inputs, &self.consts, &plan.last_use, &mut results)
            {
                computed_to = segment.end;
                continue;
            }
            let resolved;
            let attrs = if node.sym.is_empty() {
                &node.attrs
            } else {
                let dim = |v: Value, r: Read| -> Option<i64> {
                    match v {
                        Value::Input(i) => read_tensor(inputs.get(i)?, r),
                        Value::Const(i) => read_tensor(self.consts.get(i)?, r),
                        Value::Node(i) => read_shape(shapes.get(i)?, None, r),
                    }
                };
                let first = node.inputs.first().and_then(|v| match v {
                    Value::Input(i) => Some(inputs[*i].shape().to_vec()),
                    Value::Const(i) => Some(self.consts[*i].shape().to_vec()),
                    Value::Node(i) => shapes.get(*i).cloned(),
                });
                resolved = super::sizes::resolve(&node.attrs, &node.sym, first.as_deref(), &dim)
                    .ok_or_else(|| {
                        TensorError::runtime(format!(
                            "op {}: its sizes cannot be worked out for this call",
                            node.op
                        ))
                    })?;
                &resolved
            };
            // A group of elementwise ops is computed whole by its first node (`fuse`); of its
            // later nodes' results only those read after it are held.
            let out = match &plan.roles[j] {
                Role::Starts(group) => {
                    let taken = group
                        .dead_operands()
                        .map(|(e, v)| {
                            let Value::Node(i) = v else {
                                unreachable!("only node results are taken over")
                            };
                            let own = results[i]
                                .take()
                                .expect("a node's result lives until its last use");
                            (e, own)
                        })
                        .collect();
                    let arg = |v: Value| -> &TensorData {
                        match v {
                            Value::Input(i) => inputs[i],
                            Value::Const(i) => &self.consts[i],
                            Value::Node(i) => results[i]
                                .as_ref()
                                .expect("a node's result lives until its last use"),
                        }
                    };
                    carried.extend(group.run(&node.meta, taken, &arg));
                    carried_out(&mut carried, j)
                }
                Role::Within => carried_out(&mut carried, j),
                Role::Alone => {
                    Some(self.run_node(j, node, op, attrs, plan, inputs, &mut results)?)
                }
            };
            let Some(out) = out else {
                for v in &node.inputs {
                    if let Value::Node(i) = v
                        && plan.last_use[*i] == j
                    {
                        results[*i] = None;
                    }
                }
                if plan.symbolic {
                    shapes.push(node.meta.shape.clone());
                }
                results.push(None);
                continue;
            };
            let fits = if self.dynamic {
                node.meta.dtype == out.dtype() && node.meta.shape.len() == out.ndim()
            } else {
                node.meta.describes(&out)
            };
            if !fits {
                return Err(TensorError::runtime(format!(
                    "op {}: the kernel returned {:?} where inference said {:?}",
                    node.op,
                    Meta::of(&out),
                    node.meta
                )));
            }
            // A result is dropped after its last use, as eager execution frees it.
            for v in &node.inputs {
                if let Value::Node(i) = v
                    && plan.last_use[*i] == j
                {
                    results[*i] = None;
                }
            }
            if plan.symbolic {
                shapes.push(out.shape().to_vec());
            }
            results.push(Some(out));
        }
        // Results are moved out, not copied: only a value returned twice is cloned.
        Ok(self
            .outputs
            .iter()
            .enumerate()
            .map(|(o, v)| match v {
                Value::Input(i) => inputs[*i].clone(),
                Value::Const(i) => self.consts[*i].clone(),
                Value::Node(i) if self.outputs[o + 1..].contains(v) => {
                    results[*i].clone().expect("outputs live to the end")
                }
                Value::Node(i) => results[*i].take().expect("outputs live to the end"),
            })
            .collect())
    }

    /// Node `j`'s result, computed by its kernel, or in a dead operand it takes over.
    #[allow(clippy::too_many_arguments)]
    fn run_node(
        &self,
        j: usize,
        node: &Node,
        op: &OpDef,
        attrs: &Attrs,
        plan: &Plan,
        inputs: &[&TensorData],
        results: &mut [Option<TensorData>],
    ) -> Result<TensorData, TensorError> {
        // A dead operand taken over (not in dynamic graphs: their shapes are the runs').
        let mut consumed = None;
        if plan.views[j] {
            let own = match node.inputs[..] {
                [Value::Node(i)] => results[i]
                    .take()
                    .expect("a node's result lives until its last use"),
                [Value::Input(i)] => inputs[i].clone(),
                [Value::Const(i)] => self.consts[i].clone(),
                _ => unreachable!("views_for_products takes one operand"),
            };
            consumed = Some(super::consume::permuted(&node.op, attrs, own)?);
        } else if !self.dynamic
            && let Some((_, i)) =
                super::consume::consumable(&node.op, &node.inputs, j, &plan.last_use)
        {
            let own = results[i]
                .take()
                .expect("a node's result lives until its last use");
            match super::consume::run_in(&node.meta, own) {
                Ok(out) => consumed = Some(out),
                Err(own) => results[i] = Some(own),
            }
        }
        if let Some(out) = consumed {
            return Ok(out);
        }
        let arg = |v: &Value| -> &TensorData {
            match v {
                Value::Input(i) => inputs[*i],
                Value::Const(i) => &self.consts[*i],
                Value::Node(i) => results[*i]
                    .as_ref()
                    .expect("a node's result lives until its last use"),
            }
        };
        match node.inputs.as_slice() {
            [a] => (op.kernel)(&[arg(a)], attrs),
            [a, b] => (op.kernel)(&[arg(a), arg(b)], attrs),
            many => (op.kernel)(&many.iter().map(arg).collect::<Vec<_>>(), attrs),
        }
    }
}

/// Node `j`'s result, if its group computed one that is read after the group.
fn carried_out(
    carried: &mut smallvec::SmallVec<[(usize, TensorData); 2]>,
    j: usize,
) -> Option<TensorData> {
    let at = carried.iter().position(|(k, _)| *k == j)?;
    Some(carried.swap_remove(at).1)
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Input(i) => write!(f, "in{i}"),
            Value::Const(i) => write!(f, "c{i}"),
            Value::Node(i) => write!(f, "v{i}"),
        }
    }
}

/// One line per input, constant and node, FX-style: `v2: float64[2, 3] = add(in0, c1)`.
impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let meta = |m: &Meta| format!("{}{:?}", m.dtype.name(), m.shape);
        for (i, m) in self.inputs.iter().enumerate() {
            writeln!(f, "in{i}: {}", meta(m))?;
        }
        for (i, c) in self.consts.iter().enumerate() {
            writeln!(
                f,
                "c{i}: {} = {}",
                meta(&Meta::of(c)),
                crate::tensor::format::repr(c)
            )?;
        }
        for (i, n) in self.nodes.iter().enumerate() {
            let args: Vec<String> = n.inputs.iter().map(ToString::to_string).collect();
            // An attribute worked out per call shows its expression.
            let attrs: Vec<String> = n
                .attrs
                .0
                .iter()
                .map(|(k, v)| match n.sym.iter().find(|s| s.name() == k) {
                    Some(s) => s.to_string(),
                    None => format!("{k}={v:?}"),
                })
                .collect();
            let all = args.into_iter().chain(attrs).collect::<Vec<_>>().join(", ");
            writeln!(f, "v{i}: {} = {}({all})", meta(&n.meta), n.op)?;
        }
        let outs: Vec<String> = self.outputs.iter().map(ToString::to_string).collect();
        write!(f, "return ({})", outs.join(", "))?;
        for c in &self.checks {
            write!(f, "\ncheck {c}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::{Attr, DType, Scalar};

    fn vector(values: &[f64]) -> TensorData {
        let v: Vec<Scalar> = values.iter().map(|&x| Scalar::Float(x)).collect();
        TensorData::from_scalars(&[values.len()], &v, DType::Float64).unwrap()
    }

    #[test]
    fn builds_infers_folds_prunes_and_runs() {
        let mut g = Graph::new();
        let x = g.input(Meta {
            shape: vec![3],
            dtype: DType::Float64,
        });
        let two = g.constant(TensorData::scalar(Scalar::Float(2.0)));
        let one = g.constant(TensorData::scalar(Scalar::Float(1.0)));
        let three = g.apply("add", &[two, one], Attrs::new()).unwrap(); // folded
        assert!(matches!(three, Value::Const(_)));
        let y = g.apply("mul", &[x, three], Attrs::new()).unwrap();
        let _unused = g.apply("exp", &[x], Attrs::new()).unwrap();
        let s = g
            .apply("sum", &[y], Attrs::new().with("dim", Attr::None))
            .unwrap();
        assert_eq!(
            g.meta(s),
            Meta {
                shape: vec![],
                dtype: DType::Float64
            }
        );
        g.outputs = vec![y, s];
        g.prune();
        assert_eq!(g.nodes.len(), 2, "{g}");
        let out = g.run(&[&vector(&[1., 2., 3.])]).unwrap();
        assert_eq!(out[0], vector(&[3., 6., 9.]));
        assert_eq!(out[1].item().unwrap().as_f64(), 18.0);
        let text = g.to_string();
        assert!(text.contains("v0: float64[3] = mul(in0, c2)"), "{text}");
        assert!(text.ends_with("return (v0, v1)"), "{text}");
    }

    #[test]
    fn shape_errors_surface_while_building_and_inputs_are_checked() {
        let mut g = Graph::new();
        let x = g.input(Meta {
            shape: vec![2, 3],
            dtype: DType::Float64,
        });
        let y = g.input(Meta {
            shape: vec![4],
            dtype: DType::Float64,
        });
        assert_eq!(
            g.apply("add", &[x, y], Attrs::new()).unwrap_err().message,
            "cannot broadcast (2, 3) with (4,)"
        );
        g.outputs = vec![x];
        let err = g
            .run(&[&vector(&[1.]), &vector(&[1., 2., 3., 4.])])
            .unwrap_err();
        assert!(
            err.message.starts_with("graph input 0 is"),
            "{}",
            err.message
        );
    }
}
