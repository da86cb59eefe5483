//! LU with partial pivoting, `P A = L U`, blocked right-looking with lookahead.
//!
//! Per panel of `block_size` columns: the panel is factored by faer's serial `lu_in_place` (its
//! row permutation turned back into swaps), then ONE section updates the trailing columns in
//! chunks: each participant applies the panel's row swaps, the triangular solve with the
//! panel's unit lower block and the GEMM update to the chunks of columns it claims (and the
//! swaps to its share of the current wide panel's columns left of the panel). Participant 0
//! owns the next panel's columns: it updates them first and factors the next panel while the
//! others claim the update's chunks (lookahead), so the panel factorization, the serial part
//! of LU, is hidden; then it claims chunks too (`claims.rs`). When the gate keeps the first section serial, the
//! whole matrix goes to faer's serial LU instead. The sections run on the lookahead driver
//! (`lookahead.rs`). The earlier wide panels' columns get their swaps in one section after the
//! last (`left_swaps`). Design record: `docs/kernels.md`.

use std::convert::Infallible;

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::factor::{
    lu_in_place as faer_lu, lu_in_place_scratch as faer_lu_scratch, PartialPivLuParams,
};
use faer::linalg::matmul::matmul as faer_matmul;
use faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::math_utils::{one, zero};
use faer::traits::ComplexField;
use faer::{Accum, MatMut, MatRef, Par, Spec};
use teamalg_gates::{Family, ParThreshold, Scalar};

use super::cost;
use crate::drive::levels::{Levels, Panel};
use crate::drive::lookahead::{self, Factorization};
use crate::exec::call::Call;
use crate::exec::claims::{Claims, MIN_COLS};
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::{Executor, Part};
use crate::exec::sections::{self, Busy};
use crate::exec::tiles::Tiles;

/// The cost of factoring a panel, per multiply-add, against a multiply-add of the update (the
/// panel's level-2 steps and narrow products run slower than a wide GEMM), for the gate's
/// estimate of a section.
const PANEL_COST: f64 = 2.0;

/// The cost of swapping two elements of a column in the deferred pass, in multiply-adds of
/// the update: 3.1 to 3.3 ns a swap at 2048 and 5.3 ns at 1024 on the 2-vCPU AMD EPYC host
/// (each column is loaded once for all its swaps), against about 0.05 ns a multiply-add
/// (`docs/perf/runs/kernels-log.md`, "Deferred row swaps").
const SWAP_COST: f64 = 60.0;

/// Parameters of [`lu_in_place`].
#[derive(Debug, Clone, Copy)]
pub struct LuParams {
    /// Panel width; 0 picks one from the size.
    pub block_size: usize,
    /// Wide panel width (the second blocking level, a multiple of the panel width): the
    /// trailing matrix is updated once per wide panel. 0 picks one from the size; the panel
    /// width gives one level.
    pub wide_size: usize,
    /// faer's recursion threshold inside a panel (8 factors tall panels 10 to 15 % faster than
    /// faer's default of 16).
    pub recursion_threshold: usize,
    /// How each panel's section decides to go parallel; `None` leaves it to the executor's
    /// model (the pool's threshold for [`Family::LuPartial`], else the rule).
    pub threshold: Option<ParThreshold>,
}

impl Default for LuParams {
    fn default() -> Self {
        LuParams {
            block_size: 0,
            wide_size: 0,
            recursion_threshold: 8,
            threshold: None,
        }
    }
}

/// What [`lu_in_place`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LuInfo {
    /// Swaps that exchanged two different rows (the sign of the determinant of `P`).
    pub transpositions: usize,
    /// The first exact zero pivot, if any: the matrix is singular, `U[(i, i)]` is zero, and the
    /// factors after it are not finite (as in faer; LAPACK's `info`).
    pub zero_pivot: Option<usize>,
}

/// The panel width used for a matrix whose smaller dimension is `size`: 32 up to 256, then 64
/// (on the 2-vCPU development VM, 32 beat 64 by 10 % at 256; 48 to 64 were best at 512 to 2048;
/// 128 was 10 to 25 % slower at 2048).
pub fn block_size(size: usize) -> usize {
    if size <= 256 {
        32
    } else {
        64
    }
}

/// The wide panel width used for a matrix of size `size` with panels of `bs`: `bs`, one level,
/// on every size. On the hosts measured so far the trailing matrix of the largest size (32 MiB
/// at 2048) stays in the last-level cache, so a wider update saves no time, and the wide
/// panel's short sections leave a participant idle (`docs/perf/runs/kernels-log.md`, "Two blocking
/// levels").
pub fn wide_size(_size: usize, bs: usize) -> usize {
    bs
}

/// The scratch [`lu_in_place`] needs for an `m x n` matrix.
pub fn lu_in_place_scratch<T: ComplexField>(m: usize, n: usize) -> StackReq {
    StackReq::all_of(&[
        StackReq::new::<usize>(m),
        StackReq::new::<usize>(m),
        StackReq::new::<usize>(m),
        faer_lu_scratch::<usize, T>(m, n, Par::Seq, Default::default()),
    ])
}

/// Factors `A` in place as `P A = L U`: `L` (unit lower, `m x min(m, n)`) below the diagonal,
/// `U` (`min(m, n) x n`) on and above it. `swaps[j]` is the row exchanged with row `j` at step
/// `j` (as LAPACK's `ipiv`, from 0), so `P` applies the swaps in order.
///
/// # Panics
/// When `swaps.len() != min(m, n)` or the stack is smaller than [`lu_in_place_scratch`].
pub fn lu_in_place<T>(
    a: MatMut<'_, T>,
    swaps: &mut [usize],
    exec: &(impl Executor + ?Sized),
    params: LuParams,
    stack: &mut MemStack,
) -> LuInfo
where
    T: ComplexField + Scalar + Send + Sync,
{
    let (m, n) = (a.nrows(), a.ncols());
    let size = m.min(n);
    assert_eq!(swaps.len(), size, "lu_in_place: swaps must hold min(m, n)");
    let bs = match params.block_size {
        0 => block_size(size),
        b => b,
    };
    let (mut perm, stack) = stack.make_with(m, |_| 0usize);
    let (mut perm_inv, stack) = stack.make_with(m, |_| 0usize);
    let (mut at, stack) = stack.make_with(m, |_| 0usize);
    let mut scratch = PanelScratch {
        perm: &mut perm,
        perm_inv: &mut perm_inv,
        at: &mut at,
        stack,
    };
    let call = call_region(m, n, bs).map(|r| gate::call::<T>(exec, r, params.threshold));
    let w0 = call.as_ref().map_or(1, Call::width);
    if w0 <= 1 {
        // Serial from the start (and so to the end: later sections are smaller).
        let (count, zero) = factor_panel(a, 0, swaps, &mut scratch, None);
        return LuInfo {
            transpositions: count,
            zero_pivot: zero,
        };
    }
    let levels = Levels::new(bs, wide_of(params, size, bs), size, n);
    let mut lu = Lu {
        a,
        swaps,
        scratch,
        info: LuInfo {
            transpositions: 0,
            zero_pivot: None,
        },
        bs,
        levels,
        rt: Some(params.recursion_threshold),
    };
    let Ok(()) = lookahead::drive::<T, _>(exec, &mut lu, &levels, w0, params.threshold, usize::MAX);
    left_swaps::<T>(exec, lu.a.rb_mut(), lu.swaps, &levels, params.threshold);
    lu.info
}

/// The swaps the sections left out: column `c` of the wide panel that ends at `e` gets
/// `swaps[e..]`, all of them while the column is in cache, in one section after the last
/// (the factorization never reads those columns again). Swapping them section by section
/// loaded every column once per panel; this pass loads it once (`docs/perf/runs/kernels-log.md`,
/// "Deferred row swaps").
fn left_swaps<T: Scalar + Send + Sync>(
    exec: &(impl Executor + ?Sized),
    a: MatMut<'_, T>,
    swaps: &[usize],
    levels: &Levels,
    threshold: Option<ParThreshold>,
) {
    let size = swaps.len();
    let last_wide = levels.wide_start(size.saturating_sub(1));
    if last_wide == 0 {
        return;
    }
    let (m, n) = (a.nrows(), a.ncols());
    // Element swaps: column c gets size - wide_end(c).
    let pending: usize = (0..last_wide)
        .step_by(levels.wide())
        .map(|c| (levels.wide_end(c) - c) * (size - levels.wide_end(c)))
        .sum();
    let region = Region {
        site: "lu/swaps",
        dims: [m, last_wide, size - levels.wide_end(0)],
        units: pending as f64 * SWAP_COST,
        family: Family::LuPartial,
        sections: 1,
        scope: Scope::Section,
        call_units: cost::partial(m, n),
    };
    let w = gate::width::<T>(exec, region, threshold);
    let tiles = Tiles::new(a);
    let claims = Claims::new(0, last_wide, w, MIN_COLS);
    let busy = Busy::default();
    let body = |part: Part<'_>| {
        busy.time(part.index(), || {
            while let Some((c0, c1)) = claims.claim() {
                let mut c = c0;
                while c < c1 {
                    // The columns c..e2 share their wide panel's end e.
                    let e = levels.wide_end(c);
                    let e2 = e.min(c1);
                    // SAFETY: the claims partition 0..last_wide; no one else touches them.
                    let cols = unsafe { tiles.tile(0, tiles.nrows(), c, e2) };
                    apply_swaps(cols, e, &swaps[e..]);
                    c = e2;
                }
            }
        })
    };
    sections::run(exec, "lu/swaps", size, w, &busy, &body);
}

/// The region of the whole call: an LU of `m x n` in panels of `bs`, one section per panel
/// that has trailing columns; `None` when no panel has any.
fn call_region(m: usize, n: usize, bs: usize) -> Option<Region> {
    let sections = gate::panel_sections(m, n, bs);
    (sections > 0).then(|| Region {
        site: "lu",
        dims: [m, n, bs],
        units: cost::partial(m, n),
        family: Family::LuPartial,
        sections,
        scope: Scope::Call,
        call_units: cost::partial(m, n),
    })
}

/// The wide panel width of a call.
fn wide_of(params: LuParams, size: usize, bs: usize) -> usize {
    match params.wide_size {
        0 => wide_size(size, bs),
        w => w,
    }
}

/// The region of section `p`, which also factors the next panel; `None` when it has no
/// target columns.
fn panel_section(m: usize, n: usize, p: &Panel) -> Option<Region> {
    let Panel {
        k,
        k2,
        b2,
        src,
        end,
    } = *p;
    let cols = end.checked_sub(k2).filter(|&c| c > 0)?;
    let rank = k2 - src;
    let col = cost::update_column(m - k2, rank);
    let lead = b2 as f64 * col + PANEL_COST * cost::panel(m - k2, b2);
    let shared = cols.saturating_sub(b2) as f64 * col;
    Some(Region {
        site: "lu/panel",
        dims: [m - k, end - k, rank],
        units: lead + shared,
        family: Family::LuPartial,
        sections: 1,
        scope: Scope::Section,
        call_units: cost::partial(m, n),
    })
}

/// The scratch of a panel factorization.
struct PanelScratch<'s> {
    perm: &'s mut [usize],
    perm_inv: &'s mut [usize],
    at: &'s mut [usize],
    stack: &'s mut MemStack,
}

/// An LU that went parallel, as the lookahead driver runs it.
struct Lu<'a, 'p, T> {
    a: MatMut<'a, T>,
    swaps: &'a mut [usize],
    scratch: PanelScratch<'p>,
    info: LuInfo,
    bs: usize,
    levels: Levels,
    /// faer's recursion threshold inside a panel.
    rt: Option<usize>,
}

impl<'p, T: ComplexField + Send + Sync> Factorization for Lu<'_, 'p, T> {
    const SITE: &'static str = "lu";
    type Error = Infallible;
    type Lead<'s>
        = Lead<'s, 'p>
    where
        Self: 's;
    type Step<'s>
        = Step<'s, T>
    where
        Self: 's;

    fn first_panel(&mut self) -> Result<(), Infallible> {
        let bs = self.bs;
        let (count, zero) = factor_panel(
            self.a.rb_mut().subcols_mut(0, bs),
            0,
            &mut self.swaps[..bs],
            &mut self.scratch,
            self.rt,
        );
        self.info = LuInfo {
            transpositions: count,
            zero_pivot: zero,
        };
        Ok(())
    }

    fn region(&self, p: &Panel) -> Option<Region> {
        panel_section(self.a.nrows(), self.a.ncols(), p)
    }

    fn before(&mut self, p: &Panel) {
        let Panel { k, k2, src, .. } = *p;
        if src < k {
            // The wide update reads the wide panel's earlier columns: their rows get this
            // panel's swaps before the section, not during it.
            apply_swaps(
                self.a.rb_mut().subcols_mut(src, k - src),
                k,
                &self.swaps[k..k2],
            );
        }
    }

    fn section(&mut self, p: &Panel) -> (Step<'_, T>, Lead<'_, 'p>) {
        let (done, rest) = self.swaps.split_at_mut(p.k2);
        let step = Step {
            tiles: Tiles::new(self.a.rb_mut()),
            p: *p,
            swaps: &done[p.src..],
            rt: self.rt,
            wide0: self.levels.wide_start(p.k),
        };
        let lead = Lead {
            swaps: &mut rest[..p.b2],
            scratch: &mut self.scratch,
            info: &mut self.info,
        };
        (step, lead)
    }

    fn finish(&mut self) {
        // The last panel, when it has no section (`n <= m`): its swaps reach the columns left
        // of it here.
        let size = self.swaps.len();
        let last = (size - 1) / self.bs * self.bs;
        if self.levels.after(last).is_none() {
            // The earlier wide panels' columns get them after the last section.
            let first = self.levels.wide_start(last);
            apply_swaps(
                self.a.rb_mut().subcols_mut(first, last - first),
                last,
                &self.swaps[last..size],
            );
        }
    }
}

/// What the lookahead participant writes: the next panel's swaps and findings.
struct Lead<'s, 'p> {
    swaps: &'s mut [usize],
    scratch: &'s mut PanelScratch<'p>,
    info: &'s mut LuInfo,
}

/// One section: the update after panel `k..k2` with the source `src..k2`.
struct Step<'s, T> {
    tiles: Tiles<'s, T>,
    p: Panel,
    /// The source's swaps, `swaps[0..k2 - src]`.
    swaps: &'s [usize],
    rt: Option<usize>,
    /// The first column of the wide panel of this section's panel.
    wide0: usize,
}

impl<T: ComplexField + Send + Sync> Step<'_, T> {
    /// The source's factors: its unit lower block and the rows below it.
    fn source(&self) -> (MatRef<'_, T>, MatRef<'_, T>) {
        let Panel { k2, src, .. } = self.p;
        let m = self.tiles.nrows();
        // SAFETY: the source's columns src..k2 are in no participant's tile.
        let l11 = unsafe { self.tiles.view(src, k2, src, k2) };
        // SAFETY: as above.
        let l21 = unsafe { self.tiles.view(k2, m, src, k2) };
        (l11, l21)
    }
}

impl<'s, 'p, T: ComplexField + Send + Sync> lookahead::Step<Lead<'s, 'p>> for Step<'s, T> {
    fn own(&self, i: usize, w: usize) {
        let Panel { k, k2, src, .. } = self.p;
        // The panel's swaps reach the current wide panel's columns left of the source (the
        // wide panel's update reads them when it closes; the source's own earlier columns got
        // them before the section). The columns of earlier wide panels get theirs after the
        // last section (`left_swaps`).
        let first = self.wide0;
        let (l0, l1) = (
            first + i * (src - first) / w,
            first + (i + 1) * (src - first) / w,
        );
        if l1 > l0 {
            // SAFETY: participant i owns columns l0..l1 < src; the ranges partition
            // wide0..src.
            let left = unsafe { self.tiles.tile(0, self.tiles.nrows(), l0, l1) };
            apply_swaps(left, k, &self.swaps[k - src..k2 - src]);
        }
    }

    fn lead(&self, lead: &mut Lead<'s, 'p>) {
        // Lookahead: the next panel first, factored at once.
        let Panel { k2, b2, src, .. } = self.p;
        let m = self.tiles.nrows();
        let (l11, l21) = self.source();
        // SAFETY: the next panel's columns k2..k2 + b2 are the lead's alone; the claims hand
        // out only the columns after them.
        let mut panel = unsafe { self.tiles.tile(0, m, k2, k2 + b2) };
        update(panel.rb_mut(), src, &self.swaps[..k2 - src], l11, l21);
        let Lead {
            swaps: next,
            scratch,
            info,
        } = lead;
        let (count, zero) = factor_panel(panel.subrows_mut(k2, m - k2), k2, next, scratch, self.rt);
        info.transpositions += count;
        if info.zero_pivot.is_none() {
            info.zero_pivot = zero.map(|z| z + k2);
        }
    }

    fn update(&self, _i: usize, c0: usize, c1: usize) {
        let Panel { k2, src, .. } = self.p;
        let (l11, l21) = self.source();
        // SAFETY: the claims partition the target columns after the next panel.
        let cols = unsafe { self.tiles.tile(0, self.tiles.nrows(), k2 + c0, k2 + c1) };
        update(cols, src, &self.swaps[..k2 - src], l11, l21);
    }
}

/// Applies the panel's swaps, the solve with its unit lower block and the GEMM update to
/// `cols` (all rows of some trailing columns).
fn update<T: ComplexField>(
    mut cols: MatMut<'_, T>,
    k: usize,
    swaps: &[usize],
    l11: MatRef<'_, T>,
    l21: MatRef<'_, T>,
) {
    apply_swaps(cols.rb_mut(), k, swaps);
    let k2 = k + swaps.len();
    let (_, below) = cols.split_at_row_mut(k);
    let (mut a12, a22) = below.split_at_row_mut(k2 - k);
    solve_unit_lower_triangular_in_place(l11, a12.rb_mut(), Par::Seq);
    faer_matmul(a22, Accum::Add, l21, a12.rb(), -one::<T>(), Par::Seq);
}

/// Swaps row `k + j` with row `swaps[j]` for each `j` in order, one column at a time (a column
/// stays in cache while all its swaps run). With `k = 0` and the swaps of [`lu_in_place`], this
/// applies `P` to the rows of `cols`.
pub fn apply_swaps<T>(mut cols: MatMut<'_, T>, k: usize, swaps: &[usize]) {
    for j in 0..cols.ncols() {
        let mut col = cols.rb_mut().col_mut(j);
        if let Some(c) = col.rb_mut().try_as_col_major_mut() {
            let c = c.as_slice_mut();
            for (r, &s) in swaps.iter().enumerate() {
                c.swap(k + r, s);
            }
            continue;
        }
        for (r, &s) in swaps.iter().enumerate() {
            let r = k + r;
            if s != r {
                // s > r: the pivot row is below.
                let (top, bottom) = col.rb_mut().split_at_row_mut(s);
                std::mem::swap(top.get_mut(r), bottom.get_mut(0));
            }
        }
    }
}

/// Factors `panel` (rows `k..` of the panel's columns) with faer's serial LU, writes its swaps
/// (absolute row indices) to `swaps`, and returns the transposition count and the first zero
/// pivot (relative to the panel). `rt` overrides faer's recursion threshold.
fn factor_panel<T: ComplexField>(
    mut panel: MatMut<'_, T>,
    k: usize,
    swaps: &mut [usize],
    s: &mut PanelScratch<'_>,
    rt: Option<usize>,
) -> (usize, Option<usize>) {
    let rows = panel.nrows();
    let b = swaps.len();
    let mut spec: Spec<PartialPivLuParams, T> = Default::default();
    if let Some(rt) = rt {
        spec.recursion_threshold = rt;
    }
    faer_lu::<usize, T>(
        panel.rb_mut(),
        &mut s.perm[..rows],
        &mut s.perm_inv[..rows],
        Par::Seq,
        s.stack,
        spec,
    );
    // faer returns where each row ended; replay it as swaps. `at[p]`: the row now at position
    // p; `pos[r]`: the position of row r.
    let perm = &s.perm[..rows];
    let at = &mut s.at[..rows];
    let pos = &mut s.perm_inv[..rows];
    for r in 0..rows {
        at[r] = r;
        pos[r] = r;
    }
    let mut count = 0;
    for (i, swap) in swaps.iter_mut().enumerate() {
        let r = perm[i];
        let j = pos[r];
        *swap = k + j;
        if j != i {
            count += 1;
            let displaced = at[i];
            at[i] = r;
            at[j] = displaced;
            pos[r] = i;
            pos[displaced] = j;
        }
    }
    let zero_pivot = (0..b).find(|&i| panel[(i, i)] == zero::<T>());
    (count, zero_pivot)
}
