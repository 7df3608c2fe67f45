//! A captured graph, built in Rust through the op registry, runs as a Python callable: the
//! form in which the translator's replacement code will call it.

mod common;

use std::sync::Arc;

use common::*;
use rustpython_vm::PyPayload;
use symtrace::tensor::python::symtrace::PyCompiledGraph;
use symtrace::tensor::{Attr, Attrs, DType, Meta, Scalar, TensorData};
use symtrace::translate::Graph;

#[test]
fn a_graph_is_a_python_callable_over_tensors() {
    with_vm(|vm| {
        let scope = exec(vm, "import symtrace as st\n", "<graph>");
        // (x * 2 + 1).sum(dim=0), and the product itself
        let mut g = Graph::new();
        let x = g.input(Meta { shape: vec![2, 3], dtype: DType::Float64 });
        let two = g.constant(TensorData::scalar(Scalar::Float(2.0)));
        let one = g.constant(TensorData::scalar(Scalar::Float(1.0)));
        let y = g.apply("mul", &[x, two], Attrs::new()).unwrap();
        let z = g.apply("add", &[y, one], Attrs::new()).unwrap();
        let s = g.apply("sum", &[z], Attrs::new().with("dim", Attr::Int(0))).unwrap();
        g.outputs = vec![s, y];
        let compiled = PyCompiledGraph { graph: Arc::new(g) }.into_ref(&vm.ctx);
        scope.globals.set_item("graph", compiled.into(), vm).unwrap();

        assert_eq!(
            eval_repr(vm, &scope, "graph(st.tensor([[1., 2., 3.], [4., 5., 6.]]))"),
            "(tensor([12., 16., 20.]), tensor([[ 2.,  4.,  6.],\n        [ 8., 10., 12.]]))"
        );
        assert_eq!(eval_repr(vm, &scope, "graph"), "<symtrace.CompiledGraph: 1 inputs, 3 nodes, 2 outputs>");
        assert!(eval_repr(vm, &scope, "graph.code").contains("v2: float64[3] = sum(v1, dim=Int(0))"));
        assert!(eval_repr(vm, &scope, "graph(st.zeros(3))").contains("ValueError: graph input 0 is"));
        assert!(eval_repr(vm, &scope, "graph([1, 2])").contains("TypeError: a compiled graph takes tensors, not list"));
    });
}
