#!/usr/bin/env bash
# Small nn models called as `model(x)`, eager (plain `rustpython`) vs traced (`--plugin
# symtrace`), each in a process of its own; the two alternate for ROUNDS rounds and each
# figure is the best of its rounds.
#
#   bash benches/modules.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_LOG=$(mktemp)
(cd "$ROOT" && cargo build --release -q) 2>"$BUILD_LOG" || { cat "$BUILD_LOG"; exit 1; }
ROUNDS=${ROUNDS:-3}
OUT=""
for _ in $(seq "$ROUNDS"); do
  OUT+=$("$ROOT/target/release/rustpython" "$ROOT/benches/modules.py" eager)$'\n'
  OUT+=$("$ROOT/target/release/rustpython" --plugin symtrace "$ROOT/benches/modules.py" traced)$'\n'
done
field() { echo "$OUT" | sed -n "s/^$1 .*$2=\([0-9.e-]*\).*/\1/p" | sort -g | head -1; }
printf '%-16s %12s %12s %9s %6s\n' "model" "eager" "traced" "speedup" "same"
for name in sequential_mlp residual_block two_blocks stateful_block; do
  e=$(field "$name" eager); t=$(field "$name" traced)
  same=$(echo "$OUT" | sed -n "s/^$name .*same=\([A-Za-z]*\).*/\1/p" | sort -u | paste -sd/)
  printf '%-16s %9.2f µs %9.2f µs %8.2fx %6s\n' "$name" "$(echo "$e * 1000000" | bc -l)" "$(echo "$t * 1000000" | bc -l)" "$(echo "$e / $t" | bc -l)" "$same"
done
