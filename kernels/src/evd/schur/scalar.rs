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
        pyth(self.re(), self.im())
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
    /// `[x y] = [x y] G` for `G = I - tau v v^H`, `v = [1, v1]`: a reflector of two
    /// columns applied from the right, row by row (SIMD where the target has it).
    fn reflect_pair(x: &mut [Self], y: &mut [Self], tau: Self, v1: Self);

    /// `y += a x` (SIMD where the target has it).
    fn axpy(y: &mut [Self], a: Self, x: &[Self]);

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

/// `sqrt(a^2 + b^2)` without undue overflow or underflow: the larger part times
/// `sqrt(1 + r^2)`, `r` the ratio (libm's `hypot` is exact to the last bit and costs several
/// times as much, a tenth of the Schur iterations' time where every reflector asked it).
pub(crate) fn pyth<R: Real>(a: R, b: R) -> R {
    let (a, b) = (a.abs(), b.abs());
    let (big, small) = if a >= b { (a, b) } else { (b, a) };
    if big == R::ZERO || !big.is_finite() {
        return big + small;
    }
    let r = small / big;
    big * (R::ONE + r * r).sqrt()
}

/// The coefficients of `x' = x + a x + b y`, `y' = y + c x + d y` for [`Cplx::reflect_pair`]:
/// `x' = x - s`, `y' = y - s conj(v1)` with `s = tau (x + v1 y)`.
fn pair_coefficients<C: Cplx>(tau: C, v1: C) -> [C; 4] {
    let v1c = v1.conj();
    [-tau, -(tau * v1), -(v1c * tau), -(v1c * tau * v1)]
}

macro_rules! cplx {
    ($r:ty, $splat:ident, $as:ident, $as_mut:ident, $mul_add:ident) => {
        impl Cplx for Complex<$r> {
            fn reflect_pair(x: &mut [Self], y: &mut [Self], tau: Self, v1: Self) {
                assert_eq!(x.len(), y.len(), "reflect_pair: columns of one length");
                struct Op<'a>(
                    &'a mut [Complex<$r>],
                    &'a mut [Complex<$r>],
                    [Complex<$r>; 4],
                );
                impl pulp::WithSimd for Op<'_> {
                    type Output = ();
                    #[inline(always)]
                    fn with_simd<S: pulp::Simd>(self, simd: S) {
                        let Op(x, y, [a, b, c, d]) = self;
                        let (sa, sb, sc, sd) = (
                            simd.$splat(a),
                            simd.$splat(b),
                            simd.$splat(c),
                            simd.$splat(d),
                        );
                        let (xh, xt) = S::$as_mut(x);
                        let (yh, yt) = S::$as_mut(y);
                        for (xi, yi) in xh.iter_mut().zip(yh.iter_mut()) {
                            let (x0, y0) = (*xi, *yi);
                            *xi = simd.$mul_add(sa, x0, simd.$mul_add(sb, y0, x0));
                            *yi = simd.$mul_add(sc, x0, simd.$mul_add(sd, y0, y0));
                        }
                        for (xi, yi) in xt.iter_mut().zip(yt.iter_mut()) {
                            let (x0, y0) = (*xi, *yi);
                            *xi = x0 + a * x0 + b * y0;
                            *yi = y0 + c * x0 + d * y0;
                        }
                    }
                }
                pulp::Arch::new().dispatch(Op(x, y, pair_coefficients(tau, v1)));
            }
            fn axpy(y: &mut [Self], a: Self, x: &[Self]) {
                assert_eq!(x.len(), y.len(), "axpy: vectors of one length");
                struct Op<'a>(&'a mut [Complex<$r>], Complex<$r>, &'a [Complex<$r>]);
                impl pulp::WithSimd for Op<'_> {
                    type Output = ();
                    #[inline(always)]
                    fn with_simd<S: pulp::Simd>(self, simd: S) {
                        let Op(y, a, x) = self;
                        let sa = simd.$splat(a);
                        let (yh, yt) = S::$as_mut(y);
                        let (xh, xt) = S::$as(x);
                        for (yi, xi) in yh.iter_mut().zip(xh) {
                            *yi = simd.$mul_add(sa, *xi, *yi);
                        }
                        for (yi, xi) in yt.iter_mut().zip(xt) {
                            *yi += a * *xi;
                        }
                    }
                }
                pulp::Arch::new().dispatch(Op(y, a, x));
            }
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

cplx!(
    f32,
    splat_c32s,
    as_simd_c32s,
    as_mut_simd_c32s,
    mul_add_c32s
);
cplx!(
    f64,
    splat_c64s,
    as_simd_c64s,
    as_mut_simd_c64s,
    mul_add_c64s
);
