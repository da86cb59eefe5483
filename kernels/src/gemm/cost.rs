//! GEMM's work count, in multiply-adds (the unit of [`Family::Gemm`]). The kernel and the
//! batch ([`crate::drive::batch`]) read it here.
//!
//! [`Family::Gemm`]: teamalg_gates::Family::Gemm

/// Multiply-adds of `C (m x n) = A (m x k) B (k x n)`.
pub fn gemm(m: usize, n: usize, k: usize) -> f64 {
    m as f64 * n as f64 * k as f64
}
