#!/usr/bin/env python3
"""Writes the README's front table (docs/perf/front.md) from scripts/front.sh's CSV rows.

Reads DIR/{quiet,busy}-{1,2}-{kernels,lapack}.csv: the kernel benchmark's rows (faer serial,
faer on rayon, teamalg on a held team, a team per call, each with its ratio to faer serial in
the same round) and OpenBLAS's rows (scripts/lapack.sh, whose ratio is its median over faer
serial's median from the kernel run of the same condition and round). Standard library only.
"""
import argparse
import csv
import os
import sys

CONDITIONS = [("quiet", "quiet"), ("busy", "beside one busy process")]
ARMS = [("faer_rayon", "faer on rayon"), ("openblas", "OpenBLAS LAPACK"),
        ("teamalg_team", "teamalg")]


def read(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def us(x):
    """Microseconds: whole from 1000 on, else four significant digits."""
    x = float(x)
    return f"{x:.0f}" if x >= 1000 else f"{x:.4g}"


def key(row):
    return (row["kernel"], row["scalar"], int(row["n"]))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dir", required=True)
    p.add_argument("--host", required=True)
    p.add_argument("--date", required=True)
    p.add_argument("--commit", required=True)
    p.add_argument("--width", required=True)
    p.add_argument("--command", required=True)
    p.add_argument("--readme", action="store_true",
                   help="print README.md's short table instead: each row at its largest n")
    a = p.parse_args()

    # ratios[(cond, arm, key)] = [round 1, round 2]; serial[key] = quiet round 1's faer serial;
    # times[(cond, arm, key)] = round 1's row (median, p90, max).
    ratios, serial, order, times = {}, {}, [], {}
    for cond, _ in CONDITIONS:
        for rnd in (1, 2):
            base = {}
            for row in read(os.path.join(a.dir, f"{cond}-{rnd}-kernels.csv")):
                k = key(row)
                if rnd == 1:
                    times[(cond, row["arm"], k)] = row
                if row["arm"] == "faer_serial":
                    base[k] = float(row["median_us"])
                    if cond == "quiet" and rnd == 1:
                        serial[k] = row
                        order.append(k)
                elif row["ratio_to_serial"]:
                    ratios.setdefault((cond, row["arm"], k), []).append(
                        float(row["ratio_to_serial"]))
            for row in read(os.path.join(a.dir, f"{cond}-{rnd}-lapack.csv")):
                k = key(row)
                if rnd == 1:
                    times[(cond, "openblas", k)] = row
                if k in base:
                    ratios.setdefault((cond, "openblas", k), []).append(
                        float(row["median_us"]) / base[k])
    if not order:
        sys.exit(f"no rows in {a.dir}")

    def cell(cond, arm, k):
        r = ratios.get((cond, arm, k))
        if not r:
            return "-"
        return " / ".join(f"{x:.2f}" for x in r)

    if a.readme:
        largest = {}
        for k in order:
            largest[(k[0], k[1])] = max(largest.get((k[0], k[1]), 0), k[2])
        head = ["kernel", "n"] + [f"{aname}, {cname}" for cond, cname in CONDITIONS
                                  for _, aname in ARMS]
        print("| " + " | ".join(head) + " |")
        print("| --- | ---: | " + " | ".join("---:" for _ in head[2:]) + " |")
        for k in order:
            if k[2] != largest[(k[0], k[1])]:
                continue
            row = [f"{k[0]} {k[1]}", str(k[2])]
            for cond, _ in CONDITIONS:
                row += [cell(cond, arm, k) for arm, _ in ARMS]
            print("| " + " | ".join(row) + " |")
        return

    out = []
    w = out.append
    w("# The front table: the facade against faer serial, faer on rayon and OpenBLAS")
    w("")
    w("Written by `scripts/front.sh` (rows: `scripts/lapack/front.py`); not edited by hand. "
      "README.md's table is this one.")
    w("")
    w(f"- Host: {a.host}")
    w(f"- Date: {a.date}")
    w(f"- Commit: {a.commit}")
    w(f"- Command: `{a.command}`: per condition and round, `kernels --owned --width {a.width}` "
      f"(interleaved call by call: faer serial, faer on rayon, teamalg on a held team, a team "
      f"per call), then `scripts/lapack.sh --threads {a.width}` (OpenBLAS through scipy, in "
      f"its own process); quiet, then beside one busy process at nice 0 "
      f"(`../shared/tools/with-load.sh 1 0`); twice in turn.")
    w("- A cell is a time over faer serial's in the same condition and round (below 1 is "
      "faster than serial), one per round. faer and teamalg are timed through their owned "
      "forms (input checked, outputs allocated); OpenBLAS's time is the LAPACK routine's "
      "(`?getrf`, `?potrf`, `?geqrf`, `?geqp3`, `?sytrf`/`?hetrf`, `?gesdd`, `?syevd`/"
      "`?heevd`, `?geev`, `?gemm`, `?trsm`) through scipy with its workspace queried once, "
      "in a process beside the kernel benchmark's, so its ratio also carries any drift of "
      "the host between the two.")
    w(f"- Every parallel arm runs {a.width} threads.")
    w("")
    head = ["kernel", "n", "faer serial us"]
    for _, cname in CONDITIONS:
        head += [f"{aname}, {cname}" for _, aname in ARMS]
    w("| " + " | ".join(head) + " |")
    w("| --- | ---: | ---: | " + " | ".join("---:" for _ in head[3:]) + " |")
    for k in order:
        row = [f"{k[0]} {k[1]}", str(k[2]), us(serial[k]["median_us"])]
        for cond, _ in CONDITIONS:
            row += [cell(cond, arm, k) for arm, _ in ARMS]
        w("| " + " | ".join(row) + " |")
    w("")
    w("## Times of the first round")
    w("")
    w("Microseconds: median (p90, max) over the cell's calls.")
    w("")
    tarms = [("faer_serial", "faer serial"), ("faer_rayon", "faer on rayon"),
             ("openblas", "OpenBLAS LAPACK"), ("teamalg_team", "teamalg")]
    w("| kernel | n | condition | " + " | ".join(n for _, n in tarms) + " |")
    w("| --- | ---: | --- | " + " | ".join("---:" for _ in tarms) + " |")

    def t(row):
        if row is None:
            return "-"
        return f"{us(row['median_us'])} ({us(row['p90_us'])}, {us(row['max_us'])})"

    for k in order:
        for cond, cname in CONDITIONS:
            cells = [t(times.get((cond, arm, k))) for arm, _ in tarms]
            w(f"| {k[0]} {k[1]} | {k[2]} | {cname} | " + " | ".join(cells) + " |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
