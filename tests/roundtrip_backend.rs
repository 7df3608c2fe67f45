//! `--plugin symtrace --plugin-opt backend=roundtrip`: every frame runs re-assembled code, and
//! nothing a program can see changes: output, tracebacks (files, lines, functions, offsets,
//! positions), exit status (the transparency harness compares more scripts and CPython's tests). Each code object is rebuilt once; `dump=DIR` and
//! `RUST_LOG=symtrace::bytecode=debug` show the original and the replacement side by side.

mod common;

use std::path::Path;
use std::process::Output;

use common::*;

const ROUNDTRIP: &[&str] = &["--plugin", "symtrace", "--plugin-opt", "backend=roundtrip"];

fn run(args: &[&str], script: &Path) -> Output {
    rustpython()
        .args(args)
        .arg(script)
        .env_remove("RUST_LOG")
        .output()
        .expect("cannot start rustpython")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// stdout, stderr and the exit status of `script`, plain and under roundtrip, are identical.
fn assert_same_run(script: &Path) -> String {
    let plain = run(&[], script);
    let hooked = run(ROUNDTRIP, script);
    assert_eq!(
        text(&hooked.stdout),
        text(&plain.stdout),
        "stdout of {}",
        script.display()
    );
    assert_eq!(
        text(&hooked.stderr),
        text(&plain.stderr),
        "stderr of {}",
        script.display()
    );
    assert_eq!(
        hooked.status.code(),
        plain.status.code(),
        "exit status of {}",
        script.display()
    );
    text(&plain.stdout)
}

#[test]
fn tracebacks_are_identical_under_roundtrip() {
    let out = assert_same_run(&python_dir().join("traceback_workload.py"));
    // Ten exceptions, each with its frames' file:line, qualname, lasti and positions.
    assert_eq!(out.matches("== ").count(), 10, "{out}");
    assert!(out.contains("Account.withdraw lasti="), "{out}");
    assert!(out.contains("multi_line_call lasti="), "{out}");
    assert!(out.ends_with("done\n"));
}

#[test]
fn the_replacement_actually_runs() {
    // Under roundtrip a frame's code is the replacement, not the function's own code object:
    // proof that the comparisons above ran re-assembled code.
    let probe = std::env::temp_dir().join(format!("symtrace-rt-probe-{}.py", std::process::id()));
    std::fs::write(
        &probe,
        "import sys\ndef f():\n    return sys._getframe().f_code is f.__code__\nprint(f())\n",
    )
    .unwrap();
    assert_eq!(text(&run(&[], &probe).stdout), "True\n");
    assert_eq!(text(&run(ROUNDTRIP, &probe).stdout), "False\n");
    std::fs::remove_file(&probe).ok();
}

#[test]
fn exit_status_is_kept_under_roundtrip() {
    let failing = std::env::temp_dir().join(format!("symtrace-rt-exit-{}.py", std::process::id()));
    std::fs::write(
        &failing,
        "import sys\ndef f(n):\n    if n > 2:\n        sys.exit(n)\n    return f(n + 1)\nf(0)\n",
    )
    .unwrap();
    assert_eq!(run(ROUNDTRIP, &failing).status.code(), Some(3));
    std::fs::remove_file(&failing).ok();
}

#[test]
fn each_code_object_is_rebuilt_once_and_dumped_side_by_side() {
    let dir = std::env::temp_dir().join(format!("symtrace-rt-dump-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let script = dir.with_extension("py");
    std::fs::write(
        &script,
        "def hot(x):\n    return x * 2 + 1\n\ndef guarded(x):\n    try:\n        return 10 // x\n    except ZeroDivisionError:\n        return -1\n\n\
         total = 0\nfor i in range(1000):\n    total += hot(i) + guarded(i % 3)\nprint(total)\n",
    )
    .unwrap();
    let out = rustpython()
        .args(ROUNDTRIP)
        .args(["--plugin-opt", &format!("dump={}", dir.display())])
        .arg(&script)
        .env("RUST_LOG", "symtrace::bytecode=debug")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "1004661\n");
    let log = text(&out.stderr);
    // 1000 calls of hot, one rebuild.
    assert_eq!(
        log.lines()
            .filter(|l| l.contains("hot (") && l.contains("backend=roundtrip"))
            .count(),
        1,
        "{log}"
    );

    let stem = script.file_stem().unwrap().to_string_lossy().into_owned();
    let hot =
        std::fs::read_to_string(dir.join(format!("{stem}.hot.1.dis"))).expect("hot was dumped");
    assert!(hot.contains("| replacement"), "{hot}");
    assert!(
        hot.lines()
            .any(|l| l.contains("BINARY_OP") && l.matches("BINARY_OP").count() == 2),
        "{hot}"
    );
    let guarded = std::fs::read_to_string(dir.join(format!("{stem}.guarded.4.dis")))
        .expect("guarded was dumped");
    assert!(guarded.matches("ExceptionTable:").count() == 2, "{guarded}");
    // One file per code object: of the script's, the module, hot and guarded (the rest are
    // the standard library's frames the run went through: imports, threading at exit).
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut ours: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with(&format!("{stem}.")))
        .collect();
    ours.sort();
    assert_eq!(
        ours,
        [
            &format!("{stem}._module_.1.dis"),
            &format!("{stem}.guarded.4.dis"),
            &format!("{stem}.hot.1.dis")
        ]
    );
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_file(&script).ok();
}

#[test]
fn unknown_backend_and_empty_dump_are_clear_errors() {
    let out = rustpython()
        .args([
            "--plugin",
            "symtrace",
            "--plugin-opt",
            "backend=fast",
            "-c",
            "pass",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unknown backend \"fast\" (known: translate, none, roundtrip)"),
        "{}",
        text(&out.stderr)
    );
    let out = rustpython()
        .args([
            "--plugin",
            "symtrace",
            "--plugin-opt",
            "dump=",
            "-c",
            "pass",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("option dump needs a directory"),
        "{}",
        text(&out.stderr)
    );
}
