//! The Hermitian factorizations' work counts, in multiply-adds (the unit of
//! [`Family::Cholesky`], [`Family::Ldlt`] and [`Family::Lblt`]). The kernels and the batch
//! ([`crate::drive::batch`]) read them here.
//!
//! [`Family::Cholesky`]: teamalg_gates::Family::Cholesky
//! [`Family::Ldlt`]: teamalg_gates::Family::Ldlt
//! [`Family::Lblt`]: teamalg_gates::Family::Lblt

use teamalg_gates::{Anchors, AppleRate, Rows, SplitCost, SplitRow};

/// Multiply-adds of a Cholesky (or `LDL^H`, or Bunch-Kaufman) of order `n`: `n^3 / 6`.
pub fn llt(n: usize) -> f64 {
    (n as f64).powi(3) / 6.0
}

/// Multiply-adds of solving with the factors of order `n` for `k` right-hand sides (the two
/// triangular solves).
pub fn solve(n: usize, k: usize) -> f64 {
    let n = n as f64;
    n * n * k as f64
}

/// Multiply-adds of the lookahead: factoring a `b2` diagonal block and solving the panel below
/// it, in a trailing matrix of `t` columns.
pub(crate) fn lead(t: usize, b2: usize) -> f64 {
    let b2 = b2 as f64;
    b2 * b2 * b2 / 6.0 + (t as f64 - b2) * b2 * b2 / 2.0
}

/// The Cholesky's x86-64 anchors. `LDL^H`'s and Bunch-Kaufman's updates are the Cholesky's
/// (the same products on the same triangle), so they take these until measured on their own.
const ANCHORS: Anchors = [
    (5461.0, [0.2054, 0.4547, 0.1523, 1.2010]),
    (43691.0, [0.1226, 0.3587, 0.0796, 0.8562]),
    (349525.0, [0.0780, 0.2729, 0.0479, 0.3370]),
    (2796203.0, [0.0578, 0.2214, 0.0330, 0.1731]),
];

/// The Cholesky's split, which `LDL^H` takes too (the gate audit finds its choice within 2 %
/// of the better arm from 128 to 1024 on the AMD EPYC host).
const SPLIT: SplitRow = (SplitCost::new(1654.0, 0.847), SplitCost::new(7196.0, 0.836));

/// The Cholesky's built-in rows ([`Family::Cholesky`](teamalg_gates::Family::Cholesky)).
pub const LLT_ROWS: Rows = Rows::new(Some(ANCHORS), AppleRate::ScaledFromGemm, Some(SPLIT));

/// `LDL^H`'s built-in rows ([`Family::Ldlt`](teamalg_gates::Family::Ldlt)).
pub const LDLT_ROWS: Rows = Rows::new(Some(ANCHORS), AppleRate::ScaledFromGemm, Some(SPLIT));

/// Bunch-Kaufman's built-in rows ([`Family::Lblt`](teamalg_gates::Family::Lblt)). The split is fitted by hand to the gate
/// audit on the AMD EPYC host (`docs/perf/runs/kernels-log.md`, "LDL^H and Bunch-Kaufman"):
/// its panels are long and serial (column updates and symmetric interchanges), and the member
/// waits beside the lead through each; two wide was a wash at 128 and won from 256 or 384 in
/// two audits of three (one lost up to 1.5x at 128 to 512 in real arithmetic). The overhead
/// per section stands for the panel: two wide from about 384 in real and 256 in complex.
pub const LBLT_ROWS: Rows = Rows::new(
    Some(ANCHORS),
    AppleRate::ScaledFromGemm,
    Some((
        SplitCost::new(20000.0, 0.847),
        SplitCost::new(30000.0, 0.836),
    )),
);
