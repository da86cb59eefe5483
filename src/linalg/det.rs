//! Determinants from a factorization's pivots, as a product and in logarithms (a product of
//! many pivots overflows or underflows long before its logarithm does: `1e3 I` of order 200
//! has determinant `1e600`).

use faer::traits::math_utils::{abs, from_f64, imag, mul, mul_real, neg, one, real, recip, zero};

use super::{real_to_f64, Field};

/// The product of `pivots`, negated when `negate`.
pub(crate) fn product<T: Field>(pivots: impl Iterator<Item = T>, negate: bool) -> T {
    let det = pivots.fold(one::<T>(), |acc, d| mul(&acc, &d));
    if negate {
        neg(&det)
    } else {
        det
    }
}

/// `(sign, log|det|)` of the product of `pivots`, negated when `negate`: `sign` has modulus 1
/// (a phase, for complex types), or is zero with `log|det| = -inf` when a pivot is zero. The
/// logarithms are summed in `f64`.
///
/// For a real type the sign is exactly `1` or `-1`, from a count of the negative pivots (a
/// product of `d / |d|` drifts off `±1` by rounding: `0.99999999999999234` at order 500, and
/// callers compare it with `== -1.0`). For a complex type the pivots' phases are multiplied
/// and the product is normalized once at the end; a product that is real (every pivot real,
/// as a Cholesky's or an `LDL^H`'s) is exactly `1` or `-1` as well.
pub(crate) fn slogdet<T: Field>(pivots: impl Iterator<Item = T>, negate: bool) -> (T, T::Real) {
    let mut negative = negate;
    let mut phase = one::<T>();
    let mut log = 0.0f64;
    for d in pivots {
        let size = abs(&d);
        if size == zero::<T::Real>() {
            return (zero(), from_f64(f64::NEG_INFINITY));
        }
        log += real_to_f64::<T>(&size).ln();
        if T::IS_REAL {
            negative ^= real(&d) < zero::<T::Real>();
        } else {
            phase = mul(&phase, &mul_real(&d, &recip(&size)));
        }
    }
    if !T::IS_REAL {
        // A real phase (its imaginary part exactly zero: the pivots' were) only needs its
        // sign; any other is brought back onto the unit circle once.
        if imag(&phase) == zero::<T::Real>() {
            negative ^= real(&phase) < zero::<T::Real>();
            phase = one();
        } else {
            phase = mul_real(&phase, &recip(&abs(&phase)));
        }
    }
    let sign = if negative { neg(&phase) } else { phase };
    (sign, from_f64(log))
}
