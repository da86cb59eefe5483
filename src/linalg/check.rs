//! The checks every facade call makes before it writes: shapes, squareness, finiteness.

use faer::traits::math_utils::is_finite;
use faer::traits::ComplexField;
use faer::dyn_stack::{MemStack, StackReq};
use faer::MatRef;
use teamalg_gates::Scalar;

use super::scan::all_finite;
use super::{Dim, LinalgError};

/// The part of a matrix an operation reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stored {
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

impl Stored {
    /// The rows of column `j` of an `m`-row matrix this part covers.
    fn rows(self, j: usize, m: usize) -> (usize, usize) {
        let clamp = |r: usize| r.min(m);
        match self {
            Stored::All => (0, m),
            Stored::Lower => (clamp(j), m),
            Stored::StrictLower => (clamp(j + 1), m),
            Stored::Upper => (0, clamp(j + 1)),
            Stored::StrictUpper => (0, clamp(j)),
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

/// `stack` must hold `req`, else a [`LinalgError::ScratchTooSmall`] naming both sizes.
pub(crate) fn scratch(
    op: &'static str,
    stack: &MemStack,
    req: StackReq,
) -> Result<(), LinalgError> {
    if stack.can_hold(req) {
        return Ok(());
    }
    Err(LinalgError::ScratchTooSmall {
        op,
        needed: req.unaligned_bytes_required(),
        held: stack.len_bytes(),
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

/// The `part` of `m` must hold no NaN and no infinity. A contiguous column is scanned at
/// about the speed of reading it (`scan.rs`); only a column found to hold a bad entry is
/// searched for it.
pub(crate) fn finite<T: ComplexField + Scalar>(
    op: &'static str,
    operand: &'static str,
    m: MatRef<'_, T>,
    part: Stored,
) -> Result<(), LinalgError> {
    // No entry, nothing to scan: a `0 x n` view of huge `n` would otherwise cost a pass over
    // its `n` empty columns.
    if m.nrows() == 0 || m.ncols() == 0 {
        return Ok(());
    }
    // A matrix stored as one run (a whole `Mat`, the common case) is scanned in one pass:
    // when all of it is finite, so is every part of it.
    if let Some(run) = as_run(m) {
        if all_finite(run) {
            return Ok(());
        }
    }
    for j in 0..m.ncols() {
        let (r0, r1) = part.rows(j, m.nrows());
        if r0 >= r1 {
            continue;
        }
        let col = m.col(j).subrows(r0, r1 - r0);
        let clean = match col.try_as_col_major() {
            Some(c) => all_finite(c.as_slice()),
            None => (0..col.nrows()).all(|i| is_finite(&col[i])),
        };
        if clean {
            continue;
        }
        if let Some(row) = (r0..r1).find(|&i| !is_finite(&m[(i, j)])) {
            return Err(not_finite(op, operand, row, j));
        }
    }
    Ok(())
}

/// The error for a non-finite entry `(row, col)` of `operand`.
pub(crate) fn not_finite(
    op: &'static str,
    operand: &'static str,
    row: usize,
    col: usize,
) -> LinalgError {
    LinalgError::NotFinite {
        op,
        operand,
        row,
        col,
    }
}

/// The entries of `m` as one slice, when it is stored column after column with no gap.
fn as_run<'a, T>(m: MatRef<'a, T>) -> Option<&'a [T]> {
    let (rows, cols) = (m.nrows(), m.ncols());
    let packed = m.row_stride() == 1 && m.col_stride() == rows as isize;
    if !packed || rows == 0 || cols == 0 {
        return None;
    }
    // SAFETY: with a row stride of 1 and a column stride of `rows`, entry (i, j) lies at
    // offset i + j * rows from `as_ptr`, so the view covers exactly `rows * cols` consecutive
    // initialized `T`s, which it borrows for 'a; a shared slice of them for 'a is valid.
    Some(unsafe { std::slice::from_raw_parts(m.as_ptr(), rows * cols) })
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
        assert!(finite("t", "A", r, Stored::Lower).is_ok());
        assert!(finite("t", "A", r, Stored::StrictLower).is_ok());
        let err = finite("t", "A", r, Stored::Upper).unwrap_err();
        assert_eq!(
            err,
            LinalgError::NotFinite {
                op: "t",
                operand: "A",
                row: 0,
                col: 2
            }
        );
        assert!(finite("t", "A", r, Stored::All).is_err());
        m[(0, 2)] = 1.0;
        m[(1, 1)] = f64::INFINITY;
        assert!(finite("t", "A", m.as_ref(), Stored::StrictUpper).is_ok());
        assert!(finite("t", "A", m.as_ref(), Stored::StrictLower).is_ok());
        assert!(finite("t", "A", m.as_ref(), Stored::Lower).is_err());
    }

    #[test]
    fn strided_and_complex_inputs_are_checked() {
        let mut m = Mat::<f64>::ones(4, 3);
        m[(2, 1)] = f64::NEG_INFINITY;
        let t = m.transpose(); // rows are columns now: not contiguous
        let err = finite("t", "A", t, Stored::All).unwrap_err();
        assert!(
            matches!(err, LinalgError::NotFinite { row: 1, col: 2, .. }),
            "{err:?}"
        );
        let mut z = Mat::<faer::c64>::zeros(3, 3);
        z[(1, 2)] = faer::c64::new(0.0, f64::NAN);
        let err = finite("t", "A", z.as_ref(), Stored::All).unwrap_err();
        assert!(
            matches!(err, LinalgError::NotFinite { row: 1, col: 2, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn every_kind_finds_infinities_and_nans() {
        fn check<T: ComplexField + Scalar + Copy>(bad: T, good: T) {
            let mut m = Mat::<T>::from_fn(5, 4, |_, _| good);
            assert!(finite("t", "A", m.as_ref(), Stored::All).is_ok());
            m[(4, 3)] = bad;
            let err = finite("t", "A", m.as_ref(), Stored::All).unwrap_err();
            assert!(
                matches!(err, LinalgError::NotFinite { row: 4, col: 3, .. }),
                "{err:?}"
            );
        }
        check(f64::NAN, 1.0);
        check(f64::NEG_INFINITY, f64::MAX);
        check(f32::INFINITY, f32::MIN_POSITIVE);
        check(
            faer::c64::new(1.0, f64::INFINITY),
            faer::c64::new(-0.0, 1e300),
        );
        check(faer::c32::new(f32::NAN, 0.0), faer::c32::new(1.0, -1.0));
    }

    #[test]
    fn a_view_is_one_run_only_when_it_has_no_gap() {
        let data: Vec<f64> = (0..24).map(f64::from).collect();
        let whole = MatRef::from_column_major_slice(&data, 6, 4);
        assert_eq!(as_run(whole).map(<[f64]>::len), Some(24));
        assert!(
            as_run(whole.subrows(1, 4)).is_none(),
            "a gap below each column"
        );
        assert!(as_run(whole.transpose()).is_none());
        let m = Mat::<f64>::from_fn(6, 4, |i, j| (i + 10 * j) as f64);
        let mut bad = m.clone();
        bad[(5, 0)] = f64::NAN;
        // A NaN outside the part read passes, inside it is found, with or without the run.
        assert!(finite("t", "A", bad.as_ref(), Stored::Upper).is_ok());
        assert!(finite("t", "A", bad.as_ref(), Stored::Lower).is_err());
        assert!(finite("t", "A", bad.as_ref().subrows(1, 5), Stored::All).is_err());
    }

    #[test]
    fn an_overflowing_sum_is_searched_and_passes() {
        let m = Mat::<f64>::from_fn(2, 1, |_, _| f64::MAX);
        assert!(finite("t", "A", m.as_ref(), Stored::All).is_ok());
    }
}
