//! The far updates: a window's accumulated unitary `U` applied to the rest of the matrix
//! (the rows right of the window, `U^H H[w, right]`; the rows above it, `H[above, w] U`) and
//! to the Schur vectors (`Z[:, w] U`). They are GEMMs whose size grows with the order while
//! the chase inside the window does not: the part of the Schur iterations the team shares,
//! in chunks of columns (right) and rows (above, `Z`), each a serial faer product into a
//! chunk of its own.

use faer::linalg::matmul::matmul;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Mat, MatMut, MatRef, Par};
use teamalg_gates::{Family, ParThreshold};

use super::scalar::Cplx;
use super::small::Reach;
use crate::exec::call;
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;
use crate::exec::tiles::Tiles;

/// Where the far updates run: the executor, the call's width and size, the threshold.
pub(crate) struct Team<'e, E: ?Sized> {
    pub(crate) exec: &'e E,
    pub(crate) width: usize,
    pub(crate) call_units: f64,
    pub(crate) threshold: Option<ParThreshold>,
}

/// Applies `u` (the window `ws..ws + u.nrows()` of `h`) to the far parts of `h` within
/// `reach` and to `z`.
pub(crate) fn apply<C: Cplx, E: Executor + ?Sized>(
    h: &mut MatMut<'_, C>,
    z: Option<&mut MatMut<'_, C>>,
    u: MatRef<'_, C>,
    ws: usize,
    reach: Reach,
    team: &Team<'_, E>,
) {
    let wl = u.nrows();
    let we = ws + wl;
    let right_cols = reach.end.saturating_sub(we);
    let above_rows = ws.saturating_sub(reach.top);
    let (upper, lower) = h.rb_mut().split_at_row_mut(ws);
    let above = upper.submatrix_mut(reach.top, ws, above_rows, wl);
    let right = lower.submatrix_mut(0, we, wl, right_cols);
    let zrows = z.as_ref().map_or(0, |z| z.nrows());
    let zw = z.map(|z| z.rb_mut().submatrix_mut(0, ws, zrows, wl));
    let lines = right_cols + above_rows + zrows;
    if lines == 0 || wl == 0 {
        return;
    }
    let units = (wl * wl * lines) as f64;
    let w = if team.width <= 1 {
        1
    } else {
        let region = Region {
            site: "schur/far",
            dims: [wl, lines, wl],
            units,
            family: Family::Gemm,
            sections: 1,
            scope: Scope::Section,
            call_units: team.call_units,
        };
        gate::width::<C>(team.exec, region, team.threshold).min(team.width)
    };
    let right = Tiles::new(right);
    let above = Tiles::new(above);
    let zt = zw.map(Tiles::new);
    let chunk = |i: usize, n: usize| {
        let part = |len: usize| (i * len / n, (i + 1) * len / n);
        let (c0, c1) = part(right_cols);
        if c1 > c0 {
            // SAFETY: chunk i owns columns c0..c1 of the right block; the ranges partition it.
            let r = unsafe { right.tile(0, wl, c0, c1) };
            left_product(r, u);
        }
        let (r0, r1) = part(above_rows);
        if r1 > r0 {
            // SAFETY: chunk i owns rows r0..r1 of the block above; the ranges partition it.
            let a = unsafe { above.tile(r0, r1, 0, wl) };
            right_product(a, u);
        }
        if let Some(zt) = &zt {
            let (r0, r1) = part(zrows);
            if r1 > r0 {
                // SAFETY: chunk i owns rows r0..r1 of Z's window columns; the ranges partition them.
                let a = unsafe { zt.tile(r0, r1, 0, wl) };
                right_product(a, u);
            }
        }
    };
    call::chunks(team.exec, w, &chunk);
}

/// `b = u^H b`.
pub(crate) fn left_product<C: Cplx>(mut b: MatMut<'_, C>, u: MatRef<'_, C>) {
    let mut tmp = Mat::<C>::zeros(b.nrows(), b.ncols());
    matmul(
        tmp.as_mut(),
        Accum::Replace,
        u.adjoint(),
        b.rb(),
        C::ONE,
        Par::Seq,
    );
    b.copy_from(tmp.as_ref());
}

/// `a = a u`.
pub(crate) fn right_product<C: Cplx>(mut a: MatMut<'_, C>, u: MatRef<'_, C>) {
    let mut tmp = Mat::<C>::zeros(a.nrows(), a.ncols());
    matmul(tmp.as_mut(), Accum::Replace, a.rb(), u, C::ONE, Par::Seq);
    a.copy_from(tmp.as_ref());
}
