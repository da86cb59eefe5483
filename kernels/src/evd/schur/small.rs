//! The small bulge: one shift at a time, the transformations applied as they are made
//! (LAPACK's `zlahqr`, in general complex arithmetic). It finishes blocks below the
//! multishift threshold and computes the Schur form of a deflation window.

use faer::MatMut;

use super::scalar::Cplx;
use crate::spectral::scalar::Real;

/// A reflector `G = I - tau v v^H` with `v = [1, v1, ...]`: `G^H [alpha; x] = [beta; 0]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reflector<C> {
    pub(crate) tau: C,
    pub(crate) beta: C,
}

/// Makes the reflector of `[alpha; x]` (LAPACK's `zlarfg`): `x` becomes `v`'s tail. The
/// identity (`tau = 0`) when `x` is zero and `alpha` real.
pub(crate) fn reflector<C: Cplx>(alpha: C, x: &mut [C]) -> Reflector<C> {
    let zero = <C::R as Real>::ZERO;
    // The norms scaled by the largest part, so that squares neither overflow nor underflow.
    let mut big = zero;
    for p in x.iter().flat_map(|v| [v.re().abs(), v.im().abs()]) {
        if p > big {
            big = p;
        }
    }
    if big == zero && alpha.im() == zero {
        return Reflector {
            tau: C::ZERO,
            beta: alpha,
        };
    }
    for p in [alpha.re().abs(), alpha.im().abs()] {
        if p > big {
            big = p;
        }
    }
    let inv = <C::R as Real>::ONE / big;
    let mut sum = zero;
    for p in x
        .iter()
        .chain(std::iter::once(&alpha))
        .flat_map(|v| [v.re(), v.im()])
    {
        let q = p * inv;
        sum += q * q;
    }
    let norm = big * sum.sqrt();
    let beta = if alpha.re() >= zero { -norm } else { norm };
    let tau = C::new((beta - alpha.re()) / beta, -alpha.im() / beta);
    let inv = C::ONE.quot(alpha - C::new(beta, zero));
    for v in x.iter_mut() {
        *v *= inv;
    }
    Reflector {
        tau,
        beta: C::new(beta, zero),
    }
}

/// `G^H` applied from the left to rows `r, r + 1` of the column-major `a`, columns `cols`
/// (`G` of length 2, tail `v1`).
#[inline]
pub(crate) fn left2<C: Cplx>(
    a: &mut MatMut<'_, C>,
    r: usize,
    cols: std::ops::Range<usize>,
    tau: C,
    v1: C,
) {
    assert!(a.row_stride() == 1 && r + 1 < a.nrows() && cols.end <= a.ncols());
    let (tc, v1c) = (tau.conj(), v1.conj());
    let cs = a.col_stride();
    let p = a.as_ptr_mut();
    for j in cols {
        // SAFETY: rows r and r + 1 and column j lie in the matrix (asserted), whose rows are
        // adjacent (row stride 1); `a`'s exclusive borrow covers them and nothing else
        // reaches them meanwhile.
        unsafe {
            let x = p.offset(j as isize * cs + r as isize);
            let y = x.add(1);
            let s = tc * (*x + v1c * *y);
            *x -= s;
            *y -= s * v1;
        }
    }
}

/// `G` applied from the right to columns `c, c + 1` of the column-major `a`, rows `rows`.
#[inline]
pub(crate) fn right2<C: Cplx>(
    a: &mut MatMut<'_, C>,
    c: usize,
    rows: std::ops::Range<usize>,
    tau: C,
    v1: C,
) {
    assert!(a.row_stride() == 1 && c + 1 < a.ncols() && rows.end <= a.nrows());
    if rows.start >= rows.end {
        return;
    }
    let v1c = v1.conj();
    let cs = a.col_stride();
    let len = rows.end - rows.start;
    // SAFETY: columns c and c + 1 and the rows lie in the matrix (asserted), each column's
    // rows contiguous (row stride 1); the two slices are distinct columns of one `MatMut`,
    // whose entries never alias one another whatever the sign of its column stride, and
    // `a`'s exclusive borrow covers them while the slices live.
    let (x, y) = unsafe {
        let p = a.as_ptr_mut().offset(c as isize * cs + rows.start as isize);
        (
            std::slice::from_raw_parts_mut(p, len),
            std::slice::from_raw_parts_mut(p.offset(cs), len),
        )
    };
    if len < 8 {
        for (xi, yi) in x.iter_mut().zip(y.iter_mut()) {
            let s = tau * (*xi + *yi * v1);
            *xi -= s;
            *yi -= s * v1c;
        }
    } else {
        C::reflect_pair(x, y, tau, v1);
    }
}

/// Whether the subdiagonal entry `h[k, k-1]` is negligible: below `small`, or by Ahues and
/// Tisseur's test against its neighbours (LAWN 122), as LAPACK's `zlahqr` and `zlaqr5` ask.
pub(crate) fn negligible<C: Cplx>(h: &MatMut<'_, C>, k: usize, lo: usize, hi: usize) -> bool {
    let (ulp, small) = tolerances::<C>(hi + 1 - lo);
    let sub = h[(k, k - 1)].abs1();
    if sub <= small {
        return true;
    }
    let mut tst = h[(k - 1, k - 1)].abs1() + h[(k, k)].abs1();
    if tst == <C::R as Real>::ZERO {
        if k >= lo + 2 {
            tst += h[(k - 1, k - 2)].abs1();
        }
        if k < hi {
            tst += h[(k + 1, k)].abs1();
        }
    }
    if sub > ulp * tst {
        return false;
    }
    let up = h[(k - 1, k)].abs1();
    let (ab, ba) = if sub >= up { (sub, up) } else { (up, sub) };
    let d = (h[(k - 1, k - 1)] - h[(k, k)]).abs1();
    let kk = h[(k, k)].abs1();
    let (aa, bb) = if kk >= d { (kk, d) } else { (d, kk) };
    let s = aa + ab;
    let rhs = ulp * (bb * (aa / s));
    ba * (ab / s) <= if small > rhs { small } else { rhs }
}

/// The unit roundoff's precision `ulp` (LAPACK's `dlamch('P')`) and the smallest subdiagonal
/// kept, `safe_min * n / ulp`, for an active block of order `n`.
pub(crate) fn tolerances<C: Cplx>(n: usize) -> (C::R, C::R) {
    let ulp = <C::R as Real>::EPS + <C::R as Real>::EPS;
    let small = <C::R as Real>::SAFE_MIN * (<C::R as Real>::from_f64(n as f64) / ulp);
    (ulp, small)
}

/// Where the transformations of a block reach: the rows above it from `top`, the columns
/// right of it up to `end` (exclusive), and the rows of `z` (all of them) when it is given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reach {
    pub(crate) top: usize,
    pub(crate) end: usize,
}

/// Reduces the active block `lo..=hi` of the upper Hessenberg `h` to upper triangular form
/// by single-shift QR steps, applying each transformation to the rows `reach.top..` above
/// and the columns `..reach.end` right of the block and to `z`'s columns. `Err(i)`: the
/// iterations ran out with `h[lo..=i, lo..=i]` not yet triangular (the rest is).
pub(crate) fn lahqr<C: Cplx>(
    h: &mut MatMut<'_, C>,
    mut z: Option<&mut MatMut<'_, C>>,
    lo: usize,
    hi: usize,
    reach: Reach,
) -> Result<(), usize> {
    if hi <= lo {
        return Ok(());
    }
    for j in lo..hi.saturating_sub(2) {
        h[(j + 2, j)] = C::ZERO;
        h[(j + 3, j)] = C::ZERO;
    }
    if lo + 2 <= hi {
        h[(hi, hi - 2)] = C::ZERO;
    }
    let nh = hi + 1 - lo;
    let (ulp, _) = tolerances::<C>(nh);
    let itmax = 30 * nh.max(10);
    let three_quarters = <C::R as Real>::from_f64(0.75);
    let half = <C::R as Real>::from_f64(0.5);
    let zero = <C::R as Real>::ZERO;
    let mut i = hi;
    'blocks: loop {
        let mut l = lo;
        for its in 0..=itmax {
            // A negligible subdiagonal splits the block.
            let mut k = i;
            while k > l && !negligible(h, k, lo, hi) {
                k -= 1;
            }
            l = k;
            if l > lo {
                h[(l, l - 1)] = C::ZERO;
            }
            if l >= i {
                // One eigenvalue converged at the bottom.
                if l <= lo {
                    return Ok(());
                }
                i = l - 1;
                continue 'blocks;
            }
            let shift = if its == 10 {
                h[(l, l)] + C::new(three_quarters * h[(l + 1, l)].abs1(), zero)
            } else if its == 20 {
                h[(i, i)] + C::new(three_quarters * h[(i, i - 1)].abs1(), zero)
            } else {
                wilkinson(
                    h[(i - 1, i - 1)],
                    h[(i - 1, i)],
                    h[(i, i - 1)],
                    h[(i, i)],
                    half,
                )
            };
            // Start where two consecutive subdiagonals are small enough.
            let mut m = l;
            let mut v = [C::ZERO; 2];
            for mm in (l + 1..i).rev() {
                let (h11, h22) = (h[(mm, mm)], h[(mm + 1, mm + 1)]);
                let mut h11s = h11 - shift;
                let mut h21 = h[(mm + 1, mm)];
                let s = h11s.abs1() + h21.abs1();
                h11s = h11s.scale(s.recip_or_one());
                h21 = h21.scale(s.recip_or_one());
                let h10 = h[(mm, mm - 1)].abs1();
                if h10 * h21.abs1() <= ulp * (h11s.abs1() * (h11.abs1() + h22.abs1())) {
                    m = mm;
                    v = [h11s, h21];
                    break;
                }
            }
            if m == l {
                v = [h[(l, l)] - shift, h[(l + 1, l)]];
            }
            let (top, end) = (reach.top.min(l), reach.end.max(i + 1));
            for k in m..i {
                let (alpha, mut x) = if k > m {
                    (h[(k, k - 1)], [h[(k + 1, k - 1)]])
                } else {
                    (v[0], [v[1]])
                };
                let g = reflector(alpha, &mut x);
                let v1 = x[0];
                if k > m {
                    h[(k, k - 1)] = g.beta;
                    h[(k + 1, k - 1)] = C::ZERO;
                } else if k > l {
                    // The small h[m, m-1] takes its share; the entry below it is negligible
                    // by the test that chose m.
                    h[(k, k - 1)] = h[(k, k - 1)] - g.tau.conj() * h[(k, k - 1)];
                }
                left2(h, k, k..end, g.tau, v1);
                right2(h, k, top..(k + 3).min(i + 1), g.tau, v1);
                if let Some(z) = z.as_deref_mut() {
                    let rows = z.nrows();
                    right2(z, k, 0..rows, g.tau, v1);
                }
            }
        }
        return Err(i);
    }
}

/// Wilkinson's shift of the trailing 2 x 2 block `[a b; c d]`: its eigenvalue nearer `d`.
fn wilkinson<C: Cplx>(a: C, b: C, c: C, d: C, half: C::R) -> C {
    let u = b.sqrt() * c.sqrt();
    let s = u.abs1();
    if s == <C::R as Real>::ZERO {
        return d;
    }
    let x = (a - d).scale(half);
    let sx = x.abs1();
    let s = if s >= sx { s } else { sx };
    let (xs, us) = (x.scale(s.recip_or_one()), u.scale(s.recip_or_one()));
    let mut y = (xs * xs + us * us).sqrt().scale(s);
    if sx > <C::R as Real>::ZERO {
        let xn = x.scale(sx.recip_or_one());
        if xn.re() * y.re() + xn.im() * y.im() < <C::R as Real>::ZERO {
            y = -y;
        }
    }
    d - u * u.quot(x + y)
}

/// `1 / x`, or 1 for zero (a scale that cannot divide by zero).
trait RecipOrOne {
    fn recip_or_one(self) -> Self;
}

impl<R: Real> RecipOrOne for R {
    fn recip_or_one(self) -> R {
        if self == R::ZERO {
            R::ONE
        } else {
            R::ONE / self
        }
    }
}
