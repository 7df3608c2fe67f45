//! Graph breaks with resume functions, under `--plugin symtrace`: each kind of break
//! (tests/python/graph_breaks.py) gives eager's result, the expected graphs and breaks in
//! `explain()`, and translates nothing new on a second call; the breaking instruction runs
//! exactly once per call; the breaks are logged on `symtrace::graph_breaks` with their id and
//! hint.

mod common;

use common::*;

#[test]
fn every_kind_of_break_keeps_its_graphs_and_resumes() {
    let script = python_dir().join("graph_breaks.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace", script.to_str().unwrap()]).env("RUST_LOG", "symtrace::graph_breaks=info"));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    println!("{stdout}");
    assert!(stdout.contains("ALL OK 0"), "{stdout}");
    for case in ["a call to print", "an unsupported builtin", "an opaque object", "a branch on t.item()", "the truth of a tensor", "an unsupported opcode", "a nested inlined call", "two breaks in a row"] {
        assert!(stdout.lines().any(|l| l.starts_with("ok ") && l.contains(case)), "{case} not checked:\n{stdout}");
    }
    // Eager, explain, and two traced calls: the opaque object ran four times, not more.
    assert!(stdout.contains("opaque calls: 4"), "{stdout}");
    assert_eq!(stdout.matches("print_break sees").count(), 4, "{stdout}");
    assert!(stderr.contains("graph break [GB-CALL] at") && stderr.contains("graph_breaks.py:29: a call to builtin print() (not simulated); resumes after it (hint: "), "{stderr}");
    assert!(stderr.contains("graph break [GB-BRANCH]") && stderr.contains("graph break [GB-OPCODE]"), "{stderr}");
}

#[test]
fn strict_mode_refuses_to_break() {
    let dir = std::env::temp_dir().join(format!("symtrace-strict-break-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("strict_break.py");
    std::fs::write(&script, "import symtrace as st\ndef f(x):\n    y = x * 2.0\n    print('between')\n    return y + 1.0\nf(st.ones(2))\n").unwrap();
    let out = rustpython().args(["--plugin", "symtrace", "--plugin-opt", "strict=1", script.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "strict mode ran through the break");
    assert!(stderr.contains("symtrace: f cannot be captured whole: a call to builtin print() (not simulated)"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_training_demo_breaks_at_item_and_equals_eager() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(root.join("demos/train.py")));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("stopped after 42 steps"), "{text}");
    assert!(text.contains("traced equals eager: True"), "{text}");
    // One graph with the step's tensor work, a break at loss.item() that resumes, and the
    // resume function (formatting and print only) running as written.
    assert!(text.contains("captured: 1 graph, 14 ops; breaks: [('GB-CALL', 'step'), ('GB-FRAME', 'resume_in_step_at_22')]"), "{text}");
    assert_eq!(text.matches("  loss ").count(), 43, "every step prints, and explain's step once more:\n{text}");
}
