//! The kernels of teamalg.
//!
//! Blocked parallel kernels built around faer's serial kernels (`Par::Seq`), one folder per
//! decomposition, as faer lays them out: [`gemm`], [`triangular`], [`lu`] (partial and full
//! pivoting), [`cholesky`] (`LL^H`, `LDL^H`, Bunch-Kaufman), [`qr`] (Householder and column
//! pivoting), [`svd`] (with its own bidiagonal solvers, the QR [`bidiag_svd`] and the divide
//! and conquer [`bidiag_dc`], and the bidiagonalization on the executor, [`bidiag`]), [`evd`]
//! (the self-adjoint EVD: the tridiagonalization ([`tridiag`]), the tridiagonal solver with
//! vectors and the back-transformation on the executor) and [`sparse`] (the sparse products).
//! Each folder holds its kernels and its work count (`cost.rs`); what several share sits
//! beside them: [`spectral`] (the SVD's and EVD's common pieces) and [`drive`] (the lookahead
//! driver of the right-looking factorizations and the batch driver, [`drive::batch`]).
//!
//! Kernels are generic over a small executor contract ([`par::Executor`]: a width, the
//! dispatch cost of a section, "run this section on `w` participants"), so the same code runs
//! serially ([`par::Seq`]), on a plain budget token or on a hot team (the `teamalg` crate
//! implements the contract for its tokens and teams). Every parallel region asks the gate of
//! `teamalg-gates` with its real number of sections ([`gate::width`]). The checklist for a new
//! decomposition is `docs/adding-a-decomposition.md`.

pub mod cholesky;
pub mod drive;
pub mod evd;
pub mod exec;
pub mod families;
pub mod gemm;
pub mod lu;
pub mod qr;
pub mod sparse;
pub mod sparse_cholesky;
pub mod sparse_lu;
pub mod sparse_qr;
pub mod spectral;
pub mod svd;
pub mod triangular;

// The kernels' paths as they were before the decompositions had folders: every public module
// is still reachable from the crate's root.
pub use cholesky::{lblt, ldlt};
pub use evd::tridiag;
pub use exec::{call, gate, par, sections, wakes};
pub use lu::full_pivot as full_piv_lu;
pub use qr::col_piv as col_piv_qr;
pub use spectral::fused;
pub use svd::{bidiag, bidiag_dc, bidiag_svd};
