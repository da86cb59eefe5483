//! The scalar traits of the spectral kernels: [`Real`], the real type the solvers run in
//! (`f32`, `f64`), and [`Rotate`], a scalar whose columns real rotations act on (`f32`, `f64`,
//! `c32`, `c64`). The bidiagonal and tridiagonal solvers, dqds, the secular equation and the
//! facade's SVD and EVD all take them.

use std::fmt;
use std::ops::{Add, Div, Mul, Neg, Sub};

use num_complex::Complex;
use teamalg_gates::Scalar;

/// A real floating-point type the solver runs in (`f32` or `f64`).
pub trait Real:
    Copy
    + PartialOrd
    + fmt::Debug
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + faer::traits::RealField
    + Scalar
    + Rotate<RealPart = Self>
    + sealed::Sealed
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// The unit roundoff (half the distance from 1 to the next number), LAPACK's `eps`.
    const EPS: Self;
    /// The smallest positive normal number.
    const SAFE_MIN: Self;
    /// Converts from `f64` (rounding).
    fn from_f64(x: f64) -> Self;
    /// Converts to `f64`.
    fn to_f64(self) -> f64;
    /// Absolute value.
    fn abs(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// `sqrt(a^2 + b^2)` without undue overflow or underflow.
    fn hypot(self, other: Self) -> Self;
    /// Whether the number is finite.
    fn is_finite(self) -> bool;
    /// IEEE 754's total order (`-NaN < -inf < ... < -0 < +0 < ... < inf < NaN`): sorts with it
    /// never panic, whatever the values.
    fn total_cmp(&self, other: &Self) -> std::cmp::Ordering;
}

pub(crate) mod sealed {
    /// Only `f32` and `f64`, and the four scalar types, take part.
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for num_complex::Complex<f32> {}
    impl Sealed for num_complex::Complex<f64> {}
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const EPS: Self = <$t>::EPSILON * 0.5;
            const SAFE_MIN: Self = <$t>::MIN_POSITIVE;
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn hypot(self, other: Self) -> Self {
                <$t>::hypot(self, other)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn total_cmp(&self, other: &Self) -> std::cmp::Ordering {
                <$t>::total_cmp(self, other)
            }
        }
    };
}
real!(f32);
real!(f64);

/// A scalar whose columns the solver's (real) rotations act on: `f32`, `f64`, `c32`, `c64`.
pub trait Rotate:
    Copy + Send + Sync + Scalar + sealed::Sealed + crate::spectral::fused::Fused + 'static
{
    /// The real type of the rotations.
    type RealPart: Real;
    /// `x <- c x + s y`, `y <- c y - s x`.
    fn rotate(x: &mut Self, y: &mut Self, c: Self::RealPart, s: Self::RealPart);
    /// `-x`.
    fn negate(x: &mut Self);
    /// The real and imaginary parts (imaginary zero for a real type).
    fn parts(self) -> (Self::RealPart, Self::RealPart);
    /// The number with these parts (the imaginary part dropped for a real type).
    fn from_parts(re: Self::RealPart, im: Self::RealPart) -> Self;
}

macro_rules! real_rotate {
    ($r:ty) => {
        impl Rotate for $r {
            type RealPart = $r;
            #[inline(always)]
            fn rotate(x: &mut $r, y: &mut $r, c: $r, s: $r) {
                let (a, b) = (*x, *y);
                *x = c * a + s * b;
                *y = c * b - s * a;
            }
            fn negate(x: &mut $r) {
                *x = -*x;
            }
            fn parts(self) -> ($r, $r) {
                (self, 0.0)
            }
            fn from_parts(re: $r, _: $r) -> $r {
                re
            }
        }
    };
}
real_rotate!(f32);
real_rotate!(f64);

macro_rules! complex {
    ($r:ty) => {
        impl Rotate for Complex<$r> {
            type RealPart = $r;
            #[inline(always)]
            fn rotate(x: &mut Self, y: &mut Self, c: $r, s: $r) {
                let (a, b) = (*x, *y);
                *x = Complex::new(c * a.re + s * b.re, c * a.im + s * b.im);
                *y = Complex::new(c * b.re - s * a.re, c * b.im - s * a.im);
            }
            fn negate(x: &mut Self) {
                *x = -*x;
            }
            fn parts(self) -> ($r, $r) {
                (self.re, self.im)
            }
            fn from_parts(re: $r, im: $r) -> Self {
                Complex::new(re, im)
            }
        }
    };
}
complex!(f32);
complex!(f64);
