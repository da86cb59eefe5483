//! Where a factorization keeps its factors: in the caller's matrix (in place) or its own copy
//! (owned), and the small helpers the factorizations share.

use faer::traits::math_utils::{conj, one, zero};
use faer::traits::ComplexField;
use faer::{Mat, MatMut, MatRef};

/// The storage of a factorization's factors.
#[derive(Debug)]
pub(crate) enum Store<'a, T> {
    /// The caller's matrix, factored in place.
    Borrowed(MatMut<'a, T>),
    /// A copy the factorization owns.
    Owned(Mat<T>),
}

impl<T> Store<'_, T> {
    pub(crate) fn as_ref(&self) -> MatRef<'_, T> {
        match self {
            Store::Borrowed(m) => m.as_ref(),
            Store::Owned(m) => m.as_ref(),
        }
    }

    pub(crate) fn as_mut(&mut self) -> MatMut<'_, T> {
        match self {
            Store::Borrowed(m) => m.as_mut(),
            Store::Owned(m) => m.as_mut(),
        }
    }
}

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

/// The `n x n` identity.
pub(crate) fn identity<T: ComplexField>(n: usize) -> Mat<T> {
    Mat::from_fn(n, n, |i, j| if i == j { one() } else { zero() })
}
