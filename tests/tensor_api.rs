//! The tensor type, eager and with no plugin: every case of tests/tensor/cases.py against the
//! values NumPy computes for it (tests/tensor/reference.json, made by make_reference.py on
//! CPython) and, for a case that raises, the exception class torch raises
//! (tests/tensor/torch_errors.json, made by make_torch_errors.py), plus repr, messages and the
//! op registry.

mod common;

use std::path::Path;

use common::*;

fn tensor_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("tensor")
}

#[test]
fn every_case_matches_numpy() {
    let ours =
        std::env::temp_dir().join(format!("symtrace-tensor-cases-{}.json", std::process::id()));
    run_ok(
        rustpython()
            .arg(tensor_dir().join("run_cases.py"))
            .arg(&ours),
    );
    let out = run_ok(
        rustpython()
            .arg(tensor_dir().join("compare.py"))
            .arg(tensor_dir().join("reference.json"))
            .arg(&ours),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(
        text.contains("186 cases compared with NumPy, 0 differences"),
        "{text}"
    );
}

/// torch's API where NumPy has no counterpart (tests/tensor/torch_cases.py: the in-place
/// spellings of the unary ops, `hsplit`/`vsplit`/`dsplit`, `column_stack`, `dstack`,
/// `atleast_*d`, `tensordot`, `kron`, `vdot`, `cartesian_prod`, `combinations`, `take`,
/// `float_power`, `bitwise_*`, `type`, `index_put`, bool masks among other indices, `clamp`
/// with tensor bounds, `sum`/`mean` with `dtype=`, `aminmax`, `split_with_sizes`, the norms
/// of `linalg`, `cummax`/`cummin`/`logcumsumexp`, `cov`/`corrcoef`, `trapezoid`, `vander`,
/// `diagflat`, `fill_diagonal_`, the cosine windows, `eye`) against what torch computes for it
/// (tests/tensor/torch_reference.json, made by make_torch_reference.py on CPython; the
/// cases from the running extremes on were added from torch 2.5.1, the others kept as made).
#[test]
fn every_torch_case_matches_torch() {
    let ours =
        std::env::temp_dir().join(format!("symtrace-torch-cases-{}.json", std::process::id()));
    run_ok(
        rustpython()
            .arg(tensor_dir().join("run_cases.py"))
            .arg(&ours)
            .arg("torch"),
    );
    let out = run_ok(
        rustpython()
            .arg(tensor_dir().join("compare.py"))
            .arg(tensor_dir().join("torch_reference.json"))
            .arg(&ours),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(
        text.contains("138 cases compared with torch, 0 differences"),
        "{text}"
    );
}

#[test]
fn linalg_factorizations_print_what_torch_prints() {
    prints_what_pytorch_printed(&tensor_dir(), "linalg_cases.py", "linalg_cases.expected");
}

/// `erfc`, `erfinv`, `lgamma`, `digamma` and `torch.special` (tests/tensor/special_cases.py),
/// at the poles, the ends of their domains, NaN and infinity too.
#[test]
fn special_functions_print_what_torch_prints() {
    prints_what_pytorch_printed(&tensor_dir(), "special_cases.py", "special_cases.expected");
}

/// `bincount`, `copysign`, `logaddexp2`, `gaussian_nll_loss` and `hinge_embedding_loss`
/// (tests/tensor/composite_cases.py), their errors too.
#[test]
fn composite_functions_print_what_torch_prints() {
    prints_what_pytorch_printed(
        &tensor_dir(),
        "composite_cases.py",
        "composite_cases.expected",
    );
}

/// `save` and `load` of a checkpoint (tests/tensor/serialization_cases.py), pickled
/// tensors and parameters, `weights_only`, the generator's state.
#[test]
fn saving_and_loading_print_what_torch_prints() {
    prints_what_pytorch_printed(
        &tensor_dir(),
        "serialization_cases.py",
        "serialization_cases.expected",
    );
}

/// torch's top-level spellings of functional and in-place ops and small functions
/// (tests/tensor/alias_cases.py), in torch's own argument orders.
#[test]
fn top_level_aliases_print_what_torch_prints() {
    prints_what_pytorch_printed(&tensor_dir(), "alias_cases.py", "alias_cases.expected");
}

/// `scatter_reduce` with every reduction, with and without the target's own values
/// (tests/tensor/scatter_reduce_cases.py), and `scatter(reduce='multiply')`.
#[test]
fn scatter_reduce_prints_what_torch_prints() {
    prints_what_pytorch_printed(
        &tensor_dir(),
        "scatter_reduce_cases.py",
        "scatter_reduce_cases.expected",
    );
}

/// `Generator` objects given to the draws, `random_split` and `DataLoader`
/// (tests/tensor/generator_cases.py): reproducible, and apart from the global stream.
#[test]
fn generators_behave_as_torch_s() {
    prints_what_pytorch_printed(
        &tensor_dir(),
        "generator_cases.py",
        "generator_cases.expected",
    );
}

/// Small pieces of torch's API that model and data code calls (tests/tensor/api_fill_cases.py):
/// `addcmul_`, `stride`, `unique_consecutive`, `masked_scatter`, `put_`, the legacy tensor
/// types, `Embedding.from_pretrained` and `max_norm`, `BatchNorm3d`, `dirac_`, `pdist`, and
/// five losses.
#[test]
fn api_fills_print_what_torch_prints() {
    prints_what_pytorch_printed(
        &tensor_dir(),
        "api_fill_cases.py",
        "api_fill_cases.expected",
    );
}

/// torch's 3-D poolings (tests/tensor/pool3d_cases.py): each two 2-D poolings, the plane's
/// and the depth's, with torch's windows, padding, dilation and `ceil_mode`.
#[test]
fn poolings_of_volumes_print_what_torch_prints() {
    prints_what_pytorch_printed(&tensor_dir(), "pool3d_cases.py", "pool3d_cases.expected");
}

fn run_py(source: &str, args: &[&str]) -> (String, String, Option<i32>) {
    let out = rustpython()
        .args(args)
        .arg("-c")
        .arg(source)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

#[test]
fn importable_with_and_without_the_plugin() {
    for args in [&[][..], &["--plugin", "symtrace"][..]] {
        let (out, err, code) = run_py(
            "import symtrace as st; print(st.ones(2, 2).sum().item())",
            args,
        );
        assert_eq!((out.as_str(), code), ("4.0\n", Some(0)), "{err}");
    }
}

#[test]
fn repr_str_and_dtypes_read_like_numpy() {
    let (out, err, _) = run_py(
        "import symtrace as st\n\
         a = st.tensor([[1., 2.5], [3., 4.]])\n\
         print(repr(a)); print(a); print(repr(st.arange(3, dtype=st.float32)))\n\
         print(repr(st.tensor([True, False])), repr(st.tensor(7)), repr(st.zeros(0, 3)))\n\
         print(a.dtype, a.dtype is st.float64, st.tensor([1, 2]).dtype.name, st.float32.is_floating_point)\n",
        &[],
    );
    assert_eq!(
        out,
        "tensor([[1. , 2.5],\n        [3. , 4. ]])\n[[1.  2.5]\n [3.  4. ]]\ntensor([0., 1., 2.], dtype=float32)\n\
         tensor([ True, False]) tensor(7) tensor([], shape=(0, 3))\nsymtrace.float64 True int64 True\n",
        "{err}"
    );
}

#[test]
fn errors_name_the_shapes_and_never_crash() {
    let (out, err, code) = run_py(
        "import symtrace as st\n\
         a = st.zeros(2, 3)\n\
         for f in [lambda: a + st.zeros(4), lambda: a.reshape(4, 2), lambda: a @ a, lambda: a[5],\n\
                   lambda: a.sum(dim=3), lambda: st.tensor([[1, 2], [3]]), lambda: a.item(), lambda: bool(a),\n\
                   lambda: st.tensor(['x']), lambda: a[st.tensor([True])], lambda: st.cat([a, st.zeros(3)]),\n\
                   lambda: st.arange(0, 5, 0), lambda: st.zeros(-1), lambda: len(st.tensor(1.0)), lambda: pow(a, 2, 3),\n\
                   lambda: a[st.tensor([0.5])], lambda: a.__delitem__(0), lambda: st.full((2,), 'x'),\n\
                   lambda: a.to('float32'), lambda: st.tensor(2 ** 70), lambda: a[..., ...], lambda: st.stack([]),\n\
                   lambda: st.zeros(10 ** 6, 10 ** 7), lambda: st.zeros(10 ** 6, 1) + st.zeros(1, 10 ** 6)]:\n\
         \x20   try:\n\
         \x20       f()\n\
         \x20   except Exception as e:\n\
         \x20       print(type(e).__name__ + ':', e)\n",
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    let expected = [
        "RuntimeError: cannot broadcast (2, 3) with (4,)",
        "RuntimeError: cannot reshape a tensor of shape (2, 3) into [4, 2]",
        "RuntimeError: matmul: shapes (2, 3) and (2, 3) do not align (3 != 2)",
        "IndexError: index 5 is out of bounds for dimension 0 with size 2",
        "IndexError: dimension 3 is out of range for a tensor of 2 dimensions",
        "ValueError: expected a sequence of length 2 at dimension 1, got 1",
        "RuntimeError: only a tensor with one element can be converted to a Python scalar, not one of shape (2, 3)",
        "RuntimeError: the truth value of a tensor with more than one element is ambiguous",
        "TypeError: cannot make a tensor of a str",
        "IndexError: a mask of shape (1,) does not match the leading dimensions of shape (2, 3)",
        "RuntimeError: cat: shapes (2, 3) and (3,) do not match outside dimension 0",
        "RuntimeError: arange() step must not be zero",
        "RuntimeError: negative dimension -1",
        "TypeError: len() of a 0-d tensor",
        "TypeError: pow() with a modulus is not supported for tensors",
        "IndexError: a tensor index must be bool or int64, not float64",
        "TypeError: tensor elements cannot be deleted",
        "TypeError: full() needs a number as its value",
        // A str is a device to `to`, as torch reads it ("Invalid device string").
        "RuntimeError: symtrace computes on the CPU only, not on 'float32'",
        "OverflowError: Python int too large for int64",
        "IndexError: an index can only have a single ellipsis ('...')",
        "RuntimeError: stack() needs at least one tensor",
        "RuntimeError: a tensor of shape (1000000, 10000000) is too large (more than 17179869184 elements)",
        "RuntimeError: a tensor of shape (1000000, 1000000) is too large (more than 17179869184 elements)",
    ];
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn maximum_minimum_and_where_as_methods() {
    let (out, err, _) = run_py(
        "import symtrace as st\n\
         a = st.tensor([1., 5., 3.]); b = st.tensor([4., 2., 3.])\n\
         print(a.maximum(b).tolist(), a.minimum(b).tolist(), a.where(a > 2, -1.0).tolist())\n",
        &[],
    );
    assert_eq!(
        out, "[4.0, 5.0, 3.0] [1.0, 2.0, 3.0] [-1.0, 5.0, 3.0]\n",
        "{err}"
    );
}

#[test]
fn seeded_random_numbers_repeat() {
    let (out, err, _) = run_py(
        "import symtrace as st\n\
         st.manual_seed(7); a = st.randn(1000); b = st.rand(4)\n\
         st.manual_seed(7); c = st.randn(1000); d = st.rand(4)\n\
         print((a == c).tolist() == [True] * 1000, (b == d).tolist() == [True] * 4)\n\
         print(abs(a.mean().item()) < 0.1, 0.8 < (a * a).mean().item() < 1.2, ((b >= 0) & (b < 1)).sum().item())\n",
        &[],
    );
    assert_eq!(out, "True True\nTrue True 4\n", "{err}");
}

#[test]
fn in_place_ops_keep_the_tensor_and_its_type() {
    let (out, err, _) = run_py(
        "import symtrace as st\n\
         a = st.zeros(2, 2, dtype=st.int64); b = a\n\
         a += 3; a *= st.tensor([1, 2])\n\
         print(b is a, a.tolist(), a.dtype)\n\
         try:\n\
         \x20   a += 0.5\n\
         except TypeError as e:\n\
         \x20   print(e)\n",
        &[],
    );
    assert_eq!(
        out,
        "True [[3, 6], [3, 6]] symtrace.int64\nthe float64 result of add cannot be stored in place into a int64 tensor\n",
        "{err}"
    );
}

#[test]
fn an_application_op_is_callable_from_python() {
    use symtrace::tensor::{Arity, Attrs, Meta, OpDef, TensorData, registry};
    registry()
        .register(OpDef::new(
            "test_double_plus_one",
            Arity::Exactly(1),
            |m: &[Meta], _: &Attrs| Ok(m[0].clone()),
            |t: &[&TensorData], _: &Attrs| {
                let two = registry().call("add", &[t[0], t[0]], &Attrs::new())?;
                let one = TensorData::full(&[], symtrace::tensor::Scalar::Int(1), t[0].dtype());
                registry().call("add", &[&two, &one], &Attrs::new())
            },
        ))
        .unwrap();
    with_vm(|vm| {
        let scope = exec(
            vm,
            "import symtrace as st\nr = st.call_op('test_double_plus_one', st.tensor([1, 2]))\n",
            "<t>",
        );
        assert_eq!(eval_repr(vm, &scope, "r"), "tensor([3, 5])");
        assert!(eval_repr(vm, &scope, "'test_double_plus_one' in st.op_names()") == "True");
        assert!(
            eval_repr(vm, &scope, "st.call_op('nope', r)")
                .contains("ValueError: no op named \"nope\"")
        );
    });
}

#[test]
fn demos_run_eager_and_print_their_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mlp = run_ok(rustpython().arg(root.join("demos/mlp.py")));
    let text = String::from_utf8_lossy(&mlp.stdout);
    assert!(
        text.contains("row sums: [1. 1. 1. 1. 1. 1. 1. 1.]"),
        "{text}"
    );
    assert!(text.contains("predicted classes: ["), "{text}");
    let att = run_ok(rustpython().arg(root.join("demos/attention.py")));
    let text = String::from_utf8_lossy(&att.stdout);
    assert!(text.contains("output shape: (2, 5, 8)"), "{text}");
    assert!(
        text.contains("weights sum to one: [True, True, True, True, True]"),
        "{text}"
    );
}

#[test]
fn large_kernels_give_the_same_bits_on_one_thread_or_two_eager_or_traced() {
    // Products split among threads by blocks of the output, softmax and maps by whole lanes:
    // a result must not depend on the thread count, nor on the plugin.
    let script = tensor_dir().join("threads.py");
    let run = |threads: &str, plugin: bool| {
        let mut cmd = rustpython();
        if plugin {
            cmd.args(["--plugin", "symtrace"]);
        }
        cmd.arg(&script).env("RAYON_NUM_THREADS", threads);
        String::from_utf8_lossy(&run_ok(&mut cmd).stdout).into_owned()
    };
    let one = run("1", false);
    assert_eq!(one.lines().count(), 2 * 19 + 1, "{one}");
    assert_eq!(run("2", false), one);
    assert_eq!(run("2", true), one);
    assert_eq!(run("3", true), one);
}

/// A tuple inside an index tuple is read as a list, as torch reads it (`t[:, (0, 2)]` is
/// `t[:, [0, 2]]`): among other indices, of ints or of bools, read and written; traced too.
#[test]
fn a_tuple_inside_an_index_is_a_list() {
    let source = "import symtrace as st\n\
         def f(x):\n\
         \x20   y = x.clone(); y[:, (0, 2)] = 0.0\n\
         \x20   z = x.clone(); z[:, [0, 2]] = 0.0\n\
         \x20   return [(x[:, (0, 2)], x[:, [0, 2]]), (x[0, (1, 2), (3, 0)], x[0, [1, 2], [3, 0]]),\n\
         \x20           (x[..., (True, False, True, False)], x[..., [True, False, True, False]]), (y, z)]\n\
         for i in range(3):\n\
         \x20   pairs = f(st.arange(24.0).reshape(2, 3, 4) + i)\n\
         \x20   print(all(a.tolist() == b.tolist() for a, b in pairs), pairs[1][0].tolist())\n";
    for args in [&[][..], &["--plugin", "symtrace"][..]] {
        let (out, err, code) = run_py(source, args);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(
            out, "True [7.0, 8.0]\nTrue [8.0, 9.0]\nTrue [9.0, 10.0]\n",
            "{args:?}: {err}"
        );
    }
}
