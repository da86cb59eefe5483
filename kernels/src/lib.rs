//! The kernels of teamalg.
//!
//! This crate will own the blocked parallel kernels: GEMM, triangular solve, LU, Cholesky, QR,
//! SVD, self-adjoint EVD and sparse products, built around faer's serial kernels. Kernels are
//! generic over a small executor contract (width, dispatch cost, "run this section on `w`
//! participants"), so the same code runs serially, on a plain budget token or on a hot team, and
//! every parallel region asks the gate of `teamalg-gates` with its real number of sections.
