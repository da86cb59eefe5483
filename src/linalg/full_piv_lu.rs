//! LU with full pivoting, `P A Q = L U`: [`FullPivLu::new`] and its solves.

use faer::mat::AsMatRef;
use faer::perm::PermRef;
use faer::traits::math_utils::{abs, eps, from_f64};
use faer::traits::Conjugate;
use faer::{Mat, MatMut, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::full_piv_lu::{
    full_piv_lu_in_place, full_piv_lu_in_place_scratch, FullPivLuInfo, FullPivLuParams,
};
use teamalg_kernels::par::Executor;
use teamalg_kernels::triangular::{self, Diag, SolveParams, SolveSide, Triangle};

use super::check::{self, Stored};
use super::perm::Perm;
use super::solves::{faer_solvers, solve_forms};
use super::{det, scratch};
use super::{Dim, Field, LinalgError, Options, TriangularView};

/// The factorization `P A Q = L U` of an `m x n` matrix with full pivoting (LAPACK's
/// `getc2`): each pivot is the largest entry left (in `max(|re|, |im|)`), so `|L| <= 1`
/// (`sqrt(2)` in complex) and `U`'s diagonal falls in size, which shows the rank. Its solves
/// refuse a matrix whose numerical rank ([`FullPivLu::rank`] with the default tolerance) is
/// short ([`LinalgError::RankDeficient`]). Slower than [`Lu`](super::Lu) (its steps are matrix-vector
/// work, one section each on a team: family [`Family::LuFullStep`]) and more robust: use it
/// for a rank, or when partial pivoting's growth is a worry.
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg::FullPivLu, Exec};
///
/// // Rank 2: the third row is the sum of the first two.
/// let a = Mat::<f64>::from_fn(3, 3, |i, j| [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [5.0, 7.0, 9.0]][i][j]);
/// let lu = FullPivLu::new(&a, &Exec::serial())?;
/// assert_eq!(lu.rank(None), 2);
/// assert!((lu.reconstruct() - &a).norm_max() < 1e-12);
/// // P and Q are faer's permutations.
/// let (p, q) = (lu.p(), lu.q());
/// assert_eq!((p.len(), q.len()), (3, 3));
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
// `Send` and `Sync` are automatic and sound: a `Mat`, index vectors and plain values; a shared
// `&FullPivLu` only reads them.
#[derive(Debug)]
pub struct FullPivLu<T> {
    factors: Mat<T>,
    p: Perm,
    q: Perm,
    info: FullPivLuInfo,
    options: Options,
}

impl<T: Field> FullPivLu<T> {
    /// Factors a copy of `a` (any shape; it may be a conjugated view), on `exec`; `a` is
    /// unchanged. Errors: [`LinalgError::OutOfMemory`] (the copy is sized before anything is
    /// read), [`LinalgError::NotFinite`] (when the options check).
    pub fn new<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Self, LinalgError> {
        Self::new_with(a, exec, &Options::new())
    }

    /// [`FullPivLu::new`] with the call's [`Options`] (which its solves keep).
    pub fn new_with<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Self, LinalgError> {
        const OP: &str = "full_piv_lu";
        let a = a.as_mat_ref();
        let (m, n) = (a.nrows(), a.ncols());
        // Sized first: an `a` too large to copy is refused before its scan.
        let room = scratch::room(OP, m, n)?;
        if options.checks_finite() {
            check::finite(OP, "A", a.canonical(), Stored::All)?;
        }
        let mut factors = room.fill_from(a);
        let (mut rp, mut rpi) = (scratch::vec(OP, m, 0)?, scratch::vec(OP, m, 0)?);
        let (mut cp, mut cpi) = (scratch::vec(OP, n, 0)?, scratch::vec(OP, n, 0)?);
        let params = FullPivLuParams {
            threshold: options.get(Family::LuFullStep),
        };
        let req = full_piv_lu_in_place_scratch::<T>(m, n);
        let info = scratch::with("full_piv_lu", req, |stack| {
            full_piv_lu_in_place(
                factors.as_mut(),
                &mut rp,
                &mut rpi,
                &mut cp,
                &mut cpi,
                exec,
                params,
                stack,
            )
        })?;
        Ok(FullPivLu {
            factors,
            p: Perm::from_forward(rp),
            q: Perm::from_forward(cp),
            info,
            options: *options,
        })
    }

    /// The factored matrix: `L` strictly below the diagonal, `U` on and above it.
    pub fn factors(&self) -> MatRef<'_, T> {
        self.factors.as_ref()
    }

    /// `L`, `m x min(m, n)`, unit lower triangular, every entry at most 1 in size (`sqrt(2)`
    /// in modulus for complex types).
    pub fn l(&self) -> TriangularView<'_, T> {
        let f = self.factors();
        let s = f.nrows().min(f.ncols());
        TriangularView::new(f.subcols(0, s), Triangle::Lower, Diag::Unit)
    }

    /// `U`, `min(m, n) x n`, upper triangular.
    pub fn u(&self) -> TriangularView<'_, T> {
        let f = self.factors();
        let s = f.nrows().min(f.ncols());
        TriangularView::new(f.subrows(0, s), Triangle::Upper, Diag::NonUnit)
    }

    /// `P`: row `i` of `P A` is row `p().arrays().0[i]` of `A`.
    pub fn p(&self) -> PermRef<'_, usize> {
        self.p.as_ref()
    }

    /// `Q`: column `j` of `A Q` is column `q().arrays().0[j]` of `A`.
    pub fn q(&self) -> PermRef<'_, usize> {
        self.q.as_ref()
    }

    /// The numerical rank: the pivots `|U_ii| > rcond |U_00|`, with `rcond` by default
    /// `max(m, n) eps` (as LAPACK's and NumPy's rank rules, and every `rank` of the facade).
    /// `Some(0.0)` counts the nonzero pivots.
    pub fn rank(&self, rcond: Option<T::Real>) -> usize {
        let f = self.factors();
        let (m, n) = (f.nrows(), f.ncols());
        if self.info.rank == 0 {
            return 0;
        }
        let tol = rcond.unwrap_or_else(|| from_f64::<T::Real>(m.max(n) as f64) * eps::<T::Real>());
        let cut = abs(&f[(0, 0)]) * tol;
        (0..self.info.rank)
            .take_while(|&i| abs(&f[(i, i)]) > cut)
            .count()
    }

    /// Whether a pivot is exactly zero (the trailing block was zero): `A` is singular, or
    /// rank-deficient when it is not square.
    pub fn is_singular(&self) -> bool {
        let f = self.factors();
        self.info.rank < f.nrows().min(f.ncols())
    }

    /// `det(A)`: the product of `U`'s diagonal with the sign of the exchanges; zero when a
    /// pivot is. Errors: [`LinalgError::NotSquare`].
    pub fn determinant(&self) -> Result<T, LinalgError> {
        let n = check::square("determinant", "A", self.factors())?;
        let f = self.factors();
        Ok(det::product(
            (0..n).map(|i| f[(i, i)]),
            self.info.transpositions % 2 == 1,
        ))
    }

    /// `(sign, ln|det(A)|)`, which neither overflows nor underflows: `det = sign
    /// exp(ln|det|)`, `sign` of modulus 1 (zero, with `-inf`, when a pivot is zero). Errors:
    /// [`LinalgError::NotSquare`].
    pub fn slogdet(&self) -> Result<(T, T::Real), LinalgError> {
        let n = check::square("slogdet", "A", self.factors())?;
        let f = self.factors();
        Ok(det::slogdet(
            (0..n).map(|i| f[(i, i)]),
            self.info.transpositions % 2 == 1,
        ))
    }

    /// `ln|det(A)|` ([`FullPivLu::slogdet`]'s second part).
    pub fn log_abs_det(&self) -> Result<T::Real, LinalgError> {
        self.slogdet().map(|(_, l)| l)
    }

    /// `A` again, from the factors: `P^T L U Q^T` (serially; a check, not a kernel).
    pub fn reconstruct(&self) -> Mat<T> {
        let lu = self.l().to_mat() * self.u().to_mat();
        let (p, q) = (self.p.forward(), self.q.forward());
        let mut a = Mat::<T>::zeros(lu.nrows(), lu.ncols());
        for j in 0..lu.ncols() {
            for i in 0..lu.nrows() {
                a[(p[i], q[j])] = lu[(i, j)];
            }
        }
        a
    }

    /// The solves' parameters once the factorization is square and nonsingular and `b` a
    /// finite right-hand side with its rows.
    fn ready(&self, op: &'static str, b: &MatMut<'_, T>) -> Result<SolveParams, LinalgError> {
        let n = check::square(op, "A", self.factors())?;
        check::dim(op, "B", Dim::Rows, n, b.nrows())?;
        if self.is_singular() {
            return Err(LinalgError::Singular {
                op,
                index: self.info.rank,
            });
        }
        // Pivots that are rounding: a solution would have no meaning.
        let rank = self.rank(None);
        if rank < n {
            return Err(LinalgError::RankDeficient { op, rank, of: n });
        }
        if self.options.checks_finite() {
            check::finite(op, "B", b.as_ref(), Stored::All)?;
        }
        Ok(SolveParams {
            threshold: self.options.get(Family::TriangularSolve),
        })
    }

    /// `A X = B`, unchecked: `X = Q U^-1 L^-1 P B`.
    fn plain_solve(&self, mut b: MatMut<'_, T>, exec: &(impl Executor + ?Sized), p: SolveParams) {
        let f = self.factors();
        self.p.gather_rows(b.as_mut());
        let left = SolveSide::Left;
        triangular::solve_in_place(f, b.as_mut(), left, Triangle::Lower, Diag::Unit, exec, p);
        triangular::solve_in_place(f, b.as_mut(), left, Triangle::Upper, Diag::NonUnit, exec, p);
        self.q.scatter_rows(b);
    }

    /// `A^T X = B`, unchecked: `X = P^T L^-T U^-T Q^T B`.
    fn transpose_solve(
        &self,
        mut b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
        p: SolveParams,
    ) {
        let ft = self.factors().transpose();
        self.q.gather_rows(b.as_mut());
        let left = SolveSide::Left;
        triangular::solve_in_place(ft, b.as_mut(), left, Triangle::Lower, Diag::NonUnit, exec, p);
        triangular::solve_in_place(ft, b.as_mut(), left, Triangle::Upper, Diag::Unit, exec, p);
        self.p.scatter_rows(b);
    }
}

solve_forms!(FullPivLu);
faer_solvers!(FullPivLu);
