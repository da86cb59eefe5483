//! `cholesky`: `A = L L^H` in place, and its factorization object.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::reborrow::Reborrow;
use faer::traits::math_utils::{conj, is_finite};
use faer::traits::ComplexField;
use faer::{Mat, MatMut, MatRef};
use teamalg_gates::Scalar;
use teamalg_kernels::cholesky::{
    cholesky_in_place, cholesky_in_place_scratch, CholeskyParams, NonPositivePivot,
};
use teamalg_kernels::par::Executor;
use teamalg_kernels::triangular::{self, Diag, Side, SolveParams, Triangle};

use super::{check_rhs, lower, LinalgError, Options};

/// The factorization `A = L L^H` of a Hermitian positive definite matrix, held in the lower
/// triangle of the matrix it was computed in.
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg, Exec};
///
/// let mut a = Mat::<f64>::from_fn(2, 2, |i, j| [[4.0, 2.0], [2.0, 5.0]][i][j]);
/// let chol = linalg::cholesky(a.as_mut(), &Exec::serial())?;
/// assert_eq!(chol.l()[(1, 0)], 1.0); // L = [[2, 0], [1, 2]]
/// let b = Mat::<f64>::from_fn(2, 1, |i, _| [6.0, 7.0][i]);
/// let x = chol.solve(b.as_ref(), &Exec::serial())?; // A x = b
/// assert!((x[(0, 0)] - 1.0).abs() < 1e-12 && (x[(1, 0)] - 1.0).abs() < 1e-12);
///
/// let mut not_pd = Mat::<f64>::from_fn(2, 2, |i, j| [[1.0, 2.0], [2.0, 1.0]][i][j]);
/// let err = linalg::cholesky(not_pd.as_mut(), &Exec::serial()).err();
/// assert_eq!(err, Some(linalg::LinalgError::NotPositiveDefinite { index: 1 }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Cholesky<'a, T> {
    factors: MatMut<'a, T>,
    options: Options,
}

/// Factors the Hermitian matrix `a` in place as `A = L L^H`, reading its lower triangle, on
/// `exec`. Errors: [`LinalgError::NotSquare`] and [`LinalgError::NotFinite`] (checked first;
/// `a` is unchanged), [`LinalgError::NotPositiveDefinite`] (with the column).
pub fn cholesky<'a, T>(
    a: MatMut<'a, T>,
    exec: &(impl Executor + ?Sized),
) -> Result<Cholesky<'a, T>, LinalgError>
where
    T: ComplexField + Scalar + Send + Sync,
{
    cholesky_with(a, exec, &Options::new())
}

/// [`cholesky`] with the call's [`Options`] (which its solves keep).
pub fn cholesky_with<'a, T>(
    a: MatMut<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<Cholesky<'a, T>, LinalgError>
where
    T: ComplexField + Scalar + Send + Sync,
{
    let n = a.nrows();
    if a.ncols() != n {
        return Err(LinalgError::NotSquare {
            op: "cholesky",
            rows: n,
            cols: a.ncols(),
        });
    }
    // A column's sum is finite when all its entries are (a NaN or infinity always makes it
    // NaN or infinite), and faer sums contiguous columns with SIMD; only a column whose sum
    // is not finite (a bad entry, or an overflow) is searched entry by entry.
    for j in 0..n {
        let col = a.rb().col(j).subrows(j, n - j);
        if is_finite(&col.sum()) {
            continue;
        }
        if let Some(i) = (j..n).find(|&i| !is_finite(&a[(i, j)])) {
            return Err(LinalgError::NotFinite {
                op: "cholesky",
                row: i,
                col: j,
            });
        }
    }
    let mut a = a;
    let mut buf = MemBuffer::new(cholesky_in_place_scratch::<T>(n));
    let stack = MemStack::new(&mut buf);
    let params = CholeskyParams {
        threshold: options.get(teamalg_gates::Family::Cholesky),
        ..CholeskyParams::default()
    };
    cholesky_in_place(a.as_mut(), exec, params, stack)
        .map_err(|NonPositivePivot { index }| LinalgError::NotPositiveDefinite { index })?;
    Ok(Cholesky {
        factors: a,
        options: *options,
    })
}

impl<T> Cholesky<'_, T>
where
    T: ComplexField + Scalar + Send + Sync,
{
    /// The factored matrix: `L` in its lower triangle (the strict upper triangle holds
    /// unspecified values).
    pub fn factors(&self) -> MatRef<'_, T> {
        self.factors.as_ref()
    }

    /// `L`, lower triangular with a real positive diagonal.
    pub fn l(&self) -> Mat<T> {
        lower(self.factors(), false)
    }

    /// Overwrites `b` with the solution `X` of `A X = B`, on `exec`.
    pub fn solve_in_place(
        &self,
        b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        let l = self.factors();
        check_rhs("solve", l.nrows(), &b)?;
        let mut b = b;
        let p = SolveParams {
            threshold: self.options.get(teamalg_gates::Family::TriangularSolve),
        };
        triangular::solve_in_place(
            l,
            b.as_mut(),
            Side::Left,
            Triangle::Lower,
            Diag::NonUnit,
            exec,
            p,
        );
        // L^H X = Y  <=>  X^H L = Y^H: a right-side solve on the conjugate transpose.
        conjugate(b.as_mut());
        triangular::solve_in_place(
            l,
            b.as_mut().transpose_mut(),
            Side::Right,
            Triangle::Lower,
            Diag::NonUnit,
            exec,
            p,
        );
        conjugate(b);
        Ok(())
    }

    /// The solution `X` of `A X = B`, on `exec`.
    pub fn solve(
        &self,
        b: MatRef<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        let mut x = b.to_owned();
        self.solve_in_place(x.as_mut(), exec)?;
        Ok(x)
    }
}

/// Conjugates every entry in place (nothing to do for real types, which the compiler sees).
fn conjugate<T: ComplexField>(mut b: MatMut<'_, T>) {
    if !T::IS_REAL {
        for j in 0..b.ncols() {
            for i in 0..b.nrows() {
                b[(i, j)] = conj(&b[(i, j)]);
            }
        }
    }
}
