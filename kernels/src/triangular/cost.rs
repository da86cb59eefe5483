//! The triangular solve's work count, in multiply-adds (the unit of
//! [`Family::TriangularSolve`]). The kernel and the batch ([`crate::drive::batch`]) read it
//! here.
//!
//! [`Family::TriangularSolve`]: teamalg_gates::Family::TriangularSolve

use teamalg_gates::{AppleRate, Rows, SplitCost};

/// Multiply-adds of solving a triangular system of order `n` for `k` right-hand sides.
pub fn solve(n: usize, k: usize) -> f64 {
    n as f64 * n as f64 * k as f64 / 2.0
}

/// The triangular solve's built-in rows ([`Family::TriangularSolve`](teamalg_gates::Family::TriangularSolve)).
pub const ROWS: Rows = Rows::new(
    Some([
        (16384.0, [0.1033, 0.4016, 0.0954, 0.3527]),
        (131072.0, [0.0662, 0.2763, 0.0534, 0.2148]),
        (1048576.0, [0.0526, 0.2120, 0.0360, 0.1455]),
        (8388608.0, [0.0454, 0.1825, 0.0271, 0.1081]),
    ]),
    AppleRate::ScaledFromGemm,
    Some((SplitCost::new(560.0, 0.945), SplitCost::new(1090.0, 0.970))),
);
