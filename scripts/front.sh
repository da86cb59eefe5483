#!/usr/bin/env bash
# Measures the README's front table: the facade's owned forms against faer serial, faer on rayon
# and OpenBLAS's LAPACK at the same thread count, on a quiet machine and beside one busy process
# (nice 0), and writes docs/perf/front.md.
#
#   scripts/front.sh [WIDTH]     (default 2)
#
# Each condition runs twice, in turn: the kernel benchmark (`kernels --owned`: faer serial,
# faer on rayon, teamalg on a held team, a team per call, interleaved call by call), then
# `scripts/lapack.sh` (OpenBLAS, in its own process: its ratio divides by faer serial's median
# from the kernel run just before it). Run it with nothing compiling beside it; about 25
# minutes on two CPUs. A benchmark: no test and no CI step depends on it.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
width=${1:-2}
out=target/front
mkdir -p "$out"
rm -f "$out"/*.csv
cargo build -q --release -p teamalg-tools --bin kernels
# The commit of the code measured (changes under docs/ are no code).
commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- . ':(exclude)docs' || commit="$commit (with uncommitted changes)"
load=../shared/tools/with-load.sh
[ -x "$load" ] || load="$root/../shared/tools/with-load.sh"
# Dense families at 256 and 1024, spectral ones at 128 and 512 (their 1024 takes seconds a call).
sets=(
  "gemm,trsm,lu,cholesky,ldlt,qr,col_piv_qr 256,1024"
  "svd,evd,eigen 128,512"
)
run() { # condition round
  local cond=$1 round=$2 pre=()
  [ "$cond" = busy ] && pre=("$load" 1 0)
  for set in "${sets[@]}"; do
    read -r kernels sizes <<<"$set"
    "${pre[@]}" target/release/kernels --kernels "$kernels" --sizes "$sizes" --width "$width" \
      --owned --csv "$out/$cond-$round-kernels.csv"
    "${pre[@]}" scripts/lapack.sh --threads "$width" --kernels "$kernels" --sizes "$sizes" \
      --csv "$out/$cond-$round-lapack.csv"
  done
}
for round in 1 2; do
  run quiet "$round"
  run busy "$round"
done
host="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs, $(free -g | awk '/Mem:/{print $2}') GiB"
python3 scripts/lapack/front.py --dir "$out" --host "$host" --date "$(date -u +%F)" \
  --commit "$commit" --width "$width" --command "scripts/front.sh $width" > docs/perf/front.md
echo "wrote docs/perf/front.md (rows in $out)" >&2
