//! The Hermitian factorizations' work counts, in multiply-adds (the unit of
//! [`Family::Cholesky`], [`Family::Ldlt`] and [`Family::Lblt`]). The kernels and the batch
//! ([`crate::drive::batch`]) read them here.
//!
//! [`Family::Cholesky`]: teamalg_gates::Family::Cholesky
//! [`Family::Ldlt`]: teamalg_gates::Family::Ldlt
//! [`Family::Lblt`]: teamalg_gates::Family::Lblt

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
