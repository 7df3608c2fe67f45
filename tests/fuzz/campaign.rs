//! A fuzzing campaign: `cargo run --release --example fuzz_campaign -- N [FIRST_SEED]`
//! (`bash tests/fuzz/campaign.sh N` builds and runs it). Checks the programs of N seeds on
//! both cores, prints the counts, and writes each divergent program and its shrunk form to
//! `target/fuzz/`.

#[path = "driver.rs"]
mod driver;

use driver::{Fuzzer, Verdict, campaign};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let first: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let rustpython = root.join("target/release/rustpython");
    let work = root.join("target/fuzz");
    let fuzzer = Fuzzer::new(rustpython, root, &work);
    let started = std::time::Instant::now();
    let mut total = driver::Counts::default();
    // In rounds of 250, so that a long campaign reports as it goes.
    let mut seed = first;
    while seed < first + n {
        let end = (seed + 250).min(first + n);
        let (counts, found) = campaign(&fuzzer, (seed..end).collect(), 2);
        for (s, verdict) in found {
            match verdict {
                Verdict::Diverged {
                    mode,
                    what,
                    program,
                    ..
                } => {
                    let source = std::fs::read_to_string(&program).unwrap();
                    let small = fuzzer.minimize(&source, mode);
                    let path = work.join(format!("divergent_{s}_{mode}.py"));
                    std::fs::write(&path, small).unwrap();
                    println!(
                        "seed {s} diverges under {mode}: {what} (shrunk: {})",
                        path.display()
                    );
                }
                Verdict::PlainFailed(status) => println!("seed {s}: plain run {status:?}"),
                Verdict::Same => {}
            }
        }
        total.programs += counts.programs;
        total.same += counts.same;
        total.divergent += counts.divergent;
        total.crashes += counts.crashes;
        total.hangs += counts.hangs;
        total.plain_failed += counts.plain_failed;
        println!(
            "seeds {first}..{end}: {} programs, {} divergent, {} crashes, {} hangs, {} plain failures ({:.0} s)",
            total.programs,
            total.divergent,
            total.crashes,
            total.hangs,
            total.plain_failed,
            started.elapsed().as_secs_f64()
        );
        seed = end;
    }
    println!(
        "campaign: seeds {first}..{}, {} programs x {} modes: {} divergent, {} crashes, {} hangs",
        first + n,
        total.programs,
        driver::MODES.len(),
        total.divergent,
        total.crashes,
        total.hangs
    );
    if total.divergent > 0 {
        std::process::exit(1);
    }
}
