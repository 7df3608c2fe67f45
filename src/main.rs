//! The `rustpython` binary of symtrace: upstream's command line, plus `--plugin NAME` with the
//! plugins of the symtrace crate.

use rustpython::{InterpreterBuilder, InterpreterBuilderExt};

fn main() -> std::process::ExitCode {
    rustpython::run_with_plugins(InterpreterBuilder::new().init_stdlib(), symtrace::registry())
}
