//! Singular values of a real bidiagonal matrix, without vectors, by the dqds algorithm
//! (differential quotient-difference with shifts, Fernando and Parlett; LAPACK's `dlasq1`
//! runs it for the same task). Design record: `docs/svd.md`, "Values only: dqds".
//!
//! The squares `q_i = d_i^2` and `e_i = e_i^2` are the qd array of `B^T B`. One step with shift
//! `s` turns it into the qd array of `B' B'^T = B^T B - s I` in one pass, with one division and
//! no square root per entry and no subtraction that can cancel, which keeps every value to
//! high relative accuracy (each step is backward stable entrywise). A step fails, and is redone
//! with a smaller shift, when a pivot `d` turns negative, that is when `s` passed the smallest
//! eigenvalue. The bottom entry deflates when its `e` is below `tol^2` of the value it holds.

use crate::spectral::scalar::Real;

/// Most steps per value before giving up (the QR then runs): far above the 2 to 10 seen.
const MAX_STEPS_PER_VALUE: usize = 40;

/// The singular values of the upper bidiagonal `B` with diagonal `d` and superdiagonal `e`
/// (`n - 1` entries), non-increasing, into `out`; `true` on success.
///
/// Returns `false`, `out` then unspecified and `d`, `e` untouched, when it declines: a zero
/// entry (the zero-shift QR deflates it exactly), an entry whose square would leave the normal
/// range (below `sqrt(SAFE_MIN) / EPS` of the largest, or a largest entry that is not near
/// one: the caller scales by a power of two first), or no convergence within
/// `MAX_STEPS_PER_VALUE` steps per value.
pub(crate) fn singular_values<R: Real>(d: &[R], e: &[R], out: &mut [R]) -> bool {
    let n = d.len();
    assert!(out.len() == n && (n == 0 || e.len() + 1 == n));
    let big = d
        .iter()
        .chain(e.iter())
        .fold(R::ZERO, |a, x| if x.abs() > a { x.abs() } else { a });
    let floor = R::SAFE_MIN.sqrt() / R::EPS;
    let in_range = |x: &R| x.abs() >= floor;
    if n == 0 {
        return true;
    }
    if big > R::from_f64(4.0) || !d.iter().chain(e.iter()).all(in_range) {
        return false;
    }
    let mut q: Vec<R> = d.iter().map(|x| *x * *x).collect();
    let mut f: Vec<R> = e.iter().map(|x| *x * *x).collect();
    let (mut nq, mut nf) = (q.clone(), f.clone());
    let tol = R::from_f64(10.0) * R::EPS;
    let tol2 = tol * tol;
    let mut values = 0;
    let mut hi = n;
    let mut sigma = R::ZERO;
    // The smallest pivot of the last step: an upper bound of the smallest eigenvalue left.
    let mut dmin: Option<R> = None;
    let mut steps = 0;
    let mut put = |x: R, values: &mut usize| {
        out[*values] = x.sqrt();
        *values += 1;
    };
    while hi > 0 {
        if hi == 1 {
            put(q[0] + sigma, &mut values);
            break;
        }
        let (q1, f1, q2) = (q[hi - 2], f[hi - 2], q[hi - 1]);
        // The bottom value is alone.
        if f1 <= tol2 * (sigma + q2) {
            put(q2 + sigma, &mut values);
            hi -= 1;
            dmin = None;
            continue;
        }
        // The bottom 2x2 is alone: B2 B2^T has trace q1 + f1 + q2 and determinant q1 q2.
        if hi == 2 || f[hi - 3] <= tol2 * (sigma + q1) {
            let t = q1 + f1 + q2;
            let large = larger_root(t, q1 / t * (q2 / t));
            put(q1 / large * q2 + sigma, &mut values);
            put(large + sigma, &mut values);
            hi -= 2;
            dmin = None;
            continue;
        }
        steps += 1;
        if steps > MAX_STEPS_PER_VALUE * n {
            return false;
        }
        // The shift: the smaller eigenvalue of the trailing 2x2 of B^T B (above the smallest
        // eigenvalue by interlacing, close once the bottom e is small), capped by the last
        // step's smallest pivot, and pulled down by sqrt(f1 / q2) while the bottom has not
        // settled.
        // Its determinant, (q1 + f0) (q2 + f1) - q1 f1 = q1 q2 + f0 q2 + f0 f1, has no
        // cancellation; every product is taken over the larger root (squares of squares
        // would leave the range).
        let f0 = f[hi - 3];
        let (a11, a22) = (q1 + f0, q2 + f1);
        let t = a11 + a22;
        let large = larger_root(t, a11 / t * (a22 / t) - q1 / t * (f1 / t));
        let mut s = q1 / large * q2 + f0 / large * q2 + f0 / large * f1;
        if let Some(m) = dmin {
            if m < s {
                s = m;
            }
        }
        let settle = (f1 / q2).sqrt();
        s = if settle >= R::ONE {
            R::ZERO
        } else {
            s * (R::ONE - settle) * R::from_f64(0.99999)
        };
        if s < R::ZERO {
            s = R::ZERO;
        }
        // One step; on failure a quarter of the shift, then none (which cannot fail).
        let mut tries = 0;
        let low = loop {
            match step(&q[..hi], &f[..hi - 1], s, &mut nq[..hi], &mut nf[..hi - 1]) {
                Some(low) => break low,
                None if tries == 2 => return false,
                None => {
                    tries += 1;
                    s = if tries == 1 {
                        s * R::from_f64(0.25)
                    } else {
                        R::ZERO
                    };
                }
            }
        };
        std::mem::swap(&mut q, &mut nq);
        std::mem::swap(&mut f, &mut nf);
        sigma += s;
        dmin = Some(low);
    }
    debug_assert_eq!(values, n);
    out.sort_by(|a, b| b.total_cmp(a));
    true
}

/// The larger root of `x^2 - t x + p t^2` (`t > 0`, `0 <= p <= 1/4`: a 2x2 symmetric
/// positive semi-definite matrix of trace `t` and determinant `p t^2`), with no product that
/// can leave the range.
fn larger_root<R: Real>(t: R, p: R) -> R {
    let r = R::ONE - R::from_f64(4.0) * p;
    let r = if r > R::ZERO { r.sqrt() } else { R::ZERO };
    t * (R::ONE + r) * R::from_f64(0.5)
}

/// One dqds step of `(q, f)` with shift `s` into `(nq, nf)`; the smallest pivot, or `None`
/// when a pivot turned negative (the shift passed the smallest eigenvalue).
fn step<R: Real>(q: &[R], f: &[R], s: R, nq: &mut [R], nf: &mut [R]) -> Option<R> {
    let n = q.len();
    let mut d = q[0] - s;
    if d < R::ZERO {
        return None;
    }
    let mut low = d;
    for i in 0..n - 1 {
        let qi = d + f[i];
        nq[i] = qi;
        let t = q[i + 1] / qi;
        nf[i] = f[i] * t;
        d = d * t - s;
        if d < R::ZERO {
            return None;
        }
        if d < low {
            low = d;
        }
    }
    nq[n - 1] = d;
    Some(low)
}
