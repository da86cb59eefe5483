//! The sparse LU's work count ([`Family::SparseLu`]: multiply-adds of the multifrontal step,
//! counted per front) and the family's built-in rows.
//!
//! [`Family::SparseLu`]: teamalg_gates::Family::SparseLu

use teamalg_gates::{Anchors, AppleRate, Rows, SplitCost, SplitRow};

pub use crate::drive::frontal::ENTRY;

/// What one front costs besides its entries and products (its row list, its pivots' search
/// calls, the dense kernels' calls), in multiply-adds.
pub const FRONT: f64 = 6000.0;

/// The work of a front of `r` rows, `c` pivot columns and `p` other columns: the LU of its
/// `r x c` panel (`r c^2 - (r + c) c^2 / 2 + c^3 / 3`), the solve of its `c x p` block of `U`
/// (`c^2 p / 2`), the update of its `(r - c) x p` block (`(r - c) c p`), [`ENTRY`] for each
/// entry and [`FRONT`].
pub fn front(r: usize, c: usize, p: usize) -> f64 {
    let (r, c, p) = (r as f64, c as f64, p as f64);
    let panel = (r * c * c - (r + c) * c * c / 2.0 + c * c * c / 3.0).max(0.0);
    let rest = (r - c).max(0.0);
    FRONT + panel + c * c * p / 2.0 + rest * c * p + ENTRY * r * (c + p)
}

/// Multiply-adds of solving with the factor for `k` right-hand sides: one pass over the
/// factor's `values` entries each way.
pub fn solve(values: usize, k: usize) -> f64 {
    2.0 * values as f64 * k as f64
}

/// The x86-64 rate, ns per unit: flat, as the sparse Cholesky's (its [`ENTRY`] and [`FRONT`]
/// stand for what does not scale with the products); complex takes 2.5 times as long.
const ANCHORS: Anchors = [
    (1e5, [0.045, 0.11, 0.045, 0.11]),
    (1e7, [0.045, 0.11, 0.045, 0.11]),
    (1e9, [0.045, 0.11, 0.045, 0.11]),
    (1e11, [0.045, 0.11, 0.045, 0.11]),
];

/// The split at width 2: the sparse Cholesky's, whose tree and top it shares in shape.
const SPLIT: SplitRow = (
    SplitCost::new(600000.0, 0.85),
    SplitCost::new(600000.0, 0.85),
);

/// The sparse LU's built-in rows.
pub const ROWS: Rows = Rows::new(Some(ANCHORS), AppleRate::ScaledFromGemm, Some(SPLIT));
