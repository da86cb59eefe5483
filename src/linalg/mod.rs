//! The user-facing facade: faer-like calls that take the executor last and check their input.
//!
//! [`matmul`], [`solve_triangular`], [`lu`] (returning an [`Lu`] with `L`, `U`, `P`, `solve`
//! and `determinant`) and [`cholesky`] (returning a [`Cholesky`] with `L` and `solve`). The
//! executor argument is anything that runs kernels: a `&Team`, a token, or
//! `&Exec::serial()`. User errors are [`LinalgError`]s, checked before anything is written.
//!
//! ```
//! use faer::{Accum, Mat};
//! use teamalg::{linalg, Pool};
//!
//! let team = Pool::builder().threads(2).build()?.into_team(2).map_err(|e| e.error)?;
//! let a = Mat::<f64>::from_fn(300, 200, |i, j| (i + j) as f64);
//! let b = Mat::<f64>::from_fn(200, 100, |i, j| (i * j) as f64);
//! let mut c = Mat::<f64>::zeros(300, 100);
//! linalg::matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 1.0, &team)?;
//! // The same call serially, or on a plain token:
//! linalg::matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 1.0, &teamalg::Exec::serial())?;
//! // Shapes are checked:
//! let err = linalg::matmul(c.as_mut(), Accum::Replace, b.as_ref(), a.as_ref(), 1.0, &team);
//! assert!(matches!(err, Err(linalg::LinalgError::ShapeMismatch { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use faer::traits::ComplexField;
use faer::{Accum, MatMut, MatRef};
use teamalg_gates::{Family, ParThreshold, Scalar, Source, Thresholds};
use teamalg_kernels::gemm::{self, GemmParams};
use teamalg_kernels::par::Executor;
use teamalg_kernels::triangular::{self, SolveParams};

mod cholesky;
mod lu;

pub use cholesky::{cholesky, cholesky_with, Cholesky};
pub use lu::{lu, lu_with, Lu};
pub use teamalg_kernels::triangular::{Diag, Side, Triangle};

/// Options of one call: a threshold per kernel family, which wins over the pool's
/// (`PoolBuilder::threshold`) and the environment's (`TEAMALG_THRESHOLDS`); families it does
/// not set keep theirs. A factorization's options also apply to the solves of its object.
///
/// ```
/// use faer::{Accum, Mat};
/// use teamalg::gates::trace::{self, Reason};
/// use teamalg::gates::{Family, ParThreshold};
/// use teamalg::{linalg, Pool};
///
/// let team = Pool::builder().threads(2).build()?.into_team(2).map_err(|e| e.error)?;
/// let a = Mat::<f64>::ones(512, 512);
/// let mut c = Mat::<f64>::zeros(512, 512);
/// let serial = linalg::Options::new().threshold(Family::Gemm, ParThreshold::Never);
/// let (r, why) = trace::collect(|| {
///     linalg::matmul_with(c.as_mut(), Accum::Replace, a.as_ref(), a.as_ref(), 1.0, &team, &serial)
/// });
/// r?;
/// assert_eq!((why[0].width, why[0].reason), (1, Reason::Never));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    thresholds: Thresholds,
}

impl Options {
    /// No family set: every region follows the pool, the environment, then the rule.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets how the regions of `family` decide in this call.
    pub fn threshold(mut self, family: Family, threshold: ParThreshold) -> Self {
        self.thresholds = self.thresholds.with(family, threshold, Source::Call);
        self
    }

    /// The threshold this call sets for `family`, if any.
    pub fn get(&self, family: Family) -> Option<ParThreshold> {
        self.thresholds.get(family).map(|(t, _)| t)
    }
}

/// What a linear-algebra call can refuse. A call that fails its checks (`ShapeMismatch`,
/// `NotSquare`, `NotFinite`) writes nothing; `NotPositiveDefinite` is found while factoring and
/// leaves the partial factorization (see the variant).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinalgError {
    /// The operands' shapes do not fit together.
    ShapeMismatch {
        /// The operation.
        op: &'static str,
        /// What was expected, in words.
        expected: String,
    },
    /// A matrix that must be square is not.
    NotSquare {
        /// The operation.
        op: &'static str,
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
    },
    /// The input holds a NaN or an infinity where the operation reads it (the input is
    /// unchanged).
    NotFinite {
        /// The operation.
        op: &'static str,
        /// The row of the first such entry found.
        row: usize,
        /// Its column.
        col: usize,
    },
    /// Cholesky: the matrix is not positive definite; the pivot of column `index` was not
    /// positive. The matrix holds the factorization of its leading `index` columns and an
    /// updated remainder (as LAPACK's `potrf`).
    NotPositiveDefinite {
        /// The column whose pivot failed.
        index: usize,
    },
    /// A solve with a singular LU factorization: `U[(index, index)]` is zero.
    Singular {
        /// The first zero pivot.
        index: usize,
    },
}

impl fmt::Display for LinalgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinalgError::ShapeMismatch { op, expected } => {
                write!(f, "{op}: shape mismatch: {expected}")
            }
            LinalgError::NotSquare { op, rows, cols } => {
                write!(f, "{op}: the matrix must be square, it is {rows}x{cols}")
            }
            LinalgError::NotFinite { op, row, col } => {
                write!(f, "{op}: entry ({row}, {col}) is not finite")
            }
            LinalgError::NotPositiveDefinite { index } => write!(
                f,
                "cholesky: the matrix is not positive definite (pivot {index} is not positive)"
            ),
            LinalgError::Singular { index } => {
                write!(f, "solve: the matrix is singular (pivot {index} is zero)")
            }
        }
    }
}

impl std::error::Error for LinalgError {}

/// `C = alpha A B` (`Accum::Replace`) or `C += alpha A B` (`Accum::Add`) on `exec` (a `&Team`,
/// a token, or `&Exec::serial()`).
pub fn matmul<T>(
    c: MatMut<'_, T>,
    accum: Accum,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    alpha: T,
    exec: &(impl Executor + ?Sized),
) -> Result<(), LinalgError>
where
    T: ComplexField + Scalar + Send + Sync,
{
    matmul_with(c, accum, a, b, alpha, exec, &Options::new())
}

/// [`matmul`] with the call's [`Options`].
pub fn matmul_with<T>(
    c: MatMut<'_, T>,
    accum: Accum,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    alpha: T,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<(), LinalgError>
where
    T: ComplexField + Scalar + Send + Sync,
{
    if a.nrows() != c.nrows() || b.ncols() != c.ncols() || a.ncols() != b.nrows() {
        return Err(LinalgError::ShapeMismatch {
            op: "matmul",
            expected: format!(
                "C ({}x{}) = A ({}x{}) B ({}x{}) needs A: {}xk, B: kx{}",
                c.nrows(),
                c.ncols(),
                a.nrows(),
                a.ncols(),
                b.nrows(),
                b.ncols(),
                c.nrows(),
                c.ncols()
            ),
        });
    }
    let params = GemmParams {
        threshold: options.get(Family::Gemm),
    };
    gemm::matmul(c, accum, a, b, alpha, exec, params);
    Ok(())
}

/// The lower triangle of `f` (ones on the diagonal when `unit`), zeros above it.
fn lower<T: ComplexField>(f: MatRef<'_, T>, unit: bool) -> faer::Mat<T> {
    use faer::traits::math_utils::{one, zero};
    faer::Mat::from_fn(f.nrows(), f.ncols(), |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => f[(i, j)].clone(),
        std::cmp::Ordering::Equal if unit => one(),
        std::cmp::Ordering::Equal => f[(i, j)].clone(),
        std::cmp::Ordering::Less => zero(),
    })
}

/// Checks that `b` has `n` rows for a solve with an `n x n` factorization.
fn check_rhs<T>(op: &'static str, n: usize, b: &MatMut<'_, T>) -> Result<(), LinalgError> {
    if b.nrows() == n {
        return Ok(());
    }
    Err(LinalgError::ShapeMismatch {
        op,
        expected: format!(
            "the matrix is {n}x{n}, so B ({}x{}) needs {n} rows",
            b.nrows(),
            b.ncols()
        ),
    })
}

/// Overwrites `b` with the solution of `T X = B` (`Side::Left`) or `X T = B` (`Side::Right`),
/// reading `triangle` of `t` (with ones on the diagonal for `Diag::Unit`), on `exec`.
pub fn solve_triangular<T>(
    t: MatRef<'_, T>,
    b: MatMut<'_, T>,
    side: Side,
    triangle: Triangle,
    diag: Diag,
    exec: &(impl Executor + ?Sized),
) -> Result<(), LinalgError>
where
    T: ComplexField + Scalar + Send + Sync,
{
    solve_triangular_with(t, b, side, triangle, diag, exec, &Options::new())
}

/// [`solve_triangular`] with the call's [`Options`].
pub fn solve_triangular_with<T>(
    t: MatRef<'_, T>,
    b: MatMut<'_, T>,
    side: Side,
    triangle: Triangle,
    diag: Diag,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<(), LinalgError>
where
    T: ComplexField + Scalar + Send + Sync,
{
    if t.nrows() != t.ncols() {
        return Err(LinalgError::NotSquare {
            op: "solve_triangular",
            rows: t.nrows(),
            cols: t.ncols(),
        });
    }
    let along = match side {
        Side::Left => b.nrows(),
        Side::Right => b.ncols(),
    };
    if along != t.nrows() {
        return Err(LinalgError::ShapeMismatch {
            op: "solve_triangular",
            expected: format!(
                "T is {n}x{n}, so B ({}x{}) needs {n} {}",
                b.nrows(),
                b.ncols(),
                if side == Side::Left {
                    "rows"
                } else {
                    "columns"
                },
                n = t.nrows()
            ),
        });
    }
    let params = SolveParams {
        threshold: options.get(Family::TriangularSolve),
    };
    triangular::solve_in_place(t, b, side, triangle, diag, exec, params);
    Ok(())
}
