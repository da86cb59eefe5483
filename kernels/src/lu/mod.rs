//! LU: with partial pivoting ([`partial`], the lookahead driver's right-looking blocked LU,
//! re-exported here) and with full pivoting ([`full_pivot`], a parallel section per step), and
//! their work counts ([`cost`]). Design record: `docs/kernels.md`.

pub mod cost;
pub mod full_pivot;
pub mod partial;

pub use partial::*;
