//! Sparse products, checked: `sparse_dense_matmul` (`C = alpha A B` or `C += alpha A B`, `A`
//! sparse in faer's CSC form) and `sparse_sparse_matmul` (`alpha A B`, both sparse).

use faer::mat::{AsMatMut, AsMatRef};
use faer::sparse::{FaerError, SparseColMat, SparseColMatRef};
use faer::traits::math_utils::is_finite;
use faer::traits::{Conjugate, Index};
use faer::Accum;
use teamalg_gates::Family;
use teamalg_kernels::par::Executor;
use teamalg_kernels::sparse::{self, SparseParams};

use super::check::{self, Stored};
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
    let (ab, cb) = ((b.nrows(), b.ncols()), (c.nrows(), c.ncols()));
    super::matmul::shapes(OP, (a.nrows(), a.ncols()), ab, cb)?;
    if options.checks_finite() {
        sparse_finite(OP, "A", a.canonical())?;
        check::finite(OP, "B", b.canonical(), Stored::All)?;
        check::finite_scalar(OP, "alpha", &alpha)?;
        if accum == Accum::Add {
            check::finite(OP, "C", c.as_ref(), Stored::All)?;
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
    operand: &'static str,
    a: SparseColMatRef<'_, I, T>,
) -> Result<(), LinalgError> {
    for j in 0..a.ncols() {
        let vals = a.val_of_col(j);
        if all_finite(vals) {
            continue;
        }
        if let Some(p) = vals.iter().position(|x| !is_finite(x)) {
            let row = a.row_idx_of_col_raw(j)[p].zx();
            return Err(check::not_finite(op, operand, row, j));
        }
    }
    Ok(())
}

/// `alpha A B` with `A` and `B` sparse (faer's CSC, row indices sorted or not), as a new sparse
/// matrix with sorted row indices, on `exec`: the columns of `B` are cut into chunks of about
/// equal multiply-adds when the gate finds that splitting pays (family `SparseProduct`), and the
/// result is exactly faer's serial product. Errors: `ShapeMismatch`, `NotFinite` (a stored
/// value of `A` or `B`, or `alpha`), `IndexOverflow` (the product has more entries than the
/// index type `I` can count: `i32::MAX` for `u32`), `OutOfMemory`.
///
/// ```
/// use faer::sparse::{SparseColMat, Triplet};
/// use teamalg::{linalg, Exec};
///
/// // A permutation times itself: rows (0 1 2) -> (1 2 0), twice.
/// let t = [Triplet::new(1usize, 0usize, 1.0), Triplet::new(2, 1, 1.0), Triplet::new(0, 2, 1.0)];
/// let p = SparseColMat::<usize, f64>::try_new_from_triplets(3, 3, &t).unwrap();
/// let p2 = linalg::sparse_sparse_matmul(p.as_ref(), p.as_ref(), 1.0, &Exec::serial())?;
/// assert_eq!(p2.as_ref().get(2, 0), Some(&1.0));
/// assert_eq!(p2.compute_nnz(), 3);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
pub fn sparse_sparse_matmul<I: Index, T: Field, A, B>(
    a: SparseColMatRef<'_, I, A>,
    b: SparseColMatRef<'_, I, B>,
    alpha: T,
    exec: &(impl Executor + ?Sized),
) -> Result<SparseColMat<I, T>, LinalgError>
where
    A: Conjugate<Canonical = T>,
    B: Conjugate<Canonical = T>,
{
    sparse_sparse_matmul_with(a, b, alpha, exec, &Options::new())
}

/// [`sparse_sparse_matmul`] with the call's [`Options`].
pub fn sparse_sparse_matmul_with<I: Index, T: Field, A, B>(
    a: SparseColMatRef<'_, I, A>,
    b: SparseColMatRef<'_, I, B>,
    alpha: T,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<SparseColMat<I, T>, LinalgError>
where
    A: Conjugate<Canonical = T>,
    B: Conjugate<Canonical = T>,
{
    const OP: &str = "sparse_sparse_matmul";
    check::dim(OP, "B", Dim::Rows, a.ncols(), b.nrows())?;
    if options.checks_finite() {
        sparse_finite(OP, "A", a.canonical())?;
        sparse_finite(OP, "B", b.canonical())?;
        check::finite_scalar(OP, "alpha", &alpha)?;
    }
    let params = SparseParams {
        threshold: options.get(Family::SparseProduct),
    };
    sparse::sparse_sparse_matmul(a, b, alpha, exec, params).map_err(|e| product_error(OP, e))
}

/// What a faer error building a product means to the caller.
fn product_error(op: &'static str, e: FaerError) -> LinalgError {
    match e {
        FaerError::IndexOverflow => LinalgError::IndexOverflow { op },
        // faer's errors are `OutOfMemory` and `IndexOverflow` (its enum may grow; a new kind
        // is still a product that could not be built).
        _ => LinalgError::OutOfMemory { op },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faer_errors_keep_their_meaning() {
        let e = product_error("sparse_sparse_matmul", FaerError::IndexOverflow);
        assert_eq!(e, LinalgError::IndexOverflow { op: "sparse_sparse_matmul" });
        assert!(e.to_string().contains("index type"));
        let e = product_error("sparse_sparse_matmul", FaerError::OutOfMemory);
        assert_eq!(e, LinalgError::OutOfMemory { op: "sparse_sparse_matmul" });
    }
}
