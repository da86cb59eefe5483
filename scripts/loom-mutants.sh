#!/usr/bin/env bash
# Checks that each loom model fails when the wake it guards is removed.
#
#   scripts/loom-mutants.sh [parker|fork ...]    (default: all)
#   scripts/loom-mutants.sh --check               (each mutant's line is where it says; no build)
#
# For each mutant: copy the tracked tree to a scratch folder, delete the wake (or replace the
# line), run the model under loom, and require that it fails. Exits non-zero when a mutant
# survives, i.e. when a model would not notice the fault, or when a mutant's line is not in its
# file exactly once (the code moved and the mutant would check nothing). `.ci/run` runs
# `--check`, so a protocol file that moves or changes its wake line fails CI until the list
# here follows it; the full run is for before changing a protocol.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target/loom-mutants}

# name | file | exact line | replacement (empty: delete) | model
mutants=(
  "parker|src/runtime/parker.rs|                self.cvar.notify_one();||parker_no_lost_wakeup"
  "fork|src/runtime/plain/fork.rs|            unsafe { (*owner).unpark() };||fork_two_claimers"
  "install|src/runtime/plain/fork.rs|            unsafe { (*owner).unpark() };||fork_owner_waits_for_its_only_helper"
  "join|src/runtime/team/section.rs|            unsafe { (*leader).unpark() };||section_join_woken_by_the_last_of_two_members"
  "barrier|src/runtime/team/section.rs|                self.wake_others(me); // the last arrival wakes the others||section_two_barrier_rounds"
  "cancel|src/runtime/team/section.rs|            self.wake_others(me); // cancellation wakes barrier sleepers||section_cancellation_wakes_a_barrier_sleeper"
  "publish|src/runtime/team/slot.rs|            self.unpark();||slot_publish_races_member_sleep"
  "publish-one|src/runtime/team/slot.rs|            self.unpark();||slot_publish_wakes_only_its_slot"
  "warm|src/runtime/team/slot.rs|            self.unpark(); // the warm-up wake||slot_wake_ends_member_sleep"
  "steal|src/runtime/team/slot.rs|        let mine = self.claim(g);|        let mine = true;|slot_leader_steals_a_share_once"
  "idle-wake|src/runtime/team/slot.rs|            slot.unpark(); // the idle-worker wake||idle_worker_woken_for_queued_work"
  "idle-fence|src/runtime/team/slot.rs|    fence(SeqCst);||idle_worker_woken_for_queued_work"
  "idle-fence-sleeper|src/runtime/team/slot.rs|        fence(SeqCst);||idle_worker_woken_for_queued_work"
  "settled-order|src/runtime/plain/fork.rs|        self.exhausted() && self.attached.load(Acquire) == 0|        self.attached.load(Acquire) == 0 && self.exhausted()|fork_owner_waits_for_its_only_helper"
)

if [ "${1:-}" = "--check" ]; then
  status=0
  for m in "${mutants[@]}"; do
    IFS='|' read -r name file line replacement model <<<"$m"
    found=$(grep -cxF -- "$line" "$root/$file" 2>/dev/null || true)
    if [ "$found" != 1 ]; then
      echo "mutant $name: the line to change is in $file ${found:-0} times, not once" >&2
      status=1
    elif ! grep -q "^fn $model()" "$root/tests/executor/loom.rs"; then
      echo "mutant $name: no model $model in tests/executor/loom.rs" >&2
      status=1
    fi
  done
  [ $status = 0 ] && echo "loom mutants: all ${#mutants[@]} lines found once, every model exists"
  exit $status
fi

want=("$@")
status=0
for m in "${mutants[@]}"; do
  IFS='|' read -r name file line replacement model <<<"$m"
  if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $name "* ]]; then
    continue
  fi
  scratch=$(mktemp -d)
  (cd "$root" && git ls-files -z | xargs -0 -I{} cp --parents {} "$scratch")
  before=$(grep -cxF -- "$line" "$scratch/$file" || true)
  if [ "$before" != 1 ]; then
    echo "mutant $name: the line to change is not in $file exactly once" >&2
    status=1
    continue
  fi
  LINE="$line" REPL="$replacement" python3 - "$scratch/$file" <<'PY'
import os, sys
path = sys.argv[1]
line, repl = os.environ["LINE"], os.environ["REPL"]
out = []
for l in open(path).read().split("\n"):
    if l == line:
        if repl:
            out.append(repl)
    else:
        out.append(l)
open(path, "w").write("\n".join(out))
PY
  echo "mutant $name: changed $file; running $model (a failure is expected)"
  if (cd "$scratch" && RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 CARGO_TARGET_DIR="$target" \
      cargo test -q --release --test loom -- --exact "$model" >"$scratch/log" 2>&1); then
    echo "mutant $name SURVIVED: the model passed with the fault in place" >&2
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
