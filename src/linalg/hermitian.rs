//! What every Hermitian call (Cholesky, `LDL^H`, Bunch-Kaufman, the self-adjoint EVD) does
//! with its input before it factors: the checks, on the triangle [`Options::side`] names, and
//! the copy of the upper triangle into the lower one that the kernels read.

use faer::traits::math_utils::{abs, conj, eps, from_f64, imag, is_finite, real, zero};
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

/// `a` must equal its adjoint up to `n eps max|a|` (complex: up to `sqrt(2)` more), `max|a|`
/// over its finite entries. A NaN or
/// an infinity (which can only be in the triangle not read: the one read was found finite
/// first) differs from its mirror: its pair is refused.
///
/// Two passes, both cheap against the factorization that follows: the largest entry column
/// by column, then the pairs in square tiles (an entry and its mirror in cache together).
/// Sizes are compared as `max(|re|, |im|)`, which is within `sqrt(2)` of the modulus: a pair
/// is decided by the exact modulus only when that bound cannot decide it.
fn hermitian<T: Field>(op: &'static str, a: MatRef<'_, T>) -> Result<(), LinalgError> {
    let n = a.nrows();
    // Over the finite entries only: one infinity would make the tolerance infinite and let
    // every other difference through.
    let mut top = zero::<T::Real>();
    for j in 0..n {
        let col = a.col(j);
        for i in 0..n {
            let x = &col[i];
            let v = size(x);
            if v > top && is_finite(x) {
                top = v;
            }
        }
    }
    // Real: `top` is `max|a|`. Complex: at least `max|a| / sqrt(2)`, so the tolerance is the
    // one of `max|a|` or up to `sqrt(2)` above it.
    // (Rounded up, so that `f32`'s rounding of the constant never narrows the tolerance.)
    let widen = if T::IS_REAL {
        1.0
    } else {
        std::f64::consts::SQRT_2 * (1.0 + 1e-6)
    };
    let tol = top * from_f64::<T::Real>(widen * n.max(1) as f64) * eps::<T::Real>();
    for j in 0..n {
        if !is_finite(&a[(j, j)]) || !within(abs(&imag(&a[(j, j)])), &tol) {
            return Err(LinalgError::NotHermitian { op, row: j, col: j });
        }
    }
    const TILE: usize = 32;
    for jb in (0..n).step_by(TILE) {
        for ib in (jb..n).step_by(TILE) {
            for j in jb..(jb + TILE).min(n) {
                for i in ib.max(j + 1)..(ib + TILE).min(n) {
                    if !pair(a[(i, j)], a[(j, i)], &tol) {
                        return Err(first_pair(op, a, &tol));
                    }
                }
            }
        }
    }
    Ok(())
}

/// `max(|re x|, |im x|)`.
fn size<T: Field>(x: &T) -> T::Real {
    let (re, im) = (abs(&real(x)), abs(&imag(x)));
    if im > re {
        im
    } else {
        re
    }
}

/// `x <= tol`, written so that a NaN is not within.
fn within<R: PartialOrd>(x: R, tol: &R) -> bool {
    x <= *tol
}

/// Whether `x` and its mirror `y` agree: both finite, `|x - conj(y)| <= tol`.
fn pair<T: Field>(x: T, y: T, tol: &T::Real) -> bool {
    if !is_finite(&x) || !is_finite(&y) {
        return false;
    }
    let d = x - conj(&y);
    let s = size(&d);
    if !within(s, tol) {
        return false; // |d| >= s > tol
    }
    // |d| <= sqrt(2) s: decided without the modulus when that is within too (the constant
    // rounded up: `f32` must not round it below sqrt(2)).
    within(
        s * from_f64::<T::Real>(std::f64::consts::SQRT_2 * (1.0 + 1e-6)),
        tol,
    ) || within(abs(&d), tol)
}

/// The first pair, column by column, that differs (the error names it).
fn first_pair<T: Field>(op: &'static str, a: MatRef<'_, T>, tol: &T::Real) -> LinalgError {
    let n = a.nrows();
    for j in 0..n {
        for i in j + 1..n {
            if !pair(a[(i, j)], a[(j, i)], tol) {
                return LinalgError::NotHermitian { op, row: i, col: j };
            }
        }
    }
    unreachable!("a pair was found to differ")
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
