//! The fill-reducing ordering a sparse analysis uses (`docs/sparse-ordering.md`).

use faer::perm::PermRef;
use faer::sparse::SymbolicSparseColMatRef;
use faer::Side;

#[cfg(feature = "metis")]
use super::sparse_cholesky::analysis_error;
use super::{Dim, LinalgError};

/// How a sparse analysis ([`SymbolicCholesky::new_ordered`](super::SymbolicCholesky::new_ordered),
/// [`SymbolicLu::new_ordered`](super::SymbolicLu::new_ordered),
/// [`SymbolicQr::new_ordered`](super::SymbolicQr::new_ordered)) orders the columns. Every ordering
/// is followed by a postorder of its elimination tree, which changes neither the fill nor the
/// work.
///
/// ```
/// use faer::sparse::{SparseColMat, Triplet};
/// use faer::perm::Perm;
/// use faer::{Mat, Side};
/// use teamalg::{linalg::{SparseCholesky, SparseOrdering, SymbolicCholesky}, Exec};
///
/// // A path of 5 vertices (a tridiagonal matrix), given by its lower triangle.
/// let mut t = Vec::new();
/// for i in 0..5usize {
///     t.push(Triplet::new(i, i, 2.0));
///     if i > 0 { t.push(Triplet::new(i, i - 1, -1.0)); }
/// }
/// let a = SparseColMat::<usize, f64>::try_new_from_triplets(5, 5, &t).unwrap();
/// // The caller's own order: the path's ends first, its middle last.
/// let order = Perm::new_checked(
///     vec![0, 4, 1, 3, 2].into_boxed_slice(),
///     vec![0, 2, 4, 3, 1].into_boxed_slice(),
///     5,
/// );
/// let ordering = SparseOrdering::Custom(order.as_ref());
/// let symbolic = SymbolicCholesky::new_ordered(a.symbolic(), Side::Lower, ordering)?;
/// let exec = Exec::serial();
/// let chol = SparseCholesky::new_with_symbolic(&symbolic, a.as_ref(), &exec)?;
/// let x = chol.solve(Mat::<f64>::ones(5, 1), &exec)?;
/// // The first row of A x: 2 x0 - x1 = 1.
/// assert!((2.0 * x[(0, 0)] - x[(1, 0)] - 1.0).abs() < 1e-12);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub enum SparseOrdering<'a> {
    /// faer's approximate minimum degree: AMD on the graph of `A + A^H` for the Cholesky and
    /// `LDL^H`, COLAMD on the columns for the LU and QR. The default.
    #[default]
    Amd,
    /// METIS's nested dissection (feature `metis`), of the graph of `A + A^H` for the Cholesky
    /// and `LDL^H`, of the columns' graph (that of `A^H A`) for the LU and QR. On 2D and 3D
    /// meshes it balances the elimination tree, so more of the factorization runs at once on
    /// a team; its fill can be larger or smaller than AMD's (`docs/sparse-ordering.md`).
    #[cfg(feature = "metis")]
    NestedDissection,
    /// The caller's ordering: `perm.arrays().0[k]` is the column eliminated `k`-th (for the
    /// Cholesky and `LDL^H` also the row). Its length must be the number of columns
    /// ([`LinalgError::ShapeMismatch`] otherwise).
    Custom(PermRef<'a, usize>),
}

/// Which graph an analysis orders.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "metis"), allow(dead_code))]
pub(super) enum Of {
    /// `A + A^H`, from the `side` triangle (Cholesky, `LDL^H`).
    Symmetric(Side),
    /// The columns' (LU, QR).
    Columns,
}

impl SparseOrdering<'_> {
    /// The order the analysis of `pattern` is given, `None` for faer's own (AMD or COLAMD).
    #[cfg_attr(not(feature = "metis"), allow(unused_variables))]
    pub(super) fn order(
        &self,
        op: &'static str,
        pattern: SymbolicSparseColMatRef<'_, usize>,
        of: Of,
    ) -> Result<Option<Vec<usize>>, LinalgError> {
        match *self {
            SparseOrdering::Amd => Ok(None),
            #[cfg(feature = "metis")]
            SparseOrdering::NestedDissection => {
                use teamalg_kernels::drive::ordering::Graph;
                let graph = match of {
                    Of::Symmetric(side) => Ok(Graph::symmetric(pattern, side)),
                    Of::Columns => Graph::columns(pattern),
                };
                graph
                    .and_then(|graph| teamalg_kernels::drive::ordering::dissection(&graph))
                    .map(Some)
                    .map_err(|e| analysis_error(op, e))
            }
            SparseOrdering::Custom(perm) => {
                let n = pattern.ncols();
                if perm.len() != n {
                    return Err(LinalgError::ShapeMismatch {
                        op,
                        operand: "ordering",
                        // The order of `A`'s columns (and rows, for the Cholesky).
                        dim: Dim::Cols,
                        expected: n,
                        found: perm.len(),
                    });
                }
                Ok(Some(perm.arrays().0.to_vec()))
            }
        }
    }
}
