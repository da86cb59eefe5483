//! The complex scalar the Schur iterations run in (`c32`, `c64`): the few operations they
//! need, spelled once.

use std::ops::{Add, Mul, Neg, Sub};

use num_complex::Complex;
use teamalg_gates::Scalar;

use crate::spectral::scalar::Real;

/// A complex floating-point scalar (`Complex<f32>`, `Complex<f64>`).
pub trait Cplx:
    Copy
    + std::fmt::Debug
    + PartialEq
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + faer::traits::ComplexField
    + Scalar
{
    /// The real type of its parts.
    type R: Real;
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// `re + i im`.
    fn new(re: Self::R, im: Self::R) -> Self;
    /// The real part.
    fn re(self) -> Self::R;
    /// The imaginary part.
    fn im(self) -> Self::R;
    /// The conjugate.
    fn conj(self) -> Self {
        Self::new(self.re(), -self.im())
    }
    /// `|re| + |im|`, LAPACK's `cabs1`: the cheap magnitude the deflation tests use.
    fn abs1(self) -> Self::R {
        self.re().abs() + self.im().abs()
    }
    /// The modulus, without undue overflow.
    fn abs(self) -> Self::R {
        self.re().hypot(self.im())
    }
    /// Times a real number.
    fn scale(self, r: Self::R) -> Self {
        Self::new(self.re() * r, self.im() * r)
    }
    /// The quotient, scaled against overflow (Smith's algorithm).
    fn quot(self, d: Self) -> Self {
        let (a, b, c, e) = (self.re(), self.im(), d.re(), d.im());
        if c.abs() >= e.abs() {
            let r = e / c;
            let den = c + e * r;
            Self::new((a + b * r) / den, (b - a * r) / den)
        } else {
            let r = c / e;
            let den = c * r + e;
            Self::new((a * r + b) / den, (b * r - a) / den)
        }
    }
    /// The principal square root.
    fn sqrt(self) -> Self {
        let (x, y) = (self.re(), self.im());
        let zero = <Self::R as Real>::ZERO;
        if x == zero && y == zero {
            return Self::ZERO;
        }
        let half = <Self::R as Real>::from_f64(0.5);
        let t = ((x.abs() + self.abs()) * half).sqrt();
        if x >= zero {
            Self::new(t, y / (t + t))
        } else {
            let s = if y >= zero { t } else { -t };
            Self::new(y.abs() / (t + t), s)
        }
    }
}

macro_rules! cplx {
    ($r:ty) => {
        impl Cplx for Complex<$r> {
            type R = $r;
            const ZERO: Self = Complex::new(0.0, 0.0);
            const ONE: Self = Complex::new(1.0, 0.0);
            fn new(re: $r, im: $r) -> Self {
                Complex::new(re, im)
            }
            fn re(self) -> $r {
                self.re
            }
            fn im(self) -> $r {
                self.im
            }
        }
    };
}

cplx!(f32);
cplx!(f64);
