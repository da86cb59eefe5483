//! `A = L D L^H` of a Hermitian matrix without pivoting: [`Ldlt::new`] and its solves.

use faer::mat::AsMatRef;
use faer::traits::math_utils::{
    abs, abs2, add, div, eps, from_f64, from_real, is_finite, is_nan, max, mul, one, real, recip,
    sqrt, sqrt_min_positive, zero,
};
use faer::traits::Conjugate;
use faer::{Mat, MatMut, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::ldlt::{ldlt_in_place, ldlt_in_place_scratch, LdltParams, ZeroPivot};
use teamalg_kernels::par::{Executor, Seq};
use teamalg_kernels::triangular::{self, Diag, SolveParams, SolveSide, Triangle};

use super::check;
use super::condition::{self, Guard};
use super::views::conjugate;
use super::inertia::Inertia;
use super::solves::{faer_solvers, solve_forms};
use super::{det, hermitian, scratch};
use super::{real_to_f64, Dim, Field, LinalgError, Options, TriangularView};

/// The factorization `A = L D L^H` of a Hermitian matrix without pivoting: `L` unit lower
/// triangular, `D` real diagonal. Half an LU's work and it keeps the symmetry, for a matrix
/// known to need no pivoting (quasi-definite systems, a positive or negative definite one
/// whose square roots a Cholesky would take); a pivot of exactly zero is
/// [`LinalgError::Singular`], and a tiny one makes the factors grow.
///
/// **When to use [`Lblt`](super::Lblt) instead.** Without pivoting, a solve's backward error is
/// about [`Ldlt::growth`] times a backward-stable one's: the factorization measures the growth
/// `g = || |L| |D| |L|^H ||_inf / ||A||_inf` (at least 1 to rounding, at most `n` for a
/// definite matrix) and refuses it above `max(n, eps^{-1/2})` (`6.7e7` in `f64`, `2.9e3` in
/// `f32`) with [`LinalgError::PivotGrowth`]. Below that bound the answer may still be less
/// accurate than Bunch-Kaufman's by the factor `g`: for an indefinite matrix not known to be
/// quasi-definite, or whenever `growth()` is well above `n`, use [`Lblt`](super::Lblt), whose
/// growth is bounded. Blocked on the team (family [`Family::Ldlt`]).
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
    /// [`Ldlt::growth`], measured once by the factorization (an `f64`: the struct has no bound
    /// that would name `T::Real`).
    growth: f64,
}

impl<T: Field> Ldlt<T> {
    /// Factors a copy of the Hermitian `a` (read from the triangle [`Options::side`] names,
    /// the lower by default; it may be a conjugated view), on `exec`; `a` is unchanged.
    /// Errors: [`LinalgError::NotSquare`], [`LinalgError::OutOfMemory`] (the copy is sized
    /// before anything is read), [`LinalgError::NotFinite`],
    /// [`LinalgError::NotHermitian`] (when the options check), [`LinalgError::Singular`] (a
    /// zero pivot, with its column), [`LinalgError::PivotGrowth`] (the factors grew above the
    /// bound the type's documentation states: use [`Lblt`](super::Lblt)).
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::{Lblt, Ldlt, LinalgError}, Exec};
    ///
    /// // Well conditioned (eigenvalues near 1 and -1) but a tiny first pivot: L's entry 1e10.
    /// let a = Mat::<f64>::from_fn(2, 2, |i, j| [[1e-10, 1.0], [1.0, 1e-10]][i][j]);
    /// let err = Ldlt::new(&a, &Exec::serial()).unwrap_err();
    /// assert!(matches!(err, LinalgError::PivotGrowth { op: "ldlt", growth, .. } if growth > 1e9));
    /// assert!(err.to_string().contains("Lblt"));
    /// // Bunch-Kaufman pivots it away.
    /// let x = Lblt::new(&a, &Exec::serial())?.solve(&Mat::<f64>::ones(2, 1), &Exec::serial())?;
    /// assert!((&a * &x - Mat::<f64>::ones(2, 1)).norm_max() < 1e-14);
    /// # Ok::<(), LinalgError>(())
    /// ```
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
        // The shape first (free), then the size: an `a` too large to copy is refused before
        // anything is read.
        check::square("ldlt", "A", a)?;
        let mut factors = scratch::copy("ldlt", a)?;
        hermitian::check("ldlt", factors.as_ref(), options, false)?;
        hermitian::to_lower(factors.as_mut(), options);
        let guard = Guard::measure(factors.as_ref(), options, check::Stored::Lower);
        let a_norm = hermitian_norm_inf(factors.as_ref());
        let n = factors.nrows();
        let params = LdltParams {
            threshold: options.get(Family::Ldlt),
            ..LdltParams::default()
        };
        scratch::with("ldlt", ldlt_in_place_scratch::<T>(n), |stack| {
            ldlt_in_place(factors.as_mut(), exec, params, stack)
        })?
        .map_err(|ZeroPivot { index }| LinalgError::Singular { op: "ldlt", index })?;
        let growth = growth(factors.as_ref(), a_norm);
        // A definite matrix grows at most `n` times (Cauchy-Schwarz on `|L| |D|^(1/2)`, whose
        // rows have norm `sqrt(a_ii)`): the bound never refuses one. `eps^{-1/2}` refuses when
        // the backward error could lose half the digits a stable solve keeps.
        let limit = max(&from_f64::<T::Real>(n as f64), &recip(&sqrt(&eps::<T::Real>())));
        let growth = real_to_f64::<T>(&growth);
        if growth > real_to_f64::<T>(&limit) {
            return Err(LinalgError::PivotGrowth {
                op: "ldlt",
                growth,
                limit: real_to_f64::<T>(&limit),
            });
        }
        Ok(Ldlt {
            factors,
            options: *options,
            guard,
            growth,
        })
    }

    /// The pivot growth `|| |L| |D| |L|^H ||_inf / ||A||_inf` (`1` for an empty matrix),
    /// measured by the factorization in `O(n^2)`: a solve's backward error is bounded by about
    /// `3 n u` times it times `||A||` (against `3 n u ||A||` for a stable factorization), so a
    /// value far above `n` says the matrix wanted pivoting: use [`Lblt`](super::Lblt). At most
    /// `n` for a definite matrix; a factorization above `max(n, eps^{-1/2})` is refused (see
    /// [`Ldlt`]).
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::Ldlt, Exec};
    ///
    /// // The first pivot 1e-4: L's entry 1e4, and |L| |D| |L|^H about 2e4 times A.
    /// let a = Mat::<f64>::from_fn(2, 2, |i, j| [[1e-4, 1.0], [1.0, 1e-4]][i][j]);
    /// let g = Ldlt::new(&a, &Exec::serial())?.growth();
    /// assert!(g > 1e4 && g < 3e4);
    /// // A definite matrix: no growth to speak of.
    /// let spd = Mat::<f64>::from_fn(2, 2, |i, j| [[4.0, 2.0], [2.0, 5.0]][i][j]);
    /// assert!(Ldlt::new(&spd, &Exec::serial())?.growth() <= 2.0);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn growth(&self) -> T::Real {
        from_f64(self.growth)
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
    /// [`Lu::rcond`](super::Lu::rcond). Errors: [`LinalgError::NotANorm`].
    pub fn rcond(&self, a_norm: T::Real) -> Result<T::Real, LinalgError> {
        condition::norm_arg::<T>(&a_norm)?;
        Ok(self.estimate(a_norm))
    }

    /// The estimate behind [`Self::rcond`], for a checked `a_norm`.
    fn estimate(&self, a_norm: T::Real) -> T::Real {
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
            .check::<T>(op, &self.options, |norm| self.estimate(norm))?;
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

/// `|x|`. faer's modulus of a complex number is `hypot`, several times slower than
/// `sqrt(re^2 + im^2)`, which is exact to rounding wherever `|x|^2` neither overflows nor
/// underflows (`lo`: the least normal square); `hypot` elsewhere.
#[inline]
fn modulus<T: Field>(x: &T, lo: &T::Real) -> T::Real {
    if T::IS_REAL {
        return abs(x);
    }
    let s = abs2(x);
    if s >= *lo && is_finite(&s) {
        sqrt(&s)
    } else {
        abs(x)
    }
}

/// The least normal `|x|^2` for [`modulus`].
fn least_square<R: faer::traits::RealField>() -> R {
    let m = sqrt_min_positive::<R>();
    mul(&m, &m)
}

/// Entries `r0..` of column `j` of `a`, contiguous when `a` is (the factors always are).
fn tail<T: Field>(a: MatRef<'_, T>, j: usize, r0: usize) -> faer::ColRef<'_, T> {
    a.col(j).subrows(r0, a.nrows() - r0)
}

/// `||A||_inf` of the Hermitian matrix whose lower triangle `a` holds: its largest row sum
/// (which is also its largest column sum), one pass over the lower triangle.
fn hermitian_norm_inf<T: Field>(a: MatRef<'_, T>) -> T::Real {
    let n = a.nrows();
    let lo = least_square::<T::Real>();
    let mut sums = vec![zero::<T::Real>(); n];
    for j in 0..n {
        let col = tail(a, j, j);
        let mut below = zero::<T::Real>();
        for (k, x) in col.iter().enumerate() {
            let x = modulus(x, &lo);
            if k != 0 {
                below = add(&below, &x);
            }
            sums[j + k] = add(&sums[j + k], &x);
        }
        sums[j] = add(&sums[j], &below);
    }
    sums.into_iter().fold(zero(), |m, s| if s > m { s } else { m })
}

/// `|| |L| |D| |L|^H ||_inf / a_norm` of the factors `f` (`L` unit lower, `D` on the
/// diagonal), in `O(n^2)`: the matrix is nonnegative, so its row sums are
/// `|L| (|D| (|L|^H 1))`. One pass over `L`, column by column: column `k`'s sum gives `w_k`,
/// and the same column, still in cache, adds `|l_ik| w_k` to the row sums. `1`
/// for an empty matrix. Not finite when the factors overflowed.
fn growth<T: Field>(f: MatRef<'_, T>, a_norm: T::Real) -> T::Real {
    let n = f.nrows();
    if n == 0 {
        return one();
    }
    let lo = least_square::<T::Real>();
    // rows_i = sum_k |l_ik| w_k, w_k = |d_k| (1 + sum_{i>k} |l_ik|); the unit diagonal adds w_i.
    let mut rows = vec![zero::<T::Real>(); n];
    for k in 0..n {
        let col = tail(f, k, k + 1);
        let sum = col
            .iter()
            .fold(one::<T::Real>(), |s, x| add(&s, &modulus(x, &lo)));
        let wk = mul(&abs(&real(&f[(k, k)])), &sum);
        rows[k] = add(&rows[k], &wk);
        for (i, x) in col.iter().enumerate() {
            let r = &mut rows[k + 1 + i];
            *r = add(r, &mul(&modulus(x, &lo), &wk));
        }
    }
    // A NaN (factors of a NaN input, unchecked) is kept: it is above no bound.
    let top = rows
        .into_iter()
        .fold(zero::<T::Real>(), |m, s| if s > m || is_nan(&s) { s } else { m });
    div(&top, &a_norm)
}

solve_forms!(Ldlt);
faer_solvers!(Ldlt);
