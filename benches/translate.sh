#!/usr/bin/env bash
# Traced vs eager on the fork, side by side (each in a process of its own, as a user runs a
# program with and without `--plugin symtrace`): the demos' forward passes (tiny: batch 1, 16
# features; large: kernels dominate), the cost of a cache hit for a 10-guard entry, and the
# translation time per frame. The tiny passes also show the limit: the same computation
# written by hand in Rust (benches/limit.rs), and how far the traced run is from it; and the
# interpreter's floor under them, an empty Python function called the same way.
#
#   bash benches/translate.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_LOG=$(mktemp)
(cd "$ROOT" && cargo build --release -q && cargo build --release -q --example limit) 2>"$BUILD_LOG" || { cat "$BUILD_LOG"; exit 1; }
# Eager: the plain interpreter; traced: the same script under the plugin. The two alternate
# for ROUNDS rounds and each figure is the best of its rounds: at the large size the kernels
# take 15 ms and use both cores, and a lone run of each mode is at the mercy of the machine.
ROUNDS=${ROUNDS:-3}
OUT=""
for _ in $(seq "$ROUNDS"); do
  OUT+=$("$ROOT/target/release/rustpython" "$ROOT/benches/translate.py" "$ROOT/demos" eager)$'\n'
  OUT+=$("$ROOT/target/release/rustpython" --plugin symtrace "$ROOT/benches/translate.py" "$ROOT/demos" traced)$'\n'
  OUT+=$("$ROOT/target/release/examples/limit")$'\n'
done
field() { echo "$OUT" | sed -n "s/^$1 .*$2=\([0-9.e-]*\).*/\1/p" | sort -g | head -1; }

printf '%-16s %14s %14s %10s %16s %6s %14s %14s\n' "forward pass" "eager" "traced" "speedup" "translation" "same" "limit (Rust)" "traced/limit"
for name in mlp_tiny mlp_large attention_tiny attention_large; do
  e=$(field "$name" eager); t=$(field "$name" traced); tr=$(field "$name" translation)
  same=$(echo "$OUT" | sed -n "s/^$name .*same=\([A-Za-z]*\).*/\1/p" | sort -u | paste -sd/)
  l=$(field "$name" limit)
  if [ -n "$l" ]; then
    limit=$(printf '%11.2f µs %13.1fx' "$(echo "$l * 1000000" | bc -l)" "$(echo "$t / $l" | bc -l)")
  else
    limit=$(printf '%14s %14s' - -)
  fi
  printf '%-16s %11.1f µs %11.1f µs %9.2fx %13.2f ms %6s %s\n' "$name" "$(echo "$e * 1000000" | bc -l)" "$(echo "$t * 1000000" | bc -l)" "$(echo "$e / $t" | bc -l)" "$(echo "$tr * 1000" | bc -l)" "$same" "$limit"
done
g=$(echo "$OUT" | sed -n 's/^cache_hit guards=\([0-9]*\).*/\1/p' | head -1)
h=$(field cache_hit per_call); gc=$(field cache_hit graph_call); ee=$(field cache_hit eager)
printf '\ncache hit, %s guards: %.0f ns per call (graph alone %.0f ns, so the frame, the hook and its guards %.0f ns; eager %.0f ns)\n' \
  "$g" "$(echo "$h * 1000000000" | bc -l)" "$(echo "$gc * 1000000000" | bc -l)" "$(echo "($h - $gc) * 1000000000" | bc -l)" "$(echo "$ee * 1000000000" | bc -l)"
f=$(field call_floor eager)
printf 'an empty Python function called the same way: %.2f µs (the interpreter'"'"'s floor under each traced tiny figure; the limit includes no Python call)\n' "$(echo "$f * 1000000" | bc -l)"
