//! The self-adjoint EVD's work counts: the tridiagonalization's steps in their family's unit
//! ([`Family::TridiagStep`]: an element of the trailing lower triangle) and a whole EVD in
//! multiply-adds, as the batch ([`crate::drive::batch`]) prices it.
//!
//! [`Family::TridiagStep`]: teamalg_gates::Family::TridiagStep

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
