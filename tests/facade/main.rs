//! The facade tests (`teamalg::linalg` and the examples), one module per part, in one binary:
//! each file would otherwise be a binary of its own that compiles the generic kernels again.

#[path = "../common/sample.rs"]
mod sample;

mod batch;
mod col_piv_qr;
mod condition;
mod edges;
mod eigen;
mod examples;
mod faer_habits;
mod full_piv_lu;
mod huge;
mod linalg;
mod linalg_qr;
mod linalg_spectral;
mod refusals;
mod sparse_cholesky;
mod sparse_lu;
mod sparse_qr;
mod sweep;
mod symmetric;
mod vectors;
mod widths;
