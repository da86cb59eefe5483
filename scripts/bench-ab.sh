#!/usr/bin/env bash
# A/B comparison of two commits on the wait benchmark, alternating them round by round so that
# drift on a shared host falls on both.
#
#   scripts/bench-ab.sh BASE HEAD ROUNDS [wait_scenarios options...]
#   e.g. scripts/bench-ab.sh main HEAD 5 --impl teamalg --scenario sections --calls 30
#
# Builds both commits in temporary worktrees (release), runs ROUNDS rounds (odd rounds BASE
# first, even rounds HEAD first), collects every row in one CSV, then prints per cell the median
# over rounds of each side's median and the HEAD/BASE ratio (below 1: HEAD is faster).
# AB_BASE_BIN and AB_HEAD_BIN name wait_scenarios binaries already built for the two commits
# (then nothing is built; BASE and HEAD only label the sides). AB_KEEP_CSV=FILE keeps the rows.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 BASE HEAD ROUNDS [wait_scenarios options...]" >&2
  exit 2
fi
base=$1 head=$2 rounds=$3
shift 3
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
cleanup() {
  git -C "$root" worktree remove --force "$work/base" >/dev/null 2>&1 || true
  git -C "$root" worktree remove --force "$work/head" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
[ -n "${AB_KEEP_CSV:-}" ] && trap 'cp "$work/ab.csv" "$AB_KEEP_CSV" 2>/dev/null; cleanup' EXIT

declare -A bin
if [ -n "${AB_BASE_BIN:-}" ] && [ -n "${AB_HEAD_BIN:-}" ]; then
  bin[base]=$AB_BASE_BIN
  bin[head]=$AB_HEAD_BIN
  mkdir -p "$work/base" "$work/head"
fi
for side in base head; do
  [ -n "${bin[$side]:-}" ] && continue
  rev=$([ "$side" = base ] && echo "$base" || echo "$head")
  git -C "$root" worktree add --detach "$work/$side" "$rev" >/dev/null 2>&1
  echo "building $side ($(git -C "$root" rev-parse --short "$rev"))" >&2
  if [ -f "$work/$side/tools/src/bin/wait_scenarios.rs" ]; then
    # A program of teamalg-tools.
    (cd "$work/$side" && CARGO_TARGET_DIR="$work/target-$side" cargo build -q --release -p teamalg-tools --bin wait_scenarios 2>&1 | tail -n 3 >&2)
    bin[$side]="$work/target-$side/release/wait_scenarios"
  else
    # Commits before the programs moved to teamalg-tools: a bench of the root package.
    (cd "$work/$side" && CARGO_TARGET_DIR="$work/target-$side" cargo bench -q --bench wait_scenarios --no-run 2>&1 | tail -n 3 >&2)
    bin[$side]=$(ls -t "$work/target-$side"/release/deps/wait_scenarios-* | grep -v '\.d$' | head -n 1)
  fi
done

csv="$work/ab.csv"
for round in $(seq 1 "$rounds"); do
  order="base head"
  [ $((round % 2)) -eq 0 ] && order="head base"
  for side in $order; do
    echo "round $round/$rounds: $side" >&2
    (cd "$work/$side" && "${bin[$side]}" "$@" --csv "$csv" --label "$side" >/dev/null)
  done
done

python3 - "$csv" <<'PY'
import csv, statistics, sys
cells = {}
for row in csv.reader(open(sys.argv[1])):
    if len(row) != 9:
        continue
    label, imp, scenario, case, width, _calls, median = row[:7]
    cells.setdefault((imp, scenario, case, int(width)), {}).setdefault(label, []).append(float(median))
print(f"{'impl':<8} {'scenario':<9} {'case':<20} {'width':>5} {'base (us)':>12} {'head (us)':>12} {'head/base':>10}")
for key in sorted(cells):
    sides = cells[key]
    if "base" not in sides or "head" not in sides:
        continue
    b, h = statistics.median(sides["base"]), statistics.median(sides["head"])
    ratio = h / b if b else float("nan")
    print(f"{key[0]:<8} {key[1]:<9} {key[2]:<20} {key[3]:>5} {b:>12.1f} {h:>12.1f} {ratio:>10.3f}")
PY
