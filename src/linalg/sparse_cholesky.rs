//! Sparse Cholesky, `P A P^T = L L^H`: the analysis of a pattern ([`SymbolicCholesky`], made
//! once) and the factorizations of matrices with that pattern ([`SparseCholesky`]), whose
//! independent subtrees run on the team (`docs/sparse-cholesky.md`).

use std::sync::Arc;

use faer::dyn_stack::{MemStack, StackReq};
use faer::mat::{AsMatMut, AsMatRef};
use faer::sparse::linalg::cholesky::LltRef;
use faer::sparse::{FaerError, SparseColMatRef, SymbolicSparseColMatRef};
use faer::traits::math_utils::{abs2, from_real};
use faer::traits::{ComplexField, Conjugate, Index};
use faer::{Conj, Mat, MatMut, Side};
use teamalg_gates::Family;
use teamalg_kernels::par::Executor;
use teamalg_kernels::sparse_cholesky::{self as kernel, Analysis, Kind, PivotFailure, SparseLltParams};

use super::sparse_pattern::Pattern;
use super::{check, det, scratch};
use super::sparse_ordering::Of;
use super::{Dim, Field, LinalgError, Options, SparseOrdering};

/// The analysis of a sparse self-adjoint pattern for [`SparseCholesky`]: a fill-reducing
/// ordering (AMD by default, or another [`SparseOrdering`] by [`SymbolicCholesky::new_ordered`];
/// then a postorder of the elimination tree, so that every subtree is one contiguous run of
/// supernodes), faer's supernodal structure, and the supernodal tree the
/// factorization divides among the participants. Made once per pattern and shared by every
/// factorization of a matrix with that pattern (a clone shares it: it is reference-counted).
///
/// ```
/// use faer::sparse::{SparseColMat, Triplet};
/// use faer::Side;
/// use teamalg::{linalg::{SparseCholesky, SymbolicCholesky}, Exec};
///
/// // The lower triangle of the 1D Laplacian of 5 points, plus the identity.
/// let lower = |shift: f64| {
///     let mut t = Vec::new();
///     for i in 0..5usize {
///         t.push(Triplet::new(i, i, 2.0 + shift));
///         if i > 0 {
///             t.push(Triplet::new(i, i - 1, -1.0));
///         }
///     }
///     SparseColMat::<usize, f64>::try_new_from_triplets(5, 5, &t).unwrap()
/// };
/// let a = lower(1.0);
/// let symbolic = SymbolicCholesky::new(a.symbolic(), Side::Lower)?;
/// // Two matrices, one analysis: a time step's shift changes the values, not the pattern.
/// for shift in [1.0, 0.5] {
///     let a = lower(shift);
///     let chol = SparseCholesky::new_with_symbolic(&symbolic, a.as_ref(), &Exec::serial())?;
///     let x = chol.solve(faer::Mat::<f64>::ones(5, 1), &Exec::serial())?;
///     // The first row of A x: (2 + shift) x0 - x1 = 1.
///     assert!(((2.0 + shift) * x[(0, 0)] - x[(1, 0)] - 1.0).abs() < 1e-12);
/// }
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SymbolicCholesky {
    pub(super) inner: Arc<Symbolic>,
}

/// What a [`SymbolicCholesky`] shares.
#[derive(Debug)]
pub(super) struct Symbolic {
    pub(super) analysis: Analysis,
    /// The analysed pattern: a matrix factored with the analysis must have exactly it.
    pattern: Pattern,
    pub(super) side: Side,
    /// Each scalar type's scratch requirement, once sized ([`sparse_cholesky_scratch`]).
    scratch: std::sync::Mutex<Vec<(std::any::TypeId, StackReq)>>,
}

/// The refusal of faer's analysis as the facade's error.
pub(super) fn analysis_error(op: &'static str, e: FaerError) -> LinalgError {
    match e {
        FaerError::IndexOverflow => LinalgError::IndexOverflow { op },
        _ => LinalgError::OutOfMemory { op },
    }
}

impl SymbolicCholesky {
    /// Analyses the pattern of a self-adjoint matrix given by its `side` triangle (entries of
    /// the other triangle are ignored; both may be stored). Errors: [`LinalgError::NotSquare`],
    /// [`LinalgError::IndexOverflow`] (the factor has more entries than `usize` counts) and
    /// [`LinalgError::OutOfMemory`].
    pub fn new<I: Index>(
        pattern: SymbolicSparseColMatRef<'_, I>,
        side: Side,
    ) -> Result<SymbolicCholesky, LinalgError> {
        SymbolicCholesky::analyse("SymbolicCholesky::new", pattern, side, SparseOrdering::Amd)
    }

    /// [`SymbolicCholesky::new`] with the ordering `ordering` (AMD's by default). Errors: those
    /// of [`SymbolicCholesky::new`], and [`LinalgError::ShapeMismatch`] for a
    /// [`SparseOrdering::Custom`] ordering of another length than `A`'s order.
    pub fn new_ordered<I: Index>(
        pattern: SymbolicSparseColMatRef<'_, I>,
        side: Side,
        ordering: SparseOrdering<'_>,
    ) -> Result<SymbolicCholesky, LinalgError> {
        SymbolicCholesky::analyse("SymbolicCholesky::new_ordered", pattern, side, ordering)
    }

    fn analyse<I: Index>(
        op: &'static str,
        pattern: SymbolicSparseColMatRef<'_, I>,
        side: Side,
        ordering: SparseOrdering<'_>,
    ) -> Result<SymbolicCholesky, LinalgError> {
        let (n, m) = (pattern.nrows(), pattern.ncols());
        if n != m {
            return Err(LinalgError::NotSquare {
                op,
                operand: "A",
                rows: n,
                cols: m,
            });
        }
        let pattern = Pattern::copy(op, pattern)?;
        let order = ordering.order(op, pattern.as_ref(), Of::Symmetric(side))?;
        let analysis = Analysis::ordered(pattern.as_ref(), side, order.as_deref())
            .map_err(|e| analysis_error(op, e))?;
        Ok(SymbolicCholesky {
            inner: Arc::new(Symbolic {
                analysis,
                pattern,
                side,
                scratch: Default::default(),
            }),
        })
    }

    /// The order of the analysed matrix.
    pub fn nrows(&self) -> usize {
        self.inner.analysis.nrows()
    }

    /// The entries of the factor `L` (its supernodes' blocks, as faer lays them out).
    pub fn len_values(&self) -> usize {
        self.inner.analysis.symbolic().len_val()
    }

    /// The supernodes.
    pub fn supernodes(&self) -> usize {
        self.inner.analysis.supernodes()
    }

    /// The numeric factorization's work, in multiply-adds.
    pub fn work(&self) -> f64 {
        self.inner.analysis.total_work()
    }

    /// The ordering, `P` of `P A P^T = L L^H`: `perm().arrays().0[k]` is the column of `A`
    /// factored `k`-th.
    pub fn perm(&self) -> faer::perm::PermRef<'_, usize> {
        self.inner
            .analysis
            .symbolic()
            .perm()
            .expect("the analysis always orders")
    }

    /// faer's analysis, for faer's own calls on the factor ([`SparseCholesky::as_faer`]).
    pub fn as_faer(&self) -> &faer::sparse::linalg::cholesky::SymbolicCholesky<usize> {
        self.inner.analysis.symbolic()
    }

    /// The analysed triangle.
    pub fn side(&self) -> Side {
        self.inner.side
    }

    /// The checks and the numeric factorization of `kind` of `a` (scratch from `stack`, which
    /// holds [`sparse_cholesky_scratch`]): the factor's values. A failed pivot is
    /// `NotPositiveDefinite` (`L L^H`) or `Singular` (`L D L^H`), naming the column of `A`.
    pub(super) fn factor<I: Index, T: Field>(
        &self,
        op: &'static str,
        kind: Kind,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
        stack: &mut MemStack,
    ) -> Result<Vec<T>, LinalgError> {
        let mut copy = Vec::new();
        let a = self.matching(op, a, &mut copy)?;
        if options.checks_finite() {
            finite_triangle(op, a, self.inner.side)?;
        }
        let analysis = &self.inner.analysis;
        let mut values = scratch::vec(op, analysis.symbolic().len_val(), T::zero_impl())?;
        let params = SparseLltParams {
            threshold: options.get(Family::SparseCholesky),
        };
        let side = self.inner.side;
        let factored = match kind {
            Kind::Llt => kernel::llt_in_place(analysis, a, side, &mut values, exec, params, stack),
            Kind::Ldlt => kernel::ldlt_in_place(analysis, a, side, &mut values, exec, params, stack),
        };
        factored.map_err(|PivotFailure { column }| {
            let index = self.perm().arrays().0[column];
            match kind {
                Kind::Llt => LinalgError::NotPositiveDefinite { op, index },
                Kind::Ldlt => LinalgError::Singular { op, index },
            }
        })?;
        Ok(values)
    }

    /// Overwrites `b` with `A^-1 b` (`conj(A)^-1 b` for `Conj::Yes`), `A`'s factor of `kind`
    /// in `values`, on `exec`, after the checks of `b` (its rows; its finiteness when `options`
    /// ask).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn solve<T: Field>(
        &self,
        op: &'static str,
        kind: Kind,
        values: &[T],
        options: &Options,
        conj: Conj,
        b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        check::dim(op, "B", Dim::Rows, self.nrows(), b.nrows())?;
        if options.checks_finite() {
            check::finite(op, "B", b.as_ref(), check::Stored::All)?;
        }
        let analysis = &self.inner.analysis;
        let params = SparseLltParams {
            threshold: options.get(Family::SparseCholesky),
        };
        let req = kernel::solve_in_place_scratch::<T>(analysis, b.ncols());
        scratch::with(op, req, |stack| {
            kernel::solve_in_place(analysis, kind, values, conj, b, exec, params, stack)
        })
    }

    /// The solve for faer's `SolveCore`: on the caller alone, no check but the shape (a
    /// mismatch panics, as faer's solves do).
    #[track_caller]
    pub(super) fn serial_solve<T: Field>(
        &self,
        kind: Kind,
        values: &[T],
        conj: Conj,
        rhs: MatMut<'_, T>,
    ) {
        assert_eq!(rhs.nrows(), self.nrows(), "solve: shapes");
        let analysis = &self.inner.analysis;
        let req = kernel::solve_in_place_scratch::<T>(analysis, rhs.ncols());
        let mut mem = faer::dyn_stack::MemBuffer::new(req);
        let stack = MemStack::new(&mut mem);
        let params = SparseLltParams::default();
        let seq = teamalg_kernels::par::Seq;
        kernel::solve_in_place(analysis, kind, values, conj, rhs, &seq, params, stack);
    }

    /// `a` with this analysis's pattern ([`Pattern::matching`]).
    pub(super) fn matching<'a, I: Index, T: Field>(
        &'a self,
        op: &'static str,
        a: SparseColMatRef<'a, I, T>,
        copy: &'a mut Vec<T>,
    ) -> Result<SparseColMatRef<'a, usize, T>, LinalgError> {
        self.inner.pattern.matching(op, a, copy)
    }
}

/// The first non-finite stored value of `a`'s `side` triangle (the entries the factorization
/// reads), as [`LinalgError::NotFinite`].
fn finite_triangle<T: Field>(
    op: &'static str,
    a: SparseColMatRef<'_, usize, T>,
    side: Side,
) -> Result<(), LinalgError> {
    for j in 0..a.ncols() {
        for (i, v) in a.row_idx_of_col(j).zip(a.val_of_col(j)) {
            let read = match side {
                Side::Lower => i >= j,
                Side::Upper => i <= j,
            };
            if read && !faer::traits::math_utils::is_finite(v) {
                return Err(check::not_finite(op, "A", i, j));
            }
        }
    }
    Ok(())
}

/// The factorization `P A P^T = L L^H` of a sparse Hermitian positive definite matrix: faer's
/// supernodal factor, made on the team. The independent subtrees of the elimination tree run
/// on different participants (claimed heaviest first), and the large supernodes near the root
/// run their dense work on the whole team; a small matrix, or one whose tree leaves nothing
/// to run at once, is factored serially by faer's own step, with faer's bits. Solves use
/// faer's supernodal solve, the columns of many right-hand sides spread over the team.
///
/// ```
/// use faer::sparse::{SparseColMat, Triplet};
/// use faer::{Mat, Side};
/// use teamalg::{linalg::{self, SparseCholesky}, Exec};
///
/// // The 2D Laplacian of a 30 x 30 grid (lower triangle), shifted to be definite.
/// let k = 30;
/// let mut t = Vec::new();
/// for x in 0..k {
///     for y in 0..k {
///         let i = x * k + y;
///         t.push(Triplet::new(i, i, 4.01));
///         if x + 1 < k { t.push(Triplet::new(i + k, i, -1.0)); }
///         if y + 1 < k { t.push(Triplet::new(i + 1, i, -1.0)); }
///     }
/// }
/// let a = SparseColMat::<usize, f64>::try_new_from_triplets(k * k, k * k, &t).unwrap();
/// let exec = Exec::serial();
/// let chol = SparseCholesky::new(a.as_ref(), Side::Lower, &exec)?;
/// let b = Mat::<f64>::from_fn(k * k, 2, |i, j| (i + j) as f64);
/// let x = chol.solve(&b, &exec)?;
/// assert!(chol.determinant()? > 0.0);
///
/// // Not positive definite: the column is named in A's numbering.
/// let mut t2 = t.clone();
/// t2[0] = Triplet::new(0, 0, -4.0);
/// let bad = SparseColMat::<usize, f64>::try_new_from_triplets(k * k, k * k, &t2).unwrap();
/// let err = SparseCholesky::new(bad.as_ref(), Side::Lower, &exec).unwrap_err();
/// assert_eq!(
///     err,
///     linalg::LinalgError::NotPositiveDefinite { op: "SparseCholesky::new", index: 0 }
/// );
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
#[derive(Debug)]
pub struct SparseCholesky<T> {
    symbolic: SymbolicCholesky,
    values: Vec<T>,
    options: Options,
}

/// The scratch [`SparseCholesky::new_with_scratch`] needs for an analysis.
pub fn sparse_cholesky_scratch<T: ComplexField + 'static>(symbolic: &SymbolicCholesky) -> StackReq {
    // Sizing it walks every supernode twice (faer's and teamalg's requirements), as long as a
    // small factorization's tenth: each scalar type's is kept with the analysis.
    let key = std::any::TypeId::of::<T>();
    let mut kept = symbolic.inner.scratch.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, req)) = kept.iter().find(|(k, _)| *k == key) {
        return req;
    }
    let req = kernel::llt_in_place_scratch::<T>(&symbolic.inner.analysis);
    kept.push((key, req));
    req
}

impl<T: Field> SparseCholesky<T> {
    /// Analyses and factors `a`, a self-adjoint matrix given by its `side` triangle, on
    /// `exec`. Errors: those of [`SymbolicCholesky::new`] and
    /// [`SparseCholesky::new_with_symbolic`].
    pub fn new<I: Index>(
        a: SparseColMatRef<'_, I, T>,
        side: Side,
        exec: &(impl Executor + ?Sized),
    ) -> Result<SparseCholesky<T>, LinalgError> {
        let symbolic = SymbolicCholesky::new(a.symbolic(), side)
            .map_err(|e| e.named("SparseCholesky::new"))?;
        SparseCholesky::new_with(&symbolic, a, exec, &Options::new())
    }

    /// Factors `a`, whose pattern `symbolic` analysed (the triangle it was given), on `exec`.
    /// Errors: [`LinalgError::NotSquare`], [`LinalgError::ShapeMismatch`] (another order),
    /// [`LinalgError::PatternMismatch`] (another pattern: analyse it anew),
    /// [`LinalgError::NotFinite`] (a stored value), [`LinalgError::NotPositiveDefinite`] (the
    /// column of `A` whose pivot was not positive), [`LinalgError::OutOfMemory`]. `a` is only
    /// read.
    pub fn new_with_symbolic<I: Index>(
        symbolic: &SymbolicCholesky,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<SparseCholesky<T>, LinalgError> {
        SparseCholesky::new_with(symbolic, a, exec, &Options::new())
    }

    /// [`SparseCholesky::new_with_symbolic`] with the call's [`Options`] (the threshold of
    /// [`Family::SparseCholesky`], the finiteness check), which the solves keep.
    pub fn new_with<I: Index>(
        symbolic: &SymbolicCholesky,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<SparseCholesky<T>, LinalgError> {
        const OP: &str = "SparseCholesky::new";
        let req = sparse_cholesky_scratch::<T>(symbolic);
        scratch::with(OP, req, |stack| {
            SparseCholesky::factor(OP, symbolic, a, exec, options, stack)
        })?
    }

    /// [`SparseCholesky::new_with`] taking its scratch from `stack` (at least
    /// [`sparse_cholesky_scratch`]); it allocates the factor's values (and a compressed copy
    /// of `a`'s when `a` is not compressed). Errors: [`LinalgError::ScratchTooSmall`] and
    /// those of [`SparseCholesky::new_with_symbolic`].
    pub fn new_with_scratch<I: Index>(
        symbolic: &SymbolicCholesky,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
        stack: &mut MemStack,
    ) -> Result<SparseCholesky<T>, LinalgError> {
        const OP: &str = "SparseCholesky::new_with_scratch";
        check::scratch(OP, stack, sparse_cholesky_scratch::<T>(symbolic))?;
        SparseCholesky::factor(OP, symbolic, a, exec, options, stack)
    }

    /// The checks and the factorization with scratch that holds enough.
    fn factor<I: Index>(
        op: &'static str,
        symbolic: &SymbolicCholesky,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
        stack: &mut MemStack,
    ) -> Result<SparseCholesky<T>, LinalgError> {
        Ok(SparseCholesky {
            values: symbolic.factor(op, Kind::Llt, a, exec, options, stack)?,
            symbolic: symbolic.clone(),
            options: *options,
        })
    }

    /// The analysis the factor was made with.
    pub fn symbolic(&self) -> &SymbolicCholesky {
        &self.symbolic
    }

    /// The factor's values, in faer's supernodal layout: each supernode's block, column-major,
    /// its diagonal block on top. The strict upper triangle of a diagonal block is not part of
    /// the factor (it holds what the dense kernel that factored the block left there).
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The factor as faer's [`LltRef`], for faer's own calls (its solves, its
    /// [`faer::sparse::linalg::solvers`] traits).
    pub fn as_faer(&self) -> LltRef<'_, usize, T> {
        LltRef::new(self.symbolic.as_faer(), &self.values)
    }

    /// Overwrites `b` with `A^-1 b`, on `exec` (the columns spread over the team when that
    /// pays). Errors: [`LinalgError::ShapeMismatch`] (`b`'s rows), [`LinalgError::NotFinite`]
    /// (when the options check), [`LinalgError::OutOfMemory`]; `b` is then unchanged.
    pub fn solve_in_place(
        &self,
        b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.solve_conj("SparseCholesky::solve_in_place", Conj::No, b, exec)
    }

    /// `A^-1 b` as a new matrix (`b` may be a conjugated view), on `exec`. Errors: those of
    /// [`SparseCholesky::solve_in_place`].
    pub fn solve<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        const OP: &str = "SparseCholesky::solve";
        let mut x = scratch::copy(OP, b.as_mat_ref())?;
        self.solve_conj(OP, Conj::No, x.as_mut(), exec)?;
        Ok(x)
    }

    /// Overwrites `b` with `A^-T b` (`conj(A)^-1 b`: `A` is Hermitian), on `exec`.
    pub fn solve_transpose_in_place(
        &self,
        b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.solve_conj("SparseCholesky::solve_transpose_in_place", Conj::Yes, b, exec)
    }

    /// `A^-T b` as a new matrix, on `exec`.
    pub fn solve_transpose<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        const OP: &str = "SparseCholesky::solve_transpose";
        let mut x = scratch::copy(OP, b.as_mat_ref())?;
        self.solve_conj(OP, Conj::Yes, x.as_mut(), exec)?;
        Ok(x)
    }

    /// Overwrites `b` with `A^-H b`: `A` is Hermitian, so this is
    /// [`SparseCholesky::solve_in_place`]; for code written against every factorization.
    pub fn solve_adjoint_in_place(
        &self,
        b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.solve_conj("SparseCholesky::solve_adjoint_in_place", Conj::No, b, exec)
    }

    /// `A^-H b` as a new matrix (see [`SparseCholesky::solve_adjoint_in_place`]).
    pub fn solve_adjoint<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        const OP: &str = "SparseCholesky::solve_adjoint";
        let mut x = scratch::copy(OP, b.as_mat_ref())?;
        self.solve_conj(OP, Conj::No, x.as_mut(), exec)?;
        Ok(x)
    }

    /// Overwrites `b` with the solution `X` of `X A = B`, on `exec` (`X A = B` is
    /// `A^T X^T = B^T`). Errors: those of [`SparseCholesky::solve_in_place`], about `B`'s
    /// columns.
    pub fn rsolve_in_place(
        &self,
        mut b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        let bt = b.as_mat_mut().transpose_mut();
        self.solve_conj("SparseCholesky::rsolve_in_place", Conj::Yes, bt, exec)
            .map_err(super::solves::as_passed)
    }

    /// The solution `X` of `X A = B` as a new matrix, on `exec`.
    pub fn rsolve<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        let mut x = scratch::copy("SparseCholesky::rsolve", b.as_mat_ref())?;
        self.rsolve_in_place(x.as_mut(), exec)?;
        Ok(x)
    }

    fn solve_conj(
        &self,
        op: &'static str,
        conj: Conj,
        mut b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        let b = b.as_mat_mut();
        let (values, options) = (&self.values, &self.options);
        self.symbolic
            .solve(op, Kind::Llt, values, options, conj, b, exec)
    }

    /// `det(A)`, the product of the squared diagonal of `L` (it may overflow or underflow:
    /// [`SparseCholesky::slogdet`] does not).
    pub fn determinant(&self) -> Result<T, LinalgError> {
        Ok(det::product(self.diagonal_squares(), false))
    }

    /// `(sign, ln|det(A)|)`, the sign 1: see [`FullPivLu::slogdet`](super::FullPivLu::slogdet).
    pub fn slogdet(&self) -> Result<(T, T::Real), LinalgError> {
        Ok(det::slogdet(self.diagonal_squares(), false))
    }

    /// `ln|det(A)|`.
    pub fn log_abs_det(&self) -> Result<T::Real, LinalgError> {
        self.slogdet().map(|(_, l)| l)
    }

    /// `|L_kk|^2` for every column `k`.
    fn diagonal_squares(&self) -> impl Iterator<Item = T> + '_ {
        let analysis = &self.symbolic.inner.analysis;
        let supernodes = analysis.supernodes();
        (0..supernodes).flat_map(move |k| {
            let s = analysis.supernodal();
            let cpv = s.col_ptr_for_val();
            let (start, end) = (s.supernode_begin()[k], s.supernode_end()[k]);
            let rows = end - start + s.supernode(k).pattern().len();
            (0..end - start).map(move |j| from_real(&abs2(&self.values[cpv[k] + j * rows + j])))
        })
    }
}

impl<T: Field> faer::linalg::solvers::ShapeCore for SparseCholesky<T> {
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
impl<T: Field> faer::linalg::solvers::SolveCore<T> for SparseCholesky<T> {
    #[track_caller]
    fn solve_in_place_with_conj(&self, conj: Conj, rhs: MatMut<'_, T>) {
        self.symbolic.serial_solve(Kind::Llt, &self.values, conj, rhs);
    }

    #[track_caller]
    fn solve_transpose_in_place_with_conj(&self, conj: Conj, rhs: MatMut<'_, T>) {
        // A^T = conj(A) for a Hermitian A.
        let conj = conj.compose(Conj::Yes);
        self.symbolic.serial_solve(Kind::Llt, &self.values, conj, rhs);
    }
}
