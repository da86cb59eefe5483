//! The triangular solve's work count, in multiply-adds (the unit of
//! [`Family::TriangularSolve`]). The kernel and the batch ([`crate::drive::batch`]) read it
//! here.
//!
//! [`Family::TriangularSolve`]: teamalg_gates::Family::TriangularSolve

/// Multiply-adds of solving a triangular system of order `n` for `k` right-hand sides.
pub fn solve(n: usize, k: usize) -> f64 {
    n as f64 * n as f64 * k as f64 / 2.0
}
