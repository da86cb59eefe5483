//! Sparse `LDL^H` without pivoting, `P A P^T = L D L^H`, on an analysis made for the sparse
//! Cholesky ([`SymbolicCholesky`]): for a self-adjoint matrix that need not be definite but
//! whose pivots, in the analysis's order, stay away from zero (a quasi-definite KKT matrix, a
//! shifted or diagonally dominant one). The same tree, subtrees and top as
//! [`SparseCholesky`](super::SparseCholesky) (`docs/sparse-cholesky.md`).

use std::cmp::Ordering;

use faer::mat::{AsMatMut, AsMatRef};
use faer::sparse::linalg::cholesky::LdltRef;
use faer::sparse::SparseColMatRef;
use faer::traits::math_utils::{from_real, real};
use faer::traits::{Conjugate, Index};
use faer::{Conj, Mat, MatMut, Side};
use teamalg_kernels::par::Executor;
use teamalg_kernels::sparse_cholesky::Kind;

use super::sparse_cholesky::{sparse_cholesky_scratch, SymbolicCholesky};
use super::{det, scratch};
use super::{Field, Inertia, LinalgError, Options};

/// The factorization `P A P^T = L D L^H` of a sparse self-adjoint matrix, without pivoting:
/// `L` unit lower triangular, `D` real diagonal (on the diagonal of each supernode's diagonal
/// block, faer's layout). A zero pivot is [`LinalgError::Singular`], naming the column of `A`,
/// and so is a pivot that grew past the largest finite number (faer's step stops at either);
/// no pivoting means a tiny pivot is not refused but grows the factor (use the dense
/// [`Lblt`](super::Lblt) for an indefinite matrix that needs pivoting).
///
/// ```
/// use faer::sparse::{SparseColMat, Triplet};
/// use faer::{Mat, Side};
/// use teamalg::{linalg::{SparseLdlt, SymbolicCholesky}, Exec};
///
/// // A saddle point: [[2 I, B^T], [B, -I]] with B = [1 1], lower triangle.
/// let t = [
///     Triplet::new(0, 0, 2.0),
///     Triplet::new(1, 1, 2.0),
///     Triplet::new(2, 2, -1.0),
///     Triplet::new(2, 0, 1.0),
///     Triplet::new(2, 1, 1.0),
/// ];
/// let a = SparseColMat::<usize, f64>::try_new_from_triplets(3, 3, &t).unwrap();
/// let symbolic = SymbolicCholesky::new(a.symbolic(), Side::Lower)?;
/// let ldlt = SparseLdlt::new_with_symbolic(&symbolic, a.as_ref(), &Exec::serial())?;
/// let inertia = ldlt.inertia();
/// assert_eq!((inertia.positive, inertia.negative, inertia.zero), (2, 1, 0));
/// let x = ldlt.solve(Mat::<f64>::from_fn(3, 1, |i, _| [4.0, 4.0, 0.0][i]), &Exec::serial())?;
/// // 2 x0 + x2 = 4, 2 x1 + x2 = 4, x0 + x1 - x2 = 0: x = (1, 1, 2).
/// assert!((x[(0, 0)] - 1.0).abs() < 1e-12 && (x[(2, 0)] - 2.0).abs() < 1e-12);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
#[derive(Debug)]
pub struct SparseLdlt<T> {
    symbolic: SymbolicCholesky,
    values: Vec<T>,
    options: Options,
}

impl<T: Field> SparseLdlt<T> {
    /// Analyses and factors `a`, a self-adjoint matrix given by its `side` triangle, on
    /// `exec`. Errors: those of [`SymbolicCholesky::new`] and
    /// [`SparseLdlt::new_with_symbolic`].
    pub fn new<I: Index>(
        a: SparseColMatRef<'_, I, T>,
        side: Side,
        exec: &(impl Executor + ?Sized),
    ) -> Result<SparseLdlt<T>, LinalgError> {
        let symbolic = SymbolicCholesky::new(a.symbolic(), side)
            .map_err(|e| e.named("SparseLdlt::new"))?;
        SparseLdlt::new_with(&symbolic, a, exec, &Options::new())
    }

    /// Factors `a`, whose pattern `symbolic` analysed, on `exec`. Errors: as
    /// [`SparseCholesky::new_with_symbolic`](super::SparseCholesky::new_with_symbolic), with
    /// [`LinalgError::Singular`] (a zero pivot, the column of `A`) in place of not positive
    /// definite. `a` is only read.
    pub fn new_with_symbolic<I: Index>(
        symbolic: &SymbolicCholesky,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<SparseLdlt<T>, LinalgError> {
        SparseLdlt::new_with(symbolic, a, exec, &Options::new())
    }

    /// [`SparseLdlt::new_with_symbolic`] with the call's [`Options`] (the threshold of
    /// [`Family::SparseCholesky`], the finiteness check), which the solves keep.
    pub fn new_with<I: Index>(
        symbolic: &SymbolicCholesky,
        a: SparseColMatRef<'_, I, T>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<SparseLdlt<T>, LinalgError> {
        const OP: &str = "SparseLdlt::new";
        let req = sparse_cholesky_scratch::<T>(symbolic);
        let values = scratch::with(OP, req, |stack| {
            symbolic.factor(OP, Kind::Ldlt, a, exec, options, stack)
        })??;
        Ok(SparseLdlt {
            symbolic: symbolic.clone(),
            values,
            options: *options,
        })
    }

    /// The analysis the factor was made with.
    pub fn symbolic(&self) -> &SymbolicCholesky {
        &self.symbolic
    }

    /// The factor's values, in faer's supernodal layout (`D` on the diagonal of each
    /// diagonal block, `L`'s unit diagonal implicit, nothing above it).
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The factor as faer's [`LdltRef`].
    pub fn as_faer(&self) -> LdltRef<'_, usize, T> {
        LdltRef::new(self.symbolic.as_faer(), &self.values)
    }

    /// `D`'s entries, in the analysis's order.
    fn pivots(&self) -> impl Iterator<Item = T::Real> + '_ {
        let analysis = &self.symbolic.inner.analysis;
        (0..analysis.supernodes()).flat_map(move |k| {
            let s = analysis.supernodal();
            let cpv = s.col_ptr_for_val();
            let (start, end) = (s.supernode_begin()[k], s.supernode_end()[k]);
            let rows = end - start + s.supernode(k).pattern().len();
            (0..end - start).map(move |j| real(&self.values[cpv[k] + j * rows + j]))
        })
    }

    /// The inertia of `A` (Sylvester's law: the signs of `D`, all finite and nonzero after a
    /// factorization that succeeded).
    pub fn inertia(&self) -> Inertia {
        let zero = faer::traits::math_utils::zero::<T::Real>();
        Inertia::of_signs(
            self.pivots()
                .map(|d| d.partial_cmp(&zero).unwrap_or(Ordering::Equal)),
        )
    }

    /// `det(A)`, the product of `D` (it may overflow: [`SparseLdlt::slogdet`] does not).
    pub fn determinant(&self) -> Result<T, LinalgError> {
        Ok(det::product(self.pivots().map(|d| from_real(&d)), false))
    }

    /// `(sign, ln|det(A)|)`.
    pub fn slogdet(&self) -> Result<(T, T::Real), LinalgError> {
        Ok(det::slogdet(self.pivots().map(|d| from_real(&d)), false))
    }

    /// `ln|det(A)|`.
    pub fn log_abs_det(&self) -> Result<T::Real, LinalgError> {
        self.slogdet().map(|(_, l)| l)
    }

    /// Overwrites `b` with `A^-T b` (`conj(A)^-1 b`), on `exec`.
    pub fn solve_transpose_in_place(
        &self,
        b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.solve_conj("SparseLdlt::solve_transpose_in_place", Conj::Yes, b, exec)
    }

    /// `A^-H b` as a new matrix: `A` is self-adjoint, so this is [`SparseLdlt::solve`].
    pub fn solve_adjoint<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        const OP: &str = "SparseLdlt::solve_adjoint";
        let mut x = scratch::copy(OP, b.as_mat_ref())?;
        self.solve_conj(OP, Conj::No, x.as_mut(), exec)?;
        Ok(x)
    }

    /// Overwrites `b` with `A^-1 b`, on `exec` (the columns spread over the team when that
    /// pays). Errors: [`LinalgError::ShapeMismatch`] (`b`'s rows), [`LinalgError::NotFinite`]
    /// (when the options check), [`LinalgError::OutOfMemory`]; `b` is then unchanged.
    pub fn solve_in_place(
        &self,
        b: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError> {
        self.solve_conj("SparseLdlt::solve_in_place", Conj::No, b, exec)
    }

    /// `A^-1 b` as a new matrix (`b` may be a conjugated view), on `exec`.
    pub fn solve<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        const OP: &str = "SparseLdlt::solve";
        let mut x = scratch::copy(OP, b.as_mat_ref())?;
        self.solve_conj(OP, Conj::No, x.as_mut(), exec)?;
        Ok(x)
    }

    /// `A^-T b` (`conj(A)^-1 b`: `A` is self-adjoint) as a new matrix, on `exec`.
    pub fn solve_transpose<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        const OP: &str = "SparseLdlt::solve_transpose";
        let mut x = scratch::copy(OP, b.as_mat_ref())?;
        self.solve_conj(OP, Conj::Yes, x.as_mut(), exec)?;
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
            .solve(op, Kind::Ldlt, values, options, conj, b, exec)
    }
}

impl<T: Field> faer::linalg::solvers::ShapeCore for SparseLdlt<T> {
    fn nrows(&self) -> usize {
        self.symbolic.nrows()
    }
    fn ncols(&self) -> usize {
        self.symbolic.nrows()
    }
}

/// faer's solver trait: serial, on the calling thread, no check but the shape.
impl<T: Field> faer::linalg::solvers::SolveCore<T> for SparseLdlt<T> {
    #[track_caller]
    fn solve_in_place_with_conj(&self, conj: Conj, rhs: MatMut<'_, T>) {
        self.symbolic.serial_solve(Kind::Ldlt, &self.values, conj, rhs);
    }

    #[track_caller]
    fn solve_transpose_in_place_with_conj(&self, conj: Conj, rhs: MatMut<'_, T>) {
        let conj = conj.compose(Conj::Yes);
        self.symbolic.serial_solve(Kind::Ldlt, &self.values, conj, rhs);
    }
}
