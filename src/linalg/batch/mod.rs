//! Many independent problems in one call: products, triangular solves, LU and Cholesky with
//! their solves, QR least squares, the SVD and the self-adjoint EVD (`docs/batch.md`).
//!
//! A batch takes its problems as slices of faer views, one entry per problem, of one size or
//! of many. It writes each result into the caller's storage and each problem's outcome into
//! `status` (one `Result` per problem). One singular, non-finite or misshapen problem gets its
//! own typed error and the others are solved all the same. The call itself fails only when the
//! slices do not hold one entry per problem ([`LinalgError::BatchLength`], before anything is
//! read) or scratch cannot be allocated.
//!
//! How it goes parallel is the gate's choice ([`BatchRun`] reports it): small problems are
//! spread over the participants, each solved serially by faer's own kernel, claimed in chunks
//! so that uneven sizes balance; a problem large enough to be a participant's whole share,
//! whose single call pays going parallel, runs on the whole executor, one at a time. A spread
//! problem's result is bit for bit that of faer's serial call (`Par::Seq`, default
//! parameters), whatever the width. Each participant reuses one buffer of scratch for all its
//! problems, from the keep the owned forms use, so a warm batch allocates nothing.
//!
//! ```
//! use faer::Mat;
//! use teamalg::linalg::{batch, LinalgError};
//! use teamalg::Pool;
//!
//! let team = Pool::builder().threads(2).build()?.into_team(2)?;
//! // 1000 systems of order 8, one of them singular.
//! let mut a: Vec<Mat<f64>> = (0..1000)
//!     .map(|k| Mat::from_fn(8, 8, |i, j| if i == j { 10.0 + k as f64 } else { 1.0 / (1 + i + j) as f64 }))
//!     .collect();
//! a[17] = Mat::zeros(8, 8);
//! let mut b: Vec<Mat<f64>> = (0..1000).map(|_| Mat::ones(8, 1)).collect();
//! let mut status = vec![Ok(()); 1000];
//!
//! let mut av: Vec<_> = a.iter_mut().map(|m| m.as_mut()).collect();
//! let mut bv: Vec<_> = b.iter_mut().map(|m| m.as_mut()).collect();
//! let run = batch::lu_solve(&mut av, &mut bv, &mut status, &team)?;
//! assert_eq!(run.failed, 1);
//! assert!(matches!(status[17], Err(LinalgError::Singular { .. })));
//! assert!(status.iter().enumerate().all(|(k, s)| k == 17 || s.is_ok()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use teamalg_kernels::drive::batch::{self, Problems};
use teamalg_kernels::par::Executor;

use super::{scratch, Field, LinalgError, Options};

mod cholesky;
mod self_adjoint_eigen;
mod lu;
mod matmul;
mod operands;
mod qr;
mod svd;
mod systems;
mod triangular;

pub use cholesky::{cholesky_solve, cholesky_solve_with};
pub use self_adjoint_eigen::{self_adjoint_eigen, self_adjoint_eigen_with};
pub use operands::{BatchMut, BatchRef};
pub use lu::{lu_solve, lu_solve_with};
pub use matmul::{matmul, matmul_with};
pub use qr::{lstsq, lstsq_with};
pub use svd::{svd, svd_with};
pub use triangular::{solve_triangular, solve_triangular_with};

use operands::Shared;
use teamalg_kernels::drive::slots::Slots;

/// One problem's outcome.
pub type Status = Result<(), LinalgError>;

/// What a batch did (the kernels' batch driver's summary).
pub use batch::BatchRun;

/// `slice` must hold one entry per problem.
fn length(
    op: &'static str,
    operand: &'static str,
    problems: usize,
    found: usize,
) -> Result<(), LinalgError> {
    if found == problems {
        return Ok(());
    }
    Err(LinalgError::BatchLength {
        op,
        operand,
        expected: problems,
        found,
    })
}

/// Runs a batch on the kernels' driver ([`batch::run`]), each participant's scratch from the
/// facade's kept buffers.
fn drive<T: Field, P: Problems<T, Error = LinalgError>>(
    problems: &P,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<BatchRun, LinalgError> {
    length(P::OP, "status", problems.count(), status.len())?;
    batch::run(problems, status, exec, options.get(P::FAMILY), |req, f| {
        scratch::with(P::OP, req, f)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_length_error_names_the_operand() {
        let e = length("batch::lu_solve", "b", 3, 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "batch::lu_solve: b has 2 entries, one per problem (3) expected"
        );
        assert!(length("batch::lu_solve", "b", 3, 3).is_ok());
    }
}
