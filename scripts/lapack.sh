#!/usr/bin/env bash
# OpenBLAS's LAPACK on the kernel benchmark's problems, for the front page's "OpenBLAS LAPACK"
# column beside faer serial, faer on rayon and teamalg.
#
#   scripts/lapack.sh [--threads N] [--kernels LIST] [--sizes LIST] [--csv FILE]
#                     [--rounds N] [--min-time S] [--max-rounds N] [--scalars f64,c64]
#   e.g. scripts/lapack.sh --threads 2 --kernels gemm,lu,cholesky,qr --sizes 128,256,512,1024 \
#            --csv lapack.csv
#
# Creates a virtual environment at target/lapack-venv (target/ is git-ignored) when it is
# missing, pip-installs numpy, scipy and threadpoolctl into it (scipy's wheels carry their own
# OpenBLAS), then runs scripts/lapack/bench.py with the arguments given: the same row names,
# inputs and CSV columns as `kernels --csv` (arm `openblas`, width = the thread count,
# ratio_to_serial empty: whatever joins the tables divides by faer serial's median from the
# kernels run beside it). `scripts/lapack/bench.py --help` describes every option; `--list`
# prints the kernels it has and those it skips.
#
# A benchmark, run by hand: no test, no build and no CI step depends on it or on the venv.
#
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for the benchmark alone: some machines set
# them for an older OpenBLAS, and they make a current one pick a slower kernel.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/target/lapack-venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "creating $venv (numpy, scipy, threadpoolctl from PyPI)" >&2
  python3 -m venv "$venv"
  if ! "$venv/bin/python" -m pip install --quiet numpy scipy threadpoolctl; then
    # A half-made venv would be taken as ready next time.
    rm -rf "$venv"
    exit 1
  fi
fi
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
  "$venv/bin/python" "$root/scripts/lapack/bench.py" "$@"
