//! Complex numbers as `(re, im)` pairs of f64, for the SVD and EVD tests' residuals.

#![allow(dead_code)] // each test file uses its own part

use faer::Mat;
use teamalg::kernels::bidiag_svd::{Real, Rotate};

pub(crate) type Parts = (f64, f64);

pub(crate) fn parts<T: Rotate>(x: T) -> Parts {
    let (re, im) = x.parts();
    (re.to_f64(), im.to_f64())
}

pub(crate) fn from<T: Rotate>(x: Parts) -> T {
    T::from_parts(
        <T as Rotate>::RealPart::from_f64(x.0),
        <T as Rotate>::RealPart::from_f64(x.1),
    )
}

pub(crate) fn mul(a: Parts, b: Parts) -> Parts {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

/// Unit roundoff of `T`'s real type.
pub(crate) fn eps<T: Rotate>() -> f64 {
    <<T as Rotate>::RealPart as Real>::EPS.to_f64()
}

/// The largest entry of `Q^H Q - I`.
pub(crate) fn orthogonality<T: Rotate>(q: &Mat<T>) -> f64 {
    let mut orth = 0.0f64;
    for i in 0..q.ncols() {
        for j in 0..q.ncols() {
            let (mut re, mut im) = (0.0, 0.0);
            for l in 0..q.nrows() {
                let (a, b) = parts(q[(l, i)]);
                let p = mul((a, -b), parts(q[(l, j)]));
                re += p.0;
                im += p.1;
            }
            if i == j {
                re -= 1.0;
            }
            orth = orth.max(re.hypot(im));
        }
    }
    orth
}
