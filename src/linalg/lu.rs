//! `lu`: LU with partial pivoting, in place, and its factorization object.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::traits::math_utils::{mul, neg, one, zero};
use faer::traits::ComplexField;
use faer::{Mat, MatMut, MatRef};
use teamalg_gates::Scalar;
use teamalg_kernels::lu::{apply_swaps, lu_in_place, lu_in_place_scratch, LuInfo, LuParams};
use teamalg_kernels::par::Executor;
use teamalg_kernels::triangular::{self, Diag, Side, SolveParams, Triangle};

use super::{check_rhs, lower, LinalgError, Options};

/// The factorization `P A = L U` of an `m x n` matrix, held in the matrix it was computed in
/// (`L` below the diagonal with an implicit unit diagonal, `U` on and above it).
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg, Pool};
///
/// let team = Pool::builder().threads(2).build()?.into_team(2).map_err(|e| e.error)?;
/// let mut a = Mat::<f64>::from_fn(3, 3, |i, j| [[2.0, 1.0, 1.0], [4.0, 3.0, 3.0], [8.0, 7.0, 9.0]][i][j]);
/// let lu = linalg::lu(a.as_mut(), &team);
/// assert_eq!(lu.zero_pivot(), None);
/// assert!((lu.determinant()? - 4.0).abs() < 1e-12);
/// let b = Mat::<f64>::from_fn(3, 1, |i, _| [4.0, 10.0, 24.0][i]);
/// let x = lu.solve(b.as_ref(), &team)?; // A x = b
/// assert!((x[(0, 0)] - 1.0).abs() < 1e-12 && (x[(1, 0)] - 1.0).abs() < 1e-12);
/// // P A = L U, with P given as a row order: row i of P A is row p[i] of A.
/// assert_eq!(lu.p(), &[2, 0, 1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Lu<'a, T> {
    factors: MatMut<'a, T>,
    swaps: Vec<usize>,
    perm: Vec<usize>,
    info: LuInfo,
    options: Options,
}

/// Factors `a` in place as `P A = L U` with partial pivoting, on `exec`. Any shape works; a
/// singular matrix is factored too and reported by [`Lu::zero_pivot`]. NaN input gives NaN
/// factors.
pub fn lu<'a, T>(a: MatMut<'a, T>, exec: &(impl Executor + ?Sized)) -> Lu<'a, T>
where
    T: ComplexField + Scalar + Send + Sync,
{
    lu_with(a, exec, &Options::new())
}

/// [`lu`] with the call's [`Options`] (which its solves keep).
pub fn lu_with<'a, T>(
    a: MatMut<'a, T>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Lu<'a, T>
where
    T: ComplexField + Scalar + Send + Sync,
{
    let (m, n) = (a.nrows(), a.ncols());
    let mut a = a;
    let mut swaps = vec![0; m.min(n)];
    let mut buf = MemBuffer::new(lu_in_place_scratch::<T>(m, n));
    let info = lu_in_place(
        a.as_mut(),
        &mut swaps,
        exec,
        LuParams {
            threshold: options.get(teamalg_gates::Family::LuPartial),
            ..LuParams::default()
        },
        MemStack::new(&mut buf),
    );
    let mut perm: Vec<usize> = (0..m).collect();
    for (j, &s) in swaps.iter().enumerate() {
        perm.swap(j, s);
    }
    Lu {
        factors: a,
        swaps,
        perm,
        info,
        options: *options,
    }
}

impl<T> Lu<'_, T>
where
    T: ComplexField + Scalar + Send + Sync,
{
    /// The factored matrix: `L` strictly below the diagonal, `U` on and above it.
    pub fn factors(&self) -> MatRef<'_, T> {
        self.factors.as_ref()
    }

    /// `L`, `m x min(m, n)`, unit lower triangular.
    pub fn l(&self) -> Mat<T> {
        let f = self.factors();
        lower(f.subcols(0, f.nrows().min(f.ncols())), true)
    }

    /// `U`, `min(m, n) x n`, upper triangular.
    pub fn u(&self) -> Mat<T> {
        let f = self.factors();
        let s = f.nrows().min(f.ncols());
        Mat::from_fn(s, f.ncols(), |i, j| {
            if i <= j {
                f[(i, j)].clone()
            } else {
                zero()
            }
        })
    }

    /// `P` as a row order: row `i` of `P A` is row `p()[i]` of `A`.
    pub fn p(&self) -> &[usize] {
        &self.perm
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
    /// exactly zero when a pivot is.
    pub fn determinant(&self) -> Result<T, LinalgError> {
        let f = self.factors();
        if f.nrows() != f.ncols() {
            return Err(LinalgError::NotSquare {
                op: "determinant",
                rows: f.nrows(),
                cols: f.ncols(),
            });
        }
        if self.is_singular() {
            return Ok(zero());
        }
        let mut det: T = one();
        for i in 0..f.nrows() {
            det = mul(&det, &f[(i, i)]);
        }
        if self.info.transpositions % 2 == 1 {
            det = neg(&det);
        }
        Ok(det)
    }

    /// The factors and the solves' parameters, once the factorization is square and
    /// nonsingular and `b` has its rows; else the error `op` reports.
    fn ready(
        &self,
        op: &'static str,
        b: &MatMut<'_, T>,
    ) -> Result<(MatRef<'_, T>, SolveParams), LinalgError> {
        let f = self.factors();
        let n = f.nrows();
        if f.ncols() != n {
            return Err(LinalgError::NotSquare {
                op,
                rows: n,
                cols: f.ncols(),
            });
        }
        check_rhs(op, n, b)?;
        if let Some(index) = self.zero_pivot() {
            return Err(LinalgError::Singular { index });
        }
        let p = SolveParams {
            threshold: self.options.get(teamalg_gates::Family::TriangularSolve),
        };
        Ok((f, p))
    }

    /// Overwrites `b` with the solution `X` of `A X = B`, on `exec`.
    pub fn solve_in_place(
        &self,
        b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        let (f, p) = self.ready("solve", &b)?;
        let mut b = b;
        apply_swaps(b.as_mut(), 0, &self.swaps);
        let (left, lower, upper) = (Side::Left, Triangle::Lower, Triangle::Upper);
        triangular::solve_in_place(f, b.as_mut(), left, lower, Diag::Unit, exec, p);
        triangular::solve_in_place(f, b, left, upper, Diag::NonUnit, exec, p);
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

    /// Overwrites `b` with the solution `X` of `A^T X = B`, on `exec`: with `A = P^T L U`,
    /// `U^T Y = B`, then `L^T Z = Y`, then `X = P^T Z`.
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg, Exec};
    ///
    /// let a = Mat::<f64>::from_fn(3, 3, |i, j| [[2.0, 1.0, 1.0], [4.0, 3.0, 3.0], [8.0, 7.0, 9.0]][i][j]);
    /// let mut f = a.clone();
    /// let lu = linalg::lu(f.as_mut(), &Exec::serial());
    /// let b = Mat::<f64>::from_fn(3, 1, |i, _| [1.0, 2.0, 3.0][i]);
    /// let x = lu.solve_transpose(b.as_ref(), &Exec::serial())?;
    /// assert!((a.transpose() * &x - &b).norm_max() < 1e-12);
    /// let inv = lu.inverse(&Exec::serial())?;
    /// assert!((&a * &inv - Mat::<f64>::identity(3, 3)).norm_max() < 1e-12);
    /// assert!((lu.reconstruct() - &a).norm_max() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn solve_transpose_in_place(
        &self,
        b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        let (f, p) = self.ready("solve_transpose", &b)?;
        let mut b = b;
        let (left, lower, upper) = (Side::Left, Triangle::Lower, Triangle::Upper);
        let ft = f.transpose();
        triangular::solve_in_place(ft, b.as_mut(), left, lower, Diag::NonUnit, exec, p);
        triangular::solve_in_place(ft, b.as_mut(), left, upper, Diag::Unit, exec, p);
        // X = P^T Z: the swaps undone, last first.
        for (j, &s) in self.swaps.iter().enumerate().rev() {
            if s != j {
                for c in 0..b.ncols() {
                    let t = b[(j, c)].clone();
                    b[(j, c)] = b[(s, c)].clone();
                    b[(s, c)] = t;
                }
            }
        }
        Ok(())
    }

    /// The solution `X` of `A^T X = B`, on `exec`.
    pub fn solve_transpose(
        &self,
        b: MatRef<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        let mut x = b.to_owned();
        self.solve_transpose_in_place(x.as_mut(), exec)?;
        Ok(x)
    }

    /// Overwrites `b` with the solution `X` of `A^H X = B` (the conjugate of the transposed
    /// solve of the conjugate: `A^T conj(X) = conj(B)`), on `exec`.
    pub fn solve_adjoint_in_place(
        &self,
        b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        let mut b = b;
        conjugate(b.as_mut());
        let r = self.solve_transpose_in_place(b.as_mut(), exec);
        conjugate(b);
        r
    }

    /// The solution `X` of `A^H X = B`, on `exec`.
    pub fn solve_adjoint(
        &self,
        b: MatRef<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        let mut x = b.to_owned();
        self.solve_adjoint_in_place(x.as_mut(), exec)?;
        Ok(x)
    }

    /// `A^-1`, solving against the identity on `exec` (`NotSquare`, `Singular`).
    pub fn inverse(&self, exec: &(impl Executor + ?Sized)) -> Result<Mat<T>, LinalgError> {
        let n = self.factors().nrows();
        let mut x = Mat::<T>::from_fn(n, n, |i, j| if i == j { one() } else { zero() });
        if self.factors().ncols() != n {
            return Err(LinalgError::NotSquare {
                op: "inverse",
                rows: n,
                cols: self.factors().ncols(),
            });
        }
        self.solve_in_place(x.as_mut(), exec)?;
        Ok(x)
    }

    /// `A` again, from the factors: `P^T L U` (serially; a check, not a kernel).
    pub fn reconstruct(&self) -> Mat<T> {
        let lu = self.l() * self.u();
        let mut a = Mat::<T>::zeros(lu.nrows(), lu.ncols());
        for (i, &pi) in self.perm.iter().enumerate() {
            for j in 0..lu.ncols() {
                a[(pi, j)] = lu[(i, j)].clone();
            }
        }
        a
    }
}

/// Conjugates every entry of `m` in place.
fn conjugate<T: ComplexField>(m: MatMut<'_, T>) {
    let mut m = m;
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            m[(i, j)] = faer::traits::math_utils::conj(&m[(i, j)]);
        }
    }
}
