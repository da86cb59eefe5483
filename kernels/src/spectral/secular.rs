//! The secular equation of a rank-one update, shared by the split solvers: the tridiagonal one
//! (`tridiag_dc`, poles `d_j`) and the bidiagonal one (`bidiag_dc`, poles `d_j^2`). Both find
//! each root as an offset from its nearer pole, so that every pole's distance to the root keeps
//! its relative accuracy, and both recompute `z` from the roots (Gu and Eisenstat) so that their
//! vectors are orthogonal. Design record: `docs/svd.md`.

use faer::{Mat, MatMut};

use crate::exec::call;
use crate::exec::par::Executor;
use crate::exec::tiles::Tiles;
use crate::spectral::scalar::Real;

/// Model steps of one root before its bracket is only bisected. The model converges in a few
/// steps on every case measured (`docs/svd.md`); the bisection after it is the guarantee.
const MODEL_STEPS: usize = 100;

/// The root `tau` in `(lo, hi)` of `rhoinv + sum_j z_j^2 / (diff_j - tau)`, where `diff` holds
/// the poles as offsets from the origin and `p < q` are the two poles the model keeps exact
/// (the two around the root, or the last two). `diff` is left holding `diff_j - tau`.
///
/// Each step solves the model with poles `p` and `q` exact and the other terms fitted by value
/// and slope (Bunch, Nielsen and Sorensen), and falls back to bisection when the model's root
/// leaves the bracket. It stops when `|f|` is below `eps` times the rounding bound of its own
/// evaluation (LAPACK's `dlaed4` bound) or the bracket is a few ulps wide.
///
/// It always converges, so it has no failure to report. After [`MODEL_STEPS`] steps every
/// further step bisects: `tau` becomes the bracket's midpoint, and `f(tau)` replaces one end,
/// so the bracket at least halves (up to one rounding of the midpoint) at each step, and it
/// stops when the midpoint is no longer strictly inside the bracket, which happens once the
/// bracket is two adjacent numbers at the latest (or at once, for a NaN end). A bracket of
/// finite ends spans at most `2^(emax+1)` and shrinks to the spacing `2^(emin-mant)` of the
/// smallest numbers in at most `emax + 1 - emin + mant + 1` halvings: 2 100 for `f64`, 280 for
/// `f32`. `tests` below bisects from the start (no model step) and checks both.
pub(crate) fn offset_root<R: Real>(
    diff: &mut [R],
    z: &[R],
    rhoinv: R,
    poles: (usize, usize),
    lo: R,
    hi: R,
) -> R {
    offset_root_steps(diff, z, rhoinv, poles, lo, hi, MODEL_STEPS).0
}

/// [`offset_root`] with at most `model_steps` model steps; also returns the steps taken.
fn offset_root_steps<R: Real>(
    diff: &mut [R],
    z: &[R],
    rhoinv: R,
    (p, q): (usize, usize),
    mut lo: R,
    mut hi: R,
    model_steps: usize,
) -> (R, usize) {
    let k = diff.len();
    let two = R::from_f64(2.0);
    let mut tau = (lo + hi) / two;
    let mut steps = 0;
    loop {
        steps += 1;
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
        if steps > model_steps {
            let mid = (lo + hi) / two;
            if !(mid > lo && mid < hi) {
                break; // two adjacent numbers (or a NaN end): nothing left to halve
            }
            tau = mid;
            continue;
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
    (tau, steps)
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
        call::chunks(exec, width, &|c, chunks| {
            if c < chunks.min(len) {
                f(c, chunks.min(len));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{offset_root_steps, MODEL_STEPS};

    /// `1/rho + sum z_j^2 / (d_j - tau)` at `tau`.
    fn secular(d: &[f64], z: &[f64], rhoinv: f64, tau: f64) -> f64 {
        rhoinv + d.iter().zip(z).map(|(d, z)| z * z / (d - tau)).sum::<f64>()
    }

    /// A root between poles 1 and 2 of four, found by the model and by bisection alone.
    #[test]
    fn bisection_alone_converges_to_the_models_root() {
        let d = [0.0f64, 1.0, 1.0 + 1e-9, 3.0];
        let z = [0.3f64, 0.5, 1e-5, 0.4];
        let rhoinv = 1.0;
        // The root between d[1] and d[2], as an offset from d[1].
        let diff: Vec<f64> = d.iter().map(|x| x - d[1]).collect();
        let (lo, hi) = (0.0, d[2] - d[1]);
        let mut a = diff.clone();
        let (model, model_steps) =
            offset_root_steps(&mut a, &z, rhoinv, (1, 2), lo, hi, MODEL_STEPS);
        let mut b = diff.clone();
        let (bisected, bisect_steps) = offset_root_steps(&mut b, &z, rhoinv, (1, 2), lo, hi, 0);
        assert!(model_steps < 20, "the model took {model_steps} steps");
        assert!(bisect_steps <= 2100, "bisection took {bisect_steps} steps");
        // Both in the bracket and both roots: f changes sign within a few ulps of each.
        for tau in [model, bisected] {
            assert!(tau > lo && tau < hi);
            let ulp = f64::EPSILON * hi;
            let (below, above) = (
                secular(&diff, &z, rhoinv, tau - 4.0 * ulp),
                secular(&diff, &z, rhoinv, tau + 4.0 * ulp),
            );
            assert!(
                below <= 0.0 && above >= 0.0,
                "f({tau}) does not change sign"
            );
        }
        assert!((model - bisected).abs() <= 8.0 * f64::EPSILON * hi);
    }

    /// The widest bracket: from the largest finite number to the smallest, around a root at
    /// -1 (`f(tau) = -1 - 1/tau`, its pole at 0), bisected alone. It ends within the proof's
    /// bound at the root, in `f64` and `f32`.
    #[test]
    fn bisection_ends_within_the_bound_on_the_widest_brackets() {
        let mut diff = [0.0f64];
        let (tau, steps) = offset_root_steps(
            &mut diff,
            &[1.0],
            -1.0,
            (0, 0),
            -f64::MAX,
            -f64::from_bits(1),
            0,
        );
        assert!(steps <= 2100, "{steps} steps");
        assert!((tau + 1.0).abs() <= 4.0 * f64::EPSILON, "tau {tau}");
        let mut diff = [0.0f32];
        let (tau, steps) = offset_root_steps(
            &mut diff,
            &[1.0],
            -1.0,
            (0, 0),
            -f32::MAX,
            -f32::from_bits(1),
            0,
        );
        assert!(steps <= 280, "{steps} steps");
        assert!((tau + 1.0).abs() <= 4.0 * f32::EPSILON, "tau {tau}");
        // A NaN end stops at once.
        let mut diff = [0.0f64];
        let (_, steps) = offset_root_steps(&mut diff, &[1.0], 1.0, (0, 0), f64::NAN, 1.0, 0);
        assert!(steps <= 2);
    }
}
