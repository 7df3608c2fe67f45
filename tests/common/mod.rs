//! Helpers shared by the integration tests: the built `rustpython` binary, an embedded
//! interpreter with the standard library, and a log collector.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use rustpython::InterpreterBuilderExt;
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine, scope::Scope};

/// The `rustpython` binary cargo built for these tests.
pub fn rustpython() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rustpython"))
}

pub fn python_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("python")
}

pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("cannot start rustpython");
    assert!(
        out.status.success(),
        "rustpython failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// What `script` prints, plain and under the plugin, is the contents of `expected` (both
/// in `dir`): what PyTorch printed for the same script, run once with `torch` as its argument.
pub fn prints_what_pytorch_printed(dir: &std::path::Path, script: &str, expected: &str) {
    prints_the_expected_output(dir, script, expected);
}

/// What `script` prints, plain and under the plugin, is the contents of `expected` (both
/// in `dir`).
pub fn prints_the_expected_output(dir: &std::path::Path, script: &str, expected: &str) {
    let expected = std::fs::read_to_string(dir.join(expected)).unwrap();
    for plugin in [&[][..], &["--plugin", "symtrace"][..]] {
        let out = run_ok(rustpython().args(plugin).arg(dir.join(script)));
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{plugin:?}");
    }
}

/// Run `rustpython ARGS` with `env` set; it must succeed: its stdout and stderr.
pub fn output_of(args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = rustpython();
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run_ok(&mut cmd);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Run `f` in a fresh interpreter with the standard library and the `symtrace` module. It
/// installs no signal handlers: to learn a signal's handler, the `signal` module sets it to
/// "ignore" for a moment, and a child process that another test thread waits for and that
/// exits in that moment while SIGCHLD is ignored is reaped by the kernel (the wait fails with
/// "No child processes").
pub fn with_vm<R>(f: impl FnOnce(&VirtualMachine) -> R) -> R {
    let mut settings = rustpython_vm::vm::Settings::default();
    settings.install_signal_handlers = false;
    let interp = symtrace::with_python_module(
        rustpython::InterpreterBuilder::new()
            .settings(settings)
            .init_stdlib(),
    )
    .interpreter();
    interp.enter(f)
}

/// Execute `source` as a module named `file` in a new scope; the error is printed.
pub fn exec(vm: &VirtualMachine, source: &str, file: &str) -> Scope {
    let scope = vm.new_scope_with_builtins();
    exec_in(vm, &scope, source, file).unwrap_or_else(|e| panic!("{}", describe(vm, &e)));
    scope
}

pub fn exec_in(vm: &VirtualMachine, scope: &Scope, source: &str, file: &str) -> PyResult<()> {
    vm.run_string(scope.clone(), source, file).map(drop)
}

/// Evaluate an expression in `scope`.
pub fn eval(vm: &VirtualMachine, scope: &Scope, expr: &str) -> PyResult<PyObjectRef> {
    exec_in(vm, scope, &format!("__test_result__ = ({expr})"), "<test>")?;
    scope.globals.get_item("__test_result__", vm)
}

/// `repr()` of an expression's value, or the exception it raised.
pub fn eval_repr(vm: &VirtualMachine, scope: &Scope, expr: &str) -> String {
    match eval(vm, scope, expr) {
        Ok(v) => v
            .repr(vm)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        Err(e) => describe(vm, &e),
    }
}

pub fn describe(vm: &VirtualMachine, exc: &rustpython_vm::builtins::PyBaseExceptionRef) -> String {
    let mut s = String::new();
    vm.write_exception(&mut s, exc).unwrap();
    s
}

/// Collects every log record of the test process, so that tests can check what was logged.
struct Collector;

static RECORDS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

impl log::Log for Collector {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        RECORDS
            .lock()
            .unwrap()
            .push((record.target().to_owned(), record.args().to_string()));
    }
    fn flush(&self) {}
}

/// Start collecting log records (idempotent).
pub fn collect_logs() {
    static INIT: OnceLock<()> = OnceLock::new();
    INIT.get_or_init(|| {
        log::set_boxed_logger(Box::new(Collector)).expect("logger already set");
        log::set_max_level(log::LevelFilter::Info);
    });
}

/// Log messages of `target` that contain `needle`.
pub fn logged(target: &str, needle: &str) -> Vec<String> {
    RECORDS
        .lock()
        .unwrap()
        .iter()
        .filter(|(t, m)| t == target && m.contains(needle))
        .map(|(_, m)| m.clone())
        .collect()
}

/// Each of `cases` was checked by a case script and passed: a line `ok <case>...`.
pub fn assert_cases_ok(stdout: &str, cases: &[&str]) {
    for case in cases {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("ok ") && l.contains(case)),
            "{case} not checked:\n{stdout}"
        );
    }
}

/// `tests/python/{script}`, a case script, run under `--plugin symtrace` with graph breaks
/// logged: it printed `ALL OK 0` and an `ok` line for each of `cases`. Its stdout and stderr.
pub fn case_script_passes(script: &str, cases: &[&str]) -> (String, String) {
    let path = python_dir().join(script);
    let out = run_ok(
        rustpython()
            .args(["--plugin", "symtrace", path.to_str().unwrap()])
            .env("RUST_LOG", "symtrace::graph_breaks=info"),
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    println!("{stdout}");
    assert!(stdout.contains("ALL OK 0"), "{stdout}");
    assert_cases_ok(&stdout, cases);
    (stdout, stderr)
}
