//! The opcode-family ladder: each family's cases (tests/ladder/FAMILY.py) run eagerly and
//! traced under `--plugin symtrace --plugin-opt strict=1 --plugin-opt trace_all=1`; results
//! must be equal, each case's frame translates whole with the expected number of graphs, and
//! a second call hits the cache (tests/ladder/runner.py checks each case).

mod common;

fn family(name: &str) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ladder");
    let out = common::rustpython()
        .args([
            "--plugin",
            "symtrace",
            "--plugin-opt",
            "strict=1",
            "--plugin-opt",
            "trace_all=1",
        ])
        .arg(dir.join(format!("{name}.py")))
        .output()
        .expect("rustpython runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "family {name} failed:\n{stdout}\n{stderr}"
    );
    let summary = stdout.lines().last().unwrap_or_default().to_owned();
    // "N of M cases ok": every case, and at least one.
    let numbers: Vec<usize> = summary
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(
        matches!(numbers.as_slice(), [ok, total] if ok == total && *total > 0),
        "family {name}: {summary}"
    );
    println!("{name}: {summary}");
}

#[test]
fn basic_ops() {
    family("basic_ops");
}
#[test]
fn containers() {
    family("containers");
}
#[test]
fn unpacking() {
    family("unpacking");
}
#[test]
fn stack_ops() {
    family("stack_ops");
}
#[test]
fn fstrings() {
    family("fstrings");
}
#[test]
fn template_strings() {
    family("tstrings");
}
#[test]
fn pattern_matching() {
    family("patterns");
}
#[test]
fn jumps() {
    family("jumps");
}
#[test]
fn for_loops() {
    family("for_loops");
}
#[test]
fn calls_with_every_argument_form() {
    family("calls");
}
#[test]
fn make_function_and_closures() {
    family("closures");
}
#[test]
fn operators() {
    family("operators");
}
#[test]
fn slices() {
    family("slices");
}
#[test]
fn globals() {
    family("globals_");
}
#[test]
fn builtins() {
    family("builtins_");
}
#[test]
fn tensor_methods() {
    family("tensor_methods");
}
#[test]
fn nested_user_calls() {
    family("nested_calls");
}
#[test]
fn returns_of_nested_structures() {
    family("returns");
}
#[test]
fn user_classes_and_the_object_model() {
    family("objects");
}
#[test]
fn builtins_and_the_standard_library() {
    family("stdlib");
}
#[test]
fn tensor_indexing_and_constants_in_graphs() {
    family("indexing");
}
