//! Recompiles and what they cost (issue 21): the stances of `set_stance`, the recompile limit
//! said once, recompile reasons that name the guard with the value it saw.

mod common;

use common::{python_dir, run_ok, rustpython};

fn run(script: &str, env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = rustpython();
    cmd.arg(python_dir().join("dynamic").join(script));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run_ok(&mut cmd);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn each_stance_does_what_torch_s_does() {
    let (out, _) = run("stances.py", &[]);
    println!("{out}");
    assert!(out.contains("STANCES OK"), "{out}");
    // The error names the entry, its guard and the value the call gave.
    assert!(
        out.contains("would translate again (stance fail_on_recompile): entry 1: guard failed: L['n'] == 2 (saw 3)"),
        "{out}"
    );
}

#[test]
fn the_recompile_limit_is_said_once_and_entries_keep_serving() {
    let (out, err) = run(
        "recompile_limit.py",
        &[("RUST_LOG", "symtrace::recompiles=info")],
    );
    println!("{out}\n{err}");
    assert!(out.contains("LIMIT OK"), "{out}");
    assert_eq!(
        err.matches("recompile limit (8) reached").count(),
        1,
        "{err}"
    );
    // Each recompile lists every entry tried, each with the value it saw.
    assert!(
        err.contains("recompiling (entry 3 of 8): entry 1: guard failed: L['mode'] == \"\" (saw 'mm'); entry 2: guard failed: L['mode'] == \"m\" (saw 'mm')"),
        "{err}"
    );
}
