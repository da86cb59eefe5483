//! Cholesky, `A = L L^H` (lower), blocked right-looking with lookahead.
//!
//! Per panel of `block_size` columns, with its diagonal block already factored and the panel
//! below it solved: ONE section updates the lower triangle of the trailing matrix in column
//! chunks balanced by cost (a column's update shrinks with its index), each chunk a faer
//! triangular product on its diagonal block and a GEMM below it. Participant 0 owns the next
//! panel's columns: it updates them first, factors the next diagonal block with faer's serial
//! `cholesky_in_place` and solves the next panel, while the others finish their updates
//! (lookahead). When the gate keeps the first section serial, the whole matrix goes to faer's
//! serial Cholesky. Only the lower triangle is read. The sections run on the lookahead driver
//! (`lookahead.rs`). Design record: `docs/kernels.md`.

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::{
    cholesky_in_place as faer_cholesky, cholesky_in_place_scratch as faer_cholesky_scratch,
    LltError,
};
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::ComplexField;
use faer::{MatMut, MatRef, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use super::cost;
use crate::drive::levels::{Levels, Panel};
use crate::drive::lookahead::{self, Factorization};
use crate::exec::call::Call;
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;
use crate::exec::tiles::Tiles;

/// The cost of the lookahead (factoring a diagonal block and solving the panel below it), per
/// multiply-add, against a multiply-add of the update, for the gate's estimate of a section.
const LEAD_COST: f64 = 1.5;

/// Parameters of [`cholesky_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CholeskyParams {
    /// Panel width; 0 picks one from the size.
    pub block_size: usize,
    /// Wide panel width (the second blocking level, a multiple of the panel width): the
    /// trailing matrix is updated once per wide panel. 0 picks one from the size; the panel
    /// width gives one level.
    pub wide_size: usize,
    /// How each panel's section decides to go parallel.
    /// `None` leaves it to the executor's model (the pool's threshold for
    /// [`Family::Cholesky`], else the rule).
    pub threshold: Option<ParThreshold>,
}

/// The matrix is not positive definite: the pivot of column `index` was not positive (or not
/// a number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonPositivePivot {
    /// The column whose pivot failed.
    pub index: usize,
}

/// The panel width used for an `n x n` matrix: 32 up to 256, then 64 (on the 2-vCPU
/// development VM, 32 beat 64 by 10 % at 256; 64 beat 128 by 5 to 15 % at 1024 and 2048).
pub fn block_size(n: usize) -> usize {
    if n <= 256 {
        32
    } else {
        64
    }
}

/// The wide panel width used for a matrix of size `n` with panels of `bs`: `bs`, one level,
/// on every size. On the hosts measured so far the trailing matrix of the largest size (32 MiB
/// at 2048) stays in the last-level cache, so a wider update saves no time, and the wide
/// panel's short sections leave a participant idle (`docs/perf/runs/kernels-log.md`, "Two blocking
/// levels").
pub fn wide_size(_n: usize, bs: usize) -> usize {
    bs
}

/// The scratch [`cholesky_in_place`] needs for an `n x n` matrix.
pub fn cholesky_in_place_scratch<T: ComplexField>(n: usize) -> StackReq {
    faer_cholesky_scratch::<T>(n, Par::Seq, Default::default())
}

/// Factors the lower triangle of the Hermitian matrix `A` in place as `A = L L^H`. The strict
/// upper triangle is not read; afterwards it holds unspecified values (faer's serial Cholesky
/// uses it). On error the matrix holds a partial factorization.
///
/// # Panics
/// When `A` is not square or the stack is smaller than [`cholesky_in_place_scratch`].
pub fn cholesky_in_place<T>(
    a: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    params: CholeskyParams,
    stack: &mut MemStack,
) -> Result<(), NonPositivePivot>
where
    T: ComplexField + Scalar + Send + Sync,
{
    let n = a.nrows();
    assert_eq!(a.ncols(), n, "cholesky_in_place: A must be square");
    let bs = match params.block_size {
        0 => block_size(n),
        b => b,
    };
    let call = (n > bs).then(|| gate::call::<T>(exec, call_region(n, bs), params.threshold));
    let w0 = call.as_ref().map_or(1, Call::width);
    if w0 <= 1 {
        return factor_diag(a, 0, stack);
    }
    let wide = match params.wide_size {
        0 => wide_size(n, bs),
        w => w,
    };
    let mut chol = Cholesky {
        a,
        stack,
        bs,
        failed: None,
    };
    let levels = Levels::new(bs, wide, n, n);
    lookahead::drive::<T, _>(exec, &mut chol, &levels, w0, params.threshold, usize::MAX)
}

/// The region of the whole call: a Cholesky of `n x n` (`n > bs`) in panels of `bs`, one
/// section per panel but the last.
fn call_region(n: usize, bs: usize) -> Region {
    let units = cost::llt(n);
    Region {
        site: "cholesky",
        dims: [n, n, bs],
        units,
        family: Family::Cholesky,
        sections: n.div_ceil(bs) - 1,
        scope: Scope::Call,
        call_units: units,
    }
}

/// The region of section `p`, which also factors and solves the next panel.
fn section(n: usize, p: &Panel) -> Region {
    let Panel {
        k,
        k2,
        b2,
        src,
        end,
    } = *p;
    let t = n - k2;
    let rank = (k2 - src) as f64;
    // Column c of the targets has t - c rows to update: the lead's columns (the next panel)
    // and the rest.
    let rows = |c0: usize, c1: usize| {
        let (c0, c1) = (c0 as f64, c1 as f64);
        (c1 - c0) * (t as f64) - (c0 + c1 - 1.0) * (c1 - c0) / 2.0
    };
    let shared = rank * rows(b2, end - k2);
    let lead = rank * rows(0, b2) + LEAD_COST * cost::lead(t, b2);
    Region {
        site: "cholesky/panel",
        dims: [n - k, end - k2, k2 - src],
        units: lead + shared,
        family: Family::Cholesky,
        sections: 1,
        scope: Scope::Section,
        call_units: cost::llt(n),
    }
}

/// A Cholesky that went parallel, as the lookahead driver runs it.
struct Cholesky<'a, T> {
    a: MatMut<'a, T>,
    stack: &'a mut MemStack,
    bs: usize,
    /// The failing pivot the last section's lead found.
    failed: Option<NonPositivePivot>,
}

impl<T: ComplexField + Send + Sync> Factorization for Cholesky<'_, T> {
    const SITE: &'static str = "cholesky";
    type Error = NonPositivePivot;
    type Lead<'s>
        = Lead<'s>
    where
        Self: 's;
    type Step<'s>
        = Step<'s, T>
    where
        Self: 's;

    fn first_panel(&mut self) -> Result<(), NonPositivePivot> {
        let bs = self.bs;
        factor_diag(self.a.rb_mut().submatrix_mut(0, 0, bs, bs), 0, self.stack)?;
        solve_panel(self.a.rb_mut().subcols_mut(0, bs), 0, bs);
        Ok(())
    }

    fn region(&self, p: &Panel) -> Option<Region> {
        Some(section(self.a.nrows(), p))
    }

    fn section(&mut self, p: &Panel) -> (Step<'_, T>, Lead<'_>) {
        let step = Step {
            tiles: Tiles::new(self.a.rb_mut()),
            p: *p,
        };
        let lead = Lead {
            stack: self.stack,
            failed: &mut self.failed,
        };
        (step, lead)
    }

    fn after(&mut self) -> Result<(), NonPositivePivot> {
        self.failed.map_or(Ok(()), Err)
    }
}

/// What the lookahead participant needs and reports.
struct Lead<'s> {
    stack: &'s mut MemStack,
    failed: &'s mut Option<NonPositivePivot>,
}

/// One section: the update after panel `k..k2` with the source `src..k2`.
struct Step<'s, T> {
    tiles: Tiles<'s, T>,
    p: Panel,
}

impl<T: ComplexField + Send + Sync> Step<'_, T> {
    /// The source's columns below the targets' first row.
    fn l21(&self) -> MatRef<'_, T> {
        let Panel { k2, src, .. } = self.p;
        // SAFETY: the source's columns src..k2 are in no participant's tile.
        unsafe { self.tiles.view(k2, self.tiles.nrows(), src, k2) }
    }
}

impl<'s, T: ComplexField + Send + Sync> lookahead::Step<Lead<'s>> for Step<'s, T> {
    fn lead(&self, lead: &mut Lead<'s>) {
        let Panel { k2, b2, .. } = self.p;
        let n = self.tiles.nrows();
        // SAFETY: the next panel's columns k2..k2 + b2 (rows k2..n) are the lead's alone; the
        // claims hand out only the columns after them.
        let mut panel = unsafe { self.tiles.tile(k2, n, k2, k2 + b2) };
        update(panel.rb_mut(), self.l21(), 0);
        let diag = panel.rb_mut().subrows_mut(0, b2);
        match factor_diag(diag, k2, lead.stack) {
            Ok(()) => solve_panel(panel, 0, b2),
            Err(e) => *lead.failed = Some(e),
        }
    }

    fn update(&self, _i: usize, c0: usize, c1: usize) {
        let k2 = self.p.k2;
        let (j0, j1) = (k2 + c0, k2 + c1);
        // SAFETY: the claims partition the trailing columns after the next panel; a chunk's
        // tile is its columns' lower part, rows j0..n.
        let cols = unsafe { self.tiles.tile(j0, self.tiles.nrows(), j0, j1) };
        update(cols, self.l21(), c0);
    }
}

/// `C -= L21[c.., :] L21[c..c + w, :]^H` on the lower triangle of `cols` (rows `j0..n` of
/// columns `j0..j0 + w`, where `c = j0 - k2` is the chunk's first column in the trailing
/// matrix).
fn update<T: ComplexField>(cols: MatMut<'_, T>, l21: MatRef<'_, T>, c: usize) {
    super::lower_update::update_columns(cols, l21, l21, c, false);
}

/// Factors the diagonal block `diag` (starting at column `k`) with faer's serial Cholesky.
fn factor_diag<T: ComplexField>(
    diag: MatMut<'_, T>,
    k: usize,
    stack: &mut MemStack,
) -> Result<(), NonPositivePivot> {
    faer_cholesky(
        diag,
        Default::default(),
        Par::Seq,
        stack,
        Default::default(),
    )
    .map(|_| ())
    .map_err(|LltError::NonPositivePivot { index }| NonPositivePivot { index: k + index })
}

/// Solves the panel below a factored diagonal block: `X L11^H = A21`, where `panel` holds rows
/// `r..` of the panel's `b` columns and its first `b` rows are the block.
fn solve_panel<T: ComplexField>(panel: MatMut<'_, T>, r: usize, b: usize) {
    let (block, below) = panel.split_at_row_mut(r + b);
    let l11 = block.rb().subrows(r, b);
    // X L^H = B  <=>  conj(L) X^T = B^T.
    solve_lower_triangular_in_place(l11.conjugate(), below.transpose_mut(), Par::Seq);
}
