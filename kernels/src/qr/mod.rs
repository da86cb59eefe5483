//! QR: Householder QR ([`householder`], the lookahead driver's blocked QR, re-exported here)
//! and QR with column pivoting ([`col_piv`], a parallel section per step), and their work
//! counts ([`cost`]). Design record: `docs/kernels.md`.

pub mod col_piv;
pub mod cost;
pub mod householder;

pub use householder::*;
