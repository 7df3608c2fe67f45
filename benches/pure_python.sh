#!/usr/bin/env bash
# What --plugin symtrace costs a program without tensors: benches/pure_python.py (recursion,
# method calls, closures, generators, an OO simulation) plain and under the plugin, side by
# side. Wall time: the median over RUNS processes of each part's first round (which pays for
# the translator's attempts before it skips a code object) and of its later rounds. Then
# callgrind's instruction count of one whole process each (exact and repeatable).
#
#   bash benches/pure_python.sh [RUNS]     (default 5)
set -euo pipefail
RUNS=${1:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
cargo build --release -q 2>/dev/null
BIN="$ROOT/target/release/rustpython"
WORK="$ROOT/benches/pure_python.py"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for i in $(seq "$RUNS"); do
  "$BIN" "$WORK" 5 3 > "$TMP/plain.$i"
  "$BIN" --plugin symtrace "$WORK" 5 3 > "$TMP/plugin.$i"
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { # KIND PART KEY
  cat "$TMP/$1".* | awk -v p="$2" -v k="$3=" '$1 == p { for (i = 2; i <= NF; i++) if (index($i, k) == 1) print substr($i, length(k) + 1) }' | median
}
printf '%-12s %12s %12s %8s   %12s %12s %8s\n' "part" "plain first" "plugin first" "ratio" "plain rest" "plugin rest" "ratio"
for part in recursion methods closures generators simulation total; do
  pf=$(field plain $part first); gf=$(field plugin $part first)
  pr=$(field plain $part rest); gr=$(field plugin $part rest)
  printf '%-12s %10.2f ms %10.2f ms %8.3f   %10.2f ms %10.2f ms %8.3f\n' "$part" \
    "$(echo "$pf * 1000" | bc -l)" "$(echo "$gf * 1000" | bc -l)" "$(echo "$gf / $pf" | bc -l)" \
    "$(echo "$pr * 1000" | bc -l)" "$(echo "$gr * 1000" | bc -l)" "$(echo "$gr / $pr" | bc -l)"
done
if command -v valgrind >/dev/null; then
  count() { PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null \
            | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'; }
  CP=$(count "$BIN" "$WORK" 5 3); CG=$(count "$BIN" --plugin symtrace "$WORK" 5 3)
  echo
  echo "callgrind instructions, one whole process (5 rounds, scale 3; PYTHONHASHSEED=0):"
  printf '  plain %d   plugin %d   ratio %.4f\n' "$CP" "$CG" "$(echo "$CG / $CP" | bc -l)"
else
  echo "(valgrind not installed: no instruction counts)"
fi
