//! The sparse products' cost ([`Family::SparseProduct`]: a multiply-add of `nnz(A)` times a
//! column of `B`).
//!
//! [`Family::SparseProduct`]: teamalg_gates::Family::SparseProduct

use teamalg_gates::{AppleRate, Rate, Rows};

/// Multiply-adds of a sparse times dense product with `nnz` entries in `A` and `cols` columns
/// in `B`.
pub fn product(nnz: usize, cols: usize) -> f64 {
    nnz as f64 * cols as f64
}

/// The sparse products' built-in rows (split free).
pub const PRODUCT_ROWS: Rows = Rows::new(None, AppleRate::Measured(Rate::halved(1.5, 1.8)), None);
