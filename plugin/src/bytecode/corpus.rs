//! A corpus of code objects: every code object reachable from the Python files under a
//! directory, compiled by the VM's own compiler (the standard library, for the round-trip
//! check and its benchmark).

use std::path::{Path, PathBuf};

use rustpython_vm::builtins::PyCode;
use rustpython_vm::compiler::Mode;
use rustpython_vm::{PyRef, VirtualMachine};

/// Compiled code objects, nested ones included, and the files the compiler refused.
pub struct Corpus {
    pub files: usize,
    pub codes: Vec<PyRef<PyCode>>,
    pub not_compiled: Vec<(PathBuf, String)>,
}

/// Compile every `*.py` below `dir` (in a stable order) and collect its code objects.
pub fn compile_tree(dir: &Path, vm: &VirtualMachine) -> std::io::Result<Corpus> {
    let mut paths = Vec::new();
    collect_py_files(dir, &mut paths)?;
    paths.sort();
    let mut corpus = Corpus {
        files: paths.len(),
        codes: Vec::new(),
        not_compiled: Vec::new(),
    };
    for path in paths {
        let Ok(source) = std::fs::read_to_string(&path) else {
            corpus.not_compiled.push((path, "not UTF-8".into()));
            continue;
        };
        match vm.compile(&source, Mode::Exec, path.to_string_lossy().into_owned()) {
            Ok(code) => nested_codes(code, &mut corpus.codes),
            Err(e) => corpus.not_compiled.push((path, e.to_string())),
        }
    }
    Ok(corpus)
}

/// `code` and every code object among its constants, depth first.
pub fn nested_codes(code: PyRef<PyCode>, out: &mut Vec<PyRef<PyCode>>) {
    let nested: Vec<PyRef<PyCode>> = code
        .code
        .constants
        .iter()
        .filter_map(|c| {
            let obj: rustpython_vm::PyObjectRef = c.clone().into();
            obj.downcast::<PyCode>().ok()
        })
        .collect();
    out.push(code);
    for n in nested {
        nested_codes(n, out);
    }
}

fn collect_py_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_py_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
    Ok(())
}
