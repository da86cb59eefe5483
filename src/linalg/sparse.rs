//! `sparse_dense_matmul`: `C = alpha A B` or `C += alpha A B` with `A` sparse (faer's CSC),
//! checked.

use faer::mat::{AsMatMut, AsMatRef};
use faer::sparse::SparseColMatRef;
use faer::traits::math_utils::is_finite;
use faer::traits::{Conjugate, Index};
use faer::Accum;
use teamalg_gates::Family;
use teamalg_kernels::par::Executor;
use teamalg_kernels::sparse::{self, SparseParams};

use super::check::{self, Part};
use super::scan::all_finite;
use super::{Dim, Field, LinalgError, Options};

/// `C = alpha A B` (`Accum::Replace`) or `C += alpha A B` (`Accum::Add`) with `A` sparse, in
/// faer's compressed-column form, and `B` dense, on `exec`: the columns of `B` are split among
/// the participants when the gate finds that it pays (family `SparseProduct`, `nnz(A)` times
/// the columns of `B` multiply-adds). Row indices need not be sorted. `A` and `B` may be
/// conjugated.
///
/// ```
/// use faer::sparse::{SparseColMat, Triplet};
/// use faer::{Accum, Mat};
/// use teamalg::{linalg, Exec};
///
/// // The 1D Laplacian of 4 points.
/// let mut t = Vec::new();
/// for i in 0..4usize {
///     t.push(Triplet::new(i, i, 2.0));
///     if i > 0 {
///         t.push(Triplet::new(i, i - 1, -1.0));
///         t.push(Triplet::new(i - 1, i, -1.0));
///     }
/// }
/// let a = SparseColMat::<usize, f64>::try_new_from_triplets(4, 4, &t).unwrap();
/// let b = Mat::<f64>::ones(4, 3);
/// let mut c = Mat::<f64>::zeros(4, 3);
/// linalg::sparse_dense_matmul(&mut c, Accum::Replace, a.as_ref(), &b, 1.0, &Exec::serial())?;
/// assert_eq!((c[(0, 0)], c[(1, 0)], c[(3, 2)]), (1.0, 0.0, 1.0));
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
pub fn sparse_dense_matmul<I: Index, T: Field, A, B>(
    c: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
    accum: Accum,
    a: SparseColMatRef<'_, I, A>,
    b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
    alpha: T,
    exec: &(impl Executor + ?Sized),
) -> Result<(), LinalgError>
where
    A: Conjugate<Canonical = T>,
    B: Conjugate<Canonical = T>,
{
    sparse_dense_matmul_with(c, accum, a, b, alpha, exec, &Options::new())
}

/// [`sparse_dense_matmul`] with the call's [`Options`].
pub fn sparse_dense_matmul_with<I: Index, T: Field, A, B>(
    mut c: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
    accum: Accum,
    a: SparseColMatRef<'_, I, A>,
    b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
    alpha: T,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<(), LinalgError>
where
    A: Conjugate<Canonical = T>,
    B: Conjugate<Canonical = T>,
{
    const OP: &str = "sparse_dense_matmul";
    let (b, c) = (b.as_mat_ref(), c.as_mat_mut());
    check::dim(OP, "A", Dim::Rows, c.nrows(), a.nrows())?;
    check::dim(OP, "B", Dim::Cols, c.ncols(), b.ncols())?;
    check::dim(OP, "B", Dim::Rows, a.ncols(), b.nrows())?;
    if options.checks_finite() {
        sparse_finite(OP, a.canonical())?;
        check::finite(OP, "B", b.canonical(), Part::All)?;
        check::finite_scalar(OP, "alpha", &alpha)?;
        if accum == Accum::Add {
            check::finite(OP, "C", c.as_ref(), Part::All)?;
        }
    }
    let params = SparseParams {
        threshold: options.get(Family::SparseProduct),
    };
    sparse::sparse_dense_matmul(c, accum, a, b, alpha, exec, params);
    Ok(())
}

/// The stored entries of `a` must be finite; a bad one is reported with its row and column.
fn sparse_finite<I: Index, T: Field>(
    op: &'static str,
    a: SparseColMatRef<'_, I, T>,
) -> Result<(), LinalgError> {
    for j in 0..a.ncols() {
        let vals = a.val_of_col(j);
        if all_finite(vals) {
            continue;
        }
        if let Some(p) = vals.iter().position(|x| !is_finite(x)) {
            let row = a.row_idx_of_col_raw(j)[p].zx();
            return Err(LinalgError::NotFinite {
                op,
                operand: "A",
                row,
                col: j,
            });
        }
    }
    Ok(())
}
