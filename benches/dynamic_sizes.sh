#!/usr/bin/env bash
# A model called with a size that changes per call, eager vs traced, under each `dynamic`
# setting: time per call, translations, recompiles, calls run as written. The MLP's batch
# size changes (1..64), then the GPT's sequence length (8..64).
#
#   bash benches/dynamic_sizes.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
cargo build --release -q 2>/dev/null
BIN="$ROOT/target/release/rustpython"
for case in mlp gpt; do
  case $case in
    mlp) title="MLP, 256 calls, batch 1..64" ;;
    gpt) title="GPT, 114 calls, T 8..64" ;;
  esac
  printf '%-28s %13s %13s %9s %15s %6s %6s %6s   %s\n' "$title" "eager" "traced" "speedup" "first pass" "transl" "recomp" "as written" "same"
  for d in auto false true; do
    "$BIN" --plugin symtrace --plugin-opt "dynamic=$d" benches/dynamic_sizes.py "dynamic=$d" "$case"
  done
done
