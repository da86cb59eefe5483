//! One multishift QR sweep: a chain of bulges, one shift each, introduced at the top of the
//! active block and chased off its bottom, window by window. Inside a window every
//! transformation is applied at once to the window and accumulated in `U`; the window's far
//! parts then take `U` in three products on the team (`far.rs`). LAPACK's `zlaqr5` packs
//! two shifts per bulge and exploits `U`'s banded structure; one shift per bulge keeps the
//! chase short and the rules simple, for a denser `U`.

use faer::reborrow::ReborrowMut;
use faer::{Mat, MatMut};

use super::far::{self, Team};
use super::scalar::Cplx;
use super::small::{left2, reflector, right2, Reach};
use crate::exec::par::Executor;

/// Rows between two bulges of the chain: a bulge at step `k` lives in rows `k..=k + 2`.
const GAP: usize = 3;

/// Rows a window moves the chain by, at least: a longer move makes fewer, larger far
/// products, a shorter one less local work per step (measured at 256 and 512 with 16 shifts:
/// 16 to 32 rows best, 64 slower by 10 to 20 %).
const MOVE: usize = 24;

/// The window a sweep of `shifts` bulges works in: the chain (two rows a bulge once packed)
/// and the rows it moves by.
pub(crate) fn window(shifts: usize) -> usize {
    2 * shifts + GAP + MOVE.max(shifts)
}

/// Chases one bulge per shift through `h[ktop..=kbot, ktop..=kbot]`. `u` is scratch of at
/// least `window(shifts.len())` square.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sweep<C: Cplx, E: Executor + ?Sized>(
    h: &mut MatMut<'_, C>,
    mut z: Option<&mut MatMut<'_, C>>,
    ktop: usize,
    kbot: usize,
    shifts: &[C],
    reach: Reach,
    u: &mut Mat<C>,
    team: &Team<'_, E>,
) {
    let nb = shifts.len();
    if nb == 0 || kbot <= ktop {
        return;
    }
    let win = window(nb);
    // The next step of each bulge (`kbot`: chased off).
    let mut pos = vec![ktop; nb];
    while let Some(trail) = (0..nb).rev().find(|&j| pos[j] < kbot) {
        let lead = (0..nb).find(|&j| pos[j] < kbot).unwrap_or(trail);
        let ws = if pos[trail] == ktop {
            ktop
        } else {
            pos[trail] - 1
        };
        let we = (ws + win - 1).min(kbot);
        let wl = we + 1 - ws;
        let mut uw = u.as_mut().submatrix_mut(0, 0, wl, wl);
        uw.fill(C::ZERO);
        uw.rb_mut().diagonal_mut().fill(C::ONE);
        // The rows where each column of U may be nonzero (a rotation of two columns unites
        // their ranges): U stays near triangular, and its updates skip the zeros.
        let mut span: Vec<(usize, usize)> = (0..wl).map(|c| (c, c)).collect();
        loop {
            let mut moved = false;
            for j in lead..=trail {
                let k = pos[j];
                if k >= kbot
                    || (j > 0 && pos[j - 1] < kbot && pos[j - 1] < k + GAP)
                    || (k > ktop && k - 1 < ws)
                    || (k + 2).min(kbot) > we
                {
                    continue;
                }
                let (alpha, mut x) = if k == ktop {
                    (h[(k, k)] - shifts[j], [h[(k + 1, k)]])
                } else {
                    (h[(k, k - 1)], [h[(k + 1, k - 1)]])
                };
                let g = reflector(alpha, &mut x);
                if k > ktop {
                    h[(k, k - 1)] = g.beta;
                    h[(k + 1, k - 1)] = C::ZERO;
                }
                left2(h, k, k..we + 1, g.tau, x[0]);
                right2(h, k, ws..(k + 3).min(kbot + 1), g.tau, x[0]);
                let c = k - ws;
                let (r0, r1) = (span[c].0.min(span[c + 1].0), span[c].1.max(span[c + 1].1));
                (span[c], span[c + 1]) = ((r0, r1), (r0, r1));
                right2(&mut uw, c, r0..r1 + 1, g.tau, x[0]);
                pos[j] = k + 1;
                moved = true;
            }
            if !moved {
                break;
            }
        }
        far::apply(
            h,
            z.as_deref_mut(),
            u.as_ref().submatrix(0, 0, wl, wl),
            ws,
            reach,
            team,
        );
    }
}
