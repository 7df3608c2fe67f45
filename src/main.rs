//! The `rustpython` binary of symtrace: upstream's command line, plus `--plugin NAME` with the
//! plugins of the symtrace crate, and the `symtrace` Python module (tensors) importable always.

use rustpython::{InterpreterBuilder, InterpreterBuilderExt};

fn main() -> std::process::ExitCode {
    let builder = symtrace::with_python_module(InterpreterBuilder::new().init_stdlib());
    rustpython::run_with_plugins(builder, symtrace::registry())
}
