#!/usr/bin/env bash
# Builds the libgomp arm of the wait benchmark: tools/omp/build/wait_scenarios.
# Needs gcc with OpenMP (libgomp); on Debian: apt-get install gcc libgomp1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/build"
cc=${CC:-gcc}
"$cc" -O2 -fopenmp -o "$here/build/wait_scenarios" "$here/wait_scenarios.c"
echo "$here/build/wait_scenarios"
