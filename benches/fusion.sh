#!/usr/bin/env bash
# Fused elementwise chains: benches/fusion.py eager and traced, per call, float32 and float64,
# side by side (RAYON_NUM_THREADS sets the threads, as for the eager kernels).
#
#   bash benches/fusion.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_LOG=$(mktemp)
(cd "$ROOT" && cargo build --release -q) 2>"$BUILD_LOG" || { cat "$BUILD_LOG"; exit 1; }
RP="$ROOT/target/release/rustpython"
printf '%-14s %-8s %12s %12s %8s\n' case dtype eager traced speedup
for dtype in float32 float64; do
  E=$("$RP" "$ROOT/benches/fusion.py" "$dtype")
  T=$("$RP" --plugin symtrace "$ROOT/benches/fusion.py" "$dtype")
  for name in feed_forward normalize squash residual; do
    a=$(echo "$E" | sed -n "s/^$name seconds=\([0-9.e-]*\).*/\1/p")
    b=$(echo "$T" | sed -n "s/^$name seconds=\([0-9.e-]*\).*/\1/p")
    printf '%-14s %-8s %9.1f µs %9.1f µs %7.2fx\n' "$name" "$dtype" \
      "$(echo "$a * 1000000" | bc -l)" "$(echo "$b * 1000000" | bc -l)" "$(echo "$a / $b" | bc -l)"
  done
done
