#!/usr/bin/env bash
# Checks that each loom model fails when the wake it guards is removed.
#
#   scripts/loom-mutants.sh [parker|batch ...]    (default: all)
#
# For each mutant: copy the tracked tree to a scratch folder, delete the wake, run the model
# under loom, and require that it fails (loom reports a deadlock). Exits non-zero when a
# mutant survives, i.e. when a model would not notice a lost wake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target/loom-mutants}

# name | file | exact line to delete | model
mutants=(
  "parker|src/parker.rs|                self.cvar.notify_one();|parker_no_lost_wakeup"
  "batch|src/batch.rs|            unsafe { (*owner).unpark() };|batch_two_claimers"
)

want=("$@")
status=0
for m in "${mutants[@]}"; do
  IFS='|' read -r name file line model <<<"$m"
  if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $name "* ]]; then
    continue
  fi
  scratch=$(mktemp -d)
  (cd "$root" && git ls-files -z | xargs -0 -I{} cp --parents {} "$scratch")
  before=$(grep -cxF -- "$line" "$scratch/$file" || true)
  if [ "$before" != 1 ]; then
    echo "mutant $name: the line to delete is not in $file exactly once" >&2
    status=1
    continue
  fi
  grep -vxF -- "$line" "$scratch/$file" >"$scratch/$file.new" && mv "$scratch/$file.new" "$scratch/$file"
  echo "mutant $name: removed the wake from $file; running $model (a failure is expected)"
  if (cd "$scratch" && RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 CARGO_TARGET_DIR="$target" \
      cargo test -q --release --test loom -- --exact "$model" >"$scratch/log" 2>&1); then
    echo "mutant $name SURVIVED: the model passed without its wake" >&2
    status=1
  elif grep -qi "deadlock" "$scratch/log"; then
    echo "mutant $name killed: loom reports a deadlock"
  else
    echo "mutant $name killed (failure other than a deadlock):"
    grep -iE "panicked|error" "$scratch/log" | head -3
  fi
  rm -rf "$scratch"
done
exit $status
