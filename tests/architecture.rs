//! The code map's invariants (ARCHITECTURE.md), checked on the sources of `plugin/src`:
//! - the layers import downward only: `bytecode` → `tensor` → `graph` → `translate` → `hook` →
//!   `python`; a file of a layer names nothing of the layers above it (through `crate::` or
//!   through `super::` paths that climb out of its layer);
//! - log targets are written in one file, `log_targets.rs`: nothing else spells one;
//! - no file of `plugin/src` is over 700 lines.

use std::path::{Path, PathBuf};

/// Lowest first. Modules at the crate root that are not layers (`log_targets`) are leaves
/// that every layer may use.
const LAYERS: &[&str] = &["bytecode", "tensor", "graph", "translate", "hook", "python"];

const MAX_LINES: usize = 700;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin/src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file relative to `plugin/src` (`translate/breaks/mod.rs` is
/// `["translate", "breaks"]`).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_owned());
    }
    parts
}

fn layer_rank(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == name)
}

/// The top-level modules `text` (a file of module `path`) refers to, with the line: through
/// `crate::x`, or through `super::` chains that reach the crate root. Comments are skipped.
fn referenced_top_modules(path: &[String], text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let before = &rest[..i];
            // `$crate::` in a macro names the crate too; `rustpython_vm::crate` does not exist.
            if !before.ends_with(|c: char| c.is_alphanumeric() || c == '_') || before.ends_with('$')
            {
                found.push((n + 1, name));
            }
            rest = after;
        }
        let mut rest = code;
        while let Some(i) = rest.find("super::") {
            let mut after = &rest[i..];
            let mut ups = 0;
            while let Some(a) = after.strip_prefix("super::") {
                ups += 1;
                after = a;
            }
            // In `a/b.rs` (module [a, b]) `super` is `a`: the root is reached when the
            // module's depth is the number of `super`s.
            if ups == path.len() {
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push((n + 1, name));
            }
            rest = &rest[i + ups * "super::".len()..];
        }
    }
    found
}

/// Every import of a layer above `path`'s own, as `file:line names layer`.
fn layer_violations(rel: &Path, text: &str) -> Vec<String> {
    let path = module_path(rel);
    let Some(own) = path.first().and_then(|m| layer_rank(m)) else {
        return Vec::new();
    };
    referenced_top_modules(&path, text)
        .into_iter()
        .filter(|(_, name)| layer_rank(name).is_some_and(|r| r > own))
        .map(|(line, name)| {
            format!(
                "{}:{line}: the {} layer names {name}, a layer above it",
                rel.display(),
                LAYERS[own]
            )
        })
        .collect()
}

#[test]
fn the_checker_finds_an_upward_import() {
    let tensor = Path::new("tensor/registry.rs");
    assert_eq!(
        layer_violations(tensor, "use crate::translate::State;").len(),
        1
    );
    assert_eq!(
        layer_violations(tensor, "let x = crate::graph::recorder::with(f);").len(),
        1
    );
    assert_eq!(
        layer_violations(tensor, "use super::super::python::module;").len(),
        1
    );
    assert!(layer_violations(tensor, "use super::data::TensorData;").is_empty());
    let deep = Path::new("tensor/ops/reduce.rs");
    assert_eq!(
        layer_violations(deep, "use super::super::super::hook::X;").len(),
        1
    );
    assert!(
        layer_violations(
            tensor,
            "// crate::translate is above\nuse crate::tensor::X;"
        )
        .is_empty()
    );
    assert!(layer_violations(Path::new("python/mod.rs"), "use crate::translate::X;").is_empty());
}

#[test]
fn layers_import_downward_only() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(
        files.len() > 50,
        "plugin/src not found at {}",
        root.display()
    );
    let mut violations = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap();
        violations.extend(layer_violations(rel, &std::fs::read_to_string(f).unwrap()));
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn log_targets_are_written_in_one_file() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut spelled = Vec::new();
    for f in &files {
        if f.ends_with("log_targets.rs") {
            continue;
        }
        for (n, line) in std::fs::read_to_string(f).unwrap().lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("\"symtrace::") || code.contains("target: \"") {
                spelled.push(format!(
                    "{}:{}: {}",
                    f.strip_prefix(&root).unwrap().display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        spelled.is_empty(),
        "log targets spelled outside log_targets.rs:\n{}",
        spelled.join("\n")
    );
}

#[test]
fn no_source_file_is_over_the_limit() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let long: Vec<String> = files
        .iter()
        .map(|f| (f, std::fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, n)| *n > MAX_LINES)
        .map(|(f, n)| format!("{}: {n} lines", f.strip_prefix(&root).unwrap().display()))
        .collect();
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}
