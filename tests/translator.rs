//! The translator end to end through the `rustpython` binary: guards and recompiles, rollback
//! of a failed inline call, fullgraph and strict errors, the log targets, the demos captured
//! into one graph each.

mod common;

use common::{assert_cases_ok, python_dir, rustpython};

fn stdout_of(args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    common::output_of(&args, env)
}

/// Run the case script `name` (in tests/python) under each of `modes` (interpreter options):
/// it ends `ALL OK 0`, and printed `ok` for each of `cases`.
fn cases_pass_in_each_mode(name: &str, modes: &[&[&str]], cases: &[&str]) {
    let script = python_dir().join(name);
    let script = script.to_str().unwrap();
    for opts in modes {
        let args: Vec<&str> = opts.iter().copied().chain([script]).collect();
        let (out, err) = stdout_of(&args, &[]);
        println!("{opts:?}\n{out}");
        assert!(out.contains("ALL OK 0"), "{opts:?}\n{out}\n{err}");
        assert_cases_ok(&out, cases);
    }
}

#[test]
fn every_kind_of_change_recompiles_and_results_stay_right() {
    let script = python_dir().join("guards_recompile.py");
    let (out, err) = stdout_of(
        &[script.to_str().unwrap()],
        &[("RUST_LOG", "symtrace::recompiles=info")],
    );
    println!("{out}");
    assert!(out.contains("ALL OK 0"), "{out}");
    assert_cases_ok(
        &out,
        &[
            "dtype change",
            "shape change",
            "constant change",
            "type change",
            "global rebinding",
            "global function rebinding",
            "module attribute rebinding",
            "closure cell change",
            "list length change",
            "int-keyed entry changed",
            "int-keyed entry deleted",
            "int-keyed entry back",
            "unchanged call hits the cache",
            "partial attribute: unchanged hits",
            "partial attribute replaced",
            "bound method attribute: unchanged hits",
            "bound method's object changed",
        ],
    );
    // Each recompile names the guard that failed; past the limit, the frame runs as written.
    assert!(
        err.contains("recompiling")
            && err.contains("guard failed: L['x'] is a float64 tensor of shape [3]"),
        "{err}"
    );
    assert!(
        err.contains("guard failed: G['SCALE'] == 2 (saw 5)"),
        "{err}"
    );
    assert!(err.contains("recompile limit (8) reached"), "{err}");
}

/// Classes made per call (a factory, a test, `exec`) are collected as without the plugin, with
/// their instances' `__del__` run (CPython's `test_module.test_clear_dict_in_ref_cycle` under
/// `trace_all=1`), and the entries that guarded them go with them: a model class made per
/// test is still compiled after the recompile limit's worth of tests. Plain (through
/// `symtrace.compile`), under `--plugin symtrace` and under `trace_all=1`.
#[test]
fn classes_made_per_call_are_collected_with_their_entries() {
    cases_pass_in_each_mode(
        "collected_classes.py",
        &[
            &[][..],
            &["--plugin", "symtrace"][..],
            &["--plugin", "symtrace", "--plugin-opt", "trace_all=1"][..],
        ],
        &[
            "a compiled model class made per test equals eager",
            "each class made per test is collected",
            "the twelfth class made per test is still compiled",
            "__del__ of an instance of a class made by exec runs",
            "a class of one name made per call: each call sees its own",
            "each such class is collected",
        ],
    );
}

/// What programs written for torch.compile spell around it runs: torch.compile's keywords,
/// Module.compile, torch.compiler's and torch._dynamo's functions and config
/// (tests/python/compile_spellings.py), plain and under the plugin.
#[test]
fn programs_written_for_torch_compile_run() {
    cases_pass_in_each_mode(
        "compile_spellings.py",
        &[&[][..], &["--plugin", "symtrace"][..]],
        &[
            "torch.compile with mode, dynamic, backend",
            "options instead of mode",
            "disable=True gives the function itself",
            "a backend function is refused",
            "mode and options together are refused",
            "compiler.reset clears the counts",
            "Module.compile: calls run traced, hooks around them",
            "compiler.disable as a decorator",
            "_dynamo.disable(recursive=False): the frame as written, its callee traced",
            "_dynamo.disable(recursive=False) after a translation, then reset",
            "_dynamo.mark_dynamic",
            "_dynamo.explain",
            "_dynamo.config takes the settings programs write",
            "compiler.set_stance",
            "a script's setup lines",
            "the device chosen inside a compiled function",
            "an evaluation loop over a DataLoader",
            "testing.assert_close",
            "autocast without CUDA",
            "torch.nn's deeper import paths",
            "a class read through a deeper path inside a traced call",
        ],
    );
}

/// `compile(model)` is an OptimizedModule that programs treat as the model, and a compiled
/// function or module called from a traced call is inlined into its graph
/// (tests/python/compiled_modules.py), plain and under the plugin.
#[test]
fn a_compiled_module_stands_for_its_model() {
    cases_pass_in_each_mode(
        "compiled_modules.py",
        &[&[][..], &["--plugin", "symtrace"][..]],
        &[
            "the model is its _orig_mod",
            "calls run traced",
            "later calls translate nothing",
            "attributes and methods read through it",
            "attributes written through it",
            "eval() reaches the model",
            "its training is the model's",
            "state_dict keys start with _orig_mod.",
            "the stripped state_dict loads into a plain model",
            "a hook on the wrapper runs",
            "a compiled module called from a traced call is inlined",
            "a compiled function called from a traced call is inlined",
            "a compiled function is named as the function it wraps",
        ],
    );
}

/// Instances of classes written on dict made by a traced call (a Hugging Face style
/// `ModelOutput`, an `AttrDict`, a plain subclass) stay in its graph and come out as the
/// objects they would be (tests/python/model_outputs.py), plain and under the plugin.
#[test]
fn dict_subclasses_made_in_the_call_keep_the_graph() {
    cases_pass_in_each_mode(
        "model_outputs.py",
        &[&[][..], &["--plugin", "symtrace"][..]],
        &[
            "a ModelOutput made by an encoder and read by its model",
            "a ModelOutput read by key, by position, as a tuple",
            "a ModelOutput returned to the caller",
            "an AttrDict made in the call",
            "a plain subclass of dict filled by dict's __init__",
            "an OrderedDict's own order changes run as written",
            "the caller changes a returned ModelOutput",
        ],
    );
}

/// Operators on instances of classes written in Python (tests/python/user_operators.py):
/// dual numbers, a vector's `+=` in place (on the caller's object too), `sum()` of losses,
/// comparisons with `total_ordering` and a dataclass's `__eq__`, a subclass's reflected method
/// first, `NotImplemented` passing the turn: each in one graph, equal to eager, plain and under
/// the plugin; an operation that ends in a TypeError breaks and raises as written.
#[test]
fn operators_of_python_classes_are_inlined() {
    cases_pass_in_each_mode(
        "user_operators.py",
        &[&[][..], &["--plugin", "symtrace"][..]],
        &[
            "dual numbers: a derivative through the arithmetic operators",
            "a vector's += in place, on one made here and on the caller's",
            "sum() of losses: 0 + a is a.__radd__(0)",
            "comparisons: __lt__, total_ordering, a dataclass's __eq__, != through object.__ne__",
            "a subclass's reflected method first; NotImplemented passes the turn",
            "the order in which methods are tried, each giving way in turn",
            "an operator that ends in a TypeError breaks, raised as written",
        ],
    );
}

#[test]
fn a_failed_inline_call_leaves_nothing_behind() {
    let script = python_dir().join("rollback.py");
    let (out, _) = stdout_of(&[script.to_str().unwrap()], &[]);
    println!("{out}");
    // The caller's graph and the callee's own (translated when the call runs as written).
    assert!(out.contains("graphs: 2 breaks: 2"), "{out}");
    assert!(
        out.contains("ops per graph: [['mul'], ['add', 'exp']]"),
        "{out}"
    );
    assert!(out.contains("id: GB-CALL resumed: True"), "{out}");
    assert!(out.contains("function: f\n"), "{out}");
    // The break is at the caller's call; the reason says where inside the callee it failed.
    assert!(
        out.contains("reason: symtrace.graph_break() (in helper, "),
        "{out}"
    );
    assert!(out.contains("rollback.py:12)"), "{out}");
    assert!(out.contains("location: rollback.py:19"), "{out}");
    // helper's add and exp and its guards (print's binding) are gone; the caller's mul stays.
    assert!(out.contains("ops left: ['mul']"), "{out}");
    assert!(
        out.contains("guards left: [\"L['x'] is a float64 tensor of shape [3]\"]"),
        "{out}"
    );
    assert!(out.contains("same result: True"), "{out}");
}

const FALLBACK: &str = "import symtrace as st\n\
def f(x):\n    y = x * 2\n    st.graph_break()\n    return y\n\
x = st.randn(2)\n";

#[test]
fn fullgraph_raises_with_the_reason_and_the_users_line() {
    let dir = std::env::temp_dir().join(format!("symtrace-fullgraph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("fg.py");
    std::fs::write(&script, format!("{FALLBACK}try:\n    st.compile(f, fullgraph=True)(x)\nexcept RuntimeError as e:\n    print('raised:', e)\nprint(st.compile(f)(x).tolist() == st.disable(f)(x).tolist())\n")).unwrap();
    let (out, _) = stdout_of(&[script.to_str().unwrap()], &[]);
    assert!(
        out.contains("raised: symtrace: f cannot be captured whole: symtrace.graph_break()"),
        "{out}"
    );
    assert!(out.contains("fg.py:4)"), "{out}");
    assert!(out.trim_end().ends_with("True"), "{out}");

    // strict=1 makes every fallback an error, for frames traced without any decorator.
    std::fs::write(
        &script,
        format!("{FALLBACK}try:\n    f(x)\nexcept RuntimeError as e:\n    print('raised:', e)\n"),
    )
    .unwrap();
    let (out, _) = stdout_of(
        &[
            "--plugin",
            "symtrace",
            "--plugin-opt",
            "strict=1",
            script.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        out.contains("raised: symtrace: f cannot be captured whole"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn demos_run_as_one_graph_each_under_the_plugin() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (demo, function) in [("mlp", "forward"), ("attention", "attention")] {
        let path = root.join("demos").join(format!("{demo}.py"));
        let (out, err) = stdout_of(
            &["--plugin", "symtrace", path.to_str().unwrap()],
            &[(
                "RUST_LOG",
                "symtrace::graph=debug,symtrace::graph_breaks=info",
            )],
        );
        assert!(out.contains("traced equals eager: True"), "{demo}: {out}");
        assert!(
            out.contains("captured: 1 graph,") && out.contains(", 0 graph breaks"),
            "{demo}: {out}"
        );
        // The plain call at module level ran the captured graph, not the bytecode.
        assert!(
            err.contains(&format!("{function} (")) && err.contains("captured"),
            "{demo}: {err}"
        );
        let fell_back = err.lines().any(|l| {
            l.contains("symtrace::graph_breaks") && l.contains(&format!("] {function} ("))
        });
        assert!(!fell_back, "{demo}: {err}");
    }
}

#[test]
fn bad_options_are_refused_with_a_message() {
    for opt in [
        "strict=2",
        "recompile_limit=0",
        "skip_after=x",
        "backend=jit",
    ] {
        let out = rustpython()
            .args(["--plugin", "symtrace", "--plugin-opt", opt, "-c", "pass"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{opt}");
        assert!(!out.stderr.is_empty(), "{opt}");
    }
}

#[test]
fn a_loop_too_long_to_unroll_is_refused_before_its_items_are_made() {
    let dir = std::env::temp_dir().join(format!("symtrace-long-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("long_loop.py");
    // range(10**12) would be a trillion integers if the translator unrolled it before
    // counting; the loop itself stops after three steps when it runs as written.
    std::fs::write(&script, "import symtrace as st\ndef f(x):\n    for i in range(10**12):\n        if i == 3:\n            break\n        x = x + 1.0\n    return x\nprint(f(st.zeros(2)).tolist())\n").unwrap();
    let (out, err) = stdout_of(
        &["--plugin", "symtrace", script.to_str().unwrap()],
        &[("RUST_LOG", "symtrace::graph_breaks=info")],
    );
    assert_eq!(out.trim(), "[3.0, 3.0]");
    assert!(
        err.contains("a loop of more than 10000 iterations"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Functions wrapped by `functools.lru_cache` (tests/python/cached_functions.py): followed
/// inline with the cache ignored, as TorchDynamo does, where their arguments and result are
/// values and they read no data that may have changed since the cache was filled; the
/// wrapper called again by the replacement, so each cache's hits, misses and size are
/// eager's. A cached function reading a global or a class's data changed since (its cached
/// answer stale), or printing, runs as written. A tensor it returns is looked up by the
/// replacement before the graph and taken as an input (the program's updates of it seen; a
/// dynamic graph fits calls without reading it);
/// updating it in place, or `is` of it, in the traced call breaks there. A cached method
/// whose code never reads `self` is followed too (the cache keys `self` by identity); one
/// reading `self`'s data runs as written.
#[test]
fn lru_cache_helpers_are_followed_where_the_cache_cannot_tell() {
    let script = python_dir().join("cached_functions.py");
    let (out, err) = stdout_of(&["--plugin", "symtrace", script.to_str().unwrap()], &[]);
    println!("{out}");
    assert!(out.contains("ALL OK 0"), "{out}\n{err}");
    assert_cases_ok(
        &out,
        &[
            "a helper of sizes (head dims) cached by lru_cache",
            "functools.cache with keywords, one cached function calling another",
            "a cached function reading a global changed since (runs as written)",
            "a cached function reading a class's data changed since (runs as written)",
            "a cached function reading a default list changed since (runs as written)",
            "a cached function reading sys.argv changed since (runs as written)",
            "a cached function that prints (runs as written)",
            "a cached function returning a tensor: looked up first, a graph input",
            "two lookups of one key and one of another, each counted",
            "a cached mask sliced by length, the batch size changing",
            "a cached static method's table of positions, looked up through the class",
            "`is` between two lookups of a cached tensor breaks there",
            "updating a cached tensor in place breaks there",
            "a method cached by lru_cache that never reads self",
            "a cached method reading self's attribute changed since (runs as written)",
        ],
    );
}

/// What model code takes from Python's library and torch's API around its tensor work
/// (tests/python/library_idioms.py): itertools made whole and stepped lazily (one part-way
/// at a graph break made again as itself), `zip(strict=True)`, `contextlib.contextmanager`, the grad modes as
/// blocks and decorators, a module's forward hooks, the truth of a caller's dict, a
/// configuration read through a subclass of dict (`cfg.model.hidden`), a dict read
/// by int keys (a logger's level cache), torch's `jit`, `compiler` and
/// `utils.checkpoint`, random draws (dropout while training), a dataclass output whose field
/// has a default factory (a default argument of the caller's: the dataclass's sentinel), a
/// `heapq` of plain pairs (an empty heap's IndexError caught as Python raises it), deques
/// made here (a bounded history, a breadth-first queue) and a caller's deque read whole and
/// appended to (the append replayed), numbers drawn from Python's `random` or from a
/// `random.Random` of a module's own (drawn first by the replacement; a branch on one
/// breaks; beside a graph that may raise they break), `super()` in a namedtuple subclass's
/// `__new__` and in class methods, an EasyDict whose `__getattr__` is `dict.__getitem__`, a
/// `collections.abc.Mapping` read through its views, slotted classes (a caller's dataclass
/// updated, one made, a caller's class whose empty slot raises, an attrs-style frozen one
/// made through a bound `object.__setattr__` and copied from its fields), a caller's
/// `weakref.ref` called (its referent changing, or collected: None), a caller's
/// `types.SimpleNamespace` (read, counted, missing attributes raised as the VM words them),
/// a running total of the caller's that is a float until `total += loss` makes it a tensor,
/// a dict keyed by enum members (one translation per member), a caller's `Counter` updated
/// (`_count_elements` as its Python definition reads). Each is
/// equal to eager over six calls, in one graph with no break, translated once (twice for a
/// dict that is empty in some calls and not in others).
#[test]
fn library_idioms_stay_in_the_graph() {
    let script = python_dir().join("library_idioms.py");
    let (out, err) = stdout_of(&["--plugin", "symtrace", script.to_str().unwrap()], &[]);
    println!("{out}");
    assert!(out.contains("ALL OK 0"), "{out}\n{err}");
    assert_cases_ok(
        &out,
        &[
            "itertools made whole: product, chain, combinations",
            "itertools stepped lazily: count, islice, pairwise, accumulate, starmap",
            "zip(strict=True)",
            "an islice part-way at a graph break",
            "contextlib.contextmanager and nullcontext",
            "no_grad as a decorator of forward",
            "no_grad bare as a decorator",
            "grad modes and is_grad_enabled",
            "forward hooks and pre-hooks",
            "the truth of a dict of the caller's, empty or not",
            "the truth of **kwargs",
            "a dict by int keys, a logger below its level",
            "jit, compiler and checkpoint namespaces, _assert",
            "a named tuple's _replace, _asdict and _fields",
            "dropout while training, at changing sizes",
            "random draws, one never read",
            "random draws on both sides of a graph break",
            "sampling tokens with multinomial in a generate loop",
            "stochastic depth (drop_path), bernoulli, randperm, normal",
            "a rotary cache grown with the sequence (type_as of a changing arange)",
            "a cache keyed by a size and a dtype, measured and trimmed",
            "os.environ.get and sys.version_info",
            "a frame that does no tensor work on its first call",
            "the rows of tensors made from constants, unpacked and iterated",
            "attention masks at changing lengths (a size tested against None)",
            "in-place updates of tensors made from constants",
            "a constant updated, then a break in an inlined call",
            "a configuration read through a dict subclass (attributes, keys, items, get)",
            "dict subclasses with methods of their own: Counter, defaultdict, a class changed",
            "a caller's Counter counted, defaultdict(list) appended to, OrderedDict read by key",
            "sorted() of a dict's items, tensors after unequal keys",
            "a tensor's __class__",
            "a bool mask among other indices, a tensor (breaks) and a list of bools",
            "a dataclass output with a default factory, dataclasses.replace, a class in a frozenset",
            "methods of a dict, list and set made here as values (key=d.get, push = l.append)",
            "a tensor of the caller's list of ints; cat and stack given tensors by keyword",
            "an exponential moving average of a model's parameters, updated in place",
            "an optimizer's state keyed by id() of its parameters",
            "an optimizer's state keyed by its parameter tensors (defaultdict, tied weights)",
            "Adam: setdefault(p, {}), a step counter per state, bias corrections of the step",
            "heapq over plain (size, index) pairs; heappop of an empty heap caught",
            "an OrderedDict of the caller's read whole in its own order, reordered between calls",
            "an OrderedDict made here, reordered with move_to_end",
            "deques made here: a bounded history, a breadth-first queue, rotate",
            "numbers drawn from random: a jittered scale, gauss, draws in an unrolled loop, a negated draw",
            "isinstance against an abstract base class (abc.ABC) the layers derive from",
            "isinstance against numbers and collections.abc (classes registered with them)",
            "isinstance against an ABC a class is registered with between calls",
            "a table keyed by classes, looked up with v.__class__ and type(v)",
            "iteration over a tensor computed in the call (its rows)",
            "a typing.NamedTuple's own methods and property, made here and the caller's",
            "members of IntEnum and a float Enum in arithmetic, int() and float() of them",
            "a branch on a number drawn from random breaks there",
            "draws from random beside a graph that may raise on its data break",
            "draws from a random.Random of the module's own",
            "a deque of the caller's read whole and appended to (a frame stack)",
            "a deque and its iterator part-way at a graph break",
            "dict() and ** of an nn.ModuleDict (its keys(), then [key] for each)",
            "update() from a class of the program's with keys and __getitem__ (calls in order)",
            "an EasyDict (__getattr__ = dict.__getitem__) and a collections.abc.Mapping configuration",
            "a slotted dataclass of the caller's updated, a frozen slotted one made",
            "a slotted class of the caller's with methods, a slot made on first use",
            "a weak reference to an owner that changes and dies, called",
            "types.SimpleNamespace configurations of the caller's read, counted, a subclass's method",
            "a running total of the caller's that starts as a float: total += loss",
            "a dict keyed by enum members read by a member (get, in, [], KeyError) and whole",
            "a caller's Counter updated from a list of tokens and from a dict",
            "del of a slot of the caller's, caught when empty",
            "an attrs-style frozen slotted class: object.__setattr__ bound, fields in a tuple subclass",
        ],
    );
    assert!(!err.contains("plugin panicked"), "{err}");
}

/// Empty tensors (tests/python/empty_tensors.py): a KV cache that starts with no positions,
/// a slice of no rows, an empty argument reduced, multiplied, reshaped and written to, an
/// index that picks nothing, pads of no width: each captured in one graph, with eager's
/// results (dtype, shape, NaN of a mean of nothing) and state; max of an empty tensor raises
/// as eager does.
#[test]
fn empty_tensors_are_captured_like_any_other() {
    let script = python_dir().join("empty_tensors.py");
    let (out, err) = stdout_of(&["--plugin", "symtrace", script.to_str().unwrap()], &[]);
    println!("{out}");
    assert!(out.contains("EMPTY TENSORS OK"), "{out}\n{err}");
    assert_cases_ok(
        &out,
        &[
            "a KV cache that starts empty",
            "a slice of no rows, then of some",
            "reductions and products of an empty argument",
            "an int tensor grown from empty, an index picking nothing",
            "max of an empty tensor raises as eager",
            "pads of no width",
            "in-place writes to an empty argument",
        ],
    );
}

/// Asserts on a tensor's truth (tests/python/asserted_truths.py): `assert not
/// x.isnan().any()`, `assert total > 0, f"..."`, `if isnan(loss): raise ValueError(...)`,
/// `torch._assert`, an assert in an inlined submodule and one under a handler are checked by
/// the graph, the frame captured whole, also in a loop (where the compiler moves the raise
/// after the loop); where the truth does not hold the frame runs as written, raising the
/// program's exception with its message from its own line and function, after its prints
/// and appends. An assert on a tensor of many elements raises as eager. A property subclass
/// reads as a property and a constant tensor's truth is known, neither breaking.
#[test]
fn asserts_on_tensor_truths_are_checked_by_the_graph() {
    let script = python_dir().join("asserted_truths.py");
    let (out, err) = stdout_of(&["--plugin", "symtrace", script.to_str().unwrap()], &[]);
    println!("{out}");
    assert!(out.contains("ASSERTED TRUTHS OK"), "{out}\n{err}");
    assert_cases_ok(
        &out,
        &[
            "assert not isnan(y).any(), and assert (y > 0).all()",
            "an assert's message made only when it fails, after a print",
            "if isnan(loss): raise ValueError, then torch._assert",
            "an assert in an inlined submodule",
            "an assert on a tensor of many elements raises as eager",
            "an assert under a handler in the same frame",
            "a check in a loop, its raise after the loop",
            "a property subclass and the truths of constant tensors",
        ],
    );
}
