//! The differential fuzzer's driver, shared by `tests/fuzz.rs` (a fixed set of seeds, in
//! `cargo test`) and the campaign (`bash tests/fuzz/campaign.sh N`): each program that
//! `tests/fuzz/generate.py` makes from a seed runs plain and in every mode of the plugin, and
//! its stdout, stderr and exit status must be the same; a divergent program is shrunk to a
//! small one that still diverges.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// What a program is run under, besides plain.
pub const MODES: &[(&str, &[&str])] = &[
    ("plugin", &["--plugin", "symtrace"]),
    (
        "trace_all",
        &["--plugin", "symtrace", "--plugin-opt", "trace_all=1"],
    ),
    (
        "roundtrip",
        &["--plugin", "symtrace", "--plugin-opt", "backend=roundtrip"],
    ),
];

/// A run that takes longer than this has hung.
pub const TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Exit(i32),
    /// Killed by a signal: the interpreter crashed.
    Crash,
    Hang,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    pub status: Status,
}

pub struct Fuzzer {
    pub rustpython: PathBuf,
    pub root: PathBuf,
    /// Where programs are written.
    pub work: PathBuf,
}

/// What running one program found.
#[derive(Debug)]
pub enum Verdict {
    Same,
    /// The plain run crashed or hung: the generator's fault, not the plugin's.
    PlainFailed(Status),
    Diverged {
        mode: &'static str,
        what: String,
        /// How the mode's run ended.
        status: Status,
        program: PathBuf,
    },
}

impl Fuzzer {
    pub fn new(
        rustpython: impl Into<PathBuf>,
        root: impl Into<PathBuf>,
        work: impl Into<PathBuf>,
    ) -> Self {
        let work = work.into();
        std::fs::create_dir_all(&work).expect("cannot make the fuzzer's work directory");
        Self {
            rustpython: rustpython.into(),
            root: root.into(),
            work,
        }
    }

    /// The program of `seed` (made by generate.py, run plain by the interpreter itself).
    pub fn generate(&self, seed: u64) -> String {
        let out = Command::new(&self.rustpython)
            .arg(self.root.join("tests/fuzz/generate.py"))
            .arg(seed.to_string())
            .env_remove("RUST_LOG")
            .output()
            .expect("cannot run the generator");
        assert!(
            out.status.success(),
            "generate.py {seed} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("a program is text")
    }

    /// Run `program` with `args` before it.
    pub fn run(&self, program: &Path, args: &[&str]) -> Outcome {
        let out = Command::new("timeout")
            .arg(TIMEOUT.as_secs().to_string())
            .arg(&self.rustpython)
            .args(args)
            .arg(program)
            .env_remove("RUST_LOG")
            .current_dir(&self.work)
            .output()
            .expect("cannot run rustpython");
        let status = match out.status.code() {
            Some(124) => Status::Hang,
            Some(c) => Status::Exit(c),
            None => Status::Crash,
        };
        Outcome {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            status,
        }
    }

    /// Run the program of `seed` plain and in every mode.
    pub fn check_seed(&self, seed: u64) -> Verdict {
        let program = self.work.join(format!("program_{seed}.py"));
        std::fs::write(&program, self.generate(seed)).expect("cannot write the program");
        let verdict = self.check(&program);
        if matches!(verdict, Verdict::Same | Verdict::PlainFailed(_)) {
            let _ = std::fs::remove_file(&program);
        }
        verdict
    }

    /// Run `program` plain and in every mode; the first mode that differs.
    pub fn check(&self, program: &Path) -> Verdict {
        let plain = self.run(program, &[]);
        if !matches!(plain.status, Status::Exit(_)) {
            return Verdict::PlainFailed(plain.status);
        }
        for (mode, args) in MODES {
            let got = self.run(program, args);
            if let Some(what) = difference(&plain, &got) {
                return Verdict::Diverged {
                    mode,
                    what,
                    status: got.status,
                    program: program.to_owned(),
                };
            }
        }
        Verdict::Same
    }

    /// Whether `source` still runs plain to an exit and diverges under `mode`.
    fn still_diverges(&self, source: &str, mode: &str, n: usize) -> bool {
        let args = MODES.iter().find(|(m, _)| *m == mode).expect("a mode").1;
        let path = self.work.join(format!("shrinking_{n}.py"));
        std::fs::write(&path, source).expect("cannot write a candidate");
        let plain = self.run(&path, &[]);
        let diverges = matches!(plain.status, Status::Exit(_))
            && !plain.stderr.contains("SyntaxError")
            && !plain.stderr.contains("IndentationError")
            && difference(&plain, &self.run(&path, args)).is_some();
        let _ = std::fs::remove_file(&path);
        diverges
    }

    /// A smaller program that still diverges under `mode`: blocks (a line and the lines
    /// indented under it) are removed, the largest first, as long as the divergence stays
    /// (delta debugging over lines).
    pub fn minimize(&self, source: &str, mode: &str) -> String {
        let mut lines: Vec<String> = source.lines().map(str::to_owned).collect();
        let mut tries = 0;
        loop {
            let mut shrunk = false;
            let mut i = 0;
            while i < lines.len() {
                let end = block_end(&lines, i);
                if lines[i].trim().is_empty() {
                    i += 1;
                    continue;
                }
                let mut candidate = lines.clone();
                candidate.drain(i..end);
                tries += 1;
                if self.still_diverges(&(candidate.join("\n") + "\n"), mode, tries) {
                    lines = candidate;
                    shrunk = true;
                } else {
                    i += 1;
                }
            }
            if !shrunk {
                return lines.join("\n") + "\n";
            }
        }
    }
}

/// The line after the block that starts at line `i`: the lines indented more than it.
fn block_end(lines: &[String], i: usize) -> usize {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let own = indent(&lines[i]);
    let mut j = i + 1;
    while j < lines.len() && (lines[j].trim().is_empty() || indent(&lines[j]) > own) {
        j += 1;
    }
    j
}

/// How two runs differ, with the first line that differs.
pub fn difference(plain: &Outcome, got: &Outcome) -> Option<String> {
    for (what, a, b) in [
        ("stdout", &plain.stdout, &got.stdout),
        ("stderr", &plain.stderr, &got.stderr),
    ] {
        if a != b {
            let (n, (x, y)) = a
                .lines()
                .chain(std::iter::repeat(""))
                .zip(b.lines().chain(std::iter::repeat("")))
                .enumerate()
                .find(|(_, (x, y))| x != y)
                .unwrap();
            return Some(format!("{what} line {}: plain {x:?} / mode {y:?}", n + 1));
        }
    }
    (plain.status != got.status)
        .then(|| format!("status: plain {:?} / mode {:?}", plain.status, got.status))
}

#[derive(Default, Debug)]
pub struct Counts {
    pub programs: usize,
    pub same: usize,
    pub divergent: usize,
    pub crashes: usize,
    pub hangs: usize,
    pub plain_failed: usize,
}

impl Counts {
    pub fn add(&mut self, v: &Verdict) {
        self.programs += 1;
        match v {
            Verdict::Same => self.same += 1,
            Verdict::PlainFailed(_) => self.plain_failed += 1,
            Verdict::Diverged { status, .. } => {
                self.divergent += 1;
                self.crashes += usize::from(*status == Status::Crash);
                self.hangs += usize::from(*status == Status::Hang);
            }
        }
    }
}

/// Check `seeds` on `threads` threads; every divergent program is reported with its seed.
pub fn campaign(fuzzer: &Fuzzer, seeds: Vec<u64>, threads: usize) -> (Counts, Vec<(u64, Verdict)>) {
    let queue = std::sync::Mutex::new(seeds.into_iter().rev().collect::<Vec<_>>());
    let results = std::sync::Mutex::new((Counts::default(), Vec::new()));
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let Some(seed) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let verdict = fuzzer.check_seed(seed);
                    let mut r = results.lock().unwrap();
                    r.0.add(&verdict);
                    if !matches!(verdict, Verdict::Same) {
                        r.1.push((seed, verdict));
                    }
                }
            });
        }
    });
    let (counts, mut found) = results.into_inner().unwrap();
    found.sort_by_key(|(seed, _)| *seed);
    (counts, found)
}
