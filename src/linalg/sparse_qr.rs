//! Sparse QR, `A Q_c = Q R`, for sparse least squares: the analysis of a pattern
//! ([`SymbolicQr`], made once) and the factorizations of matrices with that pattern
//! ([`SparseQr`]), multifrontal over the column elimination tree, whose independent subtrees
//! run on the team (`docs/sparse-qr.md`).

use std::sync::Arc;

use faer::dyn_stack::{MemStack, StackReq};
use faer::mat::{AsMatMut, AsMatRef};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::traits::math_utils::{abs, abs2, eps, from_f64, sqrt};
use faer::traits::{ComplexField, Conjugate, Index};
use faer::{Conj, Mat, MatMut};
use teamalg_gates::Family;
use teamalg_kernels::par::Executor;
use teamalg_kernels::sparse_lu::Analysis;
use teamalg_kernels::sparse_qr::{self as kernel, Factor, SparseQrParams};

use super::sparse_cholesky::analysis_error;
use super::sparse_pattern::{self, Pattern};
use super::{check, scratch};
use super::sparse_ordering::Of;
use super::{Field, LinalgError, SparseOrdering, Options};

/// The analysis of a sparse tall pattern (`m >= n`) for [`SparseQr`]: a column ordering
/// (faer's COLAMD by default, or another [`SparseOrdering`] by [`SymbolicQr::new_ordered`]),
/// the column elimination tree (the tree of `A^T A`) in a postorder, and faer's
/// supernodal structure of `R`, each supernode a dense front. Made once per pattern and shared
/// by every factorization of a matrix with that pattern (a clone shares it).
///
/// ```
/// use faer::sparse::{SparseColMat, Triplet};
/// use teamalg::linalg::SymbolicQr;
///
/// // A 6 x 3 pattern: two entries per column.
/// let t: Vec<_> = (0..3usize).flat_map(|j| [Triplet::new(2 * j, j, 1.0), Triplet::new(2 * j + 1, j, 1.0)]).collect();
/// let a = SparseColMat::<usize, f64>::try_new_from_triplets(6, 3, &t).unwrap();
/// let symbolic = SymbolicQr::new(a.symbolic())?;
/// assert_eq!((symbolic.nrows(), symbolic.ncols()), (6, 3));
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SymbolicQr {
    inner: Arc<Symbolic>,
}

/// What a [`SymbolicQr`] shares.
#[derive(Debug)]
struct Symbolic {
    analysis: Analysis,
    pattern: Pattern,
}

impl SymbolicQr {
    /// Analyses the pattern of a tall or square matrix. Errors: [`LinalgError::NotTall`]
    /// (`m < n`: an underdetermined system), [`LinalgError::StructurallySingular`] (no values
    /// can give `A` full column rank: the column named is the first, in the analysis's order,
    /// that no remaining row reaches), [`LinalgError::IndexOverflow`] and
    /// [`LinalgError::OutOfMemory`].
    pub fn new<I: Index>(pattern: SymbolicSparseColMatRef<'_, I>) -> Result<SymbolicQr, LinalgError> {
        SymbolicQr::analyse("SymbolicQr::new", pattern, SparseOrdering::Amd)
    }

    /// [`SymbolicQr::new`] with the column ordering `ordering` (COLAMD's by default). Errors:
    /// those of [`SymbolicQr::new`], and [`LinalgError::ShapeMismatch`] for a
    /// [`SparseOrdering::Custom`] ordering of another length than `A`'s columns.
    pub fn new_ordered<I: Index>(
        pattern: SymbolicSparseColMatRef<'_, I>,
        ordering: SparseOrdering<'_>,
    ) -> Result<SymbolicQr, LinalgError> {
        SymbolicQr::analyse("SymbolicQr::new_ordered", pattern, ordering)
    }

    fn analyse<I: Index>(
        op: &'static str,
        pattern: SymbolicSparseColMatRef<'_, I>,
        ordering: SparseOrdering<'_>,
    ) -> Result<SymbolicQr, LinalgError> {
        let (m, n) = (pattern.nrows(), pattern.ncols());
        if m < n {
            return Err(LinalgError::NotTall {
                op,
                rows: m,
                cols: n,
            });
        }
        let pattern = Pattern::copy(op, pattern)?;
        let order = ordering.order(op, pattern.as_ref(), Of::Columns)?;
        let analysis = kernel::analyse_ordered(pattern.as_ref(), order.as_deref())
            .map_err(|e| analysis_error(op, e))?;
        if let Some(column) = analysis.structurally_singular() {
            return Err(LinalgError::StructurallySingular {
                op,
                index: analysis.col_perm().arrays().0[column],
            });
        }
        Ok(SymbolicQr {
            inner: Arc::new(Symbolic { analysis, pattern }),
        })
    }

    /// `A`'s rows.
    pub fn nrows(&self) -> usize {
        self.inner.analysis.nrows()
    }

    /// `A`'s columns.
    pub fn ncols(&self) -> usize {
        self.inner.analysis.ncols()
    }

    /// The fronts (supernodes of the column tree).
    pub fn fronts(&self) -> usize {
        self.inner.analysis.fronts_len()
    }

    /// The entries a factorization stores: each front whole, its reflectors and its rows of
    /// `R`.
    pub fn len_values(&self) -> usize {
        self.inner.analysis.len_values()
    }

    /// The numeric factorization's work, in multiply-adds.
    pub fn work(&self) -> f64 {
        self.inner.analysis.forest().total_work()
    }

    /// The column ordering `Q_c` of `A Q_c = Q R`: `col_perm().arrays().0[k]` is the column of
    /// `A` factored `k`-th.
    pub fn col_perm(&self) -> faer::perm::PermRef<'_, usize> {
        self.inner.analysis.col_perm()
    }
}

/// The factorization `A Q_c = Q R` of a sparse tall matrix (`m >= n`) by Householder
/// reflections, for least squares: `Q_c` from the analysis ([`SymbolicQr`]), `Q` kept as each
/// front's reflectors (never formed), `R` upper triangular. Multifrontal: each front of the
/// column elimination tree is a dense block factored by teamalg's dense QR; the independent
/// subtrees run on different participants (claimed heaviest first) and the large fronts near
/// the root run their QR on the whole team. A matrix whose tree leaves nothing to run at once
/// is factored serially.
///
/// Every matrix of an analysed pattern has a factor. [`SparseQr::full_rank`] compares `R`'s
/// diagonal with SuiteSparseQR's default tolerance, `20 (m + n) eps max_j ||A_j||`; the
/// solves refuse a matrix with a diagonal entry at or below it with
/// [`LinalgError::RankDeficient`] rather than return a meaningless answer (its `rank` the
/// count of entries above the tolerance, an estimate: [`ColPivQr`](super::ColPivQr) on the
/// dense matrix and [`Svd`](super::Svd) reveal the rank).
///
/// ```
/// use faer::sparse::{SparseColMat, Triplet};
/// use faer::Mat;
/// use teamalg::{linalg::{self, SparseQr}, Exec};
///
/// // Fit a smooth curve: 400 noisy samples, 100 unknowns, each sample touching its two
/// // neighbouring unknowns (a tall, banded least-squares problem).
/// let (m, n) = (400, 100);
/// let mut t = Vec::new();
/// for i in 0..m {
///     let s = i as f64 * (n - 1) as f64 / m as f64;
///     let j = s as usize;
///     t.push(Triplet::new(i, j, 1.0 - (s - j as f64)));
///     t.push(Triplet::new(i, j + 1, s - j as f64));
/// }
/// let a = SparseColMat::<usize, f64>::try_new_from_triplets(m, n, &t).unwrap();
/// let b = Mat::<f64>::from_fn(m, 1, |i, _| (i as f64 / 50.0).sin());
/// let exec = Exec::serial();
/// let qr = SparseQr::new(a.as_ref(), &exec)?;
/// assert!(qr.full_rank());
/// let x = qr.lstsq(&b, &exec)?;
/// // The residual is orthogonal to A's columns: the normal equations hold.
/// let dense = a.to_dense();
/// let r = &b - &dense * &x;
/// let normal = dense.transpose() * &r;
/// assert!(normal.norm_max() < 1e-10);
///
/// // Two equal columns: rank-deficient, refused.
/// let mut t2 = t.clone();
/// t2.retain(|e| e.col != n - 1);
/// t2.extend(t.iter().filter(|e| e.col == n - 2).map(|e| Triplet::new(e.row, n - 1, e.val)));
/// let bad = SparseColMat::<usize, f64>::try_new_from_triplets(m, n, &t2).unwrap();
/// let qr = SparseQr::new(bad.as_ref(), &exec)?;
/// assert!(matches!(qr.lstsq(&b, &exec), Err(linalg::LinalgError::RankDeficient { .. })));
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
#[derive(Debug)]
pub struct SparseQr<T> {
    symbolic: SymbolicQr,
    factor: Factor<T>,
    options: Options,
    rank: usize,
}

/// The scratch [`SparseQr::new_with_scratch`] needs for an analysis on executors up to
/// `width` wide (the top fronts' QR takes a block row per participant).
pub fn sparse_qr_scratch<T: Field>(symbolic: &SymbolicQr, width: usize) -> StackReq {
    kernel::factor_scratch::<T>(&symbolic.inner.analysis, width)
}

impl<T: Field> SparseQr<T> {
    /// Analyses and factors `a` on `exec`. Errors: those of [`SymbolicQr::new`] and
    /// [`SparseQr::new_with_symbolic`].
    pub fn new<I: Index>(
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<SparseQr<T>, LinalgError> {
        let symbolic = SymbolicQr::new(a.symbolic()).map_err(|e| e.named("SparseQr::new"))?;
        SparseQr::new_with(&symbolic, a, exec, &Options::new())
    }

    /// Factors `a`, whose pattern `symbolic` analysed, on `exec`. Errors:
    /// [`LinalgError::NotSquare`] (a square pattern's `a` that is not),
    /// [`LinalgError::ShapeMismatch`] (another shape), [`LinalgError::PatternMismatch`]
    /// (another pattern: analyse it anew), [`LinalgError::NotFinite`] (a stored value),
    /// [`LinalgError::OutOfMemory`]. `a` is only read. A rank-deficient matrix is factored;
    /// its solves refuse it.
    pub fn new_with_symbolic<I: Index>(
        symbolic: &SymbolicQr,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<SparseQr<T>, LinalgError> {
        SparseQr::new_with(symbolic, a, exec, &Options::new())
    }

    /// [`SparseQr::new_with_symbolic`] with the call's [`Options`] (the threshold of
    /// [`Family::SparseQr`], the finiteness check), which the solves keep.
    pub fn new_with<I: Index>(
        symbolic: &SymbolicQr,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<SparseQr<T>, LinalgError> {
        const OP: &str = "SparseQr::new";
        let req = sparse_qr_scratch::<T>(symbolic, exec.width());
        scratch::with(OP, req, |stack| {
            SparseQr::factor(OP, symbolic, a, exec, options, stack)
        })?
    }

    /// [`SparseQr::new_with`] taking its working memory from `stack` (at least
    /// [`sparse_qr_scratch`] for `exec`'s width); the factor's fronts are allocated. Errors:
    /// [`LinalgError::ScratchTooSmall`] and those of [`SparseQr::new_with_symbolic`].
    pub fn new_with_scratch<I: Index>(
        symbolic: &SymbolicQr,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
        stack: &mut MemStack,
    ) -> Result<SparseQr<T>, LinalgError> {
        const OP: &str = "SparseQr::new_with_scratch";
        check::scratch(OP, stack, sparse_qr_scratch::<T>(symbolic, exec.width()))?;
        SparseQr::factor(OP, symbolic, a, exec, options, stack)
    }

    fn factor<I: Index>(
        op: &'static str,
        symbolic: &SymbolicQr,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
        stack: &mut MemStack,
    ) -> Result<SparseQr<T>, LinalgError> {
        let mut copy = Vec::new();
        let a = symbolic.inner.pattern.matching(op, a, &mut copy)?;
        if options.checks_finite() {
            sparse_pattern::finite(op, a)?;
        }
        let analysis = &symbolic.inner.analysis;
        let params = SparseQrParams {
            threshold: options.get(Family::SparseQr),
        };
        let factor = kernel::factor(analysis, a.val(), exec, params, stack);
        // SuiteSparseQR's default tolerance: 20 (m + n) eps times the largest column's norm.
        let widest = (0..a.ncols())
            .map(|j| {
                let sum = a.val_of_col(j).iter().fold(T::Real::zero_impl(), |s, v| s + abs2(v));
                sqrt(&sum)
            })
            .fold(T::Real::zero_impl(), |a, b| if b > a { b } else { a });
        let (m, n) = (a.nrows(), a.ncols());
        let tol = from_f64::<T::Real>(20.0 * (m + n) as f64) * eps::<T::Real>() * widest;
        let rank = factor.diagonal(analysis).filter(|d| abs(*d) > tol).count();
        Ok(SparseQr {
            symbolic: symbolic.clone(),
            factor,
            options: *options,
            rank,
        })
    }

    /// The analysis the factor was made with.
    pub fn symbolic(&self) -> &SymbolicQr {
        &self.symbolic
    }

    /// Whether every entry of `R`'s diagonal is above `20 (m + n) eps max_j ||A_j||`: the
    /// solves refuse the matrix otherwise. (Without column pivoting the count of entries above
    /// it is not the numerical rank: one dependent column can leave several small entries
    /// further along; the error reports that count.)
    pub fn full_rank(&self) -> bool {
        self.rank == self.symbolic.ncols()
    }

    /// Least squares in place: `b` (`m x k`) becomes `X` in its first `n` rows (minimizing
    /// `||A X - B||` column by column) and the residuals' coordinates in the other `m - n`
    /// (their norm is the residual's, as with LAPACK's `gels`), on `exec` (the columns spread
    /// over the team when that pays). Errors: [`LinalgError::ShapeMismatch`] (`b`'s rows),
    /// [`LinalgError::RankDeficient`] (not [`SparseQr::full_rank`]),
    /// [`LinalgError::NotFinite`] (when the options check); `b` is then unchanged.
    pub fn lstsq_in_place(
        &self,
        b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.least_squares("SparseQr::lstsq_in_place", b, exec)
    }

    /// The least-squares solution `X` (`n x k`) of `A X = B` (`b`: `m x k`, may be a
    /// conjugated view), on `exec`. Errors: those of [`SparseQr::lstsq_in_place`].
    pub fn lstsq<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        const OP: &str = "SparseQr::lstsq";
        let mut x = scratch::copy(OP, b.as_mat_ref())?;
        self.least_squares(OP, x.as_mut(), exec)?;
        Ok(x.subrows(0, self.symbolic.ncols()).to_owned())
    }

    /// Overwrites `b` with `A^-1 b` for a square `A`, on `exec`. Errors:
    /// [`LinalgError::NotSquare`] (a tall `A`: use [`SparseQr::lstsq_in_place`]) and those of
    /// [`SparseQr::lstsq_in_place`].
    pub fn solve_in_place(
        &self,
        b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        const OP: &str = "SparseQr::solve_in_place";
        self.square(OP)?;
        self.least_squares(OP, b, exec)
    }

    /// `A^-1 b` as a new matrix for a square `A`, on `exec`. Errors: those of
    /// [`SparseQr::solve_in_place`].
    pub fn solve<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        const OP: &str = "SparseQr::solve";
        self.square(OP)?;
        let mut x = scratch::copy(OP, b.as_mat_ref())?;
        self.least_squares(OP, x.as_mut(), exec)?;
        Ok(x)
    }

    /// Overwrites `b` with `A^-H b` for a square `A`, on `exec`. Errors:
    /// [`LinalgError::NotSquare`] (a tall `A`: use [`SparseQr::min_norm_adjoint`]) and those
    /// of [`SparseQr::lstsq_in_place`].
    pub fn solve_adjoint_in_place(
        &self,
        b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        const OP: &str = "SparseQr::solve_adjoint_in_place";
        self.square(OP)?;
        self.adjoint(OP, b, exec)
    }

    /// `A^-H b` as a new matrix for a square `A`, on `exec`. Errors: those of
    /// [`SparseQr::solve_adjoint_in_place`].
    pub fn solve_adjoint<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        const OP: &str = "SparseQr::solve_adjoint";
        self.square(OP)?;
        let mut x = scratch::copy(OP, b.as_mat_ref())?;
        self.adjoint(OP, x.as_mut(), exec)?;
        Ok(x)
    }

    /// The minimum-norm solution `X` (`m x k`) of the underdetermined system `A^H X = B`
    /// (`B`: `n x k`), where this QR factors the tall `A` of full column rank: the way to
    /// solve a wide sparse system `W X = B` is to factor `W^H`. With `A Q_c = Q R`,
    /// `X = Q [R^-H Q_c^T B; 0]`. Errors: [`LinalgError::ShapeMismatch`] (`b`'s rows),
    /// [`LinalgError::RankDeficient`], [`LinalgError::NotFinite`].
    pub fn min_norm_adjoint<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        const OP: &str = "SparseQr::min_norm_adjoint";
        let b = b.as_mat_ref();
        let (m, n) = (self.symbolic.nrows(), self.symbolic.ncols());
        check::dim(OP, "B", super::Dim::Rows, n, b.nrows())?;
        let mut x = scratch::zeros(OP, m, b.ncols())?;
        x.as_mut().subrows_mut(0, n).copy_from(b);
        self.adjoint(OP, x.as_mut(), exec)?;
        Ok(x)
    }

    /// The minimum-norm adjoint solve on `b` (`m` rows, `B` in its first `n`).
    fn adjoint(
        &self,
        op: &'static str,
        mut b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        let b = b.as_mat_mut();
        // `B` is the first `n` rows; the others are written, not read.
        let params = self.checked(op, b.as_ref(), self.symbolic.ncols())?;
        let analysis = &self.symbolic.inner.analysis;
        kernel::min_norm_adjoint_in_place(analysis, &self.factor, b, exec, params);
        Ok(())
    }

    /// The solves' checks: `b` has `A`'s rows, `R` is not singular, and `b`'s first `read`
    /// rows (those the solve reads) are finite when the options check.
    fn checked(
        &self,
        op: &'static str,
        b: faer::MatRef<'_, T>,
        read: usize,
    ) -> Result<SparseQrParams, LinalgError> {
        check::dim(op, "B", super::Dim::Rows, self.symbolic.nrows(), b.nrows())?;
        if !self.full_rank() {
            return Err(LinalgError::RankDeficient {
                op,
                rank: self.rank,
                of: self.symbolic.ncols(),
            });
        }
        if self.options.checks_finite() {
            check::finite(op, "B", b.subrows(0, read), check::Stored::All)?;
        }
        Ok(SparseQrParams {
            threshold: self.options.get(Family::SparseQr),
        })
    }

    fn square(&self, op: &'static str) -> Result<(), LinalgError> {
        let (m, n) = (self.symbolic.nrows(), self.symbolic.ncols());
        match m == n {
            true => Ok(()),
            false => Err(LinalgError::NotSquare {
                op,
                operand: "A",
                rows: m,
                cols: n,
            }),
        }
    }

    fn least_squares(
        &self,
        op: &'static str,
        mut b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        let b = b.as_mat_mut();
        let params = self.checked(op, b.as_ref(), b.nrows())?;
        let analysis = &self.symbolic.inner.analysis;
        kernel::lstsq_in_place(analysis, &self.factor, b, exec, params);
        Ok(())
    }
}

impl<T: Field> faer::linalg::solvers::ShapeCore for SparseQr<T> {
    fn nrows(&self) -> usize {
        self.symbolic.nrows()
    }
    fn ncols(&self) -> usize {
        self.symbolic.ncols()
    }
}

/// faer's least-squares trait, so that code generic over faer's decompositions takes the
/// factor: its contract has no error and no executor, so the solve runs serially on the
/// calling thread with no check but the shape and the rank (either panics, as faer's do).
impl<T: Field> faer::linalg::solvers::SolveLstsqCore<T> for SparseQr<T> {
    #[track_caller]
    fn solve_lstsq_in_place_with_conj(&self, conj: Conj, rhs: MatMut<'_, T>) {
        assert_eq!(rhs.nrows(), self.symbolic.nrows(), "solve_lstsq: shapes");
        assert!(self.full_rank(), "solve_lstsq: rank-deficient");
        let seq = teamalg_kernels::par::Seq;
        let analysis = &self.symbolic.inner.analysis;
        // `conj(A) x = b` is `A conj(x) = conj(b)`.
        let mut rhs = rhs;
        if conj == Conj::Yes {
            conjugate_in_place(rhs.as_mut());
        }
        kernel::lstsq_in_place(analysis, &self.factor, rhs.as_mut(), &seq, Default::default());
        if conj == Conj::Yes {
            conjugate_in_place(rhs);
        }
    }
}

fn conjugate_in_place<T: ComplexField>(mut m: MatMut<'_, T>) {
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            m[(i, j)] = faer::traits::math_utils::conj(&m[(i, j)]);
        }
    }
}
