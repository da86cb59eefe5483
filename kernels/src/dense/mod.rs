//! The dense kernels: GEMM, the triangular solve, and the right-looking factorizations (LU
//! with partial and full pivoting, Cholesky, `LDL^H`, Bunch-Kaufman, QR plain and
//! column-pivoted) with their two blocking levels (`levels`), the lookahead driver they share
//! (`lookahead`) and the symmetric trailing update of `LDL^H` and Bunch-Kaufman
//! (`lower_update`). Design record: `docs/kernels.md`.

pub mod cholesky;
pub mod col_piv_qr;
pub mod full_piv_lu;
pub mod gemm;
pub mod lblt;
pub mod ldlt;
pub(crate) mod levels;
pub(crate) mod lookahead;
pub(crate) mod lower_update;
pub mod lu;
pub mod qr;
pub mod triangular;
