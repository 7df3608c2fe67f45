//! The bytecode toolkit on the standard library the interpreter ships: every code object is
//! decoded, re-assembled and verified, and the result must have the same instructions (jump
//! encoding and EXTENDED_ARG aside), exception table, positions and layout.

mod common;

use std::path::PathBuf;

use common::with_vm;
use symtrace::bytecode::{corpus, differences, rebuild};

fn stdlib_dir(vm: &rustpython_vm::VirtualMachine) -> PathBuf {
    let scope = common::exec(vm, "import os\nLIB = os.path.dirname(os.__file__)\n", "<find-lib>");
    let lib = scope.globals.get_item("LIB", vm).unwrap();
    PathBuf::from(lib.str(vm).unwrap().to_string_lossy().into_owned())
}

#[test]
fn every_stdlib_code_object_round_trips() {
    with_vm(|vm| {
        let lib = stdlib_dir(vm);
        let corpus = corpus::compile_tree(&lib, vm).expect("cannot read the standard library");
        assert!(corpus.files > 500, "only {} files under {}", corpus.files, lib.display());
        assert!(corpus.codes.len() > 20_000, "only {} code objects", corpus.codes.len());
        let mut failures = Vec::new();
        for code in &corpus.codes {
            let what = format!("{} ({}:{})", code.code.qualname.as_str(), code.source_path().as_str(),
                code.code.first_line_number.map_or(0, |l| l.get()));
            match rebuild(code, vm) {
                Ok(rebuilt) => {
                    let diffs = differences(code, &rebuilt);
                    if !diffs.is_empty() {
                        failures.push(format!("{what}: {}", diffs.join("; ")));
                    }
                }
                Err(e) => failures.push(format!("{what}: {e}")),
            }
        }
        println!(
            "round-trip: {} code objects from {} files checked, {} differ; {} files not compiled",
            corpus.codes.len(),
            corpus.files,
            failures.len(),
            corpus.not_compiled.len()
        );
        for (path, e) in &corpus.not_compiled {
            println!("  not compiled: {}: {e}", path.display());
        }
        assert!(failures.is_empty(), "{} of {} code objects differ:\n{}", failures.len(), corpus.codes.len(),
            failures.iter().take(30).cloned().collect::<Vec<_>>().join("\n"));
    });
}

