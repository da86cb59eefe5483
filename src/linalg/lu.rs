//! LU with partial pivoting: owned ([`Lu::new`]) or in place ([`lu`]), and its solves.

use faer::dyn_stack::{MemStack, StackReq};
use faer::mat::AsMatRef;
use faer::perm::PermRef;
use faer::traits::math_utils::{mul, neg, one, zero};
use faer::traits::{ComplexField, Conjugate};
use faer::{Mat, MatMut, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::lu::{apply_swaps, lu_in_place, lu_in_place_scratch, LuInfo, LuParams};
use teamalg_kernels::par::{Executor, Seq};
use teamalg_kernels::triangular::{self, Diag, SolveParams, SolveSide, Triangle};

use super::perm::Perm;
use super::solves::{faer_solvers, solve_forms};
use super::{det, scratch};
use super::check::{self, Stored};
use super::condition::{self, Guard};
use super::store::{owned_constructors, InPlace, Store};
use super::views::conjugate;
use super::{Dim, Field, LinalgError, Options, TriangularView};

/// The factorization `P A = L U` of an `m x n` matrix with partial pivoting: `L` below the
/// diagonal with an implicit unit diagonal, `U` on and above it, in one matrix, which is the
/// caller's ([`lu`], `Lu<'a, T>` borrows it) or the factorization's own ([`Lu::new`],
/// which borrows nothing: a function can return it as `Lu<'static, T>`).
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg::Lu, Pool};
///
/// let team = Pool::builder().threads(2).build()?.into_team(2)?;
/// let a = Mat::<f64>::from_fn(3, 3, |i, j| [[2.0, 1.0, 1.0], [4.0, 3.0, 3.0], [8.0, 7.0, 9.0]][i][j]);
/// let lu = Lu::new(&a, &team)?; // a is copied, and unchanged
/// assert_eq!(lu.zero_pivot(), None);
/// assert!((lu.determinant()? - 4.0).abs() < 1e-12);
/// let b = Mat::<f64>::from_fn(3, 1, |i, _| [4.0, 10.0, 24.0][i]);
/// let x = lu.solve(&b, &team)?; // A x = b
/// assert!((x[(0, 0)] - 1.0).abs() < 1e-12 && (x[(1, 0)] - 1.0).abs() < 1e-12);
/// // P A = L U, with P given as a row order: row i of P A is row p[i] of A.
/// assert_eq!(lu.p().arrays().0, &[2, 0, 1]);
/// assert_eq!(lu.l().get(1, 0), 0.25); // L and U are views into the factors
/// assert!((lu.reconstruct() - &a).norm_max() < 1e-12);
/// # Ok::<(), teamalg::Error>(())
/// ```
// `Send` and `Sync` are automatic and sound: the factors are a `MatMut` or a `Mat` (each `Send`
// and `Sync` exactly when `T` is) and the rest plain vectors and values. A shared `&Lu` only
// reads the factors, so threads may solve with one factorization at once
// (`tests/facade/linalg.rs`, `one_factorization_solves_on_many_threads`); the guard's estimate
// is a `OnceLock`, made by whichever solve comes first.
#[derive(Debug)]
pub struct Lu<'a, T> {
    factors: Store<'a, T>,
    swaps: Vec<usize>,
    perm: Perm,
    info: LuInfo,
    options: Options,
    /// The solves' guard ([`Options::min_rcond`]): `||A||_1`, measured before factoring, and
    /// the estimate, made by the first solve.
    guard: Guard,
}

/// The scratch [`lu_with_scratch`] needs for an `m x n` matrix.
pub fn lu_scratch<T: ComplexField>(m: usize, n: usize) -> StackReq {
    lu_in_place_scratch::<T>(m, n)
}

/// Factors `a` in place as `P A = L U` with partial pivoting, on `exec`. Any shape works; a
/// singular matrix is factored too and reported by [`Lu::zero_pivot`]. Errors:
/// [`LinalgError::NotFinite`] (checked first; `a` is unchanged).
pub fn lu<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
) -> Result<Lu<'a, T>, LinalgError> {
    let a = a.in_place();
    lu_with(a, exec, &Options::new())
}

/// [`lu`] with the call's [`Options`] (which its solves keep).
pub fn lu_with<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<Lu<'a, T>, LinalgError> {
    let a = a.in_place();
    let req = lu_scratch::<T>(a.nrows(), a.ncols());
    scratch::with("lu", req, |stack| lu_with_scratch(a, exec, options, stack))?
}

/// [`lu_with`] taking its scratch from `stack` (at least [`lu_scratch`] of the shape): it
/// allocates only its pivots.
///
/// ```
/// use faer::dyn_stack::{MemBuffer, MemStack};
/// use faer::Mat;
/// use teamalg::{linalg, Exec};
///
/// let mut buf = MemBuffer::new(linalg::lu_scratch::<f64>(64, 64));
/// for k in 0..3 {
///     let mut a = Mat::<f64>::from_fn(64, 64, |i, j| if i == j { 64.0 + k as f64 } else { 1.0 });
///     let lu = linalg::lu_with_scratch(a.as_mut(), &Exec::serial(), &linalg::Options::new(), MemStack::new(&mut buf))?;
///     assert!(!lu.is_singular());
/// }
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
///
/// Errors: [`LinalgError::ScratchTooSmall`] when `stack` is smaller than [`lu_scratch`], and
/// those of [`lu`]; `a` is then unchanged.
pub fn lu_with_scratch<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> Result<Lu<'a, T>, LinalgError> {
    let a = a.in_place();
    check::scratch("lu", stack, lu_scratch::<T>(a.nrows(), a.ncols()))?;
    Lu::check(a.as_ref(), options)?;
    Ok(factor(Store::Borrowed(a), exec, options, stack))
}

/// Factors the checked `store`.
fn factor<'a, T: Field>(
    mut store: Store<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> Lu<'a, T> {
    let m = store.as_ref().nrows();
    let mut swaps = vec![0; m.min(store.as_ref().ncols())];
    let params = LuParams {
        threshold: options.get(Family::LuPartial),
        ..LuParams::default()
    };
    let guard = Guard::measure(store.as_ref(), options, Stored::All);
    let info = if m == 0 {
        // No row, nothing to factor: the kernel would still step through every column (a
        // `0 x n` of huge `n` took minutes).
        LuInfo {
            transpositions: 0,
            zero_pivot: None,
        }
    } else {
        lu_in_place(store.as_mut(), &mut swaps, exec, params, stack)
    };
    let perm = Perm::from_swaps(&swaps, m);
    Lu {
        factors: store,
        swaps,
        perm,
        info,
        options: *options,
        guard,
    }
}

owned_constructors!(
    Lu,
    "lu",
    "Factors a copy of `a` (which may be a conjugated view), on `exec`; `a` is unchanged.\nErrors: [`LinalgError::NotFinite`]."
);

impl<T: Field> Lu<'_, T> {
    /// What every LU checks before it writes: finiteness, when the options ask.
    fn check(a: MatRef<'_, T>, options: &Options) -> Result<(), LinalgError> {
        if options.checks_finite() {
            check::finite("lu", "A", a, Stored::All)?;
        }
        Ok(())
    }

    /// The owned constructors' factorization of their checked copy.
    fn factor_copy(
        a: Mat<T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Self, LinalgError> {
        let req = lu_scratch::<T>(a.nrows(), a.ncols());
        scratch::with("lu", req, |stack| {
            factor(Store::Owned(a), exec, options, stack)
        })
    }
}

impl<T: Field> Lu<'_, T> {
    /// The factored matrix: `L` strictly below the diagonal, `U` on and above it.
    pub fn factors(&self) -> MatRef<'_, T> {
        self.factors.as_ref()
    }

    /// `L`, `m x min(m, n)`, unit lower triangular: a view into the factors.
    pub fn l(&self) -> TriangularView<'_, T> {
        let f = self.factors();
        let s = f.nrows().min(f.ncols());
        TriangularView::new(f.subcols(0, s), Triangle::Lower, Diag::Unit)
    }

    /// `U`, `min(m, n) x n`, upper triangular: a view into the factors.
    pub fn u(&self) -> TriangularView<'_, T> {
        let f = self.factors();
        let s = f.nrows().min(f.ncols());
        TriangularView::new(f.subrows(0, s), Triangle::Upper, Diag::NonUnit)
    }

    /// `P`, as faer's permutation: row `i` of `P A` is row `p().arrays().0[i]` of `A`.
    pub fn p(&self) -> PermRef<'_, usize> {
        self.perm.as_ref()
    }

    /// The row swaps, in order: at step `j` rows `j` and `swaps()[j]` were exchanged (LAPACK's
    /// `ipiv`, from 0).
    pub fn swaps(&self) -> &[usize] {
        &self.swaps
    }

    /// The first exact zero pivot (`U[(i, i)] == 0`), if any: the matrix is singular and the
    /// factors after it are not finite.
    pub fn zero_pivot(&self) -> Option<usize> {
        self.info.zero_pivot
    }

    /// Whether a pivot is exactly zero.
    pub fn is_singular(&self) -> bool {
        self.info.zero_pivot.is_some()
    }

    /// `det(A)`: the product of `U`'s diagonal, negated for an odd number of row exchanges;
    /// exactly zero when a pivot is. Errors: [`LinalgError::NotSquare`].
    pub fn determinant(&self) -> Result<T, LinalgError> {
        let n = check::square("determinant", "A", self.factors())?;
        if self.is_singular() {
            return Ok(zero());
        }
        let f = self.factors();
        let mut det: T = one();
        for i in 0..n {
            det = mul(&det, &f[(i, i)]);
        }
        if self.info.transpositions % 2 == 1 {
            det = neg(&det);
        }
        Ok(det)
    }

    /// `(sign, ln|det(A)|)`: see [`FullPivLu::slogdet`](super::FullPivLu::slogdet).
    /// Errors: [`LinalgError::NotSquare`].
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::Lu, Exec};
    ///
    /// // det(1e3 I) of order 200 is 1e600, past f64's range; its logarithm is not.
    /// let a = Mat::<f64>::from_fn(200, 200, |i, j| if i == j { 1e3 } else { 0.0 });
    /// let lu = Lu::new(&a, &Exec::serial())?;
    /// assert_eq!(lu.determinant()?, f64::INFINITY);
    /// let (sign, log) = lu.slogdet()?;
    /// assert_eq!(sign, 1.0);
    /// assert!((log - 600.0 * 10f64.ln()).abs() < 1e-9);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn slogdet(&self) -> Result<(T, T::Real), LinalgError> {
        let n = check::square("slogdet", "A", self.factors())?;
        let f = self.factors();
        Ok(det::slogdet(
            (0..n).map(|i| f[(i, i)]),
            self.info.transpositions % 2 == 1,
        ))
    }

    /// `ln|det(A)|` ([`Lu::slogdet`]'s second part).
    pub fn log_abs_det(&self) -> Result<T::Real, LinalgError> {
        self.slogdet().map(|(_, l)| l)
    }

    /// An estimate of the reciprocal condition number `1 / (||A||_1 ||A^{-1}||_1)`, in
    /// `[0, 1]`, given `a_norm = ||A||_1` ([`norm_l1`](super::norm_l1) of `A`, taken before an
    /// in-place factorization overwrote it): near 1 for a well-conditioned matrix, near the
    /// unit roundoff or below for one whose solves lose every digit, exactly 0 when a pivot is
    /// zero. Hager's and Higham's estimator of `||A^{-1}||_1` (LAPACK's `gecon`, which also
    /// takes the norm) costs a few solves, `O(n^2)`; the result bounds the true value from
    /// above, almost always within a factor of 3. The norm is the caller's to give because
    /// reading `A` once more on every factorization would cost up to a fifth of a small one.
    /// Errors: [`LinalgError::NotSquare`], [`LinalgError::NotANorm`] (`a_norm` NaN, infinite
    /// or negative), as every `rcond` of a factorization that takes the norm.
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::{self, Lu}, Exec};
    ///
    /// let eye = Mat::<f64>::identity(4, 4);
    /// assert_eq!(Lu::new(&eye, &Exec::serial())?.rcond(linalg::norm_l1(&eye))?, 1.0);
    /// // [[1, 1], [1, 1 + 1e-10]]: ||A||_1 ||A^-1||_1 is about 4e10.
    /// let a = Mat::<f64>::from_fn(2, 2, |i, j| if i == 1 && j == 1 { 1.0 + 1e-10 } else { 1.0 });
    /// let r = Lu::new(&a, &Exec::serial())?.rcond(linalg::norm_l1(&a))?;
    /// assert!(r > 1e-11 && r < 1e-10);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn rcond(&self, a_norm: T::Real) -> Result<T::Real, LinalgError> {
        let n = check::square("rcond", "A", self.factors())?;
        condition::norm_arg::<T>(&a_norm)?;
        if self.is_singular() && n > 0 {
            return Ok(zero());
        }
        let p = SolveParams::default();
        let inverse = condition::norm1_estimate::<T>(n, |mut x, adjoint| {
            if adjoint {
                conjugate(x.as_mut());
                self.transpose_solve(x.as_mut(), &Seq, p);
                conjugate(x.as_mut());
            } else {
                self.plain_solve(x.as_mut(), &Seq, p);
            }
        });
        Ok(condition::reciprocal::<T>(n, a_norm, inverse))
    }

    /// The factors and the solves' parameters, once the factorization is square and
    /// nonsingular and `b` is a finite right-hand side with its rows; else the error `op`
    /// reports.
    fn ready(
        &self,
        op: &'static str,
        b: &MatMut<'_, T>,
    ) -> Result<SolveParams, LinalgError> {
        let f = self.factors();
        let n = check::square(op, "A", f)?;
        check::dim(op, "B", Dim::Rows, n, b.nrows())?;
        if let Some(index) = self.zero_pivot() {
            return Err(LinalgError::Singular { op, index });
        }
        if self.options.checks_finite() {
            check::finite(op, "B", b.as_ref(), Stored::All)?;
        }
        self.guard.check::<T>(op, &self.options, |norm| {
            self.rcond(norm).unwrap_or_else(|_| zero())
        })?;
        Ok(SolveParams {
            threshold: self.options.get(Family::TriangularSolve),
        })
    }

    /// `A X = B` in place, unchecked: the swaps, then `L` and `U`.
    fn plain_solve(&self, mut b: MatMut<'_, T>, exec: &(impl Executor + ?Sized), p: SolveParams) {
        let f = self.factors();
        apply_swaps(b.as_mut(), 0, &self.swaps);
        let (left, lower, upper) = (SolveSide::Left, Triangle::Lower, Triangle::Upper);
        triangular::solve_in_place(f, b.as_mut(), left, lower, Diag::Unit, exec, p);
        triangular::solve_in_place(f, b, left, upper, Diag::NonUnit, exec, p);
    }

    /// `A^T X = B` in place, unchecked: with `A = P^T L U`, `U^T Y = B`, then `L^T Z = Y`,
    /// then `X = P^T Z`.
    fn transpose_solve(
        &self,
        mut b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
        p: SolveParams,
    ) {
        let ft = self.factors().transpose();
        let (left, lower, upper) = (SolveSide::Left, Triangle::Lower, Triangle::Upper);
        triangular::solve_in_place(ft, b.as_mut(), left, lower, Diag::NonUnit, exec, p);
        triangular::solve_in_place(ft, b.as_mut(), left, upper, Diag::Unit, exec, p);
        // X = P^T Z: the swaps undone, last first.
        for (j, &s) in self.swaps.iter().enumerate().rev() {
            if s != j {
                for c in 0..b.ncols() {
                    let t = b[(j, c)];
                    b[(j, c)] = b[(s, c)];
                    b[(s, c)] = t;
                }
            }
        }
    }

    /// `A` again, from the factors: `P^T L U` (serially; a check, not a kernel).
    pub fn reconstruct(&self) -> Mat<T> {
        let lu = self.l().to_mat() * self.u().to_mat();
        let mut a = Mat::<T>::zeros(lu.nrows(), lu.ncols());
        for (i, &pi) in self.perm.forward().iter().enumerate() {
            for j in 0..lu.ncols() {
                a[(pi, j)] = lu[(i, j)];
            }
        }
        a
    }
}

solve_forms!(Lu<'_>);
faer_solvers!(Lu<'_>);
