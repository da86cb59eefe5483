#!/usr/bin/env bash
# The third scaling run (docs/scale.md, "Widths above two"): the SVD and the EVD with vectors at
# 1024 in real arithmetic at widths 16, 8, 4 and 2, after their divide and conquers tear below
# the top on teams wider than two, and LU at 2048 and 4096 after its deferred row swaps, all
# into one file, OUT_DIR/run.txt. BIN is the benchmark binary (`cargo build --release -p
# teamalg-tools --bin kernels`); each part that overruns its share of the time is cut off and
# the next one runs.
set -u
BIN=${BIN:-target/release/kernels}
OUT_DIR=${OUT_DIR:-scale-out}
SPECTRAL_S=${SPECTRAL_S:-50}
mkdir -p "$OUT_DIR"
out="$OUT_DIR/run.txt"
# shellcheck source=scripts/scale-part.sh
. "$(dirname "$0")/scale-part.sh"
{ date -u +%FT%TZ; nproc; lscpu | grep -E "Model name|^CPU\(s\)|L3"; } > "$out" 2>&1
for w in 16 8 4 2; do
  part "$SPECTRAL_S" --kernels svd,evd --sizes 1024 --only f64 --width "$w"
done
for w in 16 2; do
  part 25 --kernels lu --sizes 2048 --only f64 --width "$w"
done
part 30 --kernels lu --sizes 4096 --only f64 --min-rounds 3 --width 16
