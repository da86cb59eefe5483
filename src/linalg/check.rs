//! The checks every facade call makes before it writes: shapes, squareness, finiteness.

use faer::traits::math_utils::is_finite;
use faer::traits::ComplexField;
use faer::MatRef;

use super::{Dim, LinalgError};

/// The part of a matrix an operation reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// Every entry.
    All,
    /// The lower triangle with the diagonal.
    Lower,
    /// The upper triangle with the diagonal.
    Upper,
    /// The strict lower triangle (a unit lower triangular matrix).
    StrictLower,
    /// The strict upper triangle.
    StrictUpper,
}

impl Part {
    /// The rows of column `j` of an `m`-row matrix this part covers.
    fn rows(self, j: usize, m: usize) -> (usize, usize) {
        let clamp = |r: usize| r.min(m);
        match self {
            Part::All => (0, m),
            Part::Lower => (clamp(j), m),
            Part::StrictLower => (clamp(j + 1), m),
            Part::Upper => (0, clamp(j + 1)),
            Part::StrictUpper => (0, clamp(j)),
        }
    }
}

/// `found` must be `expected`, else a [`LinalgError::ShapeMismatch`] of `operand`'s `dim`.
pub(crate) fn dim(
    op: &'static str,
    operand: &'static str,
    dim: Dim,
    expected: usize,
    found: usize,
) -> Result<(), LinalgError> {
    if expected == found {
        return Ok(());
    }
    Err(LinalgError::ShapeMismatch {
        op,
        operand,
        dim,
        expected,
        found,
    })
}

/// `m` must be square; returns its order.
pub(crate) fn square<T>(
    op: &'static str,
    operand: &'static str,
    m: MatRef<'_, T>,
) -> Result<usize, LinalgError> {
    if m.nrows() == m.ncols() {
        return Ok(m.nrows());
    }
    Err(LinalgError::NotSquare {
        op,
        operand,
        rows: m.nrows(),
        cols: m.ncols(),
    })
}

/// The `part` of `m` must hold no NaN and no infinity.
///
/// A column's sum is finite when all its entries are (a NaN or infinity always makes it NaN or
/// infinite), and faer sums a contiguous column with SIMD; only a column whose sum is not
/// finite (a bad entry, or an overflow) is searched entry by entry. So the check costs about a
/// read of the input: 1 to 3 % of a GEMM of 64, less above (`docs/perf/kernels.md`).
pub(crate) fn finite<T: ComplexField>(
    op: &'static str,
    operand: &'static str,
    m: MatRef<'_, T>,
    part: Part,
) -> Result<(), LinalgError> {
    for j in 0..m.ncols() {
        let (r0, r1) = part.rows(j, m.nrows());
        if r0 >= r1 {
            continue;
        }
        if is_finite(&m.col(j).subrows(r0, r1 - r0).sum()) {
            continue;
        }
        if let Some(row) = (r0..r1).find(|&i| !is_finite(&m[(i, j)])) {
            return Err(LinalgError::NotFinite {
                op,
                operand,
                row,
                col: j,
            });
        }
    }
    Ok(())
}

/// A scalar operand must be finite.
pub(crate) fn finite_scalar<T: ComplexField>(
    op: &'static str,
    operand: &'static str,
    x: &T,
) -> Result<(), LinalgError> {
    if is_finite(x) {
        return Ok(());
    }
    Err(LinalgError::NotFinite {
        op,
        operand,
        row: 0,
        col: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    #[test]
    fn finite_reads_only_its_part() {
        let mut m = Mat::<f64>::ones(3, 3);
        m[(0, 2)] = f64::NAN; // strictly upper
        let r = m.as_ref();
        assert!(finite("t", "A", r, Part::Lower).is_ok());
        assert!(finite("t", "A", r, Part::StrictLower).is_ok());
        let err = finite("t", "A", r, Part::Upper).unwrap_err();
        assert_eq!(
            err,
            LinalgError::NotFinite {
                op: "t",
                operand: "A",
                row: 0,
                col: 2
            }
        );
        assert!(finite("t", "A", r, Part::All).is_err());
        m[(0, 2)] = 1.0;
        m[(1, 1)] = f64::INFINITY;
        assert!(finite("t", "A", m.as_ref(), Part::StrictUpper).is_ok());
        assert!(finite("t", "A", m.as_ref(), Part::StrictLower).is_ok());
        assert!(finite("t", "A", m.as_ref(), Part::Lower).is_err());
    }

    #[test]
    fn an_overflowing_sum_is_searched_and_passes() {
        let m = Mat::<f64>::from_fn(2, 1, |_, _| f64::MAX);
        assert!(finite("t", "A", m.as_ref(), Part::All).is_ok());
    }
}
