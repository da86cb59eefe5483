//! Cholesky, `A = L L^H`: owned ([`Cholesky::new`]) or in place ([`cholesky`]), and its solves.

use faer::dyn_stack::{MemStack, StackReq};
use faer::mat::AsMatRef;
use faer::traits::math_utils::{abs2, from_real};
use faer::traits::{ComplexField, Conjugate};
use faer::{Mat, MatMut, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::cholesky::{
    cholesky_in_place, cholesky_in_place_scratch, CholeskyParams, NonPositivePivot,
};
use teamalg_kernels::par::{Executor, Seq};
use teamalg_kernels::triangular::{self, Diag, SolveParams, SolveSide, Triangle};

use super::solves::{faer_solvers, solve_forms};
use super::{det, hermitian, scratch};
use super::check::{self, Stored};
use super::condition::{self, Guard};
use super::store::{owned_constructors, InPlace, Store};
use super::views::conjugate;
use super::{Dim, Field, LinalgError, Options, TriangularView};

/// The factorization `A = L L^H` of a Hermitian positive definite matrix, in the lower
/// triangle of one matrix, which is the caller's ([`cholesky`], `Cholesky<'a, T>` borrows it)
/// or the factorization's own ([`Cholesky::new`], which borrows nothing: a function can return it
/// as `Cholesky<'static, T>`).
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg, Exec};
///
/// let a = Mat::<f64>::from_fn(2, 2, |i, j| [[4.0, 2.0], [2.0, 5.0]][i][j]);
/// let chol = linalg::Cholesky::new(&a, &Exec::serial())?;
/// assert_eq!(chol.l().get(1, 0), 1.0); // L = [[2, 0], [1, 2]]
/// let b = Mat::<f64>::from_fn(2, 1, |i, _| [6.0, 7.0][i]);
/// let x = chol.solve(&b, &Exec::serial())?; // A x = b
/// assert!((x[(0, 0)] - 1.0).abs() < 1e-12 && (x[(1, 0)] - 1.0).abs() < 1e-12);
/// assert!((chol.determinant()? - 16.0).abs() < 1e-12);
/// assert!((chol.reconstruct() - &a).norm_max() < 1e-12);
///
/// let not_pd = Mat::<f64>::from_fn(2, 2, |i, j| [[1.0, 2.0], [2.0, 1.0]][i][j]);
/// let err = linalg::Cholesky::new(&not_pd, &Exec::serial()).err();
/// assert_eq!(err, Some(linalg::LinalgError::NotPositiveDefinite { op: "cholesky", index: 1 }));
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
// `Send` and `Sync` are automatic and sound, as for `Lu`: a `MatMut` or a `Mat`, the options
// and the guard (its estimate a `OnceLock`); a shared `&Cholesky` only reads its factor.
#[derive(Debug)]
pub struct Cholesky<'a, T> {
    factors: Store<'a, T>,
    options: Options,
    /// The solves' guard ([`Options::min_rcond`]).
    guard: Guard,
}

/// The scratch [`cholesky_with_scratch`] needs for an `n x n` matrix.
pub fn cholesky_scratch<T: ComplexField>(n: usize) -> StackReq {
    cholesky_in_place_scratch::<T>(n)
}

/// Factors the Hermitian matrix `a` in place as `A = L L^H`, reading its lower triangle, on
/// `exec`. Errors: [`LinalgError::NotSquare`] and [`LinalgError::NotFinite`] (checked first;
/// `a` is unchanged), [`LinalgError::NotPositiveDefinite`] (with the column; `a` then holds a
/// partial factorization, as LAPACK's `potrf` leaves it: use [`Cholesky::new`] to keep `A`).
///
/// The error borrows nothing: once it is out of the `Result` (a `match`, `.err()`, `?`), `a` is
/// the caller's again, to read the partial factor or to refill and factor anew. What the
/// borrow checker refuses is keeping the `Result` itself alive across a use of `a` (binding
/// it, touching `a`, then reading the binding), or returning the `Ok` from a function that
/// retries on the `Err` (a limit of today's borrow checker for any borrowing result): match
/// first, as here, or factor a copy with [`Cholesky::new`].
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg::{self, LinalgError}, Exec};
///
/// // Indefinite (eigenvalues 5, -1, -1): shift the diagonal until the factorization succeeds.
/// let a = Mat::<f64>::from_fn(3, 3, |i, j| if i == j { 1.0 } else { 2.0 });
/// let (mut work, mut shift) = (a.clone(), 0.0);
/// let chol = loop {
///     match linalg::cholesky(&mut work, &Exec::serial()) {
///         Ok(chol) => break chol,
///         Err(LinalgError::NotPositiveDefinite { index, .. }) => {
///             // `work` is free: its leading `index` columns hold the partial factor.
///             assert!(index > 0 && work[(0, 0)] > 0.0);
///             shift += 1.0;
///             work = Mat::from_fn(3, 3, |i, j| a[(i, j)] + if i == j { shift } else { 0.0 });
///         }
///         Err(other) => return Err(other),
///     }
/// };
/// assert_eq!(shift, 2.0); // a + I is singular, a + 2 I positive definite
/// let shifted = Mat::<f64>::from_fn(3, 3, |i, j| a[(i, j)] + if i == j { 2.0 } else { 0.0 });
/// assert!((chol.reconstruct() - &shifted).norm_max() < 1e-14);
/// # Ok::<(), LinalgError>(())
/// ```
pub fn cholesky<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
) -> Result<Cholesky<'a, T>, LinalgError> {
    let a = a.in_place();
    cholesky_with(a, exec, &Options::new())
}

/// [`cholesky`] with the call's [`Options`] (which its solves keep).
pub fn cholesky_with<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<Cholesky<'a, T>, LinalgError> {
    let a = a.in_place();
    let req = cholesky_scratch::<T>(a.nrows());
    scratch::with("cholesky", req, |stack| {
        cholesky_with_scratch(a, exec, options, stack)
    })?
}

/// [`cholesky_with`] taking its scratch from `stack` (at least [`cholesky_scratch`] of the
/// order): it allocates nothing.
///
/// ```
/// use faer::dyn_stack::{MemBuffer, MemStack};
/// use faer::Mat;
/// use teamalg::{linalg, Exec};
///
/// let n = 50;
/// let mut buf = MemBuffer::new(linalg::cholesky_scratch::<f64>(n));
/// let spd = Mat::<f64>::from_fn(n, n, |i, j| if i == j { n as f64 } else { 1.0 });
/// let mut a = spd.clone();
/// let opts = linalg::Options::new();
/// let chol = linalg::cholesky_with_scratch(a.as_mut(), &Exec::serial(), &opts, MemStack::new(&mut buf))?;
/// let inv = chol.inverse(&Exec::serial())?;
/// assert!((&spd * &inv - Mat::<f64>::identity(n, n)).norm_max() < 1e-12);
/// // The owned form with options: the same factor, `spd` untouched.
/// let owned = linalg::Cholesky::new_with(&spd, &Exec::serial(), &opts)?;
/// assert!((owned.l().to_mat() - chol.l().to_mat()).norm_max() < 1e-12);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
///
/// Errors: [`LinalgError::ScratchTooSmall`] when `stack` is smaller than [`cholesky_scratch`], and
/// those of [`cholesky`]; `a` is then unchanged.
pub fn cholesky_with_scratch<'a, T: Field>(
    a: impl InPlace<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> Result<Cholesky<'a, T>, LinalgError> {
    let a = a.in_place();
    check::scratch("cholesky", stack, cholesky_scratch::<T>(a.nrows()))?;
    Cholesky::check(a.as_ref(), options)?;
    factor(Store::Borrowed(a), exec, options, stack)
}

/// Factors the checked `store`.
fn factor<'a, T: Field>(
    mut store: Store<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> Result<Cholesky<'a, T>, LinalgError> {
    let params = CholeskyParams {
        threshold: options.get(Family::Cholesky),
        ..CholeskyParams::default()
    };
    hermitian::to_lower(store.as_mut(), options);
    let guard = Guard::measure(store.as_ref(), options, Stored::Lower);
    cholesky_in_place(store.as_mut(), exec, params, stack).map_err(
        |NonPositivePivot { index }| LinalgError::NotPositiveDefinite {
            op: "cholesky",
            index,
        },
    )?;
    Ok(Cholesky {
        factors: store,
        options: *options,
        guard,
    })
}

owned_constructors!(
    Cholesky,
    "cholesky",
    square,
    "Factors a copy of `a` (which may be a conjugated view), reading its lower triangle, on\n`exec`; `a` is unchanged, also when it is not positive definite."
);

impl<T: Field> Cholesky<'_, T> {
    /// What every Cholesky checks before it writes: squareness, and the lower triangle's
    /// finiteness when the options ask.
    fn check(a: MatRef<'_, T>, options: &Options) -> Result<(), LinalgError> {
        hermitian::check("cholesky", a, options, false)
    }

    /// The owned constructors' factorization of their checked copy.
    fn factor_copy(
        a: Mat<T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Self, LinalgError> {
        let req = cholesky_scratch::<T>(a.nrows());
        scratch::with("cholesky", req, |stack| {
            factor(Store::Owned(a), exec, options, stack)
        })?
    }
}

impl<T: Field> Cholesky<'_, T> {
    /// The factored matrix: `L` in its lower triangle (the strict upper triangle holds
    /// unspecified values).
    pub fn factors(&self) -> MatRef<'_, T> {
        self.factors.as_ref()
    }

    /// `L`, lower triangular with a real positive diagonal: a view into the factors.
    pub fn l(&self) -> TriangularView<'_, T> {
        TriangularView::new(self.factors(), Triangle::Lower, Diag::NonUnit)
    }

    /// `det(A)`, the squared product of `L`'s diagonal (real and positive). Never an error
    /// (the factorization is square); a `Result` as every factorization's determinant.
    pub fn determinant(&self) -> Result<T, LinalgError> {
        let f = self.factors();
        Ok(det::product(
            (0..f.nrows()).map(|i| from_real(&abs2(&f[(i, i)]))),
            false,
        ))
    }

    /// `(sign, ln|det(A)|)`, the sign 1: see [`FullPivLu::slogdet`](super::FullPivLu::slogdet).
    pub fn slogdet(&self) -> Result<(T, T::Real), LinalgError> {
        let f = self.factors();
        Ok(det::slogdet(
            (0..f.nrows()).map(|i| from_real(&abs2(&f[(i, i)]))),
            false,
        ))
    }

    /// `ln|det(A)|`.
    pub fn log_abs_det(&self) -> Result<T::Real, LinalgError> {
        self.slogdet().map(|(_, l)| l)
    }

    /// An estimate of the reciprocal condition number `1 / (||A||_1 ||A^{-1}||_1)`, in
    /// `(0, 1]`, given `a_norm = ||A||_1`, as [`Lu::rcond`](super::Lu::rcond) (LAPACK's
    /// `pocon`): a few solves, `O(n^2)`, an upper bound of the true value almost always within
    /// a factor of 3. [`norm_l1`](super::norm_l1) of the full Hermitian `A` gives the norm.
    /// Errors: [`LinalgError::NotANorm`] (`a_norm` NaN, infinite or negative).
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::{self, Cholesky}, Exec};
    ///
    /// // diag(1, 1e-12): the condition number is 1e12.
    /// let a = Mat::<f64>::from_fn(2, 2, |i, j| if i != j { 0.0 } else if i == 0 { 1.0 } else { 1e-12 });
    /// let r = Cholesky::new(&a, &Exec::serial())?.rcond(linalg::norm_l1(&a))?;
    /// assert!((r - 1e-12).abs() < 1e-15);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn rcond(&self, a_norm: T::Real) -> Result<T::Real, LinalgError> {
        condition::norm_arg::<T>(&a_norm)?;
        Ok(self.estimate(a_norm))
    }

    /// The estimate behind [`Self::rcond`], for a checked `a_norm`.
    fn estimate(&self, a_norm: T::Real) -> T::Real {
        let n = self.factors().nrows();
        // A is Hermitian: the adjoint's solve is the solve.
        let p = SolveParams::default();
        let inverse =
            condition::norm1_estimate::<T>(n, |mut x, _| self.plain_solve(x.as_mut(), &Seq, p));
        condition::reciprocal::<T>(n, a_norm, inverse)
    }

    /// The solves' parameters once `b` is a finite right-hand side with the order's rows.
    fn ready(&self, op: &'static str, b: &MatMut<'_, T>) -> Result<SolveParams, LinalgError> {
        let l = self.factors();
        check::dim(op, "B", Dim::Rows, l.nrows(), b.nrows())?;
        if self.options.checks_finite() {
            check::finite(op, "B", b.as_ref(), Stored::All)?;
        }
        self.guard
            .check::<T>(op, &self.options, |norm| self.estimate(norm))?;
        Ok(SolveParams {
            threshold: self.options.get(Family::TriangularSolve),
        })
    }

    /// `A^T X = B`, unchecked: `A^T = conj(A)`.
    fn transpose_solve(
        &self,
        mut b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
        p: SolveParams,
    ) {
        conjugate(b.as_mut());
        self.plain_solve(b.as_mut(), exec, p);
        conjugate(b);
    }

    /// `A X = B` in place, unchecked: `L Y = B`, then `L^H X = Y`.
    fn plain_solve(&self, mut b: MatMut<'_, T>, exec: &(impl Executor + ?Sized), p: SolveParams) {
        let l = self.factors();
        let (lower, non_unit) = (Triangle::Lower, Diag::NonUnit);
        triangular::solve_in_place(l, b.as_mut(), SolveSide::Left, lower, non_unit, exec, p);
        // L^H X = Y  <=>  X^H L = Y^H: a right-side solve on the conjugate transpose.
        conjugate(b.as_mut());
        let bt = b.as_mut().transpose_mut();
        triangular::solve_in_place(l, bt, SolveSide::Right, lower, non_unit, exec, p);
        conjugate(b);
    }

    /// `A` again, from the factor: `L L^H` (serially; a check, not a kernel).
    pub fn reconstruct(&self) -> Mat<T> {
        let l = self.l().to_mat();
        &l * l.adjoint()
    }
}

solve_forms!(Cholesky<'_>);
faer_solvers!(Cholesky<'_>);
