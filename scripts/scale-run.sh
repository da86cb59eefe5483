#!/usr/bin/env bash
# One scaling run of the kernel benchmark at widths 2, 4, 8 and 16 (docs/scale.md, "Widths
# above two"): the dense kernels at 1024 and 2048, the SVD and EVD at 1024, each width's
# table into OUT_DIR/wW-dense.txt and wW-spectral.txt. BIN is the benchmark binary
# (`cargo build --release -p teamalg-tools --bin kernels`); a width that overruns its share of
# the time is cut off and the next one runs.
set -u
BIN=${BIN:-target/release/kernels}
OUT_DIR=${OUT_DIR:-scale-out}
DENSE_S=${DENSE_S:-80}
SPECTRAL_S=${SPECTRAL_S:-45}
mkdir -p "$OUT_DIR"
{ nproc; lscpu; } > "$OUT_DIR/host.txt" 2>&1
date -u +%FT%TZ > "$OUT_DIR/date.txt"
for w in 16 2 8 4; do
  timeout "$DENSE_S" "$BIN" --kernels gemm,lu,cholesky,qr --sizes 1024,2048 --width "$w" \
    > "$OUT_DIR/w$w-dense.txt" 2>&1
  timeout "$SPECTRAL_S" "$BIN" --kernels svd,evd --sizes 1024 --width "$w" \
    > "$OUT_DIR/w$w-spectral.txt" 2>&1
done
