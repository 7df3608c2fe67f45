#!/usr/bin/env bash
# The cost of the round-trip backend, printed side by side:
#   1. decode + assemble + verify over the standard-library corpus, µs per code object;
#   2. a call-heavy workload (benches/call_workload.py) plain, with the do-nothing hook
#      (--plugin symtrace) and with backend=roundtrip, where every call runs re-assembled code
#      through the hook's replace path.
#
#   bash benches/roundtrip.sh [RUNS]      (default 7 runs of the workload per configuration)
set -euo pipefail
RUNS=${1:-7}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/target/release/rustpython
WORKLOAD=$ROOT/benches/call_workload.py

echo "building (cargo build --release)..."
BUILD_LOG=$(mktemp)
(cd "$ROOT" && cargo build --release -q && cargo build --release -q --example roundtrip_corpus) 2>"$BUILD_LOG" \
  || { cat "$BUILD_LOG"; exit 1; }

echo
echo "== round trip over the standard library"
"$ROOT/target/release/examples/roundtrip_corpus" 3

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
seconds_of() { sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'; }
frames_of() { sed -n 's/.*frames=\([0-9]*\).*/\1/p'; }
run_many() { for _ in $(seq "$RUNS"); do "$@" "$WORKLOAD" 2 | seconds_of; done | median; }

FRAMES=$("$BIN" "$WORKLOAD" 2 | frames_of)
echo
echo "== call-heavy workload: benches/call_workload.py 2 ($FRAMES Python frames per run), median of $RUNS runs"
P=$(run_many "$BIN")
H=$(run_many "$BIN" --plugin symtrace)
R=$(run_many "$BIN" --plugin symtrace --plugin-opt backend=roundtrip)
printf '%-46s %12s %10s %14s\n' "configuration" "median (s)" "vs plain" "ns per frame"
printf '%-46s %12.4f %10s %14s\n' "plain (no plugin)" "$P" "1.0000" "-"
for row in "do-nothing hook (--plugin symtrace)|$H" "backend=roundtrip (every call replaced)|$R"; do
  name=${row%|*}; t=${row#*|}
  printf '%-46s %12.4f %10.4f %14.1f\n' "$name" "$t" "$(echo "$t / $P" | bc -l)" "$(echo "($t - $P) * 1000000000 / $FRAMES" | bc -l)"
done
