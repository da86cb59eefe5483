#!/usr/bin/env bash
# The second scaling run (docs/scale.md, "Widths above two"): the dense kernels at 4096 in
# real arithmetic at widths 16, 8, 4 and 2 (three timed rounds per cell: a call of faer
# serial takes seconds there), then the cells the first run's time shares cut off (width 2's
# QR, the SVD rows at widths 2 and 4, the EVD at width 4), all into one file, OUT_DIR/run.txt
# (the lent host returns few files). BIN is the benchmark binary (`cargo build --release -p
# teamalg-tools --bin kernels`); each part that overruns its share of the time is cut off and
# the next one runs.
set -u
BIN=${BIN:-target/release/kernels}
OUT_DIR=${OUT_DIR:-scale-out}
LARGE_S=${LARGE_S:-55}
GAP_S=${GAP_S:-50}
mkdir -p "$OUT_DIR"
out="$OUT_DIR/run.txt"
# shellcheck source=scripts/scale-part.sh
. "$(dirname "$0")/scale-part.sh"
{ date -u +%FT%TZ; nproc; lscpu; } > "$out" 2>&1
for w in 16 8 4 2; do
  part "$LARGE_S" --kernels gemm,lu,cholesky,qr --sizes 4096 --only f64 --min-rounds 3 --width "$w"
done
part 30 --kernels qr --sizes 1024,2048 --width 2
for w in 2 4; do
  part "$GAP_S" --kernels svd --sizes 1024 --width "$w"
done
part 45 --kernels evd --sizes 1024 --width 4
