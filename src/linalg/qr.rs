//! Householder QR, `A = Q R`: owned ([`Qr::new`]) or in place ([`qr`]), with `Q` applied or
//! formed, solves and least squares.

use std::sync::OnceLock;

use faer::dyn_stack::{MemStack, StackReq};
use faer::mat::AsMatRef;
use faer::traits::math_utils::{abs, eps, from_f64, zero};
use faer::traits::{ComplexField, Conjugate};
use faer::{Mat, MatMut, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::par::Executor;
use teamalg_kernels::qr::{self as kernel, QrParams};
use teamalg_kernels::triangular::{self, Diag, SolveParams, SolveSide, Triangle};

use super::check::{self, Stored};
use super::det;
use super::scratch;
use super::solves::{faer_solvers, solve_forms};
use super::condition;
use super::store::{owned_constructors, InPlace, Store};
use super::views::conjugate;
use super::reflectors::Reflectors;
use super::{Dim, Field, LinalgError, Options, TriangularView};

/// The factorization `A = Q R` of an `m x n` matrix by Householder reflections: `R`
/// (`min(m, n) x n`, upper trapezoidal) on and above the diagonal of one matrix, the
/// reflectors' vectors below it, and their block factors beside it (faer's layout). The matrix
/// is the caller's ([`qr`], `Qr<'a, T>` borrows it) or the factorization's own ([`Qr::new`]).
///
/// `Q` is never formed unless asked for: [`Qr::apply_q`] and [`Qr::apply_q_adjoint`] apply it
/// to a matrix, [`Qr::q_thin`] and [`Qr::q_full`] form it. Any shape works, and so does a
/// rank-deficient matrix (`A = Q R` with `Q` unitary; `R` then has zeros, to rounding, on its
/// diagonal). Solves and least squares refuse an `A` that is rank-deficient, exactly or to
/// rounding, with [`LinalgError::RankDeficient`] (never [`LinalgError::Singular`]: without
/// pivoting, which diagonal entry of `R` comes out zero says little about which column is at
/// fault); [`ColPivQr::lstsq`](super::ColPivQr::lstsq) and [`Svd::lstsq`](super::Svd::lstsq)
/// give the minimum-norm solution of a rank-deficient system.
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg::Qr, Pool};
///
/// let team = Pool::builder().threads(2).build()?.into_team(2)?;
/// // Fit y = c0 + c1 t through four points: a tall least-squares problem.
/// let a = Mat::<f64>::from_fn(4, 2, |i, j| if j == 0 { 1.0 } else { i as f64 });
/// let y = Mat::<f64>::from_fn(4, 1, |i, _| [1.0, 3.0, 5.0, 7.0][i]);
/// let qr = Qr::new(&a, &team)?;
/// let c = qr.lstsq(&y, &team)?;
/// assert!((c[(0, 0)] - 1.0).abs() < 1e-12 && (c[(1, 0)] - 2.0).abs() < 1e-12);
/// // A = Q R, with Q's orthonormal columns formed on request.
/// let q = qr.q_thin(&team)?;
/// assert!((&q * qr.r().to_mat() - &a).norm_max() < 1e-12);
/// assert!((q.adjoint() * &q - Mat::<f64>::identity(2, 2)).norm_max() < 1e-12);
/// # Ok::<(), teamalg::Error>(())
/// ```
// `Send` and `Sync` are automatic and sound, as for `Lu`: a `MatMut` or a `Mat`, the block
// factors (a `Mat`) and the options; a shared `&Qr` only reads them.
#[derive(Debug)]
pub struct Qr<'a, T> {
    qr: Reflectors<'a, T>,
    options: Options,
    /// Whether `R` is numerically singular, and then the estimated rank: found by the first
    /// solve (a condition estimate, `O(k^2)`) and kept for the others.
    deficient: OnceLock<Option<usize>>,
}

/// The scratch [`qr_with_scratch`] needs for an `m x n` matrix on executors of width up to
/// `width` (`Executor::width`; one block row of the matrix per participant).
pub fn qr_scratch<T: ComplexField>(m: usize, n: usize, width: usize) -> StackReq {
    kernel::qr_in_place_scratch::<T>(m, n, kernel::block_size::<T>(m, n), width)
}

/// Factors `a` in place as `A = Q R`, on `exec`. Any shape works. Errors:
/// [`LinalgError::NotFinite`] (checked first; `a` is unchanged).
pub fn qr<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
) -> Result<Qr<'a, T>, LinalgError> {
    let a = a.in_place();
    qr_with(a, exec, &Options::new())
}

/// [`qr`] with the call's [`Options`] (which its solves keep).
pub fn qr_with<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<Qr<'a, T>, LinalgError> {
    let a = a.in_place();
    let req = qr_scratch::<T>(a.nrows(), a.ncols(), exec.width());
    scratch::with("qr", req, |stack| qr_with_scratch(a, exec, options, stack))?
}

/// [`qr_with`] taking its scratch from `stack` (at least [`qr_scratch`] of the shape at width
/// 1; a stack sized for a smaller width than `exec`'s limits the participants to what it
/// holds): it allocates only the block factors (`bs x min(m, n)`).
///
/// ```
/// use faer::dyn_stack::{MemBuffer, MemStack};
/// use faer::Mat;
/// use teamalg::{linalg, Exec};
///
/// let mut buf = MemBuffer::new(linalg::qr_scratch::<f64>(40, 30, 1));
/// let a = Mat::<f64>::from_fn(40, 30, |i, j| ((i * 7 + j * 3) % 11) as f64 + if i == j { 5.0 } else { 0.0 });
/// let mut f = a.clone();
/// let qr = linalg::qr_with_scratch(f.as_mut(), &Exec::serial(), &linalg::Options::new(), MemStack::new(&mut buf))?;
/// assert!((qr.reconstruct() - &a).norm_max() < 1e-10);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
///
/// Errors: [`LinalgError::ScratchTooSmall`] when `stack` is smaller than [`qr_scratch`] of the
/// shape at width 1, and those of [`qr`]; `a` is then unchanged.
pub fn qr_with_scratch<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> Result<Qr<'a, T>, LinalgError> {
    let a = a.in_place();
    check::scratch("qr", stack, qr_scratch::<T>(a.nrows(), a.ncols(), 1))?;
    Qr::check(a.as_ref(), options)?;
    Ok(factor(Store::Borrowed(a), exec, options, stack))
}

/// Factors the checked `store`, on as many participants as `stack` holds scratch for.
fn factor<'a, T: Field>(
    mut store: Store<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> Qr<'a, T> {
    let (m, n) = (store.as_ref().nrows(), store.as_ref().ncols());
    let bs = kernel::block_size::<T>(m, n);
    let fits = |w: usize| stack.can_hold(kernel::qr_in_place_scratch::<T>(m, n, bs, w));
    let width = (1..=exec.width().max(1))
        .rev()
        .find(|&w| fits(w))
        .unwrap_or(1);
    let mut h = Mat::<T>::zeros(bs, m.min(n));
    let params = QrParams {
        threshold: options.get(Family::Qr),
    };
    kernel::qr_in_place(store.as_mut(), h.as_mut(), exec, params, width, stack);
    Qr {
        qr: Reflectors { factors: store, h },
        options: *options,
        deficient: OnceLock::new(),
    }
}

owned_constructors!(
    Qr,
    "qr",
    "Factors a copy of `a` (which may be a conjugated view), on `exec`; `a` is unchanged.\nErrors: [`LinalgError::NotFinite`]."
);

impl<T: Field> Qr<'_, T> {
    /// What every QR checks before it writes: finiteness, when the options ask.
    fn check(a: MatRef<'_, T>, options: &Options) -> Result<(), LinalgError> {
        if options.checks_finite() {
            check::finite("qr", "A", a, Stored::All)?;
        }
        Ok(())
    }

    /// The owned constructors' factorization of their checked copy.
    fn factor_copy(
        a: Mat<T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Self, LinalgError> {
        let req = qr_scratch::<T>(a.nrows(), a.ncols(), exec.width());
        scratch::with("qr", req, |stack| {
            factor(Store::Owned(a), exec, options, stack)
        })
    }
}

impl<T: Field> Qr<'_, T> {
    /// The factored matrix: `R` on and above the diagonal, the Householder vectors below it.
    pub fn factors(&self) -> MatRef<'_, T> {
        self.qr.factors()
    }

    /// The reflectors' block factors, `bs x min(m, n)` in faer's layout: with the first
    /// `min(m, n)` columns of [`Qr::factors`] they are the Householder sequence faer's
    /// `linalg::householder` functions take.
    pub fn householder_factor(&self) -> MatRef<'_, T> {
        self.qr.h.as_ref()
    }

    /// `R`, `min(m, n) x n`, upper trapezoidal: a view into the factors.
    pub fn r(&self) -> TriangularView<'_, T> {
        self.qr.r()
    }

    /// `Q B` or `Q^H B` in place on `exec`, unchecked (the callers checked `b`).
    fn q_on(&self, b: MatMut<'_, T>, adjoint: bool, exec: &(impl Executor + ?Sized)) {
        self.qr.q_on(b, adjoint, exec, &self.options);
    }

    /// `Some(estimated rank)` when `R` is numerically singular ([`deficiency`]).
    fn deficiency(&self) -> Option<usize> {
        *self.deficient.get_or_init(|| {
            let f = self.factors();
            let k = f.nrows().min(f.ncols());
            deficiency(f.submatrix(0, 0, k, k), || self.r_rcond())
        })
    }

    /// `Err(RankDeficient)` when `R` is singular, exactly or to rounding. The condition
    /// estimate decides, not the first zero on the diagonal: an exact zero makes it 0 too, and
    /// without pivoting the zero's position names no culprit column (a column equal to an
    /// earlier one can leave its zero further down), while the estimate also sees the
    /// numerically dependent columns the diagonal hides.
    fn full_rank(&self, op: &'static str) -> Result<(), LinalgError> {
        match self.deficiency() {
            Some(rank) => {
                let f = self.factors();
                let of = f.nrows().min(f.ncols());
                Err(LinalgError::RankDeficient { op, rank, of })
            }
            None => Ok(()),
        }
    }

    /// The first exact zero on `R`'s diagonal, if any (`R` is then singular). The solves do not
    /// report it: they refuse any singular `R` with [`LinalgError::RankDeficient`].
    pub fn zero_diagonal(&self) -> Option<usize> {
        let f = self.factors();
        (0..f.nrows().min(f.ncols())).find(|&i| f[(i, i)] == zero::<T>())
    }

    /// An estimate of the reciprocal condition number of `R`'s leading `k x k` block
    /// (`k = min(m, n)`), `1 / (||R_k||_1 ||R_k^{-1}||_1)`, in `[0, 1]`: for a tall `A` of full
    /// column rank this is within a factor `n` of `1 / cond_2(A)`, so a value near the unit
    /// roundoff says `A` is numerically rank-deficient and its least-squares solution
    /// meaningless. LAPACK's `trcon`: a few triangular solves, `O(k^2)`; exactly 0 when a
    /// diagonal entry of `R` is zero. Always `Ok`: the `Result` is every `rcond`'s shape.
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::Qr, Exec};
    ///
    /// // Rank 1 to rounding: the second column is twice the first.
    /// let a = Mat::<f64>::from_fn(3, 2, |i, j| (i + 1) as f64 * (j + 1) as f64);
    /// assert!(Qr::new(&a, &Exec::serial())?.rcond()? < 1e-14);
    /// let b = Mat::<f64>::from_fn(3, 2, |i, j| if i == j { 1.0 } else { 0.0 });
    /// assert_eq!(Qr::new(&b, &Exec::serial())?.rcond()?, 1.0);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn rcond(&self) -> Result<T::Real, LinalgError> {
        Ok(self.r_rcond())
    }

    /// `R`'s leading block's estimate, for [`Qr::rcond`] and the solves' refusal.
    fn r_rcond(&self) -> T::Real {
        let f = self.factors();
        let k = f.nrows().min(f.ncols());
        condition::triangular_rcond(f.submatrix(0, 0, k, k))
    }

    /// Overwrites `b` (`m` rows) with `Q B`, on `exec`, without forming `Q`.
    pub fn apply_q_in_place(
        &self,
        b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.qr.apply("apply_q", b, false, exec, &self.options)
    }

    /// Overwrites `b` (`m` rows) with `Q^H B`, on `exec`, without forming `Q`.
    ///
    /// ```
    /// use faer::{c64, Mat};
    /// use teamalg::{linalg::Qr, Exec};
    ///
    /// let a = Mat::<c64>::from_fn(5, 3, |i, j| c64::new((i + j) as f64, (i * j) as f64 + if i == j { 2.0 } else { 0.0 }));
    /// let qr = Qr::new(&a, &Exec::serial())?;
    /// // Q^H A = R (upper trapezoidal), with Q applied, never formed.
    /// let qha = qr.apply_q_adjoint(&a, &Exec::serial())?;
    /// assert!((qha.subrows(0, 3) - qr.r().to_mat()).norm_max() < 1e-12);
    /// assert!(qha.subrows(3, 2).norm_max() < 1e-12);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn apply_q_adjoint_in_place(
        &self,
        b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.qr.apply("apply_q_adjoint", b, true, exec, &self.options)
    }

    /// `Q B` (`B` may be a conjugated view), on `exec`.
    pub fn apply_q<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        let mut x = scratch::copy("apply_q", b.as_mat_ref())?;
        self.apply_q_in_place(x.as_mut(), exec)?;
        Ok(x)
    }

    /// `Q^H B` (`B` may be a conjugated view), on `exec`.
    pub fn apply_q_adjoint<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        let mut x = scratch::copy("apply_q_adjoint", b.as_mat_ref())?;
        self.apply_q_adjoint_in_place(x.as_mut(), exec)?;
        Ok(x)
    }

    /// The thin `Q`: its first `min(m, n)` columns, orthonormal, with `A = Q_thin R`; formed
    /// on `exec`. Errors: [`LinalgError::OutOfMemory`].
    pub fn q_thin(&self, exec: &(impl Executor + ?Sized)) -> Result<Mat<T>, LinalgError> {
        let f = self.factors();
        self.qr.q_cols("q_thin", f.nrows().min(f.ncols()), exec, &self.options)
    }

    /// The full `Q`, `m x m` and unitary; formed on `exec`. Errors:
    /// [`LinalgError::OutOfMemory`] (`m x m` of a tall `A` can be far larger than `A`).
    pub fn q_full(&self, exec: &(impl Executor + ?Sized)) -> Result<Mat<T>, LinalgError> {
        self.qr.q_cols("q_full", self.factors().nrows(), exec, &self.options)
    }

    /// The least-squares solves' checks: `b` has `m` rows and is finite, and `R`'s leading
    /// `n x n` block is not singular, exactly or to rounding.
    fn checked(&self, op: &'static str, b: &MatMut<'_, T>) -> Result<SolveParams, LinalgError> {
        let f = self.factors();
        check::dim(op, "B", Dim::Rows, f.nrows(), b.nrows())?;
        self.full_rank(op)?;
        if self.options.checks_finite() {
            check::finite(op, "B", b.as_ref(), Stored::All)?;
        }
        Ok(SolveParams {
            threshold: self.options.get(Family::TriangularSolve),
        })
    }

    /// Least squares in place: `b` (`m x k`) becomes `Q^H B`, whose first `n` rows are the `X`
    /// minimizing `||A X - B||` (column by column), and whose last `m - n` rows hold the
    /// residuals' coordinates (their norm is the residual's, as with LAPACK's `gels`). For a
    /// square `A` this is the solve of `A X = B`.
    ///
    /// Errors: [`LinalgError::NotTall`] when `m < n` (an underdetermined system: factor `A^H`
    /// and use [`Qr::min_norm_adjoint`]), [`LinalgError::ShapeMismatch`],
    /// [`LinalgError::RankDeficient`] (`A` is rank-deficient: `R` is singular, exactly or to
    /// rounding, as [`Qr::rcond`] sees it, and the answer would be meaningless;
    /// [`ColPivQr::lstsq`](super::ColPivQr::lstsq) and [`Svd::lstsq`](super::Svd::lstsq) give
    /// the minimum-norm one), [`LinalgError::NotFinite`]; `b` is then unchanged.
    pub fn lstsq_in_place(
        &self,
        b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.least_squares("lstsq", b, exec)
    }

    fn least_squares(
        &self,
        op: &'static str,
        b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        let f = self.factors();
        let (m, n) = (f.nrows(), f.ncols());
        if m < n {
            return Err(LinalgError::NotTall { op, rows: m, cols: n });
        }
        let p = self.checked(op, &b)?;
        let mut b = b;
        self.q_on(b.as_mut(), true, exec);
        let r = f.subrows(0, n);
        let (left, upper) = (SolveSide::Left, Triangle::Upper);
        triangular::solve_in_place(r, b.subrows_mut(0, n), left, upper, Diag::NonUnit, exec, p);
        Ok(())
    }

    /// The least-squares solution `X` (`n x k`) of `A X = B` (`B`: `m x k`, may be a
    /// conjugated view), on `exec`; see [`Qr::lstsq_in_place`] for the errors.
    pub fn lstsq<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        let mut x = scratch::copy("lstsq", b.as_mat_ref())?;
        self.lstsq_in_place(x.as_mut(), exec)?;
        let n = self.factors().ncols();
        Ok(x.subrows(0, n).to_owned())
    }

    /// The minimum-norm solution `X` (`m x k`) of the underdetermined system `A^H X = B`
    /// (`B`: `n x k`), where this QR factors the tall `A` (`m >= n`, full column rank): the
    /// way to solve a wide system `W X = B` is to factor `W^H`. With `A = Q R`,
    /// `X = Q [R^-H B; 0]`.
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::Qr, Exec};
    ///
    /// // One equation, two unknowns: x0 + x1 = 2. The minimum-norm solution is (1, 1).
    /// let w = Mat::<f64>::from_fn(1, 2, |_, _| 1.0);
    /// let qr = Qr::new(w.adjoint(), &Exec::serial())?; // factors W^H, 2 x 1
    /// let x = qr.min_norm_adjoint(&Mat::<f64>::from_fn(1, 1, |_, _| 2.0), &Exec::serial())?;
    /// assert!((x[(0, 0)] - 1.0).abs() < 1e-12 && (x[(1, 0)] - 1.0).abs() < 1e-12);
    /// // A wide QR refuses least squares, naming the way out.
    /// let wide = Qr::new(&w, &Exec::serial())?;
    /// let err = wide.lstsq(&Mat::<f64>::ones(1, 1), &Exec::serial()).unwrap_err();
    /// assert_eq!(err, teamalg::linalg::LinalgError::NotTall { op: "lstsq", rows: 1, cols: 2 });
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    ///
    /// Errors: [`LinalgError::NotTall`] (this QR is of a wide matrix),
    /// [`LinalgError::ShapeMismatch`] (`B` must have `n` rows), [`LinalgError::RankDeficient`]
    /// (`R` has an exact zero on its diagonal: `A` is not of full column rank, and the
    /// minimum-norm solution is [`Svd::lstsq`](super::Svd::lstsq)'s of the wide system),
    /// [`LinalgError::NotFinite`]. An `R` singular only to rounding is not refused here: ask
    /// [`Qr::rcond`] first.
    pub fn min_norm_adjoint<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        let op = "min_norm_adjoint";
        let f = self.factors();
        let (m, n) = (f.nrows(), f.ncols());
        if m < n {
            return Err(LinalgError::NotTall { op, rows: m, cols: n });
        }
        let b = b.as_mat_ref();
        check::dim(op, "B", Dim::Rows, n, b.nrows())?;
        // An exact zero on the diagonal only, not one singular to rounding: `ColPivQr::lstsq`
        // calls this on a block its own rank rule (a caller's `rcond`) chose, which must not be refused again.
        if self.zero_diagonal().is_some() {
            self.full_rank(op)?;
        }
        let mut x = scratch::zeros::<T>(op, m, b.ncols())?;
        x.as_mut().subrows_mut(0, n).copy_from(b);
        if self.options.checks_finite() {
            check::finite(op, "B", x.as_ref().subrows(0, n), Stored::All)?;
        }
        // R^H Y = B as R^T conj(Y) = conj(B).
        let p = SolveParams {
            threshold: self.options.get(Family::TriangularSolve),
        };
        let rt = f.subrows(0, n).transpose();
        let mut y = x.as_mut().subrows_mut(0, n);
        conjugate(y.as_mut());
        let (left, lower) = (SolveSide::Left, Triangle::Lower);
        triangular::solve_in_place(rt, y.as_mut(), left, lower, Diag::NonUnit, exec, p);
        conjugate(y);
        self.q_on(x.as_mut(), false, exec);
        Ok(x)
    }

    /// `A` again, from the factors: `Q_thin R` (serially; a check, not a kernel).
    pub fn reconstruct(&self) -> Mat<T> {
        let q = self.q_thin(&teamalg_kernels::par::Seq).expect("Q_thin is no larger than the factors");
        q * self.r().to_mat()
    }

    /// `det(Q)`, `1` or `-1`: each reflector `I - v v^H / tau` with a finite `tau` is a
    /// reflection (`v^H v = 2 tau`, so its determinant is `1 - 2`), and one with an infinite
    /// `tau` (nothing below the diagonal to annihilate) is the identity. Each `tau` sits on its
    /// block factor's diagonal.
    fn q_is_odd(&self) -> bool {
        let (f, h) = (self.factors(), self.householder_factor());
        let k = f.nrows().min(f.ncols());
        let bs = h.nrows().max(1);
        let reflections = (0..k)
            .filter(|&i| faer::traits::math_utils::is_finite(&h[(i % bs, i)]))
            .count();
        reflections % 2 == 1
    }

    /// `det(A) = det(Q) prod(diag(R))` of a square `A` (zero when `A` is singular; see
    /// [`Qr::slogdet`] for one whose product leaves the floating-point range). Errors:
    /// [`LinalgError::NotSquare`].
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::{Lu, Qr}, Exec};
    ///
    /// let a = Mat::<f64>::from_fn(4, 4, |i, j| if i == j { 3.0 } else { 1.0 / (1 + i + 2 * j) as f64 });
    /// let e = Exec::serial();
    /// let (qr, lu) = (Qr::new(&a, &e)?, Lu::new(&a, &e)?);
    /// assert!((qr.determinant()? - lu.determinant()?).abs() < 1e-12);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn determinant(&self) -> Result<T, LinalgError> {
        let n = check::square("determinant", "A", self.factors())?;
        let f = self.factors();
        Ok(det::product((0..n).map(|i| f[(i, i)]), self.q_is_odd()))
    }

    /// `(sign, ln|det(A)|)` of a square `A`: see [`FullPivLu::slogdet`](super::FullPivLu::slogdet).
    /// Errors: [`LinalgError::NotSquare`].
    pub fn slogdet(&self) -> Result<(T, T::Real), LinalgError> {
        let n = check::square("slogdet", "A", self.factors())?;
        let f = self.factors();
        Ok(det::slogdet((0..n).map(|i| f[(i, i)]), self.q_is_odd()))
    }

    /// `ln|det(A)|` ([`Qr::slogdet`]'s second part).
    pub fn log_abs_det(&self) -> Result<T::Real, LinalgError> {
        self.slogdet().map(|(_, l)| l)
    }

    /// The square solves' checks: `A` is square, then those of least squares.
    fn ready(&self, op: &'static str, b: &MatMut<'_, T>) -> Result<SolveParams, LinalgError> {
        check::square(op, "A", self.factors())?;
        self.checked(op, b)
    }

    /// `A X = B` in place, unchecked: `R X = Q^H B`.
    fn plain_solve(&self, mut b: MatMut<'_, T>, exec: &(impl Executor + ?Sized), p: SolveParams) {
        self.q_on(b.as_mut(), true, exec);
        let (left, upper) = (SolveSide::Left, Triangle::Upper);
        triangular::solve_in_place(self.factors(), b, left, upper, Diag::NonUnit, exec, p);
    }

    /// `A^T X = B` in place, unchecked: `R^T Y = B`, then `X = conj(Q) Y = conj(Q conj(Y))`.
    fn transpose_solve(
        &self,
        mut b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
        p: SolveParams,
    ) {
        let (left, lower) = (SolveSide::Left, Triangle::Lower);
        let rt = self.factors().transpose();
        triangular::solve_in_place(rt, b.as_mut(), left, lower, Diag::NonUnit, exec, p);
        conjugate(b.as_mut());
        self.q_on(b.as_mut(), false, exec);
        conjugate(b);
    }
}

/// `Some(estimated rank)` when the upper triangle of the square `r` (`k x k`) is singular,
/// exactly or to rounding: `rcond`, its estimated reciprocal condition number (0 for an exact
/// zero on the diagonal), at most `k` times the machine epsilon. The rule of every QR solve,
/// single or batched; `rcond` is the caller's, which may estimate in its own storage.
pub(crate) fn deficiency<T: Field>(r: MatRef<'_, T>, rcond: impl FnOnce() -> T::Real) -> Option<usize> {
    let k = r.nrows();
    let tol = eps::<T::Real>() * from_f64::<T::Real>(k as f64);
    if k == 0 || rcond() > tol {
        return None;
    }
    Some(deficient_rank(r))
}

/// The numerical rank of the upper triangle of the square `r` (`k x k`), once it is known to be
/// singular to rounding: its singular values above `k eps` times the largest, at most `k - 1`.
/// `R`'s diagonal would not do: without pivoting, once a column depends on earlier ones the
/// later columns' weight lands above the diagonal, a staircase, and the diagonal shows zeros for
/// independent columns (a `1000 x 50` matrix with one repeated column has 42 there). The SVD,
/// `O(k^3)` and serial, runs only on this error path; should it not converge, the diagonal's
/// count is the estimate.
fn deficient_rank<T: Field>(r: MatRef<'_, T>) -> usize {
    let k = r.nrows();
    if k == 0 {
        return 0;
    }
    let tol = eps::<T::Real>() * from_f64::<T::Real>(k as f64);
    let above = |v: &[T::Real]| {
        let top = v.iter().fold(zero::<T::Real>(), |m, x| if *x > m { *x } else { m });
        let cut = top * tol;
        v.iter().filter(|x| **x > cut).count()
    };
    let upper = Mat::from_fn(k, k, |i, j| if i <= j { r[(i, j)] } else { zero() });
    let rank = match super::singular_values(upper.as_ref(), &teamalg_kernels::par::Seq) {
        Ok(s) => above(&s),
        Err(_) => above(&(0..k).map(|i| abs(&r[(i, i)])).collect::<Vec<_>>()),
    };
    rank.min(k - 1)
}

solve_forms!(Qr<'_>);
faer_solvers!(Qr<'_>);

/// faer's least-squares trait: `rhs` (`m x k`) gets the solution in its first `n` rows, as
/// faer's `Qr` gives it; serial, no checks but the shapes (a wide `A` panics, as faer's does).
impl<T: Field> faer::linalg::solvers::SolveLstsqCore<T> for Qr<'_, T> {
    #[track_caller]
    fn solve_lstsq_in_place_with_conj(&self, conj: faer::Conj, mut rhs: MatMut<'_, T>) {
        let f = self.factors();
        let (m, n) = (f.nrows(), f.ncols());
        assert!(m >= n && rhs.nrows() == m, "solve_lstsq: shapes");
        let flip = conj == faer::Conj::Yes;
        if flip {
            conjugate(rhs.as_mut());
        }
        let seq = &teamalg_kernels::par::Seq;
        self.q_on(rhs.as_mut(), true, seq);
        let (left, upper) = (SolveSide::Left, Triangle::Upper);
        let p = SolveParams::default();
        triangular::solve_in_place(f.subrows(0, n), rhs.as_mut().subrows_mut(0, n), left, upper, Diag::NonUnit, seq, p);
        if flip {
            conjugate(rhs);
        }
    }
}
