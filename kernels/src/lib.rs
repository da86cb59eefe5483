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

pub mod bidiag;
pub mod bidiag_dc;
pub mod bidiag_svd;
pub mod cholesky;
mod claims;
mod dqds;
pub mod evd;
pub mod fused;
pub mod gate;
pub mod gemm;
mod levels;
mod lookahead;
pub mod lu;
pub mod par;
pub mod qr;
pub mod sections;
mod secular;
pub mod sparse;
pub mod stream;
pub mod svd;
mod tiles;
pub mod triangular;
pub mod tridiag;
mod tridiag_dc;
mod watch;
