//! The secular equation of a rank-one update, shared by the split solvers: the tridiagonal one
//! (`tridiag_dc`, poles `d_j`) and the bidiagonal one (`bidiag_dc`, poles `d_j^2`). Both find
//! each root as an offset from its nearer pole, so that every pole's distance to the root keeps
//! its relative accuracy, and both recompute `z` from the roots (Gu and Eisenstat) so that their
//! vectors are orthogonal. Design record: `docs/svd.md`.

use faer::{Mat, MatMut};

use crate::bidiag_svd::Real;
use crate::par::Executor;
use crate::tiles::Tiles;

/// Most iterations of one root; bisection guards every step, so the bracket shrinks to the
/// working precision well before this.
const MAX_ITER: usize = 200;

/// The root `tau` in `(lo, hi)` of `rhoinv + sum_j z_j^2 / (diff_j - tau)`, where `diff` holds
/// the poles as offsets from the origin and `p < q` are the two poles the model keeps exact
/// (the two around the root, or the last two). `diff` is left holding `diff_j - tau`.
///
/// Each step solves the model with poles `p` and `q` exact and the other terms fitted by value
/// and slope (Bunch, Nielsen and Sorensen), and falls back to bisection when the model's root
/// leaves the bracket. It stops when `|f|` is below `eps` times the rounding bound of its own
/// evaluation (LAPACK's `dlaed4` bound) or the bracket is a few ulps wide.
pub(crate) fn offset_root<R: Real>(
    diff: &mut [R],
    z: &[R],
    rhoinv: R,
    (p, q): (usize, usize),
    mut lo: R,
    mut hi: R,
) -> R {
    let k = diff.len();
    let two = R::from_f64(2.0);
    let mut tau = (lo + hi) / two;
    for _ in 0..MAX_ITER {
        let (mut psi, mut dpsi, mut phi, mut dphi) = (R::ZERO, R::ZERO, R::ZERO, R::ZERO);
        for j in 0..k {
            let t = z[j] / (diff[j] - tau);
            if j <= p {
                psi += z[j] * t;
                dpsi += t * t;
            } else {
                phi += z[j] * t;
                dphi += t * t;
            }
        }
        let f = rhoinv + psi + phi;
        let bound = R::from_f64(8.0) * (phi.abs() + psi.abs())
            + two * rhoinv
            + R::from_f64(3.0) * tau.abs() * (dpsi + dphi);
        if f.abs() <= R::EPS * bound {
            break;
        }
        // f increases from -inf to +inf across the bracket.
        if f > R::ZERO {
            hi = tau;
        } else {
            lo = tau;
        }
        let width = hi - lo;
        let big = if lo.abs() > hi.abs() {
            lo.abs()
        } else {
            hi.abs()
        };
        if width <= R::from_f64(4.0) * R::EPS * big {
            break;
        }
        // The model c + s / (a - eta) + t / (b - eta), matched in value and slope.
        let (a, b) = (diff[p] - tau, diff[q] - tau);
        let (s, t) = (a * a * dpsi, b * b * dphi);
        let c = f - a * dpsi - b * dphi;
        let qa = c;
        let qb = c * (a + b) + s + t;
        let qc = c * a * b + s * b + t * a;
        let inside = |eta: R| {
            let x = tau + eta;
            x > lo && x < hi
        };
        let step = if qa == R::ZERO {
            (qb != R::ZERO).then(|| qc / qb)
        } else {
            let disc = (qb * qb - R::from_f64(4.0) * qa * qc).abs().sqrt();
            let (e1, e2) = if qb >= R::ZERO {
                ((qb + disc) / (two * qa), two * qc / (qb + disc))
            } else {
                ((qb - disc) / (two * qa), two * qc / (qb - disc))
            };
            [e1, e2]
                .into_iter()
                .filter(|e| e.is_finite() && inside(*e))
                .fold(None, |best: Option<R>, e| match best {
                    Some(b) if b.abs() <= e.abs() => Some(b),
                    _ => Some(e),
                })
        };
        tau = match step {
            Some(eta) if inside(eta) => tau + eta,
            _ => (lo + hi) / two,
        };
    }
    for x in diff.iter_mut() {
        *x -= tau;
    }
    tau
}

/// Gu and Eisenstat's `z`: the vector for which the computed roots are exact, from the
/// differences alone (`delta(j, i)` is pole `j` minus root `i`; `gap(i, j)` is pole `i`
/// minus pole `j`, computed accurately), with the signs of `z`. The vectors built from it are
/// orthogonal to working precision however close the roots are. The scale is that of a
/// secular equation with `1 / rho = 1`. Rows in chunks on `width` participants.
pub(crate) fn recomputed_z<R: Real>(
    z: &[R],
    delta: impl Fn(usize, usize) -> R + Sync,
    gap: impl Fn(usize, usize) -> R + Sync,
    width: usize,
    exec: &(impl Executor + ?Sized),
) -> Vec<R> {
    let k = z.len();
    let mut out = Mat::<R>::zeros(k, 1);
    let tiles = Tiles::new(out.as_mut());
    let chunk = |c: usize, chunks: usize| {
        let (i0, i1) = (c * k / chunks, (c + 1) * k / chunks);
        // SAFETY: chunk c owns rows i0..i1; the ranges partition 0..k.
        let mut rows = unsafe { tiles.tile(i0, i1, 0, 1) };
        for i in i0..i1 {
            let mut prod = delta(i, i);
            for j in 0..k {
                if j != i {
                    prod *= delta(i, j) / gap(i, j);
                }
            }
            let mag = if prod < R::ZERO {
                (-prod).sqrt()
            } else {
                R::ZERO
            };
            rows[(i - i0, 0)] = if z[i] < R::ZERO { -mag } else { mag };
        }
    };
    run_chunks(exec, width, k, &chunk);
    out.col(0).iter().copied().collect()
}

/// The deflation of two neighbouring poles `p` and `c` (LAPACK's `dlaed2` and `dlasd2`): when
/// the rotation that zeroes `z_p` into `z_c` changes the matrix by at most `tol`
/// (`|(d_c - d_p) cs sn|`), it is applied to `z` and `d` (the dropped off-diagonal entry is
/// that change) and returned, for the caller to apply to the columns `p` and `c` of its
/// vectors (`x_p <- cs x_p + sn x_c`, `x_c <- cs x_c - sn x_p`); else nothing changes.
pub(crate) fn close_pair<R: Real>(
    d: &mut [R],
    z: &mut [R],
    p: usize,
    c: usize,
    tol: R,
) -> Option<(R, R)> {
    let h = z[c].hypot(z[p]);
    let (cs, sn) = (z[c] / h, -z[p] / h);
    if ((d[c] - d[p]) * cs * sn).abs() > tol {
        return None;
    }
    z[c] = h;
    z[p] = R::ZERO;
    let (dp, dc) = (d[p], d[c]);
    d[p] = dp * cs * cs + dc * sn * sn;
    d[c] = dp * sn * sn + dc * cs * cs;
    Some((cs, sn))
}

/// `x_p <- c x_p + s x_q`, `x_q <- c x_q - s x_p` on columns `p` and `q` of `x`.
pub(crate) fn rotate_cols<R: Real>(mut x: MatMut<'_, R>, p: usize, q: usize, c: R, s: R) {
    for i in 0..x.nrows() {
        let (a, b) = (x[(i, p)], x[(i, q)]);
        x[(i, p)] = c * a + s * b;
        x[(i, q)] = c * b - s * a;
    }
}

/// Unit vectors, one column of `out` (`k x k`) per root, in chunks on `width` participants:
/// column `i` holds `entry(j, i)` in row `slot[j]` (the caller's grouped order), normalized.
pub(crate) fn unit_columns<R: Real>(
    entry: &(impl Fn(usize, usize) -> R + Sync),
    slot: &[usize],
    out: MatMut<'_, R>,
    width: usize,
    exec: &(impl Executor + ?Sized),
) {
    let k = slot.len();
    let tiles = Tiles::new(out);
    let chunk = |c: usize, chunks: usize| {
        let (i0, i1) = (c * k / chunks, (c + 1) * k / chunks);
        // SAFETY: chunk c owns columns i0..i1; the ranges partition 0..k.
        let mut cols = unsafe { tiles.tile(0, k, i0, i1) };
        for i in i0..i1 {
            let mut col = cols.as_mut().col_mut(i - i0);
            let mut norm2 = R::ZERO;
            for (j, &at) in slot.iter().enumerate() {
                let x = entry(j, i);
                col[at] = x;
                norm2 += x * x;
            }
            let inv = R::ONE / norm2.sqrt();
            for j in 0..k {
                col[j] *= inv;
            }
        }
    };
    run_chunks(exec, width, k, &chunk);
}

/// Runs `f` over chunks on `width` participants, or as one chunk on the caller.
pub(crate) fn run_chunks(
    exec: &(impl Executor + ?Sized),
    width: usize,
    len: usize,
    f: &(dyn Fn(usize, usize) + Sync),
) {
    if width <= 1 || len < 2 * width {
        f(0, 1);
    } else {
        // An executor may cut more chunks than there are items: those past the end are empty.
        exec.run_chunks(width, &|c, chunks| {
            if c < chunks.min(len) {
                f(c, chunks.min(len));
            }
        });
    }
}
