//! The fork stays small and reviewable: every file under `vendor/` that differs from the crate
//! as published on crates.io is listed in `vendor/README.md`, in its crate's section, and each
//! hunk of the difference carries a `symtrace fork` marker (a comment that says why). The
//! pristine crates are those cargo's registry holds; when it does not hold them yet, they are
//! fetched (`cargo fetch` of a manifest that names them), as `benches/hook_overhead.sh` does.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The forked crates and the upstream versions they were copied from.
const CRATES: &[(&str, &str)] = &[
    ("rustpython-vm", "0.6.0"),
    ("rustpython", "0.6.0"),
    ("rustpython-codegen", "0.6.0"),
    ("rustpython-ruff_python_ast", "0.16.5"),
    ("rustpython-ruff_python_parser", "0.16.5"),
    ("rustpython-ruff_python_trivia", "0.16.5"),
    ("rustpython-ruff_source_file", "0.16.5"),
    ("rustpython-ruff_text_size", "0.16.5"),
];

/// What the published crates hold that is not vendored (`vendor/README.md` says why).
const NOT_VENDORED: &[&str] = &[
    "tests",
    "resources",
    "Cargo.lock",
    "Cargo.toml.orig",
    ".cargo_vcs_info.json",
    ".cargo-ok",
];

const MARKER: &str = "symtrace fork";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"))
}

/// The registry's unpacked copy of `name-version`, if it holds one.
fn in_registry(name: &str, version: &str) -> Option<PathBuf> {
    let src = cargo_home().join("registry").join("src");
    std::fs::read_dir(src)
        .ok()?
        .flatten()
        .map(|index| index.path().join(format!("{name}-{version}")))
        .find(|p| p.join("Cargo.toml").exists())
}

/// Make cargo download and unpack the pristine crates into its registry.
fn fetch_pristine() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pristine-fetch");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let mut manifest = String::from(
        "[package]\nname = \"pristine-fetch\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\n",
    );
    for (name, version) in CRATES {
        manifest.push_str(&format!(
            "{name} = {{ version = \"={version}\", default-features = false }}\n"
        ));
    }
    manifest.push_str("\n[workspace]\n");
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args(["fetch", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .status()
        .expect("cannot run cargo fetch");
    assert!(
        status.success(),
        "cargo fetch of the pristine crates failed"
    );
}

fn pristine(name: &str, version: &str) -> PathBuf {
    if let Some(p) = in_registry(name, version) {
        return p;
    }
    fetch_pristine();
    in_registry(name, version)
        .unwrap_or_else(|| panic!("{name} {version} is not in cargo's registry after cargo fetch"))
}

/// Every file under `dir`, relative to it, leaving out what is not vendored.
fn files(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if NOT_VENDORED.contains(&rel.as_str()) {
                continue;
            }
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The hunks of a unified diff (`diff -U3`) with no marker among their lines, each as its
/// `@@` header.
fn unmarked_hunks(diff: &str) -> Vec<String> {
    let mut unmarked = Vec::new();
    let mut header: Option<&str> = None;
    let mut marked = false;
    for line in diff.lines() {
        if line.starts_with("@@") {
            if let Some(h) = header.filter(|_| !marked) {
                unmarked.push(h.to_owned());
            }
            header = Some(line);
            marked = false;
        } else if header.is_some() && line.contains(MARKER) {
            marked = true;
        }
    }
    if let Some(h) = header.filter(|_| !marked) {
        unmarked.push(h.to_owned());
    }
    unmarked
}

/// The part of `vendor/README.md` about `name`: from its `### name` heading to the next one.
fn readme_section<'a>(readme: &'a str, name: &str) -> &'a str {
    let heading = format!("### {name} ");
    let Some(start) = readme.find(&heading) else {
        return "";
    };
    let rest = &readme[start + heading.len()..];
    &rest[..rest.find("\n### ").unwrap_or(rest.len())]
}

#[test]
fn a_hunk_without_a_marker_is_found() {
    let diff = "--- a\n+++ b\n@@ -1,3 +1,4 @@\n a\n+b\n c\n@@ -10,3 +11,4 @@\n x\n+// symtrace fork: why\n+y\n";
    assert_eq!(unmarked_hunks(diff), vec!["@@ -1,3 +1,4 @@".to_owned()]);
    assert!(unmarked_hunks("").is_empty());
}

#[test]
fn every_change_of_the_fork_is_listed_and_marked() {
    let readme = std::fs::read_to_string(root().join("vendor/README.md")).unwrap();
    let mut problems = Vec::new();
    let mut changed = 0;
    for (name, version) in CRATES {
        let upstream = pristine(name, version);
        let ours = root().join("vendor").join(name);
        let section = readme_section(&readme, name);
        if section.is_empty() {
            problems.push(format!(
                "vendor/README.md has no section `### {name} {version}`"
            ));
        }
        let (theirs, mine) = (files(&upstream), files(&ours));
        let mut all: Vec<&String> = theirs.iter().chain(&mine).collect();
        all.sort();
        all.dedup();
        for rel in all {
            let (a, b) = (upstream.join(rel), ours.join(rel));
            let listed = section.contains(&format!("`{rel}`"));
            let what = match (a.exists(), b.exists()) {
                (true, false) => "removed",
                (false, true) => "added",
                _ => {
                    if std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap() {
                        continue;
                    }
                    "changed"
                }
            };
            changed += 1;
            if !listed {
                problems.push(format!(
                    "vendor/{name}/{rel} ({what}) is not listed in vendor/README.md"
                ));
            }
            if what == "removed" {
                continue;
            }
            let out = Command::new("diff")
                .arg("-U3")
                .arg(if a.exists() {
                    a.as_path()
                } else {
                    Path::new("/dev/null")
                })
                .arg(&b)
                .output()
                .expect("cannot run diff");
            for hunk in unmarked_hunks(&String::from_utf8_lossy(&out.stdout)) {
                problems.push(format!(
                    "vendor/{name}/{rel}: hunk {hunk} has no `{MARKER}` marker"
                ));
            }
        }
    }
    assert!(
        changed > 0,
        "no file of the fork differs from upstream: the comparison is broken"
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
