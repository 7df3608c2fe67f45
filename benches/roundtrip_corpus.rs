//! The round-trip cost over the standard library the interpreter ships: decode, assemble and
//! verify, in µs per code object, each stage timed on its own. Run through
//! `bash benches/roundtrip.sh` (or `cargo run --release --example roundtrip_corpus`).

use std::time::{Duration, Instant};

use rustpython::InterpreterBuilderExt;
use symtrace::bytecode::{CodeLayout, assemble, corpus, decode, verify};

fn main() {
    let passes: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    let interp = rustpython::InterpreterBuilder::new()
        .init_stdlib()
        .interpreter();
    interp.enter(|vm| {
        let scope = vm.new_scope_with_builtins();
        vm.run_string(
            scope.clone(),
            "import os\nLIB = os.path.dirname(os.__file__)\n",
            "<bench>",
        )
        .unwrap();
        let lib = scope
            .globals
            .get_item("LIB", vm)
            .unwrap()
            .str(vm)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let corpus = corpus::compile_tree(std::path::Path::new(&lib), vm)
            .expect("cannot read the standard library");
        let n = corpus.codes.len();
        println!(
            "corpus: {n} code objects from {} files under {lib}",
            corpus.files
        );
        println!(
            "{:>5} {:>12} {:>12} {:>12} {:>12}",
            "pass", "decode", "assemble", "verify", "total"
        );
        let mut best = [Duration::MAX; 4];
        for pass in 1..=passes {
            let mut t = [Duration::ZERO; 3];
            let mut failed = 0;
            for code in &corpus.codes {
                let t0 = Instant::now();
                let decoded = decode(code);
                let t1 = Instant::now();
                let rebuilt = decoded
                    .ok()
                    .and_then(|d| assemble(&CodeLayout::of(code), &d.instrs, vm).ok());
                let t2 = Instant::now();
                let ok = rebuilt.as_ref().is_some_and(|r| verify(r).is_ok());
                let t3 = Instant::now();
                failed += usize::from(!ok);
                t[0] += t1 - t0;
                t[1] += t2 - t1;
                t[2] += t3 - t2;
            }
            let total = t[0] + t[1] + t[2];
            let us = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
            println!(
                "{pass:>5} {:>9.2} µs {:>9.2} µs {:>9.2} µs {:>9.2} µs   ({failed} failed)",
                us(t[0]),
                us(t[1]),
                us(t[2]),
                us(total)
            );
            for (b, v) in best.iter_mut().zip([t[0], t[1], t[2], total]) {
                *b = (*b).min(v);
            }
        }
        let us = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
        println!(
            "{:>5} {:>9.2} µs {:>9.2} µs {:>9.2} µs {:>9.2} µs   per code object",
            "best",
            us(best[0]),
            us(best[1]),
            us(best[2]),
            us(best[3])
        );
    });
}
