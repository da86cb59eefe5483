"""OpenBLAS's LAPACK on the kernel benchmark's problems, as CSV rows in the benchmark's format.

    scripts/lapack.sh [--threads N] [--kernels LIST] [--sizes LIST] [--csv FILE]
                      [--rounds N] [--min-time S] [--max-rounds N] [--scalars f64,c64]
                      [--aspect X] [--list]

Run through scripts/lapack.sh (which makes the venv with numpy, scipy and threadpoolctl, and
unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE). A benchmark, run by hand; nothing depends on it.

What it times, per row of `kernels` (tools/src/bin/kernels/cases/{dense,spectral}.rs): the same
row names ("lu f64", "svd values c64", ...), the same inputs (`re`, `cx`, `spd` of
cases/mod.rs, reproduced with numpy, in Fortran order) and the same operation, through scipy's
wrappers of the LAPACK and BLAS routines of the OpenBLAS that scipy's wheel carries. Each timed
call works in place (`overwrite_a=1`, or `overwrite_b=1`, `overwrite_c=1`) on a working copy of
the input refreshed before it, untimed, as the benchmark's `prepare` does; the workspace sizes
are LAPACK's optimal ones (queried once per cell: scipy's defaults are the minimal ones, which
turn the blocked algorithms into unblocked ones). What the wrapper adds inside the timed call:
the Python call (a few microseconds) and the allocation of its outputs (pivots, tau, U and V^T
of the SVD, the workspace), where faer's and teamalg's arms write into outputs they hold.

Threads: threadpoolctl's `threadpool_limits(N, user_api="blas")` around the whole run, so
every OpenBLAS loaded (numpy's and scipy's) runs N threads; threadpoolctl's view of them
(version, core name, threads) goes to stderr first, so that a run records which kernel ran.
getrf and potrf are OpenBLAS's own threaded implementations; the other LAPACK routines are
reference LAPACK over OpenBLAS's threaded BLAS.

Timing: one untimed call per cell first (its result checked: `info == 0`, the work done in
the caller's array rather than a copy), then calls until there are at least --rounds of them
and --min-time seconds have passed, at most --max-rounds. Median and p90 by the tools crate's
rule (nearest rank, rounded half up: tools/src/stats.rs). Unlike `kernels`, which interleaves
its four arms call by call so that drift falls on all alike, this arm runs alone: its ratio to
faer serial compares two runs, and carries whatever the host's speed did between them.

CSV rows: `kernel,scalar,n,width,arm,median_us,p90_us,max_us,ratio_to_serial` (ARM_COLUMNS in
tools/src/csv.rs), `kernel` and `scalar` split at the row name's first space as the benchmark
splits them (table.rs: "lu f64" -> lu, f64; "svd values f64" -> svd, values f64), arm
`openblas`, width the thread count, ratio_to_serial empty.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy
from scipy.linalg import blas, lapack
from threadpoolctl import threadpool_info, threadpool_limits

ARM_COLUMNS = "kernel,scalar,n,width,arm,median_us,p90_us,max_us,ratio_to_serial"
ARM = "openblas"
# The kernels binary's default lists.
DEFAULT_KERNELS = "gemm,lu,cholesky,qr"
DEFAULT_SIZES = "32,64,128,256,512,1024,2048"

# The benchmark's kernels this script does not time, and why.
SKIPPED = {
    "full_piv_lu": "LAPACK has only the unblocked ?getc2 (a building block of ?gesc2, not a "
    "factorization users call); timing it against faer's blocked full pivoting would say "
    "nothing",
    "bidiag": "scipy wraps no ?gebrd (LAPACK's bidiagonalization alone)",
    "sparse": "no LAPACK counterpart (sparse times dense)",
    "sparse_sparse": "no LAPACK counterpart (sparse times sparse)",
}


# --- The benchmark's inputs (cases/mod.rs, cases/dense.rs, cases/spectral.rs) ----------------


def re(m: int, n: int) -> np.ndarray:
    """`re(i, j)` for i < m, j < n: a slowly varying smooth part plus a hash."""
    i, j = np.indices((m, n), dtype=np.int64)
    h = (i * 0x9E37_79B9 + j * 0x85EB_CA6B) % 1000
    return np.asfortranarray(np.sin((i * 7 + j * 3).astype(np.float64) * 0.01) + h / 1000.0 - 0.5)


def cx(m: int, n: int) -> np.ndarray:
    """`cx(i, j) = re(i, j) + i re(j, i)`."""
    return np.asfortranarray(re(m, n) + 1j * re(n, m).T)


def entries(scalar: str, m: int, n: int) -> np.ndarray:
    return re(m, n) if scalar == "f64" else cx(m, n)


def spd(b: np.ndarray) -> np.ndarray:
    """`B B^H + n I`: positive definite."""
    n = b.shape[0]
    return np.asfortranarray(b @ b.conj().T + n * np.eye(n, dtype=b.dtype))


def plus_adjoint(b: np.ndarray) -> np.ndarray:
    """`b + b^H`, Hermitian (the `evd` and `tridiag` rows' input, the `lblt` rows')."""
    return np.asfortranarray(b + b.conj().T)


def uniform(m: int, n: int, salt: int) -> np.ndarray:
    """spectral.rs's `uniform(i, j, salt)`: a hash in [-0.5, 0.5), 64-bit wrapping."""
    i, j = np.indices((m, n), dtype=np.uint64)
    x = i ^ (j << np.uint64(21)) ^ np.uint64((salt << 42) % (1 << 64))
    x = x * np.uint64(0x9E37_79B9_7F4A_7C15)
    x ^= x >> np.uint64(31)
    x = x * np.uint64(0xBF58_476D_1CE4_E5B9)
    x ^= x >> np.uint64(29)
    return (x >> np.uint64(11)).astype(np.float64) / float(1 << 53) - 0.5


def random_symmetric(n: int) -> np.ndarray:
    i, j = np.indices((n, n))
    u = uniform(n, n, 1)
    return np.asfortranarray(u[np.minimum(i, j), np.maximum(i, j)])


def gram(n: int) -> np.ndarray:
    g = uniform(n, n, 2)
    return np.asfortranarray(g.T @ g + n * np.eye(n))


def with_spectrum(n: int, w: np.ndarray) -> np.ndarray:
    """`Q diag(w) Q^T`, `Q` the orthogonal factor of a uniform matrix (unique up to its columns'
    signs, which `Q diag(w) Q^T` does not see), made exactly symmetric from its lower half."""
    q, _ = np.linalg.qr(uniform(n, n, 3))
    a = (q * w) @ q.T
    return np.asfortranarray(np.tril(a) + np.tril(a, -1).T)


def graded(n: int) -> np.ndarray:
    last = max(n, 2) - 1
    return with_spectrum(n, 10.0 ** (-10.0 * np.arange(n) / last))


def clustered(n: int) -> np.ndarray:
    i = np.arange(n)
    return with_spectrum(n, (1 + 4 * i // n).astype(np.float64) + 1e-10 * i)


def lower(a: np.ndarray) -> np.ndarray:
    """dense.rs's `lower(n, f, n)`: `a` with `n` on the diagonal (above it `a` too, unread)."""
    n = a.shape[0]
    out = a.copy(order="F")
    out[np.diag_indices(n)] = n
    return out


# --- The rows ---------------------------------------------------------------------------------


@dataclass
class Cell:
    """One row at one size: the input, and the call on a working copy of it (`info` back, or
    None for the BLAS calls)."""

    src: np.ndarray
    call: Callable[[np.ndarray], int | None]
    routine: str


@dataclass
class Row:
    name: str  # the benchmark's row name, e.g. "lu f64"
    scalar: str  # f64 or c64, for --scalars
    factor: bool  # the factorizations' sizes only (from 64), as Settings::factor_sizes
    build: Callable[[int], Cell]


def lwork(query, *args, **kw) -> list[int]:
    """LAPACK's optimal workspace sizes, from scipy's `?xxx_lwork` workspace query."""
    out = query(*args, **kw)
    check(out[-1], query.__name__)
    return [int(math.ceil(np.asarray(x).real.ravel()[0])) for x in out[:-1]]


def check(info, routine: str) -> None:
    if info is not None and int(info) != 0:
        raise RuntimeError(f"{routine}: info = {int(info)}")


def p(scalar: str) -> str:
    return "d" if scalar == "f64" else "z"


def fn(name: str):
    return getattr(lapack, name)


def rows_of(kernel: str, aspect: float | None) -> list[Row]:
    both = ("f64", "c64")
    if kernel == "gemm":
        # C = A B, n x n x n, A = re(i, j) (cx), B = re(j, i) (cx(j, i): A^T, not A^H).
        def gemm(s):
            def build(n):
                a = entries(s, n, n)
                b = np.asfortranarray(a.T)
                f = getattr(blas, p(s) + "gemm")
                one = 1.0

                def call(c):
                    f(one, a, b, beta=0.0, c=c, overwrite_c=1)

                return Cell(np.zeros((n, n), dtype=a.dtype, order="F"), call, f"{p(s)}gemm")

            return Row(f"gemm {s}", s, False, build)

        return [gemm(s) for s in both]
    if kernel == "trsm":
        # L X = B, L lower n x n (n on the diagonal), B n x n with B[i, j] = L[(i + j) % n, j].
        def trsm(s):
            def build(n):
                l = lower(entries(s, n, n))
                i, j = np.indices((n, n))
                b = np.asfortranarray(l[(i + j) % n, j])
                f = getattr(blas, p(s) + "trsm")

                def call(x):
                    f(1.0, l, x, side=0, lower=1, trans_a=0, diag=0, overwrite_b=1)

                return Cell(b, call, f"{p(s)}trsm")

            return Row(f"trsm {s}", s, False, build)

        return [trsm(s) for s in both]
    if kernel == "lu":

        def lu(s):
            def build(n):
                f = fn(p(s) + "getrf")
                return Cell(entries(s, n, n), lambda a: f(a, overwrite_a=1)[2], f"{p(s)}getrf")

            return Row(f"lu {s}", s, True, build)

        return [lu(s) for s in both]
    if kernel == "cholesky":

        def chol(s):
            def build(n):
                f = fn(p(s) + "potrf")
                return Cell(
                    spd(entries(s, n, n)),
                    lambda a: f(a, lower=1, clean=0, overwrite_a=1)[1],
                    f"{p(s)}potrf (lower)",
                )

            return Row(f"cholesky {s}", s, True, build)

        return [chol(s) for s in both]
    if kernel in ("ldlt", "lblt"):
        # ldlt: LDL^H of B B^H + n I; lblt: Bunch-Kaufman of re(i, j) + re(j, i) (cx(i, j) +
        # conj(cx(j, i))). LAPACK has no LDL^H without pivoting: both rows call ?sytrf / ?hetrf
        # (Bunch-Kaufman, partial pivoting, the lower triangle, as faer's
        # PivotingStrategy::Partial); on the ldlt rows' input it should pick 1x1 pivots and swap
        # nothing, the factorization then being LDL^H without pivoting plus the pivot search
        # (O(n^2) comparisons); the first call's pivots are checked and a swap reported.
        def sym(s):
            name = ("sytrf" if s == "f64" else "hetrf")

            def build(n):
                b = entries(s, n, n)
                src = spd(b) if kernel == "ldlt" else plus_adjoint(b)
                f = fn(p(s) + name)
                (lw,) = lwork(fn(p(s) + name + "_lwork"), n, lower=1)

                def call(a):
                    _, ipiv, info = f(a, lower=1, lwork=lw, overwrite_a=1)
                    if kernel == "ldlt" and not np.array_equal(ipiv, np.arange(1, n + 1)):
                        call.pivoted = True
                    return info

                call.pivoted = False
                return Cell(src, call, f"{p(s)}{name} (lower)")

            return Row(f"{kernel} {s}", s, True, build)

        return [sym(s) for s in both]
    if kernel == "qr":

        def qr(s):
            def build(n):
                f = fn(p(s) + "geqrf")
                (lw,) = lwork(fn(p(s) + "geqrf_lwork"), n, n)
                return Cell(
                    entries(s, n, n), lambda a: f(a, lwork=lw, overwrite_a=1)[3], f"{p(s)}geqrf"
                )

            return Row(f"qr {s}", s, True, build)

        return [qr(s) for s in both]
    if kernel == "col_piv_qr":

        def cpqr(s):
            def build(n):
                src = entries(s, n, n)
                f = fn(p(s) + "geqp3")
                # scipy has no ?geqp3_lwork: the query through the routine itself.
                q = f(src.copy(order="F"), lwork=-1)
                check(q[4], f"{p(s)}geqp3 query")
                lw = int(math.ceil(q[3].real.ravel()[0]))
                return Cell(src, lambda a: f(a, lwork=lw, overwrite_a=1)[4], f"{p(s)}geqp3")

            return Row(f"col_piv_qr {s}", s, True, build)

        return [cpqr(s) for s in both]
    if kernel == "svd":
        # Thin vectors (compute_uv, not full_matrices), or values only; round(aspect n) x n.
        def svd(s, vectors):
            def build(n):
                m = n if aspect is None else int(math.floor(aspect * n + 0.5))
                f = fn(p(s) + "gesdd")
                uv = 1 if vectors else 0
                (lw,) = lwork(fn(p(s) + "gesdd_lwork"), m, n, compute_uv=uv, full_matrices=0)
                return Cell(
                    entries(s, m, n),
                    lambda a: f(a, compute_uv=uv, full_matrices=0, lwork=lw, overwrite_a=1)[3],
                    f"{p(s)}gesdd ({'thin vectors' if vectors else 'values'})",
                )

            return Row(f"svd {'' if vectors else 'values '}{s}", s, True, build)

        return [svd(s, v) for s in both for v in (True, False)]
    if kernel == "evd":
        # The EVD of b + b^H (b = re, cx), with vectors or values only.
        return [
            evd_row(f"evd {'' if v else 'values '}{s}", s, v, lambda n, s=s: herm(s, n))
            for s in both
            for v in (True, False)
        ]
    if kernel == "evd_spectra":
        spectra = [
            ("random", random_symmetric),
            ("gram", gram),
            ("graded", graded),
            ("clustered", clustered),
            ("bench", lambda n: plus_adjoint(re(n, n))),
        ]
        return [evd_row(f"evd f64 {k}", "f64", True, make) for k, make in spectra]
    if kernel == "eigen":
        # The general EVD with (right) vectors, as faer's Mat::eigen.
        def eig(s):
            def build(n):
                f = fn(p(s) + "geev")
                (lw,) = lwork(fn(p(s) + "geev_lwork"), n, compute_vl=0, compute_vr=1)
                return Cell(
                    entries(s, n, n),
                    lambda a: f(a, compute_vl=0, compute_vr=1, lwork=lw, overwrite_a=1)[-1],
                    f"{p(s)}geev (right vectors)",
                )

            return Row(f"eigen {s}", s, True, build)

        return [eig(s) for s in both]
    if kernel == "tridiag":
        # The reduction alone: ?sytrd / ?hetrd of b + b^H (the lower triangle), Householder
        # vectors and tau out (faer's and teamalg's write their block reflectors' H besides).
        def tri(s):
            name = "sytrd" if s == "f64" else "hetrd"

            def build(n):
                f = fn(p(s) + name)
                (lw,) = lwork(fn(p(s) + name + "_lwork"), n, lower=1)
                return Cell(
                    plus_adjoint(entries(s, n, n)),
                    lambda a: f(a, lower=1, lwork=lw, overwrite_a=1)[-1],
                    f"{p(s)}{name} (lower)",
                )

            return Row(f"tridiag {s}", s, True, build)

        return [tri(s) for s in both]
    if kernel in SKIPPED:
        return []
    raise SystemExit(f"unknown kernel {kernel!r}; kernels: {', '.join(SUPPORTED)}")


def herm(s: str, n: int) -> np.ndarray:
    return plus_adjoint(entries(s, n, n))


def evd_row(name: str, s: str, vectors: bool, make: Callable[[int], np.ndarray]) -> Row:
    """?syevd / ?heevd of `make(n)` (the lower triangle, as faer's Side::Lower), with vectors
    or values only."""
    routine = "syevd" if s == "f64" else "heevd"

    def build(n):
        f = fn(p(s) + routine)
        v = 1 if vectors else 0
        work = lwork(fn(p(s) + routine + "_lwork"), n, compute_v=v, lower=1)
        if s == "f64":
            lw, liw = work
            kw = dict(lwork=lw, liwork=liw)
        else:
            lw, liw, lrw = work
            kw = dict(lwork=lw, liwork=liw, lrwork=lrw)
        return Cell(
            make(n),
            lambda a: f(a, compute_v=v, lower=1, overwrite_a=1, **kw)[-1],
            f"{p(s)}{routine} ({'vectors' if vectors else 'values'}, lower)",
        )

    return Row(name, s, True, build)


SUPPORTED = [
    "gemm", "trsm", "lu", "cholesky", "ldlt", "lblt", "qr", "col_piv_qr",
    "svd", "evd", "evd_spectra", "eigen", "tridiag",
]


# --- Timing and output ------------------------------------------------------------------------


def nearest_rank(sorted_: list[float], q: float) -> float:
    """tools/src/stats.rs: index round((len - 1) q), rounded half away from zero."""
    return sorted_[int(math.floor((len(sorted_) - 1) * q + 0.5))]


def time_cell(cell: Cell, rounds: int, min_time: float, max_rounds: int) -> list[float]:
    work = np.empty_like(cell.src, order="F")
    # The untimed first call, and what it did.
    np.copyto(work, cell.src)
    check(cell.call(work), cell.routine)
    if np.array_equal(work, cell.src):
        raise RuntimeError(f"{cell.routine}: the caller's array is unchanged (a copy was made?)")
    times = []
    gc.disable()
    try:
        start = time.perf_counter()
        while len(times) < max_rounds and (
            len(times) < rounds or time.perf_counter() - start < min_time
        ):
            np.copyto(work, cell.src)
            t = time.perf_counter()
            info = cell.call(work)
            times.append(time.perf_counter() - t)
            check(info, cell.routine)
    finally:
        gc.enable()
    return times


def blas_report(threads: int) -> None:
    print(
        f"openblas arm: {threads} thread(s); numpy {np.__version__}, scipy {scipy.__version__}, "
        f"python {platform.python_version()}, {os.cpu_count()} CPUs",
        file=sys.stderr,
    )
    for lib in threadpool_info():
        if lib.get("user_api") != "blas":
            continue
        print(
            f"  {lib.get('internal_api')} {lib.get('version')}, core {lib.get('architecture')}, "
            f"{lib.get('num_threads')} threads, {lib.get('threading_layer')} threading: "
            f"{lib.get('filepath')}",
            file=sys.stderr,
        )
    left = {k: v for k, v in os.environ.items() if k.startswith("OPENBLAS_")}
    if left:
        print(f"  environment: {left}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(
        description="OpenBLAS's LAPACK on the kernel benchmark's problems (arm `openblas`)."
    )
    ap.add_argument("--threads", type=int, default=2, help="OpenBLAS threads [2]; the CSV's width")
    ap.add_argument(
        "--kernels",
        default=DEFAULT_KERNELS,
        help=f"comma-separated, or `all` [{DEFAULT_KERNELS}]; kernels: {','.join(SUPPORTED)}",
    )
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help=f"comma-separated [{DEFAULT_SIZES}]")
    ap.add_argument("--csv", help="append rows here (the header first when the file is new)")
    ap.add_argument("--rounds", type=int, default=11, help="timed calls per cell at the least [11]")
    ap.add_argument(
        "--min-time", type=float, default=0.3, help="seconds of calls per cell at the least [0.3]"
    )
    ap.add_argument("--max-rounds", type=int, default=61, help="timed calls per cell at most [61]")
    ap.add_argument("--scalars", default="f64,c64", help="the rows' scalar types [f64,c64]")
    ap.add_argument("--aspect", type=float, help="the svd rows factor round(X n) x n matrices")
    ap.add_argument("--list", action="store_true", help="the kernels timed and those skipped")
    args = ap.parse_args()

    if args.list:
        for k in SUPPORTED:
            for r in rows_of(k, args.aspect):
                print(f"{k:<12} {r.name:<18} {r.build(64).routine}")
        for k, why in SKIPPED.items():
            print(f"{k:<12} skipped: {why}")
        return
    kernels = SUPPORTED if args.kernels == "all" else [k for k in args.kernels.split(",") if k]
    sizes = [int(x) for x in args.sizes.split(",") if x]
    scalars = set(args.scalars.split(","))
    if args.threads < 1 or args.rounds < 1 or args.max_rounds < args.rounds:
        raise SystemExit("--threads and --rounds from 1, --max-rounds from --rounds")
    unknown = [k for k in kernels if k not in SUPPORTED and k not in SKIPPED]
    if unknown:
        raise SystemExit(f"unknown kernel(s) {unknown}; kernels: {', '.join(SUPPORTED)}")
    for k in kernels:
        if k in SKIPPED:
            print(f"{k}: skipped: {SKIPPED[k]}", file=sys.stderr)

    csv = None
    if args.csv:
        csv = open(args.csv, "a")
        if os.path.getsize(args.csv) == 0:
            csv.write(ARM_COLUMNS + "\n")
            csv.flush()
    with threadpool_limits(limits=args.threads, user_api="blas"):
        blas_report(args.threads)
        print(f"\nOpenBLAS LAPACK at {args.threads} thread(s); times in us\n")
        head = f"{'kernel':<18} {'n':>5} {'median':>12} {'p90':>12} {'max':>12} {'calls':>6}"
        print(f"{head}  routine")
        for k in kernels:
            for row in rows_of(k, args.aspect):
                if row.scalar not in scalars:
                    continue
                for n in sizes:
                    if row.factor and n < 64:
                        continue
                    cell = row.build(n)
                    t = sorted(time_cell(cell, args.rounds, args.min_time, args.max_rounds))
                    med, p90, mx = nearest_rank(t, 0.5), nearest_rank(t, 0.9), t[-1]
                    note = ""
                    if getattr(cell.call, "pivoted", False):
                        note = "  (pivoted: not LDL^H without pivoting)"
                    print(
                        f"{row.name:<18} {n:>5} {med * 1e6:>12.1f} {p90 * 1e6:>12.1f} "
                        f"{mx * 1e6:>12.1f} {len(t):>6}  {cell.routine}{note}",
                        flush=True,
                    )
                    if csv:
                        kernel, _, scalar = row.name.partition(" ")
                        us = lambda x: f"{x * 1e6:.3f}"
                        fields = [kernel, scalar, str(n), str(args.threads), ARM,
                                  us(med), us(p90), us(mx), ""]
                        csv.write(",".join(fields) + "\n")
                        csv.flush()
    if csv:
        csv.close()


if __name__ == "__main__":
    main()
