//! Determinants from a factorization's pivots, as a product and in logarithms (a product of
//! many pivots overflows or underflows long before its logarithm does: `1e3 I` of order 200
//! has determinant `1e600`).

use faer::traits::math_utils::{abs, from_f64, mul, mul_real, neg, one, recip, zero};

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
pub(crate) fn slogdet<T: Field>(pivots: impl Iterator<Item = T>, negate: bool) -> (T, T::Real) {
    let mut sign = if negate { neg(&one::<T>()) } else { one::<T>() };
    let mut log = 0.0f64;
    for d in pivots {
        let size = abs(&d);
        if size == zero::<T::Real>() {
            return (zero(), from_f64(f64::NEG_INFINITY));
        }
        log += real_to_f64::<T>(&size).ln();
        sign = mul(&sign, &mul_real(&d, &recip(&size)));
    }
    (sign, from_f64(log))
}
