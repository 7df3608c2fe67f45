//! The bytecode toolkit on the standard library the interpreter ships: every code object is
//! decoded, re-assembled and verified, and the result must have the same instructions (jump
//! encoding and EXTENDED_ARG aside), exception table, positions and layout.

mod common;

use std::path::PathBuf;

use common::with_vm;
use symtrace::bytecode::{corpus, differences, rebuild};

fn stdlib_dir(vm: &rustpython_vm::VirtualMachine) -> PathBuf {
    let scope = common::exec(
        vm,
        "import os\nLIB = os.path.dirname(os.__file__)\n",
        "<find-lib>",
    );
    let lib = scope.globals.get_item("LIB", vm).unwrap();
    PathBuf::from(lib.str(vm).unwrap().to_string_lossy().into_owned())
}

#[test]
fn every_stdlib_code_object_round_trips() {
    with_vm(|vm| {
        let lib = stdlib_dir(vm);
        let corpus = corpus::compile_tree(&lib, vm).expect("cannot read the standard library");
        assert!(
            corpus.files > 500,
            "only {} files under {}",
            corpus.files,
            lib.display()
        );
        assert!(
            corpus.codes.len() > 20_000,
            "only {} code objects",
            corpus.codes.len()
        );
        let mut failures = Vec::new();
        let mut identical_bytes = 0;
        for code in &corpus.codes {
            let what = format!(
                "{} ({}:{})",
                code.code.qualname.as_str(),
                code.source_path().as_str(),
                code.code.first_line_number.map_or(0, |l| l.get())
            );
            match rebuild(code, vm) {
                Ok(rebuilt) => {
                    let (a, b) = (&code.code, &rebuilt.code);
                    if a.instructions.original_bytes() == b.instructions.original_bytes()
                        && a.linetable == b.linetable
                        && a.exceptiontable == b.exceptiontable
                        && a.locations == b.locations
                    {
                        identical_bytes += 1;
                    }
                    let diffs = differences(code, &rebuilt);
                    if !diffs.is_empty() {
                        failures.push(format!("{what}: {}", diffs.join("; ")));
                    }
                }
                Err(e) => failures.push(format!("{what}: {e}")),
            }
        }
        println!(
            "round-trip: {} code objects from {} files checked, {} differ, {} byte for byte identical \
             (co_code, co_linetable, co_exceptiontable, locations); {} files not compiled",
            corpus.codes.len(),
            corpus.files,
            failures.len(),
            identical_bytes,
            corpus.not_compiled.len()
        );
        for (path, e) in &corpus.not_compiled {
            println!("  not compiled: {}: {e}", path.display());
        }
        assert_eq!(
            identical_bytes,
            corpus.codes.len(),
            "re-assembled code differs in its bytes"
        );
        assert!(
            failures.is_empty(),
            "{} of {} code objects differ:\n{}",
            failures.len(),
            corpus.codes.len(),
            failures
                .iter()
                .take(30)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    });
}

#[test]
fn positions_are_what_co_positions_reports() {
    use symtrace::bytecode::linetable::decode_positions;
    with_vm(|vm| {
        let lib = stdlib_dir(vm);
        let corpus = corpus::compile_tree(&lib.join("json"), vm).unwrap();
        assert!(corpus.codes.len() > 40);
        let scope = vm.new_scope_with_builtins();
        for code in &corpus.codes {
            scope
                .globals
                .set_item("c", code.clone().into(), vm)
                .unwrap();
            // Position's Display: line:col-end_line:end_col, "-" for none.
            let python = common::eval(
                vm,
                &scope,
                "'|'.join('{}:{}-{}:{}'.format(*('-' if v is None else v for v in (l, c, el, ec))) \
                 for l, el, c, ec in c.co_positions())",
            )
            .unwrap()
            .str(vm)
            .unwrap()
            .to_string_lossy()
            .into_owned();
            let first = code.code.first_line_number.map_or(0, |l| l.get() as i32);
            let ours = decode_positions(&code.code.linetable, first, code.code.instructions.len())
                .unwrap();
            let ours = ours
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("|");
            assert_eq!(ours, python, "{}", code.code.qualname.as_str());
        }
    });
}
