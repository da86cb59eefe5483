//! The pattern an analysis was made from, kept with it: a sparse factorization checks that the
//! matrix it is given has exactly that pattern (`PatternMismatch` otherwise), and reads its
//! values in that order.

use faer::sparse::{SparseColMatRef, SymbolicSparseColMat, SymbolicSparseColMatRef};
use faer::traits::Index;

use super::{scratch, Dim, Field, LinalgError};

/// An analysed pattern, compressed, with `usize` indices.
#[derive(Debug)]
pub(crate) struct Pattern {
    inner: SymbolicSparseColMat<usize>,
}

impl Pattern {
    /// A compressed `usize` copy of `pattern` (any index type, compressed or not).
    pub(crate) fn copy<I: Index>(
        op: &'static str,
        pattern: SymbolicSparseColMatRef<'_, I>,
    ) -> Result<Pattern, LinalgError> {
        let (m, n) = (pattern.nrows(), pattern.ncols());
        let nnz = pattern.compute_nnz();
        let mut col_ptr = scratch::vec(op, n + 1, 0usize)?;
        let mut row_idx = scratch::vec(op, nnz, 0usize)?;
        for j in 0..n {
            let rows = pattern.row_idx_of_col_raw(j);
            let at = col_ptr[j];
            for (k, &i) in rows.iter().enumerate() {
                row_idx[at + k] = i.zx();
            }
            col_ptr[j + 1] = at + rows.len();
        }
        Ok(Pattern {
            inner: SymbolicSparseColMat::new_unsorted_checked(m, n, col_ptr, None, row_idx),
        })
    }

    /// The pattern.
    pub(crate) fn as_ref(&self) -> SymbolicSparseColMatRef<'_, usize> {
        self.inner.as_ref()
    }

    /// `a` with this pattern and `usize` indices, its values compressed into `copy` when `a`
    /// does not hold them in the pattern's order. Errors: `NotSquare` (a square pattern's),
    /// `ShapeMismatch` (another shape) and `PatternMismatch` (the first column whose row
    /// indices differ).
    pub(crate) fn matching<'a, I: Index, T: Field>(
        &'a self,
        op: &'static str,
        a: SparseColMatRef<'a, I, T>,
        copy: &'a mut Vec<T>,
    ) -> Result<SparseColMatRef<'a, usize, T>, LinalgError> {
        let (m, n) = (self.inner.nrows(), self.inner.ncols());
        if m == n && a.nrows() != a.ncols() {
            return Err(LinalgError::NotSquare {
                op,
                operand: "A",
                rows: a.nrows(),
                cols: a.ncols(),
            });
        }
        for (dim, expected, found) in [(Dim::Rows, m, a.nrows()), (Dim::Cols, n, a.ncols())] {
            if found != expected {
                return Err(LinalgError::ShapeMismatch {
                    op,
                    operand: "A",
                    dim,
                    expected,
                    found,
                });
            }
        }
        let pattern = self.inner.as_ref();
        for j in 0..n {
            let (ours, theirs) = (pattern.row_idx_of_col_raw(j), a.row_idx_of_col_raw(j));
            if ours.len() != theirs.len() || ours.iter().zip(theirs).any(|(&x, y)| x != y.zx()) {
                return Err(LinalgError::PatternMismatch { op, col: j });
            }
        }
        let compact = a.symbolic().col_nnz().is_none() && a.val().len() == pattern.row_idx().len();
        let values: &[T] = if compact {
            a.val()
        } else {
            *copy = scratch::vec(op, pattern.row_idx().len(), T::zero_impl())?;
            for j in 0..n {
                let at = pattern.col_ptr()[j];
                let vals = a.val_of_col(j);
                copy[at..at + vals.len()].clone_from_slice(vals);
            }
            copy
        };
        Ok(SparseColMatRef::new(pattern, values))
    }
}

/// `NotFinite` naming the first stored value of `a` (column by column) that is not finite.
pub(crate) fn finite<T: Field>(
    op: &'static str,
    a: SparseColMatRef<'_, usize, T>,
) -> Result<(), LinalgError> {
    for j in 0..a.ncols() {
        for (i, v) in a.row_idx_of_col(j).zip(a.val_of_col(j)) {
            if !faer::traits::math_utils::is_finite(v) {
                return Err(super::check::not_finite(op, "A", i, j));
            }
        }
    }
    Ok(())
}
