//! The drivers several decompositions share: the lookahead driver of the right-looking
//! factorizations (LU, Cholesky, `LDL^H`, QR) with their two blocking levels (`levels`), and
//! the tree of a sparse factorization and its cut ([`forest`]), the multifrontal driver the
//! sparse LU and QR share ([`frontal`]), the sparse solves' column split ([`columns`]), the
//! graphs the sparse analyses order and their nested dissection ([`ordering`]), the
//! batch driver ([`batch`]: many independent problems in one call, each problem's
//! outcome written by the participant that claimed it through [`slots`]). Design records:
//! `docs/kernels.md` ("The lookahead driver") and `docs/batch.md`.

pub mod batch;
pub mod columns;
pub mod forest;
pub mod frontal;
pub(crate) mod levels;
pub(crate) mod lookahead;
pub mod ordering;
pub mod slots;
