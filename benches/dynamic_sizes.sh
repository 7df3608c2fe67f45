#!/usr/bin/env bash
# A model called with a batch size that changes per call, eager vs traced, under each
# `dynamic` setting: time per call, translations, recompiles, calls run as written.
#
#   bash benches/dynamic_sizes.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
cargo build --release -q 2>/dev/null
BIN="$ROOT/target/release/rustpython"
printf '%-28s %13s %13s %9s %15s %6s %6s %6s   %s\n' "256 calls, batch 1..64" "eager" "traced" "speedup" "first pass" "transl" "recomp" "as written" "same"
for d in auto false true; do
  "$BIN" --plugin symtrace --plugin-opt "dynamic=$d" benches/dynamic_sizes.py "dynamic=$d"
done
