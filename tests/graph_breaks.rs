//! Graph breaks with resume functions, under `--plugin symtrace`: each kind of break
//! (tests/python/graph_breaks.py) gives eager's result, the expected graphs and breaks in
//! `explain()`, and translates nothing new on a second call; the breaking instruction runs
//! exactly once per call; the breaks are logged on `symtrace::graph_breaks` with their id and
//! hint.

mod common;

use common::*;

#[test]
fn every_kind_of_break_keeps_its_graphs_and_resumes() {
    let (stdout, stderr) = case_script_passes(
        "graph_breaks.py",
        &[
            "a requested break (symtrace.graph_break)",
            "an unsupported builtin",
            "an opaque object",
            "a branch on t.item()",
            "the truth of a tensor",
            "a tensor comparison feeding a branch",
            "a tensor comparison feeding a branch, other side",
            "an unsupported opcode",
            "a nested inlined call",
            "two breaks in a row",
            "a break inside a for loop",
            "a break inside a while loop",
            "a return inside a split loop",
            "a return inside a split loop, taken",
            "a loop body under min_graph_size is not split",
            "a break before any tensor work",
            "a break before any tensor work, a builtin",
            "a break before nothing is dropped",
            "a requested break in a call before any tensor work",
            "a break inside a try/except",
            "a break inside a try/except, the call raises",
            "a break inside a with-block",
            "a break inside a with-block, the call raises",
            "a break inside a with-block, __exit__ suppresses",
            "a with-block over a native lock",
            "a break inside a try/except inside a split loop",
            "a break inside a with-block inside a split loop",
            "a break inside a with-block inside a split loop, no exception",
            "a break inside a comprehension's loop body",
            "a split loop inside a try/except",
            "a split loop inside a try/except, the call raises",
            "a split loop inside a with-block",
            "a split loop inside a with-block, the call raises",
            "a split loop inside a with-block, __exit__ suppresses",
            "a break out of a split loop from its except block",
            "a break inside the arguments of a list's method",
            "a break inside an index after an ellipsis",
            "a break out of a split loop from its except block, taken",
            "a break in a small loop keeps the work before it",
            "iterators over a caller's dict view and reversed list, across a break",
            "a break in nested small loops keeps the work before the outer one",
            "a break while a local dict's items and a local list are iterated",
            "iterators over a local list and dict, midway at a break",
        ],
    );
    // Eager, explain, and two traced calls: the opaque object ran four times, not more.
    assert!(stdout.contains("opaque calls: 4"), "{stdout}");
    assert_eq!(stdout.matches("print_break sees").count(), 4, "{stdout}");
    assert!(
        stderr.contains("graph break [GB-CALL] at")
            && stderr
                .contains("graph_breaks.py:29: symtrace.graph_break(); resumes after it (hint: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("graph break [GB-BRANCH]") && stderr.contains("graph break [GB-OPCODE]"),
        "{stderr}"
    );
    // Eager, explain, and two traced calls of three iterations: the print inside the split
    // loop ran once per iteration.
    assert_eq!(
        stdout.matches("for_loop_break step").count(),
        12,
        "{stdout}"
    );
    assert!(
        stderr.contains("for_loop_break: graph break [GB-LOOP] at")
            && stderr.contains("loop_body_in_for_loop_break_at_89: graph break [GB-CALL]"),
        "{stderr}"
    );
}

/// A frame with cells or free variables keeps its graphs at a break: the resume function is a
/// closure over the frame's cells (tests/python/closure_breaks.py).
#[test]
fn frames_with_closures_break_and_resume_over_their_cells() {
    let (_, stderr) = case_script_passes(
        "closure_breaks.py",
        &[
            "a lambda over self, used on both sides of a break",
            "a method calling super() on both sides of a break",
            "a nonlocal counter across a break",
            "a nested function with a free variable",
            "a cell rebound on both sides of a break",
            "a parameter that is a cell, changed before a break",
            "functions made in the call, held at a break",
            "a lambda with a computed default, across a break",
            "closures of an inlined helper, sharing its cell across a break",
            "a break inside a loop, with closures over the frame's cells",
            "lambdas over a loop variable of a split loop",
            "a break under a try/except, the call raising on the second call",
            "a closure over a graph value, returned",
            "a decorator's wrapper breaking after the call",
            "an inlined closure sharing the frame's cell",
            "an inlined closure with a cell of its own",
        ],
    );
    // The frame breaks and resumes; it no longer runs as written.
    assert!(
        stderr.contains("Scaled.forward: graph break [GB-CALL] at")
            && stderr.contains("counter.<locals>.step: graph break [GB-CALL] at")
            && !stderr.contains("counter.<locals>.step (")
            && !stderr.contains("Scaled.forward ("),
        "{stderr}"
    );
}

/// Runs `source` as a script under the plugin with `opts` and gives its standard output.
fn run_script(name: &str, source: &str, opts: &[&str]) -> String {
    let dir = std::env::temp_dir().join(format!("symtrace-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join(format!("{name}.py"));
    std::fs::write(&script, source).unwrap();
    let mut cmd = rustpython();
    cmd.args(["--plugin", "symtrace"]);
    for o in opts {
        cmd.args(["--plugin-opt", o]);
    }
    let out = run_ok(cmd.arg(script.to_str().unwrap()));
    std::fs::remove_dir_all(&dir).ok();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const TINY_LOOP: &str = "import symtrace as st
def f(x, n):
    y = x * 2.0
    for i in range(n):
        y = y + 1.0
        st.graph_break()
        print('step', i)
    return y * 3.0
x = st.ones(2)
e = st.explain(f, x, 3)
print('counts', e.graph_count, e.graph_break_count, [b['id'] for b in e.break_reasons])
print('same', f(x, 3).tolist() == st.disable(f)(x, 3).tolist())
";

#[test]
fn min_graph_size_decides_whether_a_small_loop_body_is_split() {
    // Default (3): one op before the break is too few; the frame runs as written.
    let whole = run_script("tiny-loop-default", TINY_LOOP, &[]);
    assert!(
        whole.contains("counts 0 1 ['GB-FRAME']") && whole.contains("same True"),
        "{whole}"
    );
    // Three ops before the loop are worth a graph: it ends at the loop's head, and the loop
    // and what follows run as written (the resume function's frame).
    let before = run_script(
        "tiny-loop-work-before",
        &TINY_LOOP.replace("y = x * 2.0", "y = (x * 2.0).exp().sin()"),
        &[],
    );
    assert!(
        before.contains("counts 1 2 ['GB-BEFORE-LOOP', 'GB-FRAME']")
            && before.contains("same True"),
        "{before}"
    );
    // min_graph_size=1: split; graphs before the loop, in the body, after the loop.
    let split = run_script("tiny-loop-split", TINY_LOOP, &["min_graph_size=1"]);
    assert!(
        split.contains("counts 3 2 ['GB-LOOP', 'GB-CALL']") && split.contains("same True"),
        "{split}"
    );
}

#[test]
fn a_break_after_a_try_block_resumes() {
    // The except block's jump back (JUMP_BACKWARD_NO_INTERRUPT) once made this look like a
    // loop, and the resume function's unreachable handlers made a malformed exception table.
    let out = run_script(
        "after-try",
        "import symtrace as st
def f(x):
    try:
        x = x + 0.0
    except ValueError:
        pass
    y = x * 2.0
    st.graph_break()
    print('between')
    return y + 1.0
x = st.ones(2)
e = st.explain(f, x)
print('counts', e.graph_count, e.graph_break_count, [b['id'] for b in e.break_reasons])
print('same', f(x).tolist() == st.disable(f)(x).tolist())
",
        &[],
    );
    assert!(
        out.contains("counts 2 1 ['GB-CALL']") && out.contains("same True"),
        "{out}"
    );
}

#[test]
fn a_break_after_a_loop_holding_a_try_block_resumes() {
    // The except block inside the loop jumps back to the loop's head from after the
    // function's code: that jump does not make the code after the loop part of the loop.
    let out = run_script(
        "after-loop-try",
        "import symtrace as st
def f(x, n):
    y = x * 1.0
    for i in range(n):
        try:
            y = y + 1.0
        except ValueError:
            y = y - 1.0
    y = st.tanh(y * 2.0)
    st.graph_break()
    print('after the loop')
    return y * 3.0
x = st.ones(2)
e = st.explain(f, x, 2)
print('counts', e.graph_count, e.graph_break_count, [b['id'] for b in e.break_reasons])
print('same', f(x, 2).tolist() == st.disable(f)(x, 2).tolist())
",
        &[],
    );
    assert!(
        out.contains("counts 2 1 ['GB-CALL']") && out.contains("same True"),
        "{out}"
    );
}

#[test]
fn a_comprehension_whose_body_breaks_is_not_split_inside_an_expression() {
    // The comprehension's loop appends to the list under its iterator: a body function, which
    // has only placeholders for that stack, would append to None (the VM crashed on it). The
    // loop is not split; the frame runs as written.
    let out = run_script(
        "comprehension-in-expression",
        "import symtrace as st
def f(x, ws):
    y = x * 1.0
    out = [st.tanh(y * w + 1.0) * 2.0 + float(st.graph_break() or 0) for w in ws]
    return out[0] + out[1]
x = st.ones(2)
ws = [st.ones(2), st.ones(2) * 2.0]
e = st.explain(f, x, ws)
print('counts', e.graph_count, e.graph_break_count, [b['id'] for b in e.break_reasons])
print('same', st.compile(f)(x, ws).tolist() == st.disable(f)(x, ws).tolist())
",
        &[],
    );
    assert!(
        out.contains("counts 0 1 ['GB-FRAME']") && out.contains("same True"),
        "{out}"
    );
}

#[test]
fn strict_mode_refuses_to_break() {
    let dir = std::env::temp_dir().join(format!("symtrace-strict-break-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("strict_break.py");
    // A decorator made at import returns a function it made: given no tensor, it has
    // nothing to capture and runs as written, strict or not.
    std::fs::write(&script, "import symtrace as st\ndef deco(fn):\n    def wrapper(*a):\n        return fn(*a)\n    return wrapper\n@deco\ndef g(x):\n    return x\ndef f(x):\n    y = x * 2.0\n    st.graph_break()\n    print('between')\n    return y + 1.0\nf(st.ones(2))\n").unwrap();
    let out = rustpython()
        .args([
            "--plugin",
            "symtrace",
            "--plugin-opt",
            "strict=1",
            script.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "strict mode ran through the break");
    assert!(
        stderr.contains("symtrace: f cannot be captured whole: symtrace.graph_break()"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `symtrace::graph_breaks=info` says what broke a graph: a helper without tensor work (and
/// the package's own, run at import) broke nothing and is said only at debug level.
#[test]
fn frames_without_tensor_work_are_not_reported_as_breaks() {
    let dir = std::env::temp_dir().join(format!("symtrace-quiet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("quiet.py");
    std::fs::write(&script, "import symtrace as st\ndef helper(n):\n    return n + 1\ndef f(x):\n    y = x * 2.0\n    st.graph_break()\n    return y + 2.0\nprint(f(st.ones(2)).tolist(), helper(1))\n").unwrap();
    let run = |level: &str| {
        let out = rustpython()
            .args(["--plugin", "symtrace", script.to_str().unwrap()])
            .env("RUST_LOG", format!("symtrace::graph_breaks={level}"))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[4.0, 4.0] 2");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let info = run("info");
    assert!(info.contains("symtrace.graph_break()"), "{info}");
    assert!(!info.contains("empty graph"), "{info}");
    assert_eq!(info.matches(": runs as written:").count(), 0, "{info}");
    let debug = run("debug");
    assert!(
        debug.contains("helper (") && debug.contains("empty graph"),
        "{debug}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_training_demo_breaks_at_item_and_equals_eager() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = run_ok(
        rustpython()
            .args(["--plugin", "symtrace"])
            .arg(root.join("demos/train.py")),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("stopped after 42 steps"), "{text}");
    assert!(text.contains("traced equals eager: True"), "{text}");
    // One graph with the step's tensor work and a break at loss.item() that resumes; the
    // resume function (formatting and print only) has no graph: its print is replayed.
    assert!(
        text.contains("captured: 1 graph, 14 ops; breaks: [('GB-CALL', 'step')]"),
        "{text}"
    );
    assert_eq!(
        text.matches("  loss ").count(),
        43,
        "every step prints, and explain's step once more:\n{text}"
    );
}

/// Imports in a function body (tests/python/imports.py): a module already in `sys.modules`
/// is read from there and guarded, so `import math` and `from math import sqrt` stay in the
/// graph; a replaced `builtins.__import__` is called as the program calls it, and a module
/// not loaded yet is imported as written.
#[test]
fn imports_of_loaded_modules_stay_in_the_graph() {
    let script = python_dir().join("imports.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace", script.to_str().unwrap()]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ALL OK 0"), "{stdout}");
    assert_eq!(stdout.matches("\nok ").count() + 1, 5, "{stdout}");
}

#[test]
fn next_of_an_iterator_made_outside_the_frame_breaks_there() {
    // A step counter (`itertools.count()` in a global, or in an attribute) and a caller's
    // list iterator: the frame ran as written; now `next()` runs as written between two
    // graphs and what follows captures with the item it gave.
    let out = run_script(
        "next-outside",
        "import itertools
import symtrace as st
ids = itertools.count(10, 5)
class M:
    def __init__(self):
        self.steps = itertools.count(1)
    def forward(self, x):
        y = x * 2.0
        k = next(self.steps)
        return (y * k).exp().sum()
def f(x):
    i = next(ids)
    return (x + i).sin().cos()
def g(x, it):
    a = next(it)
    return (x * a).tanh().exp()
x, m = st.ones(2), M()
for _ in range(3):
    print('f', f(x).tolist(), 'm', m.forward(x).item(), 'g', g(x, iter([3, 4])).tolist())
print('left', next(ids), next(m.steps))
for fn, args in ((f, (x,)), (m.forward, (x,)), (g, (x, iter([5])))):
    e = st.explain(fn, *args)
    print('counts', e.graph_count, [b['id'] for b in e.break_reasons], e.break_reasons[0]['reason'])
",
        &[],
    );
    // The values the plain interpreter prints (cos(sin(1 + 15)), ...).
    let third = "f [0.6699494442536529, 0.6699494442536529] m 806.8575869854702 \
                 g [2.704872438963137, 2.704872438963137]";
    assert!(out.contains(third), "{out}");
    assert!(out.contains("left 25 4"), "{out}");
    assert!(
        out.contains("counts 1 ['GB-CALL'] next() of a count made outside the frame")
            && out.contains("counts 2 ['GB-CALL'] next() of a count made outside the frame")
            && out
                .contains("counts 1 ['GB-CALL'] next() of a list_iterator made outside the frame"),
        "{out}"
    );
}
