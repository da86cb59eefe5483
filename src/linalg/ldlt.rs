//! `A = L D L^H` of a Hermitian matrix without pivoting: [`Ldlt::new`] and its solves.

use faer::mat::AsMatRef;
use faer::traits::math_utils::{from_real, real, recip, zero};
use faer::traits::Conjugate;
use faer::{Mat, MatMut, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::ldlt::{ldlt_in_place, ldlt_in_place_scratch, LdltParams, ZeroPivot};
use teamalg_kernels::par::{Executor, Seq};
use teamalg_kernels::triangular::{self, Diag, SolveParams, SolveSide, Triangle};

use super::check;
use super::condition::{self, Guard};
use super::factors::conjugate;
use super::inertia::Inertia;
use super::solves::{faer_solvers, solve_forms};
use super::{det, hermitian, scratch};
use super::{Dim, Field, LinalgError, Options, TriangularView};

/// The factorization `A = L D L^H` of a Hermitian matrix without pivoting: `L` unit lower
/// triangular, `D` real diagonal. Half an LU's work and it keeps the symmetry, for a matrix
/// known to need no pivoting (quasi-definite systems, a positive or negative definite one
/// whose square roots a Cholesky would take); a pivot of exactly zero is
/// [`LinalgError::Singular`], and a tiny one makes the factors grow: for an indefinite
/// matrix in general use [`Lblt`](super::Lblt) (Bunch-Kaufman). Blocked on the team (family
/// [`Family::Ldlt`]).
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg::Ldlt, Exec};
///
/// // Indefinite: eigenvalues of both signs.
/// let a = Mat::<f64>::from_fn(2, 2, |i, j| [[4.0, 2.0], [2.0, -3.0]][i][j]);
/// let ldlt = Ldlt::new(&a, &Exec::serial())?;
/// assert_eq!(ldlt.d(), vec![4.0, -4.0]);
/// assert_eq!(ldlt.inertia().negative, 1);
/// let x = ldlt.solve(&Mat::<f64>::from_fn(2, 1, |i, _| [6.0, -1.0][i]), &Exec::serial())?;
/// assert!((x[(0, 0)] - 1.0).abs() < 1e-12 && (x[(1, 0)] - 1.0).abs() < 1e-12);
/// assert!((ldlt.determinant()? + 16.0).abs() < 1e-12);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
// `Send` and `Sync` are automatic and sound: a `Mat`, plain values and the guard (a
// `OnceLock`); a shared `&Ldlt` only reads its factors.
#[derive(Debug)]
pub struct Ldlt<T> {
    factors: Mat<T>,
    options: Options,
    guard: Guard,
}

impl<T: Field> Ldlt<T> {
    /// Factors a copy of the Hermitian `a` (read from the triangle [`Options::side`] names,
    /// the lower by default; it may be a conjugated view), on `exec`; `a` is unchanged.
    /// Errors: [`LinalgError::NotSquare`], [`LinalgError::NotFinite`],
    /// [`LinalgError::NotHermitian`] (when the options check), [`LinalgError::Singular`] (a
    /// zero pivot, with its column).
    pub fn new<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Self, LinalgError> {
        Self::new_with(a, exec, &Options::new())
    }

    /// [`Ldlt::new`] with the call's [`Options`] (which its solves keep).
    pub fn new_with<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Self, LinalgError> {
        let a = a.as_mat_ref();
        let mut factors = a.to_owned();
        hermitian::check("ldlt", factors.as_ref(), options, false)?;
        hermitian::to_lower(factors.as_mut(), options);
        let guard = Guard::measure(factors.as_ref(), options, check::Stored::Lower);
        let n = factors.nrows();
        let params = LdltParams {
            threshold: options.get(Family::Ldlt),
            ..LdltParams::default()
        };
        scratch::with("ldlt", ldlt_in_place_scratch::<T>(n), |stack| {
            ldlt_in_place(factors.as_mut(), exec, params, stack)
        })?
        .map_err(|ZeroPivot { index }| LinalgError::Singular { op: "ldlt", index })?;
        Ok(Ldlt {
            factors,
            options: *options,
            guard,
        })
    }

    /// The factored matrix: `L` strictly below the diagonal, `D` on it (its strict upper
    /// triangle is unspecified).
    pub fn factors(&self) -> MatRef<'_, T> {
        self.factors.as_ref()
    }

    /// `L`, unit lower triangular: a view into the factors.
    pub fn l(&self) -> TriangularView<'_, T> {
        TriangularView::new(self.factors(), Triangle::Lower, Diag::Unit)
    }

    /// `D`'s diagonal.
    pub fn d(&self) -> Vec<T::Real> {
        let f = self.factors();
        (0..f.nrows()).map(|i| real(&f[(i, i)])).collect()
    }

    /// The signs of `A`'s eigenvalues, which are `D`'s (Sylvester's law of inertia).
    pub fn inertia(&self) -> Inertia {
        Inertia::of_signs(self.d().iter().map(|d| {
            d.partial_cmp(&zero())
                .unwrap_or(std::cmp::Ordering::Equal)
        }))
    }

    /// `det(A)`, the product of `D`. Never an error (the factorization is square); a
    /// `Result` as every factorization's determinant.
    pub fn determinant(&self) -> Result<T, LinalgError> {
        Ok(det::product(self.d().into_iter().map(|d| from_real(&d)), false))
    }

    /// `(sign, ln|det(A)|)`: see [`FullPivLu::slogdet`](super::FullPivLu::slogdet).
    pub fn slogdet(&self) -> Result<(T, T::Real), LinalgError> {
        Ok(det::slogdet(self.d().into_iter().map(|d| from_real(&d)), false))
    }

    /// `ln|det(A)|`.
    pub fn log_abs_det(&self) -> Result<T::Real, LinalgError> {
        self.slogdet().map(|(_, l)| l)
    }

    /// An estimate of `1 / (||A||_1 ||A^-1||_1)` given `a_norm = ||A||_1`, as
    /// [`Lu::rcond`](super::Lu::rcond).
    pub fn rcond(&self, a_norm: T::Real) -> T::Real {
        let n = self.factors().nrows();
        let p = SolveParams::default();
        // A is Hermitian: its adjoint solve is its solve.
        let inverse = condition::norm1_estimate::<T>(n, |mut x, _| self.plain_solve(x.as_mut(), &Seq, p));
        condition::reciprocal::<T>(n, a_norm, inverse)
    }

    /// `A` again: `L D L^H` (serially; a check, not a kernel).
    pub fn reconstruct(&self) -> Mat<T> {
        let l = self.l().to_mat();
        let d = self.d();
        let ld = Mat::from_fn(l.nrows(), l.ncols(), |i, j| {
            faer::traits::math_utils::mul_real(&l[(i, j)], &d[j])
        });
        ld * l.adjoint()
    }

    /// The solves' parameters once `b` is a finite right-hand side with the order's rows.
    fn ready(&self, op: &'static str, b: &MatMut<'_, T>) -> Result<SolveParams, LinalgError> {
        let n = self.factors().nrows();
        check::dim(op, "B", Dim::Rows, n, b.nrows())?;
        if self.options.checks_finite() {
            check::finite(op, "B", b.as_ref(), check::Stored::All)?;
        }
        self.guard
            .check::<T>(op, &self.options, |norm| self.rcond(norm))?;
        Ok(SolveParams {
            threshold: self.options.get(Family::TriangularSolve),
        })
    }

    /// `A X = B`, unchecked: `L`, `D`, then `L^H`.
    fn plain_solve(&self, mut b: MatMut<'_, T>, exec: &(impl Executor + ?Sized), p: SolveParams) {
        let f = self.factors();
        let left = SolveSide::Left;
        triangular::solve_in_place(f, b.as_mut(), left, Triangle::Lower, Diag::Unit, exec, p);
        for i in 0..f.nrows() {
            let d_inv = recip(&real(&f[(i, i)]));
            for j in 0..b.ncols() {
                b[(i, j)] = faer::traits::math_utils::mul_real(&b[(i, j)], &d_inv);
            }
        }
        // L^H X = Y  <=>  L^T conj(X) = conj(Y).
        conjugate(b.as_mut());
        triangular::solve_in_place(f.transpose(), b.as_mut(), left, Triangle::Upper, Diag::Unit, exec, p);
        conjugate(b);
    }

    /// `A^T X = B`, unchecked: `A^T = conj(A)`, so `X = conj(A^-1 conj(B))`.
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
}

solve_forms!(Ldlt);
faer_solvers!(Ldlt);
