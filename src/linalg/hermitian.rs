//! What every Hermitian call (Cholesky, `LDL^H`, Bunch-Kaufman, the self-adjoint EVD) does
//! with its input before it factors: the checks, on the triangle [`Options::side`] names, and
//! the copy of the upper triangle into the lower one that the kernels read.

use faer::traits::math_utils::{abs, conj, eps, from_f64, imag};
use faer::{MatMut, MatRef, Side};

use super::check::{self, Stored};
use super::{Field, LinalgError, Options};

/// The part of `A` the call reads.
pub(crate) fn stored(options: &Options) -> Stored {
    match options.read_side() {
        Side::Lower => Stored::Lower,
        Side::Upper => Stored::Upper,
    }
}

/// The checks of a Hermitian input, before anything is written: square, finite on the side
/// read (when the options ask, or `always`), Hermitian (when the options ask).
pub(crate) fn check<T: Field>(
    op: &'static str,
    a: MatRef<'_, T>,
    options: &Options,
    always_finite: bool,
) -> Result<(), LinalgError> {
    check::square(op, "A", a)?;
    if always_finite || options.checks_finite() || options.checks_hermitian() {
        check::finite(op, "A", a, stored(options))?;
    }
    if options.checks_hermitian() {
        hermitian(op, a)?;
    }
    Ok(())
}

/// `a` must equal its adjoint up to `n eps max|a|`.
fn hermitian<T: Field>(op: &'static str, a: MatRef<'_, T>) -> Result<(), LinalgError> {
    let n = a.nrows();
    let tol = a.norm_max() * eps::<T::Real>() * from_f64::<T::Real>(n.max(1) as f64);
    for j in 0..n {
        if abs(&imag(&a[(j, j)])) > tol {
            return Err(LinalgError::NotHermitian {
                op,
                row: j,
                col: j,
            });
        }
        for i in j + 1..n {
            let d = a[(i, j)] - conj(&a[(j, i)]);
            if abs(&d) > tol {
                return Err(LinalgError::NotHermitian { op, row: i, col: j });
            }
        }
    }
    Ok(())
}

/// Writes the conjugate of `a`'s strict upper triangle into its strict lower one when the
/// options read the upper triangle, so that the kernels, which read the lower one, see `A`.
pub(crate) fn to_lower<T: Field>(mut a: MatMut<'_, T>, options: &Options) {
    if options.read_side() == Side::Lower {
        return;
    }
    let n = a.nrows();
    for j in 0..n {
        for i in j + 1..n {
            a[(i, j)] = conj(&a[(j, i)]);
        }
    }
}
