//! The self-adjoint EVD's work counts: the tridiagonalization's steps in their family's unit
//! ([`Family::TridiagStep`]: an element of the trailing lower triangle) and a whole EVD in
//! multiply-adds, as the batch ([`crate::drive::batch`]) prices it.
//!
//! [`Family::TridiagStep`]: teamalg_gates::Family::TridiagStep

use teamalg_gates::{AppleRate, Rate, Rows, SplitCost};

/// Units of work of the tridiagonalization's steps from `k` on, for order `n`.
pub fn tridiag_from(n: usize, k: usize) -> f64 {
    (k..n).map(|s| ((n - s) * (n - s)) as f64 / 2.0).sum()
}

/// Multiply-adds of an EVD of order `n`: the tridiagonalization (`4 n^3 / 3`), and with
/// `vectors` their accumulation and the tridiagonal solver's (about `4 n^3` more).
pub fn evd(n: usize, vectors: bool) -> f64 {
    let n = n as f64;
    4.0 * n * n * n / 3.0 + if vectors { 4.0 * n * n * n } else { 0.0 }
}

/// The tridiagonalization's steps' built-in rows ([`Family::TridiagStep`](teamalg_gates::Family::TridiagStep)), fitted as the
/// bidiagonalization's (`crate::svd::cost::BIDIAG_ROWS`).
pub const TRIDIAG_ROWS: Rows = Rows {
    x86: None,
    apple: AppleRate::Measured(Rate::halved(0.339, 1.16)),
    split_amd: Some((SplitCost::new(850.0, 0.93), SplitCost::new(2300.0, 1.0))),
    split_other: Some((SplitCost::new(4400.0, 0.77), SplitCost::new(3600.0, 0.81))),
};

/// The tridiagonal divide and conquer's built-in rows ([`Family::TridiagEvdDc`](teamalg_gates::Family::TridiagEvdDc); complex not
/// measured: a complex multiply-add is four real ones).
pub const TRIDIAG_DC_ROWS: Rows = Rows::new(
    None,
    AppleRate::Measured(Rate::halved(31.0, 31.0 * 4.0)),
    None,
);
