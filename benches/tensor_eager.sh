#!/usr/bin/env bash
# Eager tensor speed: the same demos (demos/mlp.py, demos/attention.py) under CPython 3.11 +
# NumPy and under the fork (symtrace's tensor, no plugin), per forward pass, small sizes (the
# interpreter dominates) and large ones (the kernels dominate), side by side.
#
#   bash benches/tensor_eager.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
python3 -c "import numpy" 2>/dev/null || python3 -m pip install -q numpy
BUILD_LOG=$(mktemp)
(cd "$ROOT" && cargo build --release -q) 2>"$BUILD_LOG" || { cat "$BUILD_LOG"; exit 1; }

NP=$(python3 "$ROOT/benches/tensor_eager.py" numpy)
ST=$("$ROOT/target/release/rustpython" "$ROOT/benches/tensor_eager.py" symtrace)
echo "CPython $(python3 -c 'import sys, numpy; print(sys.version.split()[0], "+ NumPy", numpy.__version__)') vs the fork (eager)"
printf '%-18s %16s %16s %10s\n' "forward pass" "CPython+NumPy" "fork (symtrace)" "fork/NumPy"
for name in mlp_small mlp_large attention_small attention_large; do
  a=$(echo "$NP" | sed -n "s/^$name seconds_per_pass=\([0-9.e-]*\).*/\1/p")
  b=$(echo "$ST" | sed -n "s/^$name seconds_per_pass=\([0-9.e-]*\).*/\1/p")
  printf '%-18s %13.1f µs %13.1f µs %10.2f\n' "$name" "$(echo "$a * 1000000" | bc -l)" "$(echo "$b * 1000000" | bc -l)" "$(echo "$b / $a" | bc -l)"
done
