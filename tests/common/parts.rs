//! Complex numbers as `(re, im)` pairs of f64, for the SVD and EVD tests' residuals.

#![allow(dead_code)] // each test file uses its own part

use teamalg::kernels::bidiag_svd::{Real, Rotate};

pub(crate) type Parts = (f64, f64);

pub(crate) fn parts<T: Rotate>(x: T) -> Parts {
    let (re, im) = x.parts();
    (re.to_f64(), im.to_f64())
}

pub(crate) fn from<T: Rotate>(x: Parts) -> T {
    T::from_parts(
        <T as Rotate>::Real::from_f64(x.0),
        <T as Rotate>::Real::from_f64(x.1),
    )
}

pub(crate) fn mul(a: Parts, b: Parts) -> Parts {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

/// Unit roundoff of `T`'s real type.
pub(crate) fn eps<T: Rotate>() -> f64 {
    <<T as Rotate>::Real as Real>::EPS.to_f64()
}
