//! The differential fuzzer on a fixed set of seeds: each program `tests/fuzz/generate.py`
//! makes runs plain and in every mode of the plugin (`tests/fuzz/driver.rs`), and must give
//! the same stdout, stderr and exit status. A divergent program is shrunk and printed.
//! Longer campaigns: `bash tests/fuzz/campaign.sh N`.

#[path = "fuzz/driver.rs"]
mod driver;

use driver::{Fuzzer, Verdict, campaign};

/// The seeds `cargo test` checks (a few minutes on two cores).
const SEEDS: std::ops::Range<u64> = 1..201;

#[test]
fn programs_behave_the_same_plain_and_traced() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz");
    let fuzzer = Fuzzer::new(env!("CARGO_BIN_EXE_rustpython"), root, work);
    let (counts, found) = campaign(&fuzzer, SEEDS.collect(), 2);
    println!("{counts:?}");
    let mut report = Vec::new();
    for (seed, verdict) in &found {
        match verdict {
            Verdict::Diverged {
                mode,
                what,
                program,
                ..
            } => {
                let source = std::fs::read_to_string(program).unwrap();
                let small = fuzzer.minimize(&source, mode);
                report.push(format!(
                    "seed {seed} diverges under {mode}: {what}\n--- shrunk program ---\n{small}"
                ));
            }
            Verdict::PlainFailed(status) => {
                report.push(format!(
                    "seed {seed}: the plain run did not exit ({status:?})"
                ));
            }
            Verdict::Same => {}
        }
    }
    assert!(counts.programs == SEEDS.count(), "{counts:?}");
    assert!(report.is_empty(), "{}", report.join("\n\n"));
}
