//! Sparse LU with partial pivoting, `P A Q = L U`: the analysis of a pattern ([`SymbolicLu`],
//! made once) and the factorizations of matrices with that pattern ([`SparseLu`]), multifrontal
//! over the column elimination tree, whose independent subtrees run on the team
//! (`docs/sparse-lu.md`).

use std::sync::Arc;

use faer::dyn_stack::{MemStack, StackReq};
use faer::mat::{AsMatMut, AsMatRef};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::traits::{ComplexField, Conjugate, Index};
use faer::{Conj, Mat, MatMut};
use teamalg_gates::Family;
use teamalg_kernels::par::Executor;
use teamalg_kernels::sparse_lu::{self as kernel, Analysis, Factor, PivotFailure, SparseLuParams};

use super::sparse_cholesky::analysis_error;
use super::sparse_pattern::{self, Pattern};
use super::{check, det, scratch};
use super::sparse_ordering::Of;
use super::{Field, LinalgError, Options, SparseOrdering};

/// The analysis of a sparse square pattern for [`SparseLu`]: a column ordering (faer's COLAMD
/// by default, or another [`SparseOrdering`] by [`SymbolicLu::new_ordered`]), the column
/// elimination tree (the tree of `A^T A`) in a postorder, and the fronts that bound
/// the factors whatever rows the pivoting picks (faer's supernodal structure of `A^T A`).
/// Made once per pattern and shared by every factorization of a matrix with that pattern (a
/// clone shares it: it is reference-counted).
///
/// ```
/// use faer::sparse::{SparseColMat, Triplet};
/// use teamalg::linalg::SymbolicLu;
///
/// // The pattern of a tridiagonal matrix of 6: one chain of fronts, no fill.
/// let mut t = Vec::new();
/// for i in 0..6usize {
///     t.push(Triplet::new(i, i, 1.0));
///     if i > 0 { t.push(Triplet::new(i, i - 1, 1.0)); t.push(Triplet::new(i - 1, i, 1.0)); }
/// }
/// let a = SparseColMat::<usize, f64>::try_new_from_triplets(6, 6, &t).unwrap();
/// let symbolic = SymbolicLu::new(a.symbolic())?;
/// assert_eq!(symbolic.nrows(), 6);
/// assert!(symbolic.fronts() >= 1);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
///
/// Factoring many matrices with one analysis is [`SparseLu::new_with_symbolic`]'s example.
#[derive(Debug, Clone)]
pub struct SymbolicLu {
    inner: Arc<Symbolic>,
}

/// What a [`SymbolicLu`] shares.
#[derive(Debug)]
struct Symbolic {
    analysis: Analysis,
    pattern: Pattern,
}

impl SymbolicLu {
    /// Analyses the pattern of a square matrix. Errors: [`LinalgError::NotSquare`],
    /// [`LinalgError::StructurallySingular`] (no values can make the matrix nonsingular: a
    /// row or column without entries, or a set of columns meeting fewer rows),
    /// [`LinalgError::IndexOverflow`] and [`LinalgError::OutOfMemory`].
    pub fn new<I: Index>(pattern: SymbolicSparseColMatRef<'_, I>) -> Result<SymbolicLu, LinalgError> {
        SymbolicLu::analyse("SymbolicLu::new", pattern, SparseOrdering::Amd)
    }

    /// [`SymbolicLu::new`] with the column ordering `ordering` (COLAMD's by default). Errors:
    /// those of [`SymbolicLu::new`], and [`LinalgError::ShapeMismatch`] for a
    /// [`SparseOrdering::Custom`] ordering of another length than `A`'s order.
    pub fn new_ordered<I: Index>(
        pattern: SymbolicSparseColMatRef<'_, I>,
        ordering: SparseOrdering<'_>,
    ) -> Result<SymbolicLu, LinalgError> {
        SymbolicLu::analyse("SymbolicLu::new_ordered", pattern, ordering)
    }

    fn analyse<I: Index>(
        op: &'static str,
        pattern: SymbolicSparseColMatRef<'_, I>,
        ordering: SparseOrdering<'_>,
    ) -> Result<SymbolicLu, LinalgError> {
        let (m, n) = (pattern.nrows(), pattern.ncols());
        if m != n {
            return Err(LinalgError::NotSquare {
                op,
                operand: "A",
                rows: m,
                cols: n,
            });
        }
        let pattern = Pattern::copy(op, pattern)?;
        let order = ordering.order(op, pattern.as_ref(), Of::Columns)?;
        let analysis = Analysis::ordered(pattern.as_ref(), order.as_deref())
            .map_err(|e| analysis_error(op, e))?;
        if let Some(column) = analysis.structurally_singular() {
            return Err(LinalgError::StructurallySingular {
                op,
                index: analysis.col_perm().arrays().0[column],
            });
        }
        Ok(SymbolicLu {
            inner: Arc::new(Symbolic { analysis, pattern }),
        })
    }

    /// The order of the analysed matrix.
    pub fn nrows(&self) -> usize {
        self.inner.analysis.nrows()
    }

    /// The fronts (supernodes of the column tree).
    pub fn fronts(&self) -> usize {
        self.inner.analysis.fronts_len()
    }

    /// The entries of `L` and `U` a factorization stores at most (a front keeps only the
    /// columns of its block of `U` that its pivot rows reach).
    pub fn len_values(&self) -> usize {
        self.inner.analysis.len_values()
    }

    /// The numeric factorization's work, in multiply-adds.
    pub fn work(&self) -> f64 {
        self.inner.analysis.forest().total_work()
    }

    /// The column ordering, `Q` of `P A Q = L U`: `col_perm().arrays().0[k]` is the column of
    /// `A` factored `k`-th.
    pub fn col_perm(&self) -> faer::perm::PermRef<'_, usize> {
        self.inner.analysis.col_perm()
    }
}

/// The factorization `P A Q = L U` of a sparse square matrix, with partial pivoting: `Q` from
/// the analysis ([`SymbolicLu`]), `P` chosen numerically, every column's pivot the largest in
/// magnitude among the rows that can pivot it (as a dense LU's). Multifrontal: each front of
/// the column elimination tree is a dense block, factored by teamalg's dense LU; the
/// independent subtrees run on different participants (claimed heaviest first) and the large
/// fronts near the root run their dense work on the whole team. A matrix whose tree leaves
/// nothing to run at once is factored serially.
///
/// ```
/// use faer::sparse::{SparseColMat, Triplet};
/// use faer::Mat;
/// use teamalg::{linalg::{self, SparseLu, SymbolicLu}, Exec};
///
/// // A 2D convection-diffusion operator on a 20 x 20 grid: unsymmetric.
/// let k = 20;
/// let operator = |wind: f64| {
///     let mut t = Vec::new();
///     for x in 0..k {
///         for y in 0..k {
///             let i = x * k + y;
///             t.push(Triplet::new(i, i, 4.0));
///             if x + 1 < k { t.push(Triplet::new(i + k, i, -1.0 - wind)); t.push(Triplet::new(i, i + k, -1.0 + wind)); }
///             if y + 1 < k { t.push(Triplet::new(i + 1, i, -1.1)); t.push(Triplet::new(i, i + 1, -0.9)); }
///         }
///     }
///     t
/// };
/// let exec = Exec::serial();
/// // One analysis, two winds: the values change, not the pattern.
/// let t = operator(0.3);
/// let a = SparseColMat::<usize, f64>::try_new_from_triplets(k * k, k * k, &t).unwrap();
/// let symbolic = SymbolicLu::new(a.symbolic())?;
/// for wind in [0.3, 0.6] {
///     let a = SparseColMat::<usize, f64>::try_new_from_triplets(k * k, k * k, &operator(wind)).unwrap();
///     let lu = SparseLu::new_with_symbolic(&symbolic, a.as_ref(), &exec)?;
///     let x = lu.solve(Mat::<f64>::ones(k * k, 1), &exec)?;
///     // The first row of A x: 4 x0 + (wind - 1) x_k - 0.9 x1 = 1.
///     assert!((4.0 * x[(0, 0)] + (wind - 1.0) * x[(k, 0)] - 0.9 * x[(1, 0)] - 1.0).abs() < 1e-12);
/// }
/// let lu = SparseLu::new(a.as_ref(), &exec)?;
/// let b = Mat::<f64>::from_fn(k * k, 2, |i, j| (i + j) as f64);
/// let x = lu.solve(&b, &exec)?;
/// let (sign, log) = lu.slogdet()?;
/// assert!(sign == 1.0 && log.is_finite());
///
/// // A zero column (stored, but zero): singular, the column named in A's numbering.
/// let mut t2: Vec<_> = t.iter().copied().filter(|e| e.col != 7).collect();
/// t2.push(Triplet::new(7, 7, 0.0));
/// let bad = SparseColMat::<usize, f64>::try_new_from_triplets(k * k, k * k, &t2).unwrap();
/// let err = SparseLu::new(bad.as_ref(), &exec).unwrap_err();
/// assert_eq!(err, linalg::LinalgError::Singular { op: "SparseLu::new", index: 7 });
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
#[derive(Debug)]
pub struct SparseLu<T> {
    symbolic: SymbolicLu,
    factor: Factor<T>,
    options: Options,
}

/// The scratch [`SparseLu::new_with_scratch`] needs for an analysis.
pub fn sparse_lu_scratch<T: ComplexField>(symbolic: &SymbolicLu) -> StackReq {
    kernel::factor_scratch::<T>(&symbolic.inner.analysis)
}

impl<T: Field> SparseLu<T> {
    /// Analyses and factors `a` on `exec`. Errors: those of [`SymbolicLu::new`] and
    /// [`SparseLu::new_with_symbolic`].
    pub fn new<I: Index>(
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<SparseLu<T>, LinalgError> {
        let symbolic = SymbolicLu::new(a.symbolic()).map_err(|e| e.named("SparseLu::new"))?;
        SparseLu::new_with(&symbolic, a, exec, &Options::new())
    }

    /// Factors `a`, whose pattern `symbolic` analysed, on `exec`. Errors:
    /// [`LinalgError::NotSquare`], [`LinalgError::ShapeMismatch`] (another order),
    /// [`LinalgError::PatternMismatch`] (another pattern: analyse it anew),
    /// [`LinalgError::NotFinite`] (a stored value), [`LinalgError::Singular`] (the column of
    /// `A` whose candidates for a pivot were all zero), [`LinalgError::OutOfMemory`]. `a` is
    /// only read.
    pub fn new_with_symbolic<I: Index>(
        symbolic: &SymbolicLu,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<SparseLu<T>, LinalgError> {
        SparseLu::new_with(symbolic, a, exec, &Options::new())
    }

    /// [`SparseLu::new_with_symbolic`] with the call's [`Options`] (the threshold of
    /// [`Family::SparseLu`], the finiteness check), which the solves keep.
    pub fn new_with<I: Index>(
        symbolic: &SymbolicLu,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<SparseLu<T>, LinalgError> {
        const OP: &str = "SparseLu::new";
        let req = sparse_lu_scratch::<T>(symbolic);
        scratch::with(OP, req, |stack| {
            SparseLu::factor(OP, symbolic, a, exec, options, stack)
        })?
    }

    /// [`SparseLu::new_with`] taking its working memory from `stack` (at least
    /// [`sparse_lu_scratch`]); the factor's fronts are allocated. Errors:
    /// [`LinalgError::ScratchTooSmall`] and those of [`SparseLu::new_with_symbolic`].
    pub fn new_with_scratch<I: Index>(
        symbolic: &SymbolicLu,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
        stack: &mut MemStack,
    ) -> Result<SparseLu<T>, LinalgError> {
        const OP: &str = "SparseLu::new_with_scratch";
        check::scratch(OP, stack, sparse_lu_scratch::<T>(symbolic))?;
        SparseLu::factor(OP, symbolic, a, exec, options, stack)
    }

    fn factor<I: Index>(
        op: &'static str,
        symbolic: &SymbolicLu,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
        stack: &mut MemStack,
    ) -> Result<SparseLu<T>, LinalgError> {
        let mut copy = Vec::new();
        let a = symbolic.inner.pattern.matching(op, a, &mut copy)?;
        if options.checks_finite() {
            sparse_pattern::finite(op, a)?;
        }
        let analysis = &symbolic.inner.analysis;
        let params = SparseLuParams {
            threshold: options.get(Family::SparseLu),
        };
        let factor = kernel::factor(analysis, a.val(), exec, params, stack).map_err(
            |PivotFailure { column }| LinalgError::Singular {
                op,
                index: analysis.col_perm().arrays().0[column],
            },
        )?;
        Ok(SparseLu {
            symbolic: symbolic.clone(),
            factor,
            options: *options,
        })
    }

    /// The analysis the factor was made with.
    pub fn symbolic(&self) -> &SymbolicLu {
        &self.symbolic
    }

    /// The row permutation `P` of `P A Q = L U`, as the rows of `A` in pivot order:
    /// `row_perm()[k]` is the row of `A` that pivots the `k`-th column of `Q`'s order.
    pub fn row_perm(&self) -> Vec<usize> {
        self.factor.pivot_rows(&self.symbolic.inner.analysis).collect()
    }

    /// Overwrites `b` with `A^-1 b`, on `exec` (the columns spread over the team when that
    /// pays). Errors: [`LinalgError::ShapeMismatch`] (`b`'s rows), [`LinalgError::NotFinite`]
    /// (when the options check); `b` is then unchanged.
    pub fn solve_in_place(
        &self,
        b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.solve_with("SparseLu::solve_in_place", false, Conj::No, b, exec)
    }

    /// `A^-1 b` as a new matrix (`b` may be a conjugated view), on `exec`. Errors: those of
    /// [`SparseLu::solve_in_place`].
    pub fn solve<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        self.solved("SparseLu::solve", false, Conj::No, b.as_mat_ref(), exec)
    }

    /// Overwrites `b` with `A^-T b`, on `exec`.
    pub fn solve_transpose_in_place(
        &self,
        b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.solve_with("SparseLu::solve_transpose_in_place", true, Conj::No, b, exec)
    }

    /// `A^-T b` as a new matrix, on `exec`.
    pub fn solve_transpose<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        self.solved("SparseLu::solve_transpose", true, Conj::No, b.as_mat_ref(), exec)
    }

    /// Overwrites `b` with `A^-H b`, on `exec`.
    pub fn solve_adjoint_in_place(
        &self,
        b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.solve_with("SparseLu::solve_adjoint_in_place", true, Conj::Yes, b, exec)
    }

    /// `A^-H b` as a new matrix, on `exec`.
    pub fn solve_adjoint<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        self.solved("SparseLu::solve_adjoint", true, Conj::Yes, b.as_mat_ref(), exec)
    }

    /// The solve of a copy of `b`, returned: every owned form.
    fn solved<B: Conjugate<Canonical = T>>(
        &self,
        op: &'static str,
        transpose: bool,
        conj: Conj,
        b: faer::MatRef<'_, B>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        let mut x = scratch::copy(op, b)?;
        self.solve_with(op, transpose, conj, x.as_mut(), exec)?;
        Ok(x)
    }

    fn solve_with(
        &self,
        op: &'static str,
        transpose: bool,
        conj: Conj,
        mut b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        let b = b.as_mat_mut();
        check::dim(op, "B", super::Dim::Rows, self.symbolic.nrows(), b.nrows())?;
        if self.options.checks_finite() {
            check::finite(op, "B", b.as_ref(), check::Stored::All)?;
        }
        let params = SparseLuParams {
            threshold: self.options.get(Family::SparseLu),
        };
        let analysis = &self.symbolic.inner.analysis;
        kernel::solve_in_place(analysis, &self.factor, transpose, conj, b, exec, params);
        Ok(())
    }

    /// `det(A)`: the product of `U`'s diagonal and the signs of `P` and `Q` (it may overflow
    /// or underflow: [`SparseLu::slogdet`] does not).
    pub fn determinant(&self) -> Result<T, LinalgError> {
        Ok(det::product(self.pivots(), self.odd()))
    }

    /// `(sign, ln|det(A)|)`: see [`FullPivLu::slogdet`](super::FullPivLu::slogdet).
    pub fn slogdet(&self) -> Result<(T, T::Real), LinalgError> {
        Ok(det::slogdet(self.pivots(), self.odd()))
    }

    /// `ln|det(A)|`.
    pub fn log_abs_det(&self) -> Result<T::Real, LinalgError> {
        self.slogdet().map(|(_, l)| l)
    }

    /// `U`'s diagonal.
    fn pivots(&self) -> impl Iterator<Item = T> + '_ {
        self.factor
            .fronts()
            .iter()
            .flat_map(|f| (0..f.lu.ncols()).map(move |k| f.lu[(k, k)]))
    }

    /// Whether `P` and `Q` together are odd.
    fn odd(&self) -> bool {
        odd(&self.row_perm()) ^ odd(self.symbolic.col_perm().arrays().0)
    }
}

/// Whether the permutation `p` is odd: its length less its cycles.
fn odd(p: &[usize]) -> bool {
    let mut seen = vec![false; p.len()];
    let mut cycles = 0;
    for start in 0..p.len() {
        if seen[start] {
            continue;
        }
        cycles += 1;
        let mut k = start;
        while !seen[k] {
            seen[k] = true;
            k = p[k];
        }
    }
    (p.len() - cycles) % 2 == 1
}

impl<T: Field> faer::linalg::solvers::ShapeCore for SparseLu<T> {
    fn nrows(&self) -> usize {
        self.symbolic.nrows()
    }
    fn ncols(&self) -> usize {
        self.symbolic.nrows()
    }
}

/// faer's solver trait, so that code generic over faer's decompositions takes the factor: its
/// contract has no error and no executor, so the solves run serially on the calling thread
/// with no check but the shape (a mismatch panics, as faer's do).
impl<T: Field> faer::linalg::solvers::SolveCore<T> for SparseLu<T> {
    #[track_caller]
    fn solve_in_place_with_conj(&self, conj: Conj, rhs: MatMut<'_, T>) {
        assert_eq!(rhs.nrows(), self.symbolic.nrows(), "solve: shapes");
        let seq = teamalg_kernels::par::Seq;
        let analysis = &self.symbolic.inner.analysis;
        kernel::solve_in_place(analysis, &self.factor, false, conj, rhs, &seq, Default::default());
    }

    #[track_caller]
    fn solve_transpose_in_place_with_conj(&self, conj: Conj, rhs: MatMut<'_, T>) {
        assert_eq!(rhs.nrows(), self.symbolic.nrows(), "solve: shapes");
        let seq = teamalg_kernels::par::Seq;
        let analysis = &self.symbolic.inner.analysis;
        kernel::solve_in_place(analysis, &self.factor, true, conj, rhs, &seq, Default::default());
    }
}
