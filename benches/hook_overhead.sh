#!/usr/bin/env bash
# Hook overhead: the fork (no hook, a do-nothing hook) against pristine RustPython 0.6.0.
#
#   bash benches/hook_overhead.sh [RUNS]       (default 7 runs per build)
#
# Builds pristine rustpython 0.6.0 from crates.io in target-bench/ (its own target directory,
# the same features and release profile as the fork, and the same two lock pins), then runs
# benches/call_workload.py on both builds and prints, side by side:
#   - wall time medians and their ratio, with no hook installed;
#   - callgrind instruction counts for one small run each (exact and repeatable: the figure to
#     trust when wall time is noisy);
#   - the fork with a do-nothing hook installed (--plugin symtrace, whose hook runs every
#     frame as is): the cost per frame in ns.
set -euo pipefail
RUNS=${1:-7}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/target-bench
PRISTINE=$BENCH/pristine
FORK=$ROOT/target/release/rustpython
WORKLOAD=$ROOT/benches/call_workload.py

echo "building the fork (cargo build --release)..."
(cd "$ROOT" && cargo build --release -q)

if [ ! -x "$PRISTINE/target/release/rustpython-pristine" ]; then
  echo "building pristine rustpython 0.6.0 from crates.io in $PRISTINE (several minutes)..."
  mkdir -p "$PRISTINE/src"
  cat > "$PRISTINE/Cargo.toml" <<'TOML'
[package]
name = "rustpython-pristine"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
rustpython = { version = "=0.6.0", default-features = false, features = ["threading", "stdlib", "stdio", "importlib", "host_env"] }
# the fork's pins (vendor/README.md): 0.16.10 breaks rustpython-codegen 0.6.0
rustpython-ruff_python_ast = "=0.16.5"
rustpython-ruff_python_parser = "=0.16.5"
rustpython-ruff_python_trivia = "=0.16.5"
rustpython-ruff_source_file = "=0.16.5"
rustpython-ruff_text_size = "=0.16.5"

[profile.release]
debug = "line-tables-only"

[workspace]
TOML
  # upstream's src/main.rs, minus mimalloc (the fork does not use it either)
  cat > "$PRISTINE/src/main.rs" <<'RS'
use rustpython::{InterpreterBuilder, InterpreterBuilderExt};
fn main() -> std::process::ExitCode {
    rustpython::run(InterpreterBuilder::new().init_stdlib())
}
RS
  # and the malachite-bigint pin of the fork's Cargo.lock
  (cd "$PRISTINE" && cargo generate-lockfile -q \
    && { cargo update -q -p malachite-bigint@0.14.0 --precise 0.12.0 2>/dev/null || true; } \
    && cargo build --release -q --ignore-rust-version)
fi
PRIS=$PRISTINE/target/release/rustpython-pristine

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
seconds_of() { sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'; }
frames_of() { sed -n 's/.*frames=\([0-9]*\).*/\1/p'; }

run_many() { # BIN ARGS...
  for _ in $(seq "$RUNS"); do "$@" "$WORKLOAD" 2 | seconds_of; done | median
}

FRAMES=$("$FORK" "$WORKLOAD" 2 | frames_of)
echo
echo "workload: benches/call_workload.py 2  ($FRAMES Python frames per run), $RUNS runs each"
P=$(run_many "$PRIS")
F=$(run_many "$FORK")
H=$(run_many "$FORK" --plugin symtrace)
printf '%-40s %12s %10s\n' "build" "median (s)" "vs pristine"
printf '%-40s %12.4f %10s\n' "pristine rustpython 0.6.0" "$P" "1.0000"
printf '%-40s %12.4f %10.4f\n' "fork, no hook installed" "$F" "$(echo "$F / $P" | bc -l)"
printf '%-40s %12.4f %10.4f\n' "fork, do-nothing hook (--plugin symtrace)" "$H" "$(echo "$H / $P" | bc -l)"
printf 'do-nothing hook: %.0f ns per frame\n' "$(echo "($H - $F) * 1000000000 / $FRAMES" | bc -l)"

if command -v valgrind >/dev/null; then
  echo
  echo "callgrind instruction counts (benches/call_workload.py 0, whole process, PYTHONHASHSEED=0):"
  # A fixed hash seed: with randomized hashing the same binary's count moves by several %.
  count() { PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" "$WORKLOAD" 0 2>&1 >/dev/null \
            | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'; }
  CP=$(count "$PRIS"); CF=$(count "$FORK")
  printf '%-40s %16s %10s\n' "build" "instructions" "vs pristine"
  printf '%-40s %16d %10s\n' "pristine rustpython 0.6.0" "$CP" "1.0000"
  printf '%-40s %16d %10.5f\n' "fork, no hook installed" "$CF" "$(echo "$CF / $CP" | bc -l)"
else
  echo "(valgrind not installed: no instruction counts)"
fi
