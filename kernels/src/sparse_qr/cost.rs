//! The sparse QR's work count ([`Family::SparseQr`]: multiply-adds of the multifrontal step,
//! counted per front) and the family's built-in rows.
//!
//! [`Family::SparseQr`]: teamalg_gates::Family::SparseQr

use teamalg_gates::{Anchors, AppleRate, Rows, SplitCost, SplitRow};

use crate::drive::frontal::ENTRY;

/// What one front costs besides its entries and its QR (its block factors' allocation, the
/// dense kernels' calls), in multiply-adds.
pub const FRONT: f64 = 6000.0;

/// The work of a front of `r` rows, `c` pivot columns and `p` other columns: the Householder
/// QR of the whole `r x (c + p)` front (its pivot rows of `R` and the upper trapezoid it hands
/// on), [`ENTRY`] for each entry and [`FRONT`].
pub fn front(r: usize, c: usize, p: usize) -> f64 {
    FRONT + crate::qr::cost::householder(r, c + p) + ENTRY * (r * (c + p)) as f64
}

/// Multiply-adds of a least-squares solve with the factor for `k` right-hand sides: one pass
/// over the reflectors (twice: `V^H w`, `w - V t`) and one over `R`.
pub fn solve(values: usize, k: usize) -> f64 {
    2.0 * values as f64 * k as f64
}

/// The x86-64 rate, ns per unit: flat, as the sparse LU's; a Householder multiply-add costs
/// more than an LU one (the panels' reflectors and block factors), and complex about 2.5 times
/// real.
const ANCHORS: Anchors = [
    (1e5, [0.06, 0.15, 0.06, 0.15]),
    (1e7, [0.06, 0.15, 0.06, 0.15]),
    (1e9, [0.06, 0.15, 0.06, 0.15]),
    (1e11, [0.06, 0.15, 0.06, 0.15]),
];

/// The split at width 2: the sparse LU's, whose driver it shares.
const SPLIT: SplitRow = (
    SplitCost::new(600000.0, 0.85),
    SplitCost::new(600000.0, 0.85),
);

/// The sparse QR's built-in rows.
pub const ROWS: Rows = Rows::new(Some(ANCHORS), AppleRate::ScaledFromGemm, Some(SPLIT));
