#!/usr/bin/env bash
# Runs the kernel benchmark for the perf front page and writes docs/perf/kernels.md from its CSV:
# one table per family, with the host, the date, the commit and the commands.
#
#   scripts/perf-page.sh [WIDTH]     (default 2)
#
# Runs the whole set twice, in turn (the page lists both runs' ratios: a cell that moved says
# so). Run it on a quiet host, with nothing compiling beside it; it takes about five
# minutes on two CPUs. Before a new page replaces the old one, move what the old page says that the new one
# does not into docs/perf/runs/kernels-log.md.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
width=${1:-2}
# The rows stay in target/ (ignored), so the page can be written again from them.
mkdir -p target/perf-page
rm -f target/perf-page/run-*.csv
cargo build -q --release -p teamalg-tools --bin kernels --bin perf-page
# The commit of the code measured, read when it is built (changes under docs/ are no code).
commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- . ':(exclude)docs' || commit="$commit (with uncommitted changes)"
bin=target/release/kernels
# Every family of the facade, in the kernels' scratch forms against faer's (the facade's owned
# forms are the front table's, `scripts/front.sh`).
runs=(
  "--kernels gemm,trsm,lu,cholesky,ldlt,lblt,qr,col_piv_qr --sizes 64,256,1024"
  "--kernels full_piv_lu --sizes 64,256,512"
  "--kernels svd,evd,eigen,tridiag,bidiag --sizes 128,512"
  "--kernels sparse --sizes 64,256"
  "--kernels sparse_sparse --sizes 1024,16384"
)
commands=()
for args in "${runs[@]}"; do
  commands+=("kernels $args --width $width --csv FILE")
done
for round in 1 2; do
  for args in "${runs[@]}"; do
    # shellcheck disable=SC2086 # the arguments are words
    "$bin" $args --width "$width" --csv "target/perf-page/run-$round.csv"
  done
done
host="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs, $(free -g | awk '/Mem:/{print $2}') GiB"
joined=$(printf '%s; ' "${commands[@]}")
target/release/perf-page --csv target/perf-page/run-1.csv --csv target/perf-page/run-2.csv --host "$host" --date "$(date -u +%F)" \
  --commit "$commit" --command "scripts/perf-page.sh $width, that is, twice in turn: ${joined%; }"
echo "rows in target/perf-page/run-1.csv and run-2.csv" >&2
