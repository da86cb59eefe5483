//! The inertia of a Hermitian matrix: how many of its eigenvalues are positive, negative and
//! zero, which an `LDL^H` or Bunch-Kaufman factorization reads off `D` (Sylvester's law).

use std::cmp::Ordering;

/// How many eigenvalues of a Hermitian matrix are positive, negative and zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Inertia {
    /// Eigenvalues greater than zero.
    pub positive: usize,
    /// Eigenvalues less than zero.
    pub negative: usize,
    /// Eigenvalues exactly zero (a zero pivot of `D`).
    pub zero: usize,
}

impl Inertia {
    /// The inertia of the signs `signs`.
    pub(crate) fn of_signs(signs: impl Iterator<Item = Ordering>) -> Self {
        let mut i = Inertia::default();
        for s in signs {
            match s {
                Ordering::Greater => i.positive += 1,
                Ordering::Less => i.negative += 1,
                Ordering::Equal => i.zero += 1,
            }
        }
        i
    }
}
