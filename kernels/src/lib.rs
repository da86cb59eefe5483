//! The kernels of teamalg.
//!
//! Blocked parallel kernels built around faer's serial kernels (`Par::Seq`): GEMM, the
//! triangular solve, LU with partial pivoting, Cholesky, Householder QR, sparse products and
//! the SVD ([`svd`], with its own bidiagonal solvers, the QR [`bidiag_svd`] and the divide and
//! conquer [`bidiag_dc`], and the bidiagonalization on the executor, [`bidiag`]) and the self-adjoint EVD ([`evd`]: the tridiagonalization
//! ([`tridiag`]), the tridiagonal solver with vectors (split once, its halves solved at once
//! and merged on the executor) and the back-transformation on the executor). Kernels
//! are generic over a small executor contract ([`par::Executor`]: a width, the dispatch cost of a
//! section, "run this section on `w` participants"), so the same code runs serially
//! ([`par::Seq`]), on a plain budget token or on a hot team (the `teamalg` crate implements the
//! contract for its tokens and teams). Every parallel region asks the gate of `teamalg-gates`
//! with its real number of sections ([`gate::width`]).

pub mod batch;
pub mod dense;
pub mod evd;
pub mod exec;
pub mod sparse;
pub mod spectral;
pub mod svd;

// The kernels' paths as they were before the families had folders: every public module is
// still reachable from the crate's root.
pub use dense::{cholesky, col_piv_qr, full_piv_lu, gemm, lblt, ldlt, lu, qr, triangular};
pub use evd::tridiag;
pub use exec::{call, gate, par, sections, stream};
pub use spectral::fused;
pub use svd::{bidiag, bidiag_dc, bidiag_svd};
