//! The kernel tests, one module per kernel, in one binary: each file would otherwise be a
//! binary of its own that compiles the generic kernels again.

#[path = "../common/parts.rs"]
mod parts;
#[path = "../common/sample.rs"]
mod sample;

mod bidiag;
mod bidiag_dc;
mod bidiag_svd;
mod cholesky;
mod evd;
mod gemm;
mod kernel_trace;
mod lblt;
mod lookahead;
mod lu;
mod qr;
mod rows;
mod schur;
mod sparse;
mod svd;
mod triangular;
