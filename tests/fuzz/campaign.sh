#!/usr/bin/env bash
# A fuzzing campaign: the programs of N seeds (from FIRST, default 1) run plain and under
# every mode of the plugin; divergent ones are shrunk into target/fuzz/.
#
#   bash tests/fuzz/campaign.sh N [FIRST]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${1:-1000}
FIRST=${2:-1}
(cd "$ROOT" && cargo build --release -q && cargo build --release -q --example fuzz_campaign)
"$ROOT/target/release/examples/fuzz_campaign" "$N" "$FIRST"
