//! The `frames` recorder sees every Python frame exactly once, in order: its record of a
//! workload equals the 'call' events of `sys.setprofile` (an independent oracle inside the VM)
//! for the same workload, run without the plugin.

mod common;

use common::*;

/// The lines between the `begin_marker` and `end_marker` entries, both included.
fn between_markers(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let begin = lines
        .iter()
        .position(|l| l.contains("\tbegin_marker\t"))
        .expect("no begin");
    let end = lines
        .iter()
        .position(|l| l.contains("\tend_marker\t"))
        .expect("no end");
    lines[begin..=end].iter().map(|l| l.to_string()).collect()
}

fn record_and_oracle() -> (Vec<String>, Vec<String>) {
    let dir = tempdir();
    let rec = dir.join("record.txt");
    let orc = dir.join("oracle.txt");
    run_ok(
        rustpython()
            .current_dir(python_dir())
            .args(["--plugin", "frames", "--plugin-opt"])
            .arg(format!("out={}", rec.display()))
            .arg("frame_workload.py"),
    );
    run_ok(
        rustpython()
            .current_dir(python_dir())
            .arg("frame_workload.py")
            .arg("--oracle")
            .arg(&orc),
    );
    let rec = between_markers(&std::fs::read_to_string(rec).unwrap());
    let orc = between_markers(&std::fs::read_to_string(orc).unwrap());
    (rec, orc)
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("symtrace-frames-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn count(lines: &[String], kind: &str, qualname: &str) -> usize {
    let prefix = format!("{kind}\t{qualname}\t");
    lines.iter().filter(|l| l.starts_with(&prefix)).count()
}

#[test]
fn recorder_equals_setprofile_oracle() {
    let (rec, orc) = record_and_oracle();
    if rec != orc {
        let first = rec
            .iter()
            .zip(&orc)
            .position(|(a, b)| a != b)
            .unwrap_or(rec.len().min(orc.len()));
        panic!(
            "recorder and oracle differ at entry {first} (recorder {} entries, oracle {}):\n  recorder: {:?}\n  oracle:   {:?}",
            rec.len(),
            orc.len(),
            rec.get(first),
            orc.get(first)
        );
    }
    println!("recorder and oracle agree on {} frame entries", rec.len());

    // The workload reaches every way a frame can start; each is seen, exactly as often as it runs.
    assert_eq!(
        count(&rec, "call", "fib"),
        25,
        "recursion: fib(6) makes 25 calls"
    );
    assert_eq!(
        count(&rec, "call", "hot"),
        10000 + 2 + 1 + 2 + 1,
        "warm-up, map, eval, comp, plain"
    );
    assert_eq!(
        count(&rec, "call", "Point.norm1"),
        2 + 2000,
        "methods, also once specialized"
    );
    assert_eq!(count(&rec, "call", "Point.doubled"), 1, "property");
    assert_eq!(
        count(&rec, "call", "Point.__init__"),
        4,
        "__init__ via the class call"
    );
    assert_eq!(count(&rec, "call", "kw_only"), 2);
    assert_eq!(count(&rec, "call", "star_args"), 2);
    assert_eq!(count(&rec, "call", "make_adder.<locals>.add"), 1, "closure");
    assert_eq!(count(&rec, "call", "deco.<locals>.wrapper"), 1, "decorator");
    assert_eq!(count(&rec, "call", "decorated"), 1);
    assert_eq!(
        count(&rec, "call", "workload.<locals>.<lambda>"),
        4,
        "lambdas, sorted(key=)"
    );
    assert_eq!(
        count(&rec, "call", "workload.<locals>.Local"),
        1,
        "class body"
    );
    assert_eq!(count(&rec, "call", "from_exec"), 1, "exec");
    assert!(
        count(&rec, "call", "<module>") >= 3,
        "exec, eval and the imported module's body"
    );
    assert_eq!(
        count(&rec, "gen", "countdown"),
        3,
        "three generator frames, once each"
    );
    assert_eq!(count(&rec, "gen", "delegating"), 1);
    assert!(
        rec.iter()
            .any(|l| l.contains("json_never_imported_before_probe.py:1")),
        "import"
    );
}

#[test]
fn recorder_logs_through_log_target() {
    let out = run_ok(rustpython().env("RUST_LOG", "symtrace::frames=info").args([
        "--plugin",
        "frames",
        "-c",
        "def probe_fn():\n    pass\nprobe_fn()",
    ]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("call\tprobe_fn\t<string>:1"), "stderr: {err}");
}
