//! GEMM's work count, in multiply-adds (the unit of [`Family::Gemm`]). The kernel and the
//! batch ([`crate::drive::batch`]) read it here.
//!
//! [`Family::Gemm`]: teamalg_gates::Family::Gemm

use teamalg_gates::{AppleRate, Rate, Rows, SplitCost};

/// Multiply-adds of `C (m x n) = A (m x k) B (k x n)`.
pub fn gemm(m: usize, n: usize, k: usize) -> f64 {
    m as f64 * n as f64 * k as f64
}

/// GEMM's built-in rows ([`Family::Gemm`](teamalg_gates::Family::Gemm)): the x86-64 anchors, the M5 rate, and the split
/// `teamalg calibrate` fitted (`docs/gates.md`, "Built-in rows").
pub const ROWS: Rows = Rows::new(
    Some([
        (32768.0, [0.0419, 0.1534, 0.0223, 0.0755]),
        (262144.0, [0.0369, 0.1425, 0.0185, 0.0728]),
        (2097152.0, [0.0352, 0.1396, 0.0177, 0.0695]),
        (16777216.0, [0.0348, 0.1406, 0.0173, 0.0694]),
    ]),
    AppleRate::Measured(Rate::halved(0.037, 0.165)),
    Some((SplitCost::new(195.0, 0.949), SplitCost::new(135.0, 0.982))),
);
