//! Ops through the registry, on values worked out by hand (NumPy's results for the same
//! inputs); the Python-level tests in tests/ cover the API.

use super::*;

fn t(shape: &[usize], values: &[f64], dtype: DType) -> TensorData {
    let v: Vec<Scalar> = values.iter().map(|&x| Scalar::Float(x)).collect();
    TensorData::from_scalars(shape, &v, dtype).unwrap()
}

fn f64s(t: &TensorData) -> Vec<f64> {
    t.to_scalars().iter().map(|s| s.as_f64()).collect()
}

fn call(name: &str, inputs: &[&TensorData], attrs: Attrs) -> Result<TensorData, TensorError> {
    registry().call(name, inputs, &attrs)
}

#[test]
fn broadcasting_arithmetic_and_promotion() {
    let a = t(&[2, 3], &[1., 2., 3., 4., 5., 6.], DType::Int64);
    let b = t(&[3], &[10., 20., 30.], DType::Float32);
    let c = call("add", &[&a, &b], Attrs::new()).unwrap();
    assert_eq!(c.dtype(), DType::Float64); // int64 + float32, as NumPy
    assert_eq!(c.shape(), &[2, 3]);
    assert_eq!(f64s(&c), vec![11., 22., 33., 14., 25., 36.]);
    let err = call(
        "add",
        &[&a, &t(&[4], &[0.; 4], DType::Float64)],
        Attrs::new(),
    )
    .unwrap_err();
    assert_eq!(err.message, "cannot broadcast (2, 3) with (4,)");
    let q = call("div", &[&a, &t(&[], &[2.], DType::Int64)], Attrs::new()).unwrap();
    assert_eq!(q.dtype(), DType::Float64);
    assert_eq!(f64s(&q), vec![0.5, 1., 1.5, 2., 2.5, 3.]);
    // An operand of the result's leading dimensions (a kept-dims mean) on either side, and
    // one that broadcasts both ways (no row-major pairing: the general path).
    let col = t(&[2, 1], &[100., 200.], DType::Float64);
    let d = call("sub", &[&a, &col], Attrs::new()).unwrap();
    assert_eq!(f64s(&d), vec![-99., -98., -97., -196., -195., -194.]);
    let d = call("sub", &[&col, &a], Attrs::new()).unwrap();
    assert_eq!(f64s(&d), vec![99., 98., 97., 196., 195., 194.]);
    let cube = t(&[2, 2, 1], &[1., 2., 3., 4.], DType::Float64);
    let lead = t(&[2, 1, 1], &[10., 20.], DType::Float64);
    let d = call("mul", &[&cube, &lead], Attrs::new()).unwrap();
    assert_eq!(f64s(&d), vec![10., 20., 60., 80.]);
    let row = t(&[1, 3], &[1., 2., 3.], DType::Float64);
    let d = call("add", &[&col, &row], Attrs::new()).unwrap();
    assert_eq!(f64s(&d), vec![101., 102., 103., 201., 202., 203.]);
}

#[test]
fn integer_floor_division_and_remainder_follow_python() {
    let a = t(&[4], &[7., -7., 7., -7.], DType::Int64);
    let b = t(&[4], &[2., 2., -2., -2.], DType::Int64);
    assert_eq!(
        f64s(&call("floordiv", &[&a, &b], Attrs::new()).unwrap()),
        vec![3., -4., -4., 3.]
    );
    assert_eq!(
        f64s(&call("mod", &[&a, &b], Attrs::new()).unwrap()),
        vec![1., 1., -1., -1.]
    );
    let zero = t(&[], &[0.], DType::Int64);
    assert_eq!(
        f64s(&call("floordiv", &[&a, &zero], Attrs::new()).unwrap()),
        vec![0.; 4]
    );
    let neg = t(&[], &[-1.], DType::Int64);
    assert!(
        call("pow", &[&a, &neg], Attrs::new())
            .unwrap_err()
            .message
            .contains("negative integer powers")
    );
}

#[test]
fn reductions() {
    let a = t(&[2, 3], &[1., 5., 3., 4., 2., 6.], DType::Float32);
    let dim = |d: i64| Attrs::new().with("dim", Attr::Int(d));
    assert_eq!(f64s(&call("sum", &[&a], Attrs::new()).unwrap()), vec![21.]);
    assert_eq!(f64s(&call("sum", &[&a], dim(0)).unwrap()), vec![5., 7., 9.]);
    assert_eq!(f64s(&call("max", &[&a], dim(-1)).unwrap()), vec![5., 6.]);
    assert_eq!(f64s(&call("argmin", &[&a], dim(1)).unwrap()), vec![0., 1.]);
    assert_eq!(
        f64s(&call("argmax", &[&a], Attrs::new()).unwrap()),
        vec![5.]
    );
    let kept = call("mean", &[&a], dim(1).with("keepdim", Attr::Bool(true))).unwrap();
    assert_eq!(kept.shape(), &[2, 1]);
    assert_eq!(f64s(&kept), vec![3., 4.]);
    // float32's variance along its last dimension (run by run) is float64's rounded, and so
    // is a strided tensor's (the general path).
    let values: Vec<f64> = (0..24)
        .map(|i| (f64::from(i) * 0.731).sin() * 3.1)
        .collect();
    let x32 = t(&[2, 3, 4], &values, DType::Float32);
    let x64 = x32.cast(DType::Float64);
    for (d, correction) in [(-1, 0), (-1, 1), (1, 1)] {
        let attrs = dim(d)
            .with("correction", Attr::Int(correction))
            .with("keepdim", Attr::Bool(true));
        let v32 = call("var", &[&x32], attrs.clone()).unwrap();
        let v64 = call("var", &[&x64], attrs).unwrap();
        assert_eq!(v32.dtype(), DType::Float32);
        assert_eq!(v32, v64.cast(DType::Float32));
    }
    let empty = t(&[0, 3], &[], DType::Float64);
    assert_eq!(f64s(&call("sum", &[&empty], dim(0)).unwrap()), vec![0.; 3]);
    assert!(
        call("max", &[&empty], dim(0))
            .unwrap_err()
            .message
            .contains("size 0")
    );
    assert!(
        call("sum", &[&a], dim(2))
            .unwrap_err()
            .message
            .contains("out of range")
    );
    let ints = t(&[3], &[1., 2., 3.], DType::Bool);
    assert_eq!(
        call("sum", &[&ints], Attrs::new()).unwrap().dtype(),
        DType::Int64
    );
}

#[test]
fn softmax_rows_sum_to_one() {
    let a = t(&[2, 3], &[1., 2., 3., 1000., 1000., 1000.], DType::Float64);
    let s = call("softmax", &[&a], Attrs::new().with("dim", Attr::Int(-1))).unwrap();
    let v = f64s(&s);
    assert!((v[0] - 0.09003057317038046).abs() < 1e-12, "{v:?}");
    assert!((v[3] - 1. / 3.).abs() < 1e-12, "no overflow: {v:?}");
    let l = call("log_softmax", &[&a], Attrs::new().with("dim", Attr::Int(1))).unwrap();
    assert!((f64s(&l)[2] - (-0.40760596444437)).abs() < 1e-12);
}

#[test]
fn matmul_batches_and_vectors() {
    let a = t(
        &[2, 2, 3],
        &(0..12).map(f64::from).collect::<Vec<_>>(),
        DType::Float32,
    );
    let b = t(&[3, 2], &[1., 0., 0., 1., 1., 1.], DType::Float32);
    let c = call("matmul", &[&a, &b], Attrs::new()).unwrap();
    assert_eq!(c.shape(), &[2, 2, 2]);
    assert_eq!(f64s(&c), vec![2., 3., 8., 9., 14., 15., 20., 21.]);
    let v = t(&[3], &[1., 2., 3.], DType::Int64);
    let mv = call("matmul", &[&a, &v], Attrs::new()).unwrap();
    assert_eq!(mv.shape(), &[2, 2]);
    assert_eq!(f64s(&mv), vec![8., 26., 44., 62.]);
    assert_eq!(
        f64s(&call("dot", &[&v, &v], Attrs::new()).unwrap()),
        vec![14.]
    );
    let err = call("matmul", &[&b, &b], Attrs::new()).unwrap_err();
    assert_eq!(
        err.message,
        "matmul: shapes (3, 2) and (3, 2) do not align (2 != 3)"
    );
}

#[test]
fn shape_ops() {
    let a = t(&[2, 3], &[1., 2., 3., 4., 5., 6.], DType::Int64);
    let r = call(
        "reshape",
        &[&a],
        Attrs::new().with("shape", Attr::Ints(vec![3, -1])),
    )
    .unwrap();
    assert_eq!(r.shape(), &[3, 2]);
    let tr = call(
        "transpose",
        &[&a],
        Attrs::new()
            .with("dim0", Attr::Int(0))
            .with("dim1", Attr::Int(1)),
    )
    .unwrap();
    assert_eq!(f64s(&tr), vec![1., 4., 2., 5., 3., 6.]);
    let u = call("unsqueeze", &[&a], Attrs::new().with("dim", Attr::Int(-1))).unwrap();
    assert_eq!(u.shape(), &[2, 3, 1]);
    assert_eq!(
        call("squeeze", &[&u], Attrs::new()).unwrap().shape(),
        &[2, 3]
    );
    let c = call("cat", &[&a, &a], Attrs::new().with("dim", Attr::Int(1))).unwrap();
    assert_eq!(c.shape(), &[2, 6]);
    let s = call("stack", &[&a, &a], Attrs::new().with("dim", Attr::Int(0))).unwrap();
    assert_eq!(s.shape(), &[2, 2, 3]);
    assert!(
        call(
            "reshape",
            &[&a],
            Attrs::new().with("shape", Attr::Ints(vec![4]))
        )
        .unwrap_err()
        .message
        .contains("cannot reshape")
    );
}

#[test]
fn an_application_registers_its_own_op() {
    let r = OpRegistry::default();
    r.register(OpDef::new(
        "double",
        Arity::Exactly(1),
        |m: &[Meta], _| Ok(m[0].clone()),
        |x: &[&TensorData], _| registry().call("add", &[x[0], x[0]], &Attrs::new()),
    ))
    .unwrap();
    assert!(
        r.register(OpDef::new(
            "double",
            Arity::Exactly(1),
            |m: &[Meta], _| Ok(m[0].clone()),
            |x: &[&TensorData], _| Ok(x[0].clone())
        ))
        .is_err()
    );
    let a = t(&[2], &[1., 2.], DType::Float64);
    assert_eq!(
        f64s(&r.call("double", &[&a], &Attrs::new()).unwrap()),
        vec![2., 4.]
    );
}
