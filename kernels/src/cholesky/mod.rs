//! The Hermitian factorizations: Cholesky `LL^H` ([`llt`], re-exported here), `LDL^H`
//! without pivoting ([`ldlt`]) and Bunch-Kaufman `LBL^H` ([`lblt`]), the symmetric trailing
//! update the last two share (`lower_update`), and their work counts ([`cost`]). Design
//! record: `docs/kernels.md`.

pub mod cost;
pub mod lblt;
pub mod ldlt;
pub mod llt;
pub(crate) mod lower_update;

pub use llt::*;
