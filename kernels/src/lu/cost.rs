//! LU's work counts, in its families' units: multiply-adds for partial pivoting
//! ([`Family::LuPartial`]), an element of the trailing block a step updates for full pivoting
//! ([`Family::LuFullStep`]). The kernels and the batch ([`crate::drive::batch`]) read them
//! here, so one LU is counted one way.
//!
//! [`Family::LuPartial`]: teamalg_gates::Family::LuPartial
//! [`Family::LuFullStep`]: teamalg_gates::Family::LuFullStep

/// Multiply-adds of an LU of a `rows x cols` matrix (`rows * cols * r - (rows + cols) r^2 / 2
/// + r^3 / 3` with `r` the smaller side; `n^3 / 3` when square).
pub fn partial(rows: usize, cols: usize) -> f64 {
    let (m, n) = (rows as f64, cols as f64);
    let r = m.min(n);
    m * n * r - (m + n) * r * r / 2.0 + r * r * r / 3.0
}

/// Multiply-adds of solving with the factors of order `n` for `k` right-hand sides (the two
/// triangular solves).
pub fn solve(n: usize, k: usize) -> f64 {
    let n = n as f64;
    n * n * k as f64
}

/// Multiply-adds to update one trailing column: the triangular solve and the GEMM.
pub(crate) fn update_column(rows_below: usize, b: usize) -> f64 {
    rows_below as f64 * b as f64 + (b * b) as f64 / 2.0
}

/// Multiply-adds of factoring a `rows x b` panel.
pub(crate) fn panel(rows: usize, b: usize) -> f64 {
    rows as f64 * (b * b) as f64 / 2.0
}

/// Units of work of full pivoting's steps from `k` on, for an `m x n` matrix (an element of
/// the trailing block a step updates).
pub fn full_pivot_from(m: usize, n: usize, k: usize) -> f64 {
    (k..m.min(n))
        .map(|s| ((m - s - 1) * (n - s - 1)) as f64)
        .sum()
}
