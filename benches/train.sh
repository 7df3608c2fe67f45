#!/usr/bin/env bash
# The training-style loop of demos/train.py, eager vs traced, side by side: time per step
# (best of 5 runs of 400 steps, output to /dev/null), each mode in its own process.
#
#   bash benches/train.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_LOG=$(mktemp)
(cd "$ROOT" && cargo build --release -q) 2>"$BUILD_LOG" || { cat "$BUILD_LOG"; exit 1; }
E=$("$ROOT/target/release/rustpython" "$ROOT/benches/train.py" "$ROOT/demos" eager)
T=$("$ROOT/target/release/rustpython" --plugin symtrace "$ROOT/benches/train.py" "$ROOT/demos" traced)
e=$(echo "$E" | sed -n 's/.*per_step=\([0-9.e-]*\).*/\1/p')
t=$(echo "$T" | sed -n 's/.*per_step=\([0-9.e-]*\).*/\1/p')
printf '%-24s %12s %12s %9s\n' "training step" "eager" "traced" "speedup"
printf '%-24s %9.1f µs %9.1f µs %8.2fx\n' "train (32x8 -> 2)" "$(echo "$e * 1000000" | bc -l)" "$(echo "$t * 1000000" | bc -l)" "$(echo "$e / $t" | bc -l)"
