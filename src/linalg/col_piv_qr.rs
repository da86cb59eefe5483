//! QR with column pivoting, `A P = Q R`: owned ([`ColPivQr::new`]) or in place
//! ([`col_piv_qr`]), with the numerical rank and the minimum-norm least squares of any shape
//! and rank through a complete orthogonal decomposition (LAPACK's `gelsy`).

use faer::dyn_stack::{MemStack, StackReq};
use faer::mat::AsMatRef;
use faer::perm::PermRef;
use faer::traits::math_utils::{conj, eps, from_f64, zero};
use faer::traits::{ComplexField, Conjugate};
use faer::{Mat, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::col_piv_qr::{self as kernel, ColPivQrParams};
use teamalg_kernels::par::{Executor, Seq};
use teamalg_kernels::qr as plain;
use teamalg_kernels::triangular::{self, Diag, SolveParams, SolveSide, Triangle};

use super::scratch;
use super::check::{self, Stored};
use super::condition;
use super::store::{owned_constructors, InPlace, Store};
use super::reflectors::Reflectors;
use super::{Dim, Field, LinalgError, Options, Qr, TriangularView};

/// The factorization `A P = Q R` of an `m x n` matrix with column pivoting: at each step the
/// remaining column of largest norm comes next, so `R`'s diagonal is non-increasing in
/// magnitude and shows the numerical rank. `R` (`min(m, n) x n`) is on and above the diagonal
/// of one matrix, the reflectors' vectors below it, their block factors beside it (the layout
/// of [`Qr`]), and `P` is a column permutation.
///
/// Where [`Qr`] refuses a rank-deficient matrix, this factorization is the cheap way through:
/// [`ColPivQr::rank`] estimates the rank and [`ColPivQr::lstsq`] gives the minimum-norm
/// least-squares solution of any shape and rank (as LAPACK's `gelsy`), at about the cost of a
/// QR, where [`Svd::lstsq`](super::Svd::lstsq) costs an SVD. The steps' trailing updates run
/// on the executor when the gate says they pay (family [`Family::QrColPivStep`]).
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg::ColPivQr, Pool};
///
/// let team = Pool::builder().threads(2).build()?.into_team(2)?;
/// // Rank 2: the third column is the sum of the first two.
/// let a = Mat::<f64>::from_fn(5, 3, |i, j| {
///     let (x, y) = (i as f64, (i * i) as f64);
///     [x, y, x + y][j]
/// });
/// let qr = ColPivQr::new(&a, &team)?;
/// assert_eq!(qr.rank(None), 2);
/// // A P = Q R, P a column permutation.
/// let (fwd, _) = qr.p().arrays();
/// let ap = Mat::<f64>::from_fn(5, 3, |i, j| a[(i, fwd[j])]);
/// assert!((qr.q_thin(&team)? * qr.r().to_mat() - &ap).norm_max() < 1e-12);
/// // The minimum-norm least squares: b = A (1, 1, 1) is reached with the smallest x.
/// let b = &a * Mat::<f64>::ones(3, 1);
/// let x = qr.lstsq(&b, &team)?;
/// assert!((&a * &x - &b).norm_max() < 1e-12);
/// assert!((x[(0, 0)] - x[(1, 0)]).abs() < 1e-12); // the null vector (1, 1, -1) removed
/// # Ok::<(), teamalg::Error>(())
/// ```
// `Send` and `Sync` are automatic and sound, as for `Qr`: the factors, the block factors, the
// permutation's two vectors and the options; a shared `&ColPivQr` only reads them.
#[derive(Debug)]
pub struct ColPivQr<'a, T> {
    qr: Reflectors<'a, T>,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    transpositions: usize,
    options: Options,
}

/// The scratch [`col_piv_qr_with_scratch`] needs for an `m x n` matrix.
pub fn col_piv_qr_scratch<T: ComplexField>(m: usize, n: usize) -> StackReq {
    kernel::col_piv_qr_in_place_scratch::<T>(m, n)
}

/// Factors `a` in place as `A P = Q R`, on `exec`. Any shape works. Errors:
/// [`LinalgError::NotFinite`] (checked first; `a` is unchanged).
pub fn col_piv_qr<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
) -> Result<ColPivQr<'a, T>, LinalgError> {
    let a = a.in_place();
    col_piv_qr_with(a, exec, &Options::new())
}

/// [`col_piv_qr`] with the call's [`Options`] (which its solves keep).
pub fn col_piv_qr_with<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<ColPivQr<'a, T>, LinalgError> {
    let a = a.in_place();
    let req = col_piv_qr_scratch::<T>(a.nrows(), a.ncols());
    scratch::with("col_piv_qr", req, |stack| {
        col_piv_qr_with_scratch(a, exec, options, stack)
    })?
}

/// [`col_piv_qr_with`] taking its scratch from `stack` (at least [`col_piv_qr_scratch`] of
/// the shape): it allocates only the block factors and the permutation (and the parallel
/// path's norms and coefficients, and a column-major copy of an `a` that is not column-major).
///
/// Errors: [`LinalgError::ScratchTooSmall`] when `stack` is smaller than
/// [`col_piv_qr_scratch`] of the shape, and those of [`col_piv_qr`]; `a` is then unchanged.
pub fn col_piv_qr_with_scratch<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> Result<ColPivQr<'a, T>, LinalgError> {
    let a = a.in_place();
    check::scratch("col_piv_qr", stack, col_piv_qr_scratch::<T>(a.nrows(), a.ncols()))?;
    ColPivQr::check(a.as_ref(), options)?;
    Ok(factor(Store::Borrowed(a), exec, options, stack))
}

fn factor<'a, T: Field>(
    mut store: Store<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> ColPivQr<'a, T> {
    let (m, n) = (store.as_ref().nrows(), store.as_ref().ncols());
    let bs = plain::block_size::<T>(m, n);
    let mut h = Mat::<T>::zeros(bs, m.min(n));
    let (mut perm, mut perm_inv) = (vec![0; n], vec![0; n]);
    let params = ColPivQrParams {
        threshold: options.get(Family::QrColPivStep),
    };
    let transpositions = kernel::col_piv_qr_in_place(
        store.as_mut(),
        h.as_mut(),
        &mut perm,
        &mut perm_inv,
        exec,
        params,
        stack,
    );
    ColPivQr {
        qr: Reflectors { factors: store, h },
        perm,
        perm_inv,
        transpositions,
        options: *options,
    }
}

owned_constructors!(
    ColPivQr,
    "col_piv_qr",
    "Factors a copy of `a` (which may be a conjugated view), on `exec`; `a` is unchanged.\nErrors: [`LinalgError::NotFinite`]."
);

impl<T: Field> ColPivQr<'_, T> {
    fn check(a: MatRef<'_, T>, options: &Options) -> Result<(), LinalgError> {
        if options.checks_finite() {
            check::finite("col_piv_qr", "A", a, Stored::All)?;
        }
        Ok(())
    }

    fn factor_copy(
        a: Mat<T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Self, LinalgError> {
        let req = col_piv_qr_scratch::<T>(a.nrows(), a.ncols());
        scratch::with("col_piv_qr", req, |stack| {
            factor(Store::Owned(a), exec, options, stack)
        })
    }
}

impl<T: Field> ColPivQr<'_, T> {
    /// The factored matrix: `R` on and above the diagonal, the Householder vectors below it.
    pub fn factors(&self) -> MatRef<'_, T> {
        self.qr.factors()
    }

    /// The reflectors' block factors, `bs x min(m, n)` in faer's layout (as [`Qr`]'s).
    pub fn householder_factor(&self) -> MatRef<'_, T> {
        self.qr.h.as_ref()
    }

    /// `R`, `min(m, n) x n`, upper trapezoidal, its diagonal non-increasing in magnitude.
    pub fn r(&self) -> TriangularView<'_, T> {
        self.qr.r()
    }

    /// The column permutation `P` as faer's permutation: its forward array names, for each
    /// column `j` of `A P`, the column of `A` it is (`p().arrays().0[j]`). `p`, as
    /// [`Lu::p`](super::Lu::p) and faer's `P()`.
    pub fn p(&self) -> PermRef<'_, usize> {
        PermRef::new_checked(&self.perm, &self.perm_inv, self.perm.len())
    }

    /// How many column transpositions `P` is made of: `det P = (-1)^transpositions`.
    pub fn transpositions(&self) -> usize {
        self.transpositions
    }

    /// `Q^H B` (`B`: `m` rows, may be a conjugated view), on `exec`, without forming `Q`.
    pub fn apply_q_adjoint<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        let b = scratch::copy("apply_q_adjoint", b.as_mat_ref())?;
        self.apply("apply_q_adjoint", b, true, exec)
    }

    /// `Q B` (`B`: `m` rows, may be a conjugated view), on `exec`, without forming `Q`.
    pub fn apply_q<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        let b = scratch::copy("apply_q", b.as_mat_ref())?;
        self.apply("apply_q", b, false, exec)
    }

    fn apply(
        &self,
        op: &'static str,
        mut b: Mat<T>,
        adjoint: bool,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        self.qr.apply(op, b.as_mut(), adjoint, exec, &self.options)?;
        Ok(b)
    }

    /// The thin `Q`: its first `min(m, n)` columns, with `A P = Q_thin R`; formed on `exec`.
    /// Errors: [`LinalgError::OutOfMemory`].
    pub fn q_thin(&self, exec: &(impl Executor + ?Sized)) -> Result<Mat<T>, LinalgError> {
        self.qr.q_cols("q_thin", self.qr.size(), exec, &self.options)
    }

    /// An estimate of the reciprocal condition number of `R`'s leading `k x k` block
    /// (`k = min(m, n)`) in the 1-norm, as [`Qr::rcond`]: near the unit roundoff when `A` is
    /// numerically rank-deficient. Always `Ok`: the `Result` is every `rcond`'s shape.
    pub fn rcond(&self) -> Result<T::Real, LinalgError> {
        let f = self.factors();
        let k = f.nrows().min(f.ncols());
        Ok(condition::triangular_rcond(f.submatrix(0, 0, k, k)))
    }

    /// The numerical rank: the largest `r` for which the leading `r x r` block of `R` has an
    /// estimated reciprocal condition number above `rcond` (by default the factorization's
    /// [`Options::cutoff`], else `max(m, n)` times the machine epsilon), LAPACK's `gelsy`
    /// rule: a nonzero `R` has rank at least 1 whatever the cut-off, where
    /// [`Svd::rank`](super::Svd::rank) counts the singular values above it and may give 0.
    /// The estimate is within a small factor of the true one, so a matrix whose singular
    /// values fall close to the cut may be given a rank one away from the SVD's.
    /// `O(k^2 log k)`.
    pub fn rank(&self, rcond: Option<T::Real>) -> usize {
        let f = self.factors();
        let (m, n) = (f.nrows(), f.ncols());
        let k = m.min(n);
        let kept = self.options.cutoff_rcond().map(from_f64::<T::Real>);
        let tol = rcond
            .or(kept)
            .unwrap_or_else(|| eps::<T::Real>() * from_f64::<T::Real>(m.max(n) as f64));
        let good = |r: usize| condition::triangular_rcond(f.submatrix(0, 0, r, r)) > tol;
        if k == 0 || f[(0, 0)] == zero::<T>() {
            return 0;
        }
        if good(k) {
            return k;
        }
        // rcond of the leading blocks does not increase with their order: the largest good
        // order by bisection, between 1 (a nonzero 1 x 1 block) and k - 1.
        let (mut lo, mut hi) = (1, k);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if good(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The minimum-norm least-squares solution `X` (`n x k`) of `A X = B` (`B`: `m x k`, may be
    /// a conjugated view), for any shape and rank, with the rank [`ColPivQr::rank`] gives by
    /// default (the cut-off: [`ColPivQr::lstsq_with`]): as LAPACK's `gelsy`, `R`'s leading `r` rows `[R11 R12]` are reduced to
    /// `[T 0] Z` by a second QR (of their adjoint), a complete orthogonal decomposition
    /// `A P = Q [T 0; 0 0] Z`, and `X = P Z^H [T^-1 (Q^H B)_r; 0]`. At full column rank this is
    /// the triangular solve of [`Qr::lstsq`]. Errors: [`LinalgError::ShapeMismatch`] (`B` must
    /// have `m` rows), [`LinalgError::NotFinite`], [`LinalgError::OutOfMemory`], and the
    /// refusals of the second QR's solve ([`LinalgError::RankDeficient`]: a cut-off that
    /// keeps a block singular to rounding, or factors of a non-finite `A` left unchecked by
    /// `check_finite(false)`); every one names the operation `"lstsq"`.
    pub fn lstsq<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        self.lstsq_with(b, exec, &self.options)
    }

    /// [`ColPivQr::lstsq`] with the call's [`Options`]: the rank's cut-off
    /// ([`Options::cutoff`], passed to [`ColPivQr::rank`]), the finiteness check of `B` and
    /// the thresholds of the products and solves.
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::{ColPivQr, Options}, Exec};
    ///
    /// // Columns 1 and 1 + 1e-9: rank 2 by default, 1 with a cut-off of 1e-6.
    /// let a = Mat::<f64>::from_fn(3, 2, |i, j| 1.0 + (i * j) as f64 * 1e-9);
    /// let b = Mat::<f64>::ones(3, 1);
    /// let qr = ColPivQr::new(&a, &Exec::serial())?;
    /// let x = qr.lstsq_with(&b, &Exec::serial(), &Options::new().cutoff(1e-6))?;
    /// assert!((x[(0, 0)] - 0.5).abs() < 1e-6 && (x[(1, 0)] - 0.5).abs() < 1e-6);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn lstsq_with<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Mat<T>, LinalgError> {
        let op = "lstsq";
        let rcond = options.cutoff_rcond().map(from_f64::<T::Real>);
        let f = self.factors();
        let (m, n) = (f.nrows(), f.ncols());
        let b = b.as_mat_ref();
        check::dim(op, "B", Dim::Rows, m, b.nrows())?;
        // Sized before `B` is read: `Q^H B` and the solution (`n x k`, more than `B` when `A`
        // is wide).
        let mut qb = scratch::copy(op, b)?;
        let mut x = scratch::zeros::<T>(op, n, b.ncols())?;
        if options.checks_finite() {
            check::finite(op, "B", qb.as_ref(), Stored::All)?;
        }
        let r = self.rank(rcond);
        self.qr.q_on(qb.as_mut(), true, exec, options);
        let c = qb.as_ref().subrows(0, r);
        let mut y = scratch::zeros::<T>(op, n, b.ncols())?;
        if r == n {
            let p = SolveParams {
                threshold: options.get(Family::TriangularSolve),
            };
            y.copy_from(c);
            let (left, upper) = (SolveSide::Left, Triangle::Upper);
            triangular::solve_in_place(f.subrows(0, n), y.as_mut(), left, upper, Diag::NonUnit, exec, p);
        } else if r > 0 {
            // [R11 R12]^H (n x r, lower trapezoidal), factored to give Z and T = R2^H.
            let rows = Mat::<T>::from_fn(n, r, |i, j| if j <= i { conj(&f[(j, i)]) } else { zero() });
            let inner = options.check_finite(false);
            // The inner calls' refusals are this call's: named `lstsq`, not by the inner
            // operation the caller never made.
            let z = Qr::new_with(&rows, exec, &inner).map_err(|e| e.named(op))?;
            y = z.min_norm_adjoint(c, exec).map_err(|e| e.named(op))?;
        }
        for (j, &p) in self.perm.iter().enumerate() {
            x.row_mut(p).copy_from(y.row(j));
        }
        Ok(x)
    }

    /// `A` again, from the factors: `Q_thin R P^T` (serially; a check, not a kernel).
    pub fn reconstruct(&self) -> Mat<T> {
        let q = self.q_thin(&Seq).expect("Q_thin is no larger than the factors");
        let ap = q * self.r().to_mat();
        let mut a = Mat::<T>::zeros(ap.nrows(), ap.ncols());
        for (j, &p) in self.perm.iter().enumerate() {
            a.col_mut(p).copy_from(ap.col(j));
        }
        a
    }
}
