//! A captured graph, built in Rust through the op registry, runs as a Python callable: the
//! form in which the translator's replacement code calls it (the roots of its inputs passed,
//! the tensors under them read natively), or as the hook runs it itself on a cache hit.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use rustpython_vm::PyPayload;
use symtrace::graph::Graph;
use symtrace::tensor::{Attr, Attrs, DType, Meta, Scalar, TensorData};
use symtrace::translate::CompiledGraph;
use symtrace::translate::GraphCall;
use symtrace::translate::Source;

#[test]
fn a_graph_is_a_python_callable_over_tensors() {
    with_vm(|vm| {
        let scope = exec(vm, "import symtrace as st\n", "<graph>");
        // (x * 2 + 1).sum(dim=0), and the product itself
        let mut g = Graph::new();
        let x = g.input(Meta {
            shape: vec![2, 3],
            dtype: DType::Float64,
        });
        let two = g.constant(TensorData::scalar(Scalar::Float(2.0)));
        let one = g.constant(TensorData::scalar(Scalar::Float(1.0)));
        let y = g.apply("mul", &[x, two], Attrs::new()).unwrap();
        let z = g.apply("add", &[y, one], Attrs::new()).unwrap();
        let s = g
            .apply("sum", &[z], Attrs::new().with("dim", Attr::Int(0)))
            .unwrap();
        g.outputs = vec![s, y];
        let call = GraphCall::new(&[Source::Local("x".into())], g.outputs.len(), vm);
        set_graph(vm, &scope, g, call);

        assert_eq!(
            eval_repr(vm, &scope, "graph(st.tensor([[1., 2., 3.], [4., 5., 6.]]))"),
            "(tensor([12., 16., 20.]), tensor([[ 2.,  4.,  6.],\n        [ 8., 10., 12.]]))"
        );
        assert_eq!(
            eval_repr(vm, &scope, "graph"),
            "<symtrace.CompiledGraph: 1 inputs, 3 nodes, 2 outputs>"
        );
        assert!(
            eval_repr(vm, &scope, "graph.code").contains("v2: float64[3] = sum(v1, dim=Int(0))")
        );
        assert!(
            eval_repr(vm, &scope, "graph(st.zeros(3))").contains("ValueError: graph input 0 is")
        );
        assert!(
            eval_repr(vm, &scope, "graph([1, 2])")
                .contains("TypeError: a compiled graph takes tensors and numbers, not list")
        );
    });
}

#[test]
fn a_graph_reads_its_inputs_under_the_roots_it_is_passed() {
    with_vm(|vm| {
        let scope = exec(
            vm,
            "import symtrace as st\nxs = [st.ones(2), (st.zeros(2), st.tensor([1., 2.]))]\nd = {'w': st.tensor([10., 20.])}\n",
            "<graph>",
        );
        let mut g = Graph::new();
        let a = g.input(Meta {
            shape: vec![2],
            dtype: DType::Float64,
        });
        let w = g.input(Meta {
            shape: vec![2],
            dtype: DType::Float64,
        });
        let y = g.apply("mul", &[a, w], Attrs::new()).unwrap();
        g.outputs = vec![y];
        let sources = [
            Source::Local("xs".into()).item(1).item(1),
            Source::Key(Box::new(Source::Local("d".into())), "w".into()),
        ];
        let call = GraphCall::new(&sources, 1, vm);
        assert_eq!(
            call.roots,
            [Source::Local("xs".into()), Source::Local("d".into())]
        );
        assert!(!call.returns_tuple, "one output comes back as itself");
        set_graph(vm, &scope, g, call);
        assert_eq!(eval_repr(vm, &scope, "graph(xs, d)"), "tensor([10., 40.])");
        assert!(
            eval_repr(vm, &scope, "graph([st.ones(2)], d)")
                .contains("TypeError: a compiled graph: an input under L['xs'] is missing")
        );
        assert!(
            eval_repr(vm, &scope, "graph(xs)")
                .contains("TypeError: a compiled graph: the graph takes 2 arguments, got 1")
        );
        assert!(
            eval_repr(vm, &scope, "graph(xs, d=d)")
                .contains("TypeError: a compiled graph takes no keyword arguments")
        );
    });
}

#[test]
fn a_graph_reads_instance_dicts_and_attributes_under_its_roots() {
    with_vm(|vm| {
        let scope = exec(
            vm,
            concat!(
                "import symtrace as st\n",
                "class M: pass\n",
                "m = M(); m.params = {'w': st.tensor([10., 20.])}; m.eps = st.tensor([1., 2.])\n",
                "class Raising:\n",
                "    params = None\n",
                "    @property\n",
                "    def eps(self): raise ValueError('eps is computed')\n",
                "r = Raising(); r.params = m.params\n",
            ),
            "<graph>",
        );
        let mut g = Graph::new();
        let meta = || Meta {
            shape: vec![2],
            dtype: DType::Float64,
        };
        let (w, eps) = (g.input(meta()), g.input(meta()));
        let y = g.apply("add", &[w, eps], Attrs::new()).unwrap();
        g.outputs = vec![y];
        let m = Source::Local("m".into());
        let sources = [
            m.clone().instance_dict().key("params").key("w"),
            Source::Attr(Box::new(m.clone()), "eps".into()),
        ];
        let call = GraphCall::new(&sources, 1, vm);
        assert_eq!(call.roots, [m], "one root: the rest is read natively");
        set_graph(vm, &scope, g, call);
        assert_eq!(eval_repr(vm, &scope, "graph(m)"), "tensor([11., 22.])");
        // An attribute is read as LOAD_ATTR reads it: what it raises comes through.
        assert!(
            eval_repr(vm, &scope, "graph(r)").contains("ValueError: eps is computed"),
            "{}",
            eval_repr(vm, &scope, "graph(r)")
        );
        assert!(
            eval_repr(vm, &scope, "graph(1)")
                .contains("TypeError: a compiled graph: an input under L['m'] is missing")
        );
    });
}

/// A graph takes a tensor without reading its shape only when the tensor remembers the number
/// of the graph's input meta (the guards have just checked it, and its data has not been
/// replaced since); a tensor that remembers another meta, or forgot its own when its data was
/// replaced, is checked as any other and refused when it does not fit.
#[test]
fn a_graph_reads_no_shape_only_of_a_tensor_that_remembers_its_input_meta() {
    use symtrace::tensor::PyTensor;
    with_vm(|vm| {
        let scope = exec(
            vm,
            "import symtrace as st\nfits = st.ones(2, 3)\nother = st.zeros(3)\n",
            "<graph>",
        );
        let meta = |shape: &[usize]| Meta {
            shape: shape.to_vec(),
            dtype: DType::Float64,
        };
        let mut g = Graph::new();
        let x = g.input(meta(&[2, 3]));
        let two = g.constant(TensorData::scalar(Scalar::Float(2.0)));
        g.outputs = vec![g.apply("mul", &[x, two], Attrs::new()).unwrap()];
        let mut other_graph = Graph::new();
        other_graph.input(meta(&[3]));
        let (id, other_id) = (g.input_meta_ids()[0], other_graph.input_meta_ids()[0]);
        assert_ne!(id, other_id);
        let call = GraphCall::new(&[Source::Local("x".into())], 1, vm);
        set_graph(vm, &scope, g, call);
        let tensor = |name: &str| eval(vm, &scope, name).unwrap();
        let fits = tensor("fits");
        let fits = fits.downcast_ref::<PyTensor>().unwrap();
        let other = tensor("other");
        let other = other.downcast_ref::<PyTensor>().unwrap();
        assert!(fits.has_meta(id, &meta(&[2, 3])) && fits.remembers_meta(id));
        assert!(other.has_meta(other_id, &meta(&[3])) && other.remembers_meta(other_id));
        assert!(!other.remembers_meta(id) && !fits.remembers_meta(0));

        assert_eq!(
            eval_repr(vm, &scope, "graph(fits).tolist()"),
            "[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]"
        );
        assert!(eval_repr(vm, &scope, "graph(other)").contains("ValueError: graph input 0 is"));
        // Replacing the data forgets the number, so the new shape is read and refused.
        *fits.write() = TensorData::full(&[3, 2], Scalar::Float(1.0), DType::Float64);
        assert!(!fits.remembers_meta(id));
        assert!(eval_repr(vm, &scope, "graph(fits)").contains("ValueError: graph input 0 is"));
    });
}

/// A cache hit whose replacement would only call the graph and return its result gets that
/// result from the hook, with no replacement frame: for a function of its arguments, a
/// module's forward pass and a function of a global. One with an effect to replay runs its
/// replacement. An int too large for int64, which would raise where the graph's input is made,
/// fails a guard instead (no hit): the frame runs its original code, which raises with the
/// traceback entry eager execution shows, carets included. The inputs are the
/// values the guards have just read: a tensor put in the place of another is the one computed
/// with.
#[test]
fn a_hit_that_only_returns_the_graphs_result_runs_no_frame() {
    traced_script_prints(
        "direct_hits.py",
        &[
            "arguments: same=True hits=2 direct=2",
            "module: same=True hits=2 direct=2",
            "global root: same=True hits=2 direct=2",
            "side effect: same=True hits=2 direct=0",
            "effects replayed: 4",
            "overflow raised in: times line 58",
            "overflow: hits 0 direct 0",
            "traceback entry as eager's: True ~~^~~",
            "list item replaced: same=True direct=1",
            "global rebound: same=True direct=1",
            "dict value replaced: same=True direct=1",
            "parameter replaced: same=True direct=1",
        ],
    );
}

/// Direct hits on three threads while a fourth puts new layers (now and then of another shape)
/// where the function reads them: the graph runs on the values the guards read, which the hook
/// holds until the graph is done, so every call computes with one consistent set of layers (a
/// call during which no layer changed gives that set's known answer) and nothing crashes.
#[test]
fn direct_hits_on_threads_read_what_their_guards_read() {
    traced_script_prints(
        "direct_hits_threads.py",
        &[
            "threads: calls=True wrong=0 final_same=True",
            "direct hits: True",
        ],
    );
}

/// `g`, called as `call` says, as the global `graph` of `scope`.
fn set_graph(
    vm: &rustpython_vm::VirtualMachine,
    scope: &rustpython_vm::scope::Scope,
    g: Graph,
    call: GraphCall,
) {
    let compiled = CompiledGraph::new(Arc::new(g), Arc::new(call)).into_ref(&vm.ctx);
    scope
        .globals
        .set_item("graph", compiled.into(), vm)
        .unwrap();
}

/// `tests/python/{script}` run under `--plugin symtrace` prints every one of `lines`.
fn traced_script_prints(script: &str, lines: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(script);
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let text = String::from_utf8_lossy(&out.stdout);
    for line in lines {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
}
