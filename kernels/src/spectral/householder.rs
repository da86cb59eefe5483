//! Householder helpers shared by the reductions (the tridiagonalization of the EVD, the
//! bidiagonalization of the SVD).

use faer::linalg::matmul::triangular::{matmul as triangular_matmul, BlockStructure};
use faer::traits::math_utils::{from_real, one};
use faer::traits::ComplexField;
use faer::{Accum, MatMut, Par};

/// faer's block factors of the Householder vectors in the unit lower trapezoid of `basis`
/// (one per column, `taus` their coefficients): per block of `h.nrows()` columns, `V^H V`
/// above the diagonal and the `tau`s on it.
pub(crate) fn block_factors<T: ComplexField>(
    basis: faer::MatRef<'_, T>,
    mut h: MatMut<'_, T>,
    taus: &[T::Real],
) {
    let (rows, cols) = (basis.nrows(), basis.ncols());
    debug_assert!(rows >= cols && taus.len() == cols);
    let bs = h.nrows();
    let mut j = 0;
    while j < cols {
        let b = bs.min(cols - j);
        let mut t = h.as_mut().submatrix_mut(0, j, b, b);
        let (top, bot) = basis.submatrix(j, j, rows - j, b).split_at_row(b);
        let upper = BlockStructure::UnitTriangularUpper;
        triangular_matmul(
            t.as_mut(),
            upper,
            Accum::Replace,
            top.adjoint(),
            upper,
            top,
            BlockStructure::UnitTriangularLower,
            one::<T>(),
            Par::Seq,
        );
        triangular_matmul(
            t.as_mut(),
            upper,
            Accum::Add,
            bot.adjoint(),
            BlockStructure::Rectangular,
            bot,
            BlockStructure::Rectangular,
            one::<T>(),
            Par::Seq,
        );
        for i in 0..b {
            t[(i, i)] = from_real(&taus[j + i]);
        }
        j += b;
    }
}
