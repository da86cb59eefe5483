#!/usr/bin/env bash
# Runs the kernel benchmark for the perf front page and writes docs/perf/kernels.md from its CSV:
# one table per family, with the host, the date, the commit and the commands.
#
#   scripts/perf-page.sh [WIDTH]     (default 2)
#
# Run it on a quiet host, with nothing compiling beside it; it takes about ten minutes on two
# CPUs. Before a new page replaces the old one, move what the old page says that the new one
# does not into docs/perf/runs/kernels-log.md.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
width=${1:-2}
csv=$(mktemp --suffix .csv)
trap 'rm -f "$csv"' EXIT
cargo build -q --release -p teamalg-tools --bin kernels --bin perf-page
bin=target/release/kernels
runs=(
  "--kernels gemm,lu,cholesky,qr --sizes 64,128,256,512,1024"
  "--kernels svd,evd,tridiag,bidiag --sizes 128,256,512"
  "--kernels sparse --sizes 64,128,256"
  "--kernels sparse_sparse --sizes 1024,4096,16384"
)
commands=()
for args in "${runs[@]}"; do
  # shellcheck disable=SC2086 # the arguments are words
  "$bin" $args --width "$width" --owned --csv "$csv"
  commands+=("kernels $args --width $width --owned --csv FILE")
done
host="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs, $(free -g | awk '/Mem:/{print $2}') GiB"
commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD || commit="$commit (with uncommitted changes)"
joined=$(printf '%s; ' "${commands[@]}")
target/release/perf-page --csv "$csv" --host "$host" --date "$(date -u +%F)" \
  --commit "$commit" --command "scripts/perf-page.sh $width, that is: ${joined%; }"
