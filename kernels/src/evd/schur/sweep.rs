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
use crate::exec::call;
use crate::exec::par::Executor;
use crate::exec::tiles::Tiles;

/// The pieces the previous window's far parts are cut into, claimed by whoever is free
/// (the chase of the next window is one more).
const PIECES: usize = 6;

/// Rows between two bulges of the chain: a bulge at step `k` lives in rows `k..=k + 2`.
const GAP: usize = 3;

/// Rows a window moves the chain by, at least: a longer move makes fewer, larger far
/// products, a shorter one less local work per step (`docs/general-evd.md`, "Tuning": with
/// 16 shifts at 512, moves of 16 and 32 rows took 153 and 145 ms, 64 rows 168 ms).
const MOVE: usize = 24;

/// The window a sweep of `shifts` bulges works in: the chain (two rows a bulge once packed)
/// and the rows it moves by.
pub(crate) fn window(shifts: usize) -> usize {
    2 * shifts + GAP + MOVE.max(shifts)
}

/// Chases one bulge per shift through `h[ktop..=kbot, ktop..=kbot]`. `u` holds two scratch
/// matrices of at least `window(shifts.len())` square.
///
/// Windows are pipelined: while one participant chases the chain through window `i + 1`,
/// another applies window `i`'s `U` to the far parts window `i + 1` does not touch (the
/// columns right of it, the rows above window `i`, `Z`). Window `i`'s `U` reaches the
/// columns window `i + 1` adds before that chase starts, on the caller.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sweep<C: Cplx, E: Executor + ?Sized>(
    h: &mut MatMut<'_, C>,
    mut z: Option<&mut MatMut<'_, C>>,
    ktop: usize,
    kbot: usize,
    shifts: &[C],
    reach: Reach,
    u: &mut [Mat<C>; 2],
    team: &Team<'_, E>,
) {
    let nb = shifts.len();
    if nb == 0 || kbot <= ktop {
        return;
    }
    let win = window(nb);
    // The next step of each bulge (`kbot`: chased off).
    let mut pos = vec![ktop; nb];
    // The previous window, whose far parts are pending: its start and order, and which of
    // the two scratch matrices holds its U.
    let mut prev: Option<(usize, usize, usize)> = None;
    let mut cur = 0;
    while let Some(trail) = (0..nb).rev().find(|&j| pos[j] < kbot) {
        let ws = if pos[trail] == ktop {
            ktop
        } else {
            pos[trail] - 1
        };
        let we = (ws + win - 1).min(kbot);
        let wl = we + 1 - ws;
        if let Some((pws, pwl, pu)) = prev {
            // The columns this window adds to the previous one's right: U first.
            let pwe = pws + pwl;
            if we + 1 > pwe {
                let near = h.rb_mut().submatrix_mut(pws, pwe, pwl, we + 1 - pwe);
                far::left_product(near, u[pu].as_ref().submatrix(0, 0, pwl, pwl));
            }
        }
        let (ua, ub) = u.split_at_mut(1);
        let (ucur, uprev) = if cur == 0 {
            (&mut ua[0], &ub[0])
        } else {
            (&mut ub[0], &ua[0])
        };
        let width = if prev.is_some() { team.width } else { 1 };
        let tiles = Tiles::new(h.rb_mut());
        let zt = z.as_deref_mut().map(|z| Tiles::new(z.rb_mut()));
        let pos_cell = std::sync::Mutex::new(&mut pos);
        let ucur_cell = std::sync::Mutex::new(ucur.as_mut().submatrix_mut(0, 0, wl, wl));
        let task = |c: usize, _: usize| {
            if c == 0 {
                // SAFETY: the window's rows and columns ws..=we; the other task's tiles are
                // the columns right of we, the rows above the previous window (which starts at
                // or before ws) and Z, none of which meet it.
                let mut hw = unsafe { tiles.tile(ws, we + 1, ws, we + 1) };
                let mut pos = pos_cell.lock().unwrap_or_else(|e| e.into_inner());
                let mut uw = ucur_cell.lock().unwrap_or_else(|e| e.into_inner());
                chase(&mut hw, &mut uw, &mut pos, shifts, ktop, kbot, ws);
            } else if let Some((pws, pwl, _)) = prev {
                // Piece c - 1 of PIECES of each far part of the previous window.
                let part = |len: usize| ((c - 1) * len / PIECES, c * len / PIECES);
                let pwe = pws + pwl;
                let up = uprev.as_ref().submatrix(0, 0, pwl, pwl);
                let (c0, c1) = part(reach.end.saturating_sub(we + 1));
                if c1 > c0 {
                    // SAFETY: rows pws..pwe, columns right of we (piece c0..c1 of them):
                    // outside the chased window, disjoint from the other pieces.
                    let right = unsafe { tiles.tile(pws, pwe, we + 1 + c0, we + 1 + c1) };
                    far::left_product(right, up);
                }
                let (r0, r1) = part(pws.saturating_sub(reach.top));
                if r1 > r0 {
                    // SAFETY: rows above the previous window (which starts at or before ws),
                    // piece r0..r1 of them.
                    let above = unsafe { tiles.tile(reach.top + r0, reach.top + r1, pws, pwe) };
                    far::right_product(above, up);
                }
                if let Some(zt) = &zt {
                    let (r0, r1) = part(zt.nrows());
                    if r1 > r0 {
                        // SAFETY: Z is no part of H; piece r0..r1 of its rows.
                        let zc = unsafe { zt.tile(r0, r1, pws, pwe) };
                        far::right_product(zc, up);
                    }
                }
            }
        };
        call::chunks_of(team.exec, width, 1 + PIECES, &task);
        prev = Some((ws, wl, cur));
        cur = 1 - cur;
    }
    if let Some((pws, pwl, pu)) = prev {
        far::apply(
            h,
            z,
            u[pu].as_ref().submatrix(0, 0, pwl, pwl),
            pws,
            reach,
            team,
        );
    }
}

/// The chase inside one window `hw` (rows and columns `ws..`, local indices): every bulge
/// steps while its rows stay inside the window and the bulge ahead is far enough, each
/// reflection applied to the window and accumulated in `uw` (reset to the identity).
fn chase<C: Cplx>(
    hw: &mut MatMut<'_, C>,
    uw: &mut MatMut<'_, C>,
    pos: &mut [usize],
    shifts: &[C],
    ktop: usize,
    kbot: usize,
    ws: usize,
) {
    let nb = pos.len();
    let wl = hw.nrows();
    let we = ws + wl - 1;
    uw.fill(C::ZERO);
    uw.rb_mut().diagonal_mut().fill(C::ONE);
    // The rows where each column of U may be nonzero (a rotation of two columns unites their
    // ranges): U stays near triangular, and its updates skip the zeros.
    let mut span: Vec<(usize, usize)> = (0..wl).map(|c| (c, c)).collect();
    loop {
        let mut moved = false;
        for j in 0..nb {
            let k = pos[j];
            if k >= kbot
                || (j > 0 && pos[j - 1] < kbot && pos[j - 1] < k + GAP)
                || k < ws
                || (k > ktop && k - 1 < ws)
                || (k + 2).min(kbot) > we
            {
                continue;
            }
            let l = k - ws;
            let (alpha, mut x) = if k == ktop {
                (hw[(l, l)] - shifts[j], [hw[(l + 1, l)]])
            } else {
                (hw[(l, l - 1)], [hw[(l + 1, l - 1)]])
            };
            let g = reflector(alpha, &mut x);
            if k > ktop {
                hw[(l, l - 1)] = g.beta;
                hw[(l + 1, l - 1)] = C::ZERO;
            }
            left2(hw, l, l..wl, g.tau, x[0]);
            right2(hw, l, 0..(k + 3).min(kbot + 1) - ws, g.tau, x[0]);
            let (r0, r1) = (span[l].0.min(span[l + 1].0), span[l].1.max(span[l + 1].1));
            (span[l], span[l + 1]) = ((r0, r1), (r0, r1));
            right2(uw, l, r0..r1 + 1, g.tau, x[0]);
            pos[j] = k + 1;
            moved = true;
        }
        if !moved {
            break;
        }
    }
}
