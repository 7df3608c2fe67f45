#!/usr/bin/env bash
# symtrace beside its anchors, one table per dtype and thread count: the demos' forward
# passes (benches/anchors.py: tiny sizes, where the interpreter dominates, and large ones,
# where the kernels do) and a call with ten guarded arguments, on the fork (eager, and traced
# under --plugin symtrace), on CPython + NumPy, and on CPython + PyTorch (eager and
# torch.compile). Each runtime runs in a process of its own with the same thread count
# (RAYON_NUM_THREADS for the fork, OPENBLAS_NUM_THREADS for NumPy, OMP_NUM_THREADS for torch).
#
#   bash benches/anchors.sh                 # threads 1 and 2, float32 and float64
#   THREADS=2 DTYPES=float32 ROUNDS=1 bash benches/anchors.sh
#
# NumPy and PyTorch live in a venv of their own (target/anchors-venv, or $ANCHORS_VENV),
# made on the first run: PyTorch's CPU build when its index is reachable, else PyPI's (a
# multi-GB download with CUDA libraries, which the CPU runs ignore).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${ANCHORS_VENV:-$ROOT/target/anchors-venv}
if ! "$VENV/bin/python" -c "import numpy, torch" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q numpy
  "$VENV/bin/pip" install -q torch --index-url https://download.pytorch.org/whl/cpu 2>/dev/null \
    || "$VENV/bin/pip" install -q torch
fi
BUILD_LOG=$(mktemp)
(cd "$ROOT" && cargo build --release -q) 2>"$BUILD_LOG" || { cat "$BUILD_LOG"; exit 1; }
RP="$ROOT/target/release/rustpython"
PY="$VENV/bin/python"
BENCH="$ROOT/benches/anchors.py"
echo "CPython $("$PY" -c 'import sys, numpy, torch; print(sys.version.split()[0], "+ NumPy", numpy.__version__, "+ PyTorch", torch.__version__)') vs the fork"

run() { # threads, command...
  local t=$1
  shift
  OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t MKL_NUM_THREADS=$t RAYON_NUM_THREADS=$t "$@" 2>/dev/null || true
}
us() { [ -n "$1" ] && printf '%.1f' "$(echo "$1 * 1000000" | bc -l)" || printf -- '-'; }

for threads in ${THREADS:-1 2}; do
  for dtype in ${DTYPES:-float32 float64}; do
    # The runtimes take turns, round after round, and each figure is the best of its rounds:
    # this machine's speed drifts by a fifth over minutes, which a single run of each, one
    # after another, would read as a difference between them.
    eager= traced= numpy= torch_eager= torch_compile=
    for _ in $(seq "${ROUNDS:-3}"); do
      eager+=$'\n'$(run "$threads" "$RP" "$BENCH" symtrace "$dtype")
      traced+=$'\n'$(run "$threads" "$RP" --plugin symtrace "$BENCH" symtrace "$dtype")
      numpy+=$'\n'$(run "$threads" "$PY" "$BENCH" numpy "$dtype")
      torch_eager+=$'\n'$(run "$threads" "$PY" "$BENCH" torch "$dtype")
      torch_compile+=$'\n'$(run "$threads" "$PY" "$BENCH" torch.compile "$dtype")
    done
    printf '\n%s, %s thread(s), µs per call\n' "$dtype" "$threads"
    printf '%-16s %12s %12s %12s %12s %14s %12s\n' case "fork eager" "fork traced" "NumPy" "torch eager" "torch.compile" "best/traced"
    for case in mlp_tiny attention_tiny mlp_large attention_large ten_guards; do
      pick() { echo "$1" | sed -n "s/^$case seconds=\([0-9.e-]*\).*/\1/p" | sort -g | head -1; }
      e=$(pick "$eager"); t=$(pick "$traced"); n=$(pick "$numpy"); te=$(pick "$torch_eager"); tc=$(pick "$torch_compile")
      best=$(printf '%s\n' "$n" "$te" "$tc" | grep . | sort -g | head -1)
      ratio=-
      [ -n "$best" ] && [ -n "$t" ] && ratio=$(printf '%.2fx' "$(echo "$best / $t" | bc -l)")
      printf '%-16s %12s %12s %12s %12s %14s %12s\n' "$case" "$(us "$e")" "$(us "$t")" "$(us "$n")" "$(us "$te")" "$(us "$tc")" "$ratio"
    done
  done
done
echo
echo "best/traced: the fastest anchor's time over the traced one (above 1: the fork is faster)."
