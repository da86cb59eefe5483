//! The views the facade makes of its inputs and outputs: a canonical (unconjugated) view of
//! an input, a conjugation in place, the identity.

use faer::traits::math_utils::{conj, one, zero};
use faer::traits::{ComplexField, Conjugate};
use faer::{Mat, MatMut, MatRef};

use super::{scratch, LinalgError};

/// Conjugates every entry of `m` in place (nothing to do for real types, which the compiler
/// sees).
pub(crate) fn conjugate<T: ComplexField>(mut m: MatMut<'_, T>) {
    if T::IS_REAL {
        return;
    }
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            m[(i, j)] = conj(&m[(i, j)]);
        }
    }
}

/// `a` as a view of `T`: itself when it is not a conjugated view, else a conjugated copy, made
/// in `copy` (an owned form then reads the caller's matrix without copying it). Errors:
/// [`LinalgError::OutOfMemory`] (naming `op`) when the copy cannot be allocated.
pub(crate) fn canonical<'a, T: ComplexField, A: Conjugate<Canonical = T>>(
    op: &'static str,
    a: MatRef<'a, A>,
    copy: &'a mut Option<Mat<T>>,
) -> Result<MatRef<'a, T>, LinalgError> {
    if A::IS_CANONICAL {
        Ok(a.canonical())
    } else {
        Ok(copy.insert(scratch::copy(op, a)?).as_ref())
    }
}

/// The `n x n` identity.
pub(crate) fn identity<T: ComplexField>(n: usize) -> Mat<T> {
    Mat::from_fn(n, n, |i, j| if i == j { one() } else { zero() })
}
