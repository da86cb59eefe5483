//! The SVD's work counts: the bidiagonalization's steps in their family's unit
//! ([`Family::BidiagStep`]: an element of the trailing matrix, read by both of a step's
//! passes) and a whole SVD in multiply-adds, as the batch ([`crate::drive::batch`]) prices it.
//!
//! [`Family::BidiagStep`]: teamalg_gates::Family::BidiagStep

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
