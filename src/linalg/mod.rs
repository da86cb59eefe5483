//! The user-facing facade: faer-like calls that take the executor last and check their input.
//!
//! - [`matmul`]: `C = alpha A B` or `C += alpha A B`;
//! - [`solve_triangular`]: `T X = B` or `X T = B` with a triangle of `T`;
//! - [`sparse_dense_matmul`]: `C = alpha A B` with `A` sparse (faer's CSC) and `B` dense;
//!   [`sparse_sparse_matmul`]: `alpha A B` with both sparse, as a new sparse matrix;
//! - [`Lu`] (owned, [`Lu::new`]) and [`lu`] (in place): `P A = L U`, with solves (plain,
//!   transposed, adjoint), `inverse`, `determinant`, `reconstruct`, and `rcond`, a condition
//!   estimate in `O(n^2)` (given [`norm_l1`] of `A`);
//! - [`Cholesky`] (owned, [`Cholesky::new`]) and [`cholesky`] (in place): `A = L L^H`, with
//!   `solve`, `inverse`, `determinant`, `reconstruct`, `rcond`; the solves of both refuse an
//!   ill-conditioned system when asked ([`Options::min_rcond`],
//!   [`LinalgError::IllConditioned`] with the estimate);
//! - [`Qr`] (owned, [`Qr::new`]) and [`qr`] (in place): `A = Q R` by Householder reflections,
//!   any shape, with `Q` and `Q^H` applied without forming `Q`, thin and full `Q`, `solve`,
//!   least squares (`lstsq`, tall) and the minimum-norm solve of a wide system
//!   (`min_norm_adjoint`), `reconstruct`, and `rcond` of `R`; its solves refuse an `A` that is
//!   rank-deficient to rounding ([`LinalgError::RankDeficient`], which names the calls that
//!   handle it);
//! - [`ColPivQr`] (owned, [`ColPivQr::new`]) and [`col_piv_qr`] (in place): `A P = Q R` with
//!   column pivoting, with `rank` and the minimum-norm least squares `lstsq` of any shape and
//!   rank (LAPACK's `gelsy`), `rcond`, `Q` applied or formed, `reconstruct`;
//! - [`Ldlt`] (`A = L D L^H` without pivoting, on the team) and [`Lblt`] (Bunch-Kaufman,
//!   `P A P^T = L B L^H`) for Hermitian indefinite systems, with solves, `inverse`,
//!   determinants, `rcond` and the [`Inertia`]; [`FullPivLu`] (`P A Q = L U`, full pivoting,
//!   with `rank`); [`Eigen`] and [`eigenvalues`]: the general (non-Hermitian) EVD with complex
//!   results;
//! - every square factorization has `solve`, `solve_transpose`, `solve_adjoint`, the right
//!   solves `rsolve` and `rsolve_adjoint` (each also `_in_place`, taking any `AsMatMut`),
//!   `inverse`, `determinant` and `slogdet`/`log_abs_det`; permutations are faer's
//!   `PermRef`; the Hermitian calls read the triangle [`Options::side`] names, and check the
//!   symmetry when [`Options::check_hermitian`] asks;
//! - [`Svd`] (owned, full [`Svd::new`] as faer's, or thin [`Svd::new_thin`]), [`singular_values`] and
//!   [`svd_into`] (into the caller's storage): `A = U diag(s) V^H`, any shape, with `rank`,
//!   `cond`, the minimum-norm least squares `lstsq` and `pseudoinverse`;
//! - [`SelfAdjointEigen`] (owned), [`self_adjoint_eigenvalues`] and [`self_adjoint_eigen_into`]
//!   (into the caller's storage, also with scratch): `A = U diag(w) U^H` of a self-adjoint
//!   matrix, read from its lower triangle.
//!
//! The executor argument is anything that runs kernels: a `&Team`, a token, or
//! `&Exec::serial()`. Inputs are anything faer's `AsMatRef` takes (`&Mat`, `MatRef`, `MatMut`),
//! conjugated views included (`a.adjoint()` of a complex matrix). Each call has a `_with`
//! variant taking [`Options`] (thresholds per kernel family, the finiteness check); the
//! in-place factorizations also have a `_with_scratch` variant taking a `MemStack`, sized by
//! [`lu_scratch`], [`cholesky_scratch`] and [`qr_scratch`]: with them a Cholesky allocates
//! nothing, an LU only its two pivot vectors and a QR only its block factors, and `matmul` and `solve_triangular` allocate nothing at all
//! (`tests/executor/alloc_free.rs` counts). The owned forms, and the forms without a
//! `MemStack`, take their scratch from a process-wide keep of buffers given back by earlier
//! calls ([`set_scratch_limit`], 256 MiB in all by default; [`release_scratch`]), so once warm
//! they allocate only their results: from order 256 they run within a few percent of the
//! `_with_scratch` forms (`docs/perf/runs/kernels-log.md`).
//!
//! # Errors and the NaN policy
//!
//! Every call checks what it reads before it writes anything and returns a [`LinalgError`]:
//! shapes ([`LinalgError::ShapeMismatch`], [`LinalgError::NotSquare`]), and **finiteness**:
//! a NaN or an infinity in any matrix or scalar a call reads gives
//! [`LinalgError::NotFinite`] naming the operand and the entry, in every call alike (`matmul`
//! reads `C` only for `Accum::Add`; a triangular solve reads only its triangle). A caller that
//! knows its data is finite can skip the check with [`Options::check_finite`]; NaN then
//! propagates as IEEE arithmetic does (an LU's factors turn NaN; a Cholesky whose pivot turns
//! NaN reports [`LinalgError::NotPositiveDefinite`]). The check costs about one read of the
//! input (`docs/perf/runs/kernels-log.md`). The SVD and EVD check always, whatever the option (their
//! iterations have no result on NaN).
//!
//! ```
//! use faer::{Accum, Mat};
//! use teamalg::{linalg, Pool};
//!
//! let team = Pool::builder().threads(2).build()?.into_team(2)?;
//! let a = Mat::<f64>::from_fn(300, 200, |i, j| (i + j) as f64);
//! let b = Mat::<f64>::from_fn(200, 100, |i, j| (i * j) as f64);
//! let mut c = Mat::<f64>::zeros(300, 100);
//! linalg::matmul(&mut c, Accum::Replace, &a, &b, 1.0, &team)?;
//! // The same call serially, or on a plain token:
//! linalg::matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 1.0, &teamalg::Exec::serial())?;
//! // Shapes are checked:
//! let err = linalg::matmul(&mut c, Accum::Replace, &b, &a, 1.0, &team);
//! assert!(matches!(err, Err(linalg::LinalgError::ShapeMismatch { .. })));
//! // So is finiteness:
//! let mut nan = a.clone();
//! nan[(7, 3)] = f64::NAN;
//! let err = linalg::matmul(&mut c, Accum::Replace, &nan, &b, 1.0, &team).unwrap_err();
//! assert_eq!(err.to_string(), "matmul: A[(7, 3)] is not finite");
//! # Ok::<(), teamalg::Error>(())
//! ```

use faer::traits::ComplexField;
pub use faer::Side;
use teamalg_gates::{Family, ParThreshold, Scalar, Source, Thresholds};

pub mod batch;
pub(crate) mod check;
mod cholesky;
mod col_piv_qr;
mod condition;
mod det;
mod error;
mod faer_names;
mod full_piv_lu;
mod general_eigen;
mod hermitian;
mod inertia;
mod lblt;
mod ldlt;
mod lu;
mod matmul;
mod perm;
mod qr;
mod reflectors;
mod scan;
mod scratch;
mod self_adjoint_eigen;
mod solves;
mod sparse;
mod sparse_cholesky;
mod sparse_lu;
mod sparse_pattern;
mod sparse_ldlt;
mod sparse_ordering;
mod sparse_qr;
mod store;
mod svd;
mod triangular;
mod views;

pub use cholesky::{cholesky, cholesky_scratch, cholesky_with, cholesky_with_scratch, Cholesky};
pub use col_piv_qr::{
    col_piv_qr, col_piv_qr_scratch, col_piv_qr_with, col_piv_qr_with_scratch, ColPivQr,
};
pub use condition::norm_l1;
pub use error::{Dim, LinalgError};
pub use store::InPlace;
pub use self_adjoint_eigen::{
    self_adjoint_eigen_into, self_adjoint_eigen_into_with_scratch, self_adjoint_eigen_scratch,
    self_adjoint_eigenvalues, self_adjoint_eigenvalues_with, SelfAdjointEigen,
};
pub use general_eigen::{eigenvalues, eigenvalues_with, Eigen};
pub use full_piv_lu::FullPivLu;
pub use inertia::Inertia;
pub use lblt::Lblt;
pub use ldlt::Ldlt;
pub use lu::{lu, lu_scratch, lu_with, lu_with_scratch, Lu};
pub use matmul::{matmul, matmul_with};
pub use qr::{qr, qr_scratch, qr_with, qr_with_scratch, Qr};
pub use scratch::{kept_scratch, release_scratch, scratch_limit, set_scratch_limit};
pub use sparse::{
    sparse_dense_matmul, sparse_dense_matmul_with, sparse_sparse_matmul, sparse_sparse_matmul_with,
};
pub use sparse_cholesky::{sparse_cholesky_scratch, SparseCholesky, SymbolicCholesky};
pub use sparse_ldlt::SparseLdlt;
pub use sparse_ordering::SparseOrdering;
pub use sparse_lu::{sparse_lu_scratch, SparseLu, SymbolicLu};
pub use sparse_qr::{sparse_qr_scratch, SparseQr, SymbolicQr};
pub use svd::{
    singular_values, singular_values_with, svd_into, svd_into_with_scratch, svd_scratch, RealOf, Svd, SvdVectors,
};
pub use teamalg_kernels::bidiag_svd::Rotate;
use teamalg_kernels::bidiag_svd::Real as SolverReal;
use teamalg_kernels::evd::general::TeamEvd;
pub use teamalg_kernels::triangular::{Diag, SolveSide, Triangle};
pub use triangular::{solve_triangular, solve_triangular_with, TriangularView};

/// The scalar types the facade computes in: `f32`, `f64`, `c32` and `c64` (faer's
/// `ComplexField` with teamalg's sealed `Scalar`, shareable between threads, and the sealed
/// [`Rotate`] the SVD's and EVD's solvers act with, whose real type is faer's). Every such
/// type has it; it names the bound once, and every call takes it, the SVD and EVD included.
pub trait Field:
    ComplexField<Real: SolverReal>
    + Scalar
    + Rotate<RealPart = <Self as ComplexField>::Real>
    + TeamEvd<Cplx = faer::complex::Complex<<Self as ComplexField>::Real>>
    + Send
    + Sync
{
}

impl<T> Field for T where
    T: ComplexField<Real: SolverReal>
        + Scalar
        + Rotate<RealPart = <T as ComplexField>::Real>
        + TeamEvd<Cplx = faer::complex::Complex<<T as ComplexField>::Real>>
        + Send
        + Sync
{
}

/// `x` as an `f64`, for the errors that report an estimate. faer's real types promise no
/// conversion to `f64`, and a bound that asked for one would break callers generic over
/// faer's own bounds; the real type of a [`Field`] is `f32` or `f64` (`Scalar` is sealed to
/// the four types), whose `Debug` form is the shortest decimal that reads back as the same
/// number: exact for `f64`, the `f32`'s own decimal for `f32`.
pub(crate) fn real_to_f64<T: Field>(x: &T::Real) -> f64 {
    format!("{x:?}").parse().unwrap_or(f64::NAN)
}

/// Options of one call: a threshold per kernel family, which wins over the pool's
/// (`PoolBuilder::threshold`) and the environment's (`TEAMALG_THRESHOLDS`), families it does
/// not set keeping theirs; and whether the inputs are checked for NaN and infinities (yes by
/// default, see the module's NaN policy). A factorization's options also apply to the solves of
/// its object.
///
/// ```
/// use faer::{Accum, Mat};
/// use teamalg::gates::trace::{self, Reason};
/// use teamalg::gates::{Family, ParThreshold};
/// use teamalg::{linalg, Pool};
///
/// let team = Pool::builder().threads(2).build()?.into_team(2)?;
/// let a = Mat::<f64>::ones(512, 512);
/// let mut c = Mat::<f64>::zeros(512, 512);
/// let serial = linalg::Options::new().threshold(Family::Gemm, ParThreshold::Never);
/// let (r, why) = trace::collect(|| {
///     linalg::matmul_with(&mut c, Accum::Replace, &a, &a, 1.0, &team, &serial)
/// });
/// r?;
/// assert_eq!((why[0].width, why[0].reason), (1, Reason::Never));
/// # Ok::<(), teamalg::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    thresholds: Thresholds,
    check_finite: bool,
    /// The solves' floor on the estimated reciprocal condition number; never NaN.
    min_rcond: Option<f64>,
    /// The least-squares cut-off: values at or below it, relative to the largest, count as
    /// zero; never NaN.
    cutoff: Option<f64>,
    /// The triangle a Hermitian input is read from.
    side: Side,
    /// Whether a Hermitian input is checked to be Hermitian.
    check_hermitian: bool,
}

// Equality is reflexive: the floats, `min_rcond` and `cutoff`, are never NaN
// (`Options::min_rcond` and `Options::cutoff` refuse it).
impl Eq for Options {}

impl Default for Options {
    fn default() -> Self {
        Options {
            thresholds: Thresholds::default(),
            check_finite: true,
            min_rcond: None,
            cutoff: None,
            side: Side::Lower,
            check_hermitian: false,
        }
    }
}

impl Options {
    /// No family set (every region follows the pool, the environment, then the rule); inputs
    /// checked for finiteness.
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

    /// Whether the call checks its inputs for NaN and infinities (`true` by default). With
    /// `false` it skips the check and NaN propagates (see the module's NaN policy).
    ///
    /// The SVD and the self-adjoint EVD check always, and this option does not change them: a
    /// decomposition of NaN has no meaning, and their iterations (the bidiagonal and
    /// tridiagonal solvers) would not converge on it, so they return
    /// [`LinalgError::NotFinite`] naming the entry either way. Their check is one read of `A`
    /// (its lower triangle for the EVD), small beside their `O(n^3)` work.
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg, Exec};
    ///
    /// let mut a = Mat::<f64>::identity(2, 2);
    /// a[(1, 0)] = f64::NAN;
    /// let unchecked = linalg::Options::new().check_finite(false);
    /// let lu = linalg::Lu::new_with(&a, &Exec::serial(), &unchecked)?;
    /// assert!(lu.factors()[(1, 1)].is_nan());
    /// assert!(linalg::Lu::new(&a, &Exec::serial()).is_err());
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn check_finite(mut self, check: bool) -> Self {
        self.check_finite = check;
        self
    }

    /// Whether the inputs are checked for finiteness.
    pub fn checks_finite(&self) -> bool {
        self.check_finite
    }

    /// Makes the solves of an [`Lu`] or a [`Cholesky`] factored with these options refuse a
    /// system whose estimated reciprocal condition number (their `rcond`, in the 1-norm) is
    /// below `limit`, with [`LinalgError::IllConditioned`] carrying the estimate, instead of
    /// returning a solution that may have no correct digit. Off by default. The factorization
    /// then measures `||A||_1` before it factors (one read of `A`), and the first solve makes
    /// the estimate (a few triangular solves, `O(n^2)`), which the others reuse. The
    /// estimate is almost always within a factor of 3 above the true value, so a limit of
    /// `1e-12` refuses the systems whose condition number exceeds about `1e12` (a few digits
    /// left in `f64`), and lets through some up to about `3e12`.
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::{self, LinalgError}, Exec};
    ///
    /// // Hilbert's matrix of order 12: condition number about 1.7e16.
    /// let a = Mat::<f64>::from_fn(12, 12, |i, j| 1.0 / (i + j + 1) as f64);
    /// let guarded = linalg::Options::new().min_rcond(1e-12);
    /// let lu = linalg::Lu::new_with(&a, &Exec::serial(), &guarded)?;
    /// let err = lu.solve(&Mat::<f64>::ones(12, 1), &Exec::serial()).unwrap_err();
    /// let LinalgError::IllConditioned { rcond, limit, .. } = err else { panic!("{err}") };
    /// assert!(rcond < 1e-15 && limit == 1e-12);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    ///
    /// # Panics
    /// When `limit` is NaN or outside `[0, 1]` (no reciprocal condition number is).
    pub fn min_rcond(mut self, limit: f64) -> Self {
        assert!(
            (0.0..=1.0).contains(&limit),
            "Options::min_rcond: the limit {limit} is not in [0, 1]"
        );
        self.min_rcond = Some(limit);
        self
    }

    /// The floor [`Options::min_rcond`] set, if any.
    pub fn rcond_limit(&self) -> Option<f64> {
        self.min_rcond
    }

    /// The rank cut-off of the calls that decide a numerical rank: `rank`, `lstsq` and the
    /// pseudo-inverses of [`Svd`], [`SelfAdjointEigen`] and [`ColPivQr`], given to the
    /// factorization (`new_with`, kept for its later calls) or to one call (`lstsq_with`,
    /// `pseudoinverse_with`). The SVD and the EVD count as zero the values at or below `rcond`
    /// times the largest, as `rcond` in numpy's `lstsq` and LAPACK's `gelsd`; the pivoted QR
    /// keeps the leading blocks of `R` whose estimated reciprocal condition number is above
    /// `rcond`, LAPACK's `gelsy` rule, which keeps at least one column of a nonzero `R`. By
    /// default `max(m, n)` times the machine epsilon (`f64::EPSILON`, the spacing of the
    /// floats at 1), as numpy's.
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::{self, Svd}, Exec};
    ///
    /// // Singular values 1 and 1e-9: kept by default, cut at 1e-6.
    /// let a = Mat::<f64>::from_fn(2, 2, |i, j| if i != j { 0.0 } else if i == 0 { 1.0 } else { 1e-9 });
    /// let b = Mat::<f64>::ones(2, 1);
    /// let svd = Svd::new_thin(&a, &Exec::serial())?;
    /// assert!((svd.lstsq(&b, &Exec::serial())?[(1, 0)] - 1e9).abs() < 1.0);
    /// let cut = linalg::Options::new().cutoff(1e-6);
    /// assert_eq!(svd.lstsq_with(&b, &Exec::serial(), &cut)?[(1, 0)], 0.0);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    ///
    /// # Panics
    /// When `rcond` is NaN or negative.
    pub fn cutoff(mut self, rcond: f64) -> Self {
        assert!(rcond >= 0.0, "Options::cutoff: the cut-off {rcond} is not a non-negative number");
        self.cutoff = Some(rcond);
        self
    }

    /// The cut-off [`Options::cutoff`] set, if any (`None`: the call's default).
    pub fn cutoff_rcond(&self) -> Option<f64> {
        self.cutoff
    }

    /// The triangle the Hermitian calls ([`Cholesky`], [`Ldlt`], [`Lblt`],
    /// [`SelfAdjointEigen`] and their free forms) read their input from, with the diagonal:
    /// [`Side::Lower`] by default, as faer's `Side`. With [`Side::Upper`] an in-place call
    /// first writes the conjugate of the upper triangle into the strict lower one (where its
    /// factor goes), so both triangles of the caller's matrix change; owned calls read the
    /// caller's matrix and change nothing.
    ///
    /// ```
    /// use faer::{Mat, Side};
    /// use teamalg::{linalg, Exec};
    ///
    /// // Only the upper triangle is filled in.
    /// let a = Mat::<f64>::from_fn(2, 2, |i, j| [[4.0, 2.0], [0.0, 5.0]][i][j]);
    /// let upper = linalg::Options::new().side(Side::Upper);
    /// let chol = linalg::Cholesky::new_with(&a, &Exec::serial(), &upper)?;
    /// assert_eq!(chol.l().get(1, 0), 1.0);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn side(mut self, side: Side) -> Self {
        self.side = side;
        self
    }

    /// The triangle [`Options::side`] set.
    pub fn read_side(&self) -> Side {
        self.side
    }

    /// Makes the Hermitian calls check that their input is Hermitian before they write,
    /// returning [`LinalgError::NotHermitian`] with the first pair of entries that differ,
    /// instead of silently reading one triangle (off by default: the check reads the whole
    /// matrix). An entry `a_ij` and `conj(a_ji)` may differ by rounding: by at most `n eps
    /// max|a|` in the real type's `eps` (for complex types up to `sqrt(2)` times that: the
    /// largest entry is found by `max(|re|, |im|)`); a diagonal entry's imaginary part
    /// likewise.
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::{self, LinalgError}, Exec};
    ///
    /// let a = Mat::<f64>::from_fn(3, 3, |i, j| if i == j { 4.0 } else { (i + 2 * j) as f64 });
    /// let checked = linalg::Options::new().check_hermitian(true);
    /// let err = linalg::Cholesky::new_with(&a, &Exec::serial(), &checked).unwrap_err();
    /// assert_eq!(err, LinalgError::NotHermitian { op: "cholesky", row: 1, col: 0 });
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn check_hermitian(mut self, check: bool) -> Self {
        self.check_hermitian = check;
        self
    }

    /// Whether Hermitian inputs are checked to be Hermitian.
    pub fn checks_hermitian(&self) -> bool {
        self.check_hermitian
    }
}

#[cfg(test)]
mod tests {
    use super::real_to_f64;

    #[test]
    fn real_to_f64_is_exact() {
        for x in [0.0, 1.0, 1e-17, 0.1, f64::MIN_POSITIVE, 5e-324, 1.0 / 3.0] {
            assert_eq!(real_to_f64::<f64>(&x).to_bits(), x.to_bits());
        }
        for x in [0.1f32, 1e-7, f32::MIN_POSITIVE, 1.0 / 3.0] {
            assert_eq!(real_to_f64::<faer::c32>(&x) as f32, x);
        }
    }
}
