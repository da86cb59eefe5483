//! The 2 x 2 pieces of the bidiagonal QR, after LAPACK: the plane rotation (`dlartg`), the
//! singular values of a 2 x 2 triangle (`dlas2`) and its SVD (`dlasv2`), with the sign and
//! scaling helpers they share.

use super::Real;

/// `x 2^k`, in two steps so that neither factor overflows for any `k` a finite `x` needs.
pub(super) fn times_pow2<R: Real>(x: R, k: i32) -> R {
    let half = k / 2;
    x * R::from_f64(2f64.powi(k - half)) * R::from_f64(2f64.powi(half))
}

/// `|a|` with the sign of `b` (`+` for `b = 0`).
pub(super) fn sign<R: Real>(a: R, b: R) -> R {
    if b >= R::ZERO {
        a.abs()
    } else {
        -a.abs()
    }
}

pub(super) fn max<R: Real>(a: R, b: R) -> R {
    if a >= b {
        a
    } else {
        b
    }
}

pub(super) fn min<R: Real>(a: R, b: R) -> R {
    if a <= b {
        a
    } else {
        b
    }
}

/// A plane rotation with `[c s; -s c] [f; g] = [r; 0]` (LAPACK's `lartg`).
pub(super) fn lartg<R: Real>(f: R, g: R) -> (R, R, R) {
    if g == R::ZERO {
        (R::ONE, R::ZERO, f)
    } else if f == R::ZERO {
        (R::ZERO, sign(R::ONE, g), g.abs())
    } else {
        let d = f.hypot(g);
        let c = f.abs() / d;
        let r = sign(d, f);
        (c, g / r, r)
    }
}

/// The singular values `(smin, smax)` of `[f g; 0 h]` (LAPACK's `las2`).
pub(super) fn las2<R: Real>(f: R, g: R, h: R) -> (R, R) {
    let (fa, ga, ha) = (f.abs(), g.abs(), h.abs());
    let (fhmn, fhmx) = (min(fa, ha), max(fa, ha));
    let two = R::ONE + R::ONE;
    if fhmn == R::ZERO {
        let smax = if fhmx == R::ZERO {
            ga
        } else {
            let (lo, hi) = (min(fhmx, ga), max(fhmx, ga));
            let q = lo / hi;
            hi * (R::ONE + q * q).sqrt()
        };
        (R::ZERO, smax)
    } else if ga < fhmx {
        let as_ = R::ONE + fhmn / fhmx;
        let at = (fhmx - fhmn) / fhmx;
        let au = (ga / fhmx) * (ga / fhmx);
        let c = two / ((as_ * as_ + au).sqrt() + (at * at + au).sqrt());
        (fhmn * c, fhmx / c)
    } else {
        let au = fhmx / ga;
        if au == R::ZERO {
            ((fhmn * fhmx) / ga, ga)
        } else {
            let as_ = R::ONE + fhmn / fhmx;
            let at = (fhmx - fhmn) / fhmx;
            let c = R::ONE
                / ((R::ONE + (as_ * au) * (as_ * au)).sqrt()
                    + (R::ONE + (at * au) * (at * au)).sqrt());
            let smin = (fhmn * c) * au;
            (smin + smin, ga / (c + c))
        }
    }
}

/// The SVD of `[f g; 0 h]` (LAPACK's `lasv2`): `(smin, smax, snr, csr, snl, csl)` with
/// `[csl snl; -snl csl] [f g; 0 h] [csr -snr; snr csr] = diag(smax, smin)`.
#[allow(clippy::many_single_char_names)]
pub(super) fn lasv2<R: Real>(f: R, g: R, h: R) -> (R, R, R, R, R, R) {
    let two = R::ONE + R::ONE;
    let four = two + two;
    let half = R::ONE / two;
    let (mut ft, mut fa, mut ht, mut ha) = (f, f.abs(), h, h.abs());
    let mut pmax = 1;
    let swap = ha > fa;
    if swap {
        pmax = 3;
        std::mem::swap(&mut ft, &mut ht);
        std::mem::swap(&mut fa, &mut ha);
    }
    let gt = g;
    let ga = gt.abs();
    let (mut clt, mut crt, mut slt, mut srt) = (R::ONE, R::ONE, R::ZERO, R::ZERO);
    let (mut ssmin, mut ssmax);
    if ga == R::ZERO {
        ssmin = ha;
        ssmax = fa;
    } else {
        let mut gasmal = true;
        ssmin = R::ZERO;
        ssmax = R::ZERO;
        if ga > fa {
            pmax = 2;
            if fa / ga < R::EPS {
                gasmal = false;
                ssmax = ga;
                ssmin = if ha > R::ONE {
                    fa / (ga / ha)
                } else {
                    (fa / ga) * ha
                };
                clt = R::ONE;
                slt = ht / gt;
                srt = R::ONE;
                crt = ft / gt;
            }
        }
        if gasmal {
            let d = fa - ha;
            let mut l = if d == fa { R::ONE } else { d / fa };
            let m = gt / ft;
            let mut t = two - l;
            let mm = m * m;
            let tt = t * t;
            let s = (tt + mm).sqrt();
            let r = if l == R::ZERO {
                m.abs()
            } else {
                (l * l + mm).sqrt()
            };
            let a = half * (s + r);
            ssmin = ha / a;
            ssmax = fa * a;
            if mm == R::ZERO {
                t = if l == R::ZERO {
                    sign(two, ft) * sign(R::ONE, gt)
                } else {
                    gt / sign(d, ft) + m / t
                };
            } else {
                t = (m / (s + t) + m / (r + l)) * (R::ONE + a);
            }
            l = (t * t + four).sqrt();
            crt = two / l;
            srt = t / l;
            clt = (crt + srt * m) / a;
            slt = (ht / ft) * srt / a;
        }
    }
    let (csl, snl, csr, snr) = if swap {
        (srt, crt, slt, clt)
    } else {
        (clt, slt, crt, srt)
    };
    let one = R::ONE;
    let tsign = match pmax {
        1 => sign(one, csr) * sign(one, csl) * sign(one, f),
        2 => sign(one, snr) * sign(one, csl) * sign(one, g),
        _ => sign(one, snr) * sign(one, snl) * sign(one, h),
    };
    ssmax = sign(ssmax, tsign);
    ssmin = sign(ssmin, tsign * sign(one, f) * sign(one, h));
    (ssmin, ssmax, snr, csr, snl, csl)
}
