//! `rustpython --plugin NAME [--plugin-opt KEY=VALUE]...`: upstream's options still work, and
//! every mistake in the plugin options is a clear message with exit status 2.

mod common;

use common::*;

fn stderr_of(args: &[&str]) -> (i32, String, String) {
    let out = rustpython().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn unknown_plugin_lists_the_available_ones() {
    let (code, _, err) = stderr_of(&["--plugin", "nope", "-c", "pass"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown plugin \"nope\""), "{err}");
    assert!(err.contains("symtrace") && err.contains("frames"), "{err}");
}

#[test]
fn malformed_unknown_and_orphan_options_are_errors() {
    let (code, _, err) = stderr_of(&[
        "--plugin",
        "frames",
        "--plugin-opt",
        "novalue",
        "-c",
        "pass",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--plugin-opt takes KEY=VALUE, got \"novalue\""),
        "{err}"
    );

    let (code, _, err) = stderr_of(&[
        "--plugin",
        "frames",
        "--plugin-opt",
        "colour=red",
        "-c",
        "pass",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("has no option \"colour\"; its options: out"),
        "{err}"
    );

    let (code, _, err) = stderr_of(&["--plugin-opt", "out=x", "-c", "pass"]);
    assert_eq!(code, 2);
    assert!(err.contains("--plugin-opt needs --plugin NAME"), "{err}");

    let (code, _, err) = stderr_of(&["--plugin", "frames", "--plugin-opt", "out=", "-c", "pass"]);
    assert_eq!(code, 2);
    assert!(err.contains("option out needs a file path"), "{err}");
}

#[test]
fn upstream_options_still_work_with_a_plugin() {
    for plugin in [&[][..], &["--plugin", "symtrace"][..]] {
        let mut cmd = rustpython();
        cmd.args(plugin).args([
            "-X",
            "dev",
            "-c",
            "import sys; print(sys.flags.dev_mode, sys.argv[1:])",
            "a",
        ]);
        let out = run_ok(&mut cmd);
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "True ['a']");

        let mut cmd = rustpython();
        cmd.args(plugin)
            .args(["-m", "json.tool"])
            .current_dir(python_dir());
        use std::io::Write;
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"{\"b\": [1, 2]}")
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"b\": ["));

        // The REPL, reading from a pipe.
        let mut cmd = rustpython();
        cmd.args(plugin)
            .arg("-q")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"def f(x):\n    return x * 7\n\nprint(f(6))\n")
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("42"),
            "{:?}",
            out
        );
    }
}

#[test]
fn symtrace_plugin_runs_a_program_unchanged() {
    let src = "import functools\n@functools.lru_cache\ndef fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\nprint(fib(60))\n";
    let plain = run_ok(rustpython().args(["-c", src]));
    let hooked = run_ok(rustpython().args(["--plugin", "symtrace", "-c", src]));
    assert_eq!(plain.stdout, hooked.stdout);
    assert_eq!(
        String::from_utf8_lossy(&hooked.stdout).trim(),
        "1548008755920"
    );
}
