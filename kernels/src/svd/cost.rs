//! The SVD's work counts: the bidiagonalization's steps in their family's unit
//! ([`Family::BidiagStep`]: an element of the trailing matrix, read by both of a step's
//! passes) and a whole SVD in multiply-adds, as the batch ([`crate::drive::batch`]) prices it.
//!
//! [`Family::BidiagStep`]: teamalg_gates::Family::BidiagStep

use teamalg_gates::{AppleRate, Rate, Rows, SplitCost};

/// Units of work of the bidiagonalization's steps from `k` on, for an `m x n` matrix, for
/// every `k`.
pub fn bidiag_from(m: usize, n: usize) -> Vec<f64> {
    let size = m.min(n);
    let mut units = vec![0.0; size + 1];
    for s in (0..size).rev() {
        units[s] = units[s + 1] + ((m - s - 1) * (n.saturating_sub(s + 1))) as f64;
    }
    units
}

/// Multiply-adds of an SVD of an `m x n` matrix: the bidiagonalization (`4 m n^2 - 4 n^3 / 3`
/// with `m >= n`), and with `vectors` their accumulation and the bidiagonal solver's (about
/// `8 n^3` more).
pub fn svd(m: usize, n: usize, vectors: bool) -> f64 {
    let (m, n) = (m.max(n) as f64, m.min(n) as f64);
    4.0 * m * n * n - 4.0 * n * n * n / 3.0 + if vectors { 8.0 * n * n * n } else { 0.0 }
}

/// The bidiagonalization's steps' built-in rows ([`Family::BidiagStep`](teamalg_gates::Family::BidiagStep)). The splits are
/// fitted by hand to the reductions' benchmark rows (orders 256 to 1024, every step forced
/// parallel) against the estimates of their built-in rates (`docs/gates.md`): on AMD the EPYC
/// fit, where two wide pays from order 128 to 256; elsewhere the Intel Xeon fit, where it pays
/// only from 512 to 1024.
pub const BIDIAG_ROWS: Rows = Rows {
    x86: None,
    apple: AppleRate::Measured(Rate::halved(0.480, 1.36)),
    split_amd: Some((SplitCost::new(2000.0, 1.0), SplitCost::new(1450.0, 1.0))),
    split_other: Some((SplitCost::new(10800.0, 0.61), SplitCost::new(6400.0, 0.625))),
};

/// The bidiagonal divide and conquer's built-in rows ([`Family::BidiagSvdDc`](teamalg_gates::Family::BidiagSvdDc); complex not
/// measured: a complex multiply-add is four real ones).
pub const BIDIAG_DC_ROWS: Rows = Rows::new(
    None,
    AppleRate::Measured(Rate::halved(53.0, 53.0 * 4.0)),
    None,
);
