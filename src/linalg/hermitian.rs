//! What every Hermitian call (Cholesky, `LDL^H`, Bunch-Kaufman, the self-adjoint EVD) does
//! with its input before it factors: the checks, on the triangle [`Options::side`] names, and
//! the copy of the upper triangle into the lower one that the kernels read.

use faer::traits::math_utils::{abs, conj, eps, from_f64, imag, is_finite, zero};
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

/// `a` must equal its adjoint up to `n eps max|a|`, `max|a|` over its finite entries. A NaN or
/// an infinity (which can only be in the triangle not read: the one read was found finite
/// first) differs from its mirror: its pair is refused.
fn hermitian<T: Field>(op: &'static str, a: MatRef<'_, T>) -> Result<(), LinalgError> {
    let n = a.nrows();
    // Over the finite entries only: one infinity would make the tolerance infinite and let
    // every other difference through.
    let mut top = zero::<T::Real>();
    for j in 0..n {
        for i in 0..n {
            let v = abs(&a[(i, j)]);
            if is_finite(&a[(i, j)]) && v > top {
                top = v;
            }
        }
    }
    let tol = top * eps::<T::Real>() * from_f64::<T::Real>(n.max(1) as f64);
    // `!(x <= tol)`, not `x > tol`: a NaN difference is refused too.
    let within = |x: T::Real| x <= tol;
    for j in 0..n {
        if !is_finite(&a[(j, j)]) || !within(abs(&imag(&a[(j, j)]))) {
            return Err(LinalgError::NotHermitian { op, row: j, col: j });
        }
        for i in j + 1..n {
            let (x, y) = (a[(i, j)], a[(j, i)]);
            if !is_finite(&x) || !is_finite(&y) || !within(abs(&(x - conj(&y)))) {
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
