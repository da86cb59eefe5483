//! Householder QR, `A = Q R`, blocked right-looking with lookahead.
//!
//! Per panel of `block_size` columns: the panel is factored by faer's serial `qr_in_place`
//! (Householder vectors below the diagonal, `R` on and above it, the panel's block-reflector
//! factor `T` in the panel's columns of `H`), then ONE section applies the block reflector
//! `Q_p^H = I - V T^-H V^H` to the trailing columns in chunks, each chunk by faer's serial
//! block-reflector product. Participant 0 owns the next panel's columns: it updates them
//! first and factors the next panel while the others claim the update's chunks (lookahead),
//! then claims chunks too, as in LU (`claims.rs`). When the gate keeps the first section
//! serial, the whole matrix goes to faer's serial QR with the same block size, so `H` has one layout
//! on every executor: faer's (`block_size x min(m, n)`, block `j` of `block_size` reflectors
//! in columns `j * block_size..`), which faer's Householder sequence functions read.
//! The sections run on the lookahead driver (`lookahead.rs`). Design record: `docs/kernels.md`.

use std::convert::Infallible;
use std::mem::MaybeUninit;
use std::sync::Mutex;

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch as seq_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj as apply_seq,
    apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj as apply_seq_transpose,
    apply_block_householder_transpose_on_the_left_in_place_scratch as apply_scratch,
    apply_block_householder_transpose_on_the_left_in_place_with_conj as apply_transpose,
};
use faer::linalg::qr::no_pivoting::factor::{
    qr_in_place as faer_qr, qr_in_place_scratch as faer_qr_scratch, recommended_block_size,
};
use faer::reborrow::{IntoConst, ReborrowMut};
use faer::traits::ComplexField;
use faer::{Conj, MatMut, MatRef, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use super::cost;
use crate::drive::levels::{Levels, Panel};
use crate::drive::lookahead::{self, Factorization};
use crate::exec::call::{self, Call};
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;
use crate::exec::tiles::Tiles;

/// The cost of factoring a panel, per multiply-add, against a multiply-add of the update, for
/// the gate's estimate of a section.
const PANEL_COST: f64 = 1.5;

/// Alignment of each participant's scratch.
const ALIGN: usize = 128;

/// Parameters of [`qr_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct QrParams {
    /// How each panel's section decides to go parallel; `None` leaves it to the executor's
    /// model (the pool's threshold for [`Family::Qr`], else the rule).
    pub threshold: Option<ParThreshold>,
}

/// The block size (rows of `H`, and panel width) for an `m x n` matrix: faer's choice (8 to
/// 256 by the matrix's area), so the serial path is faer's own QR.
pub fn block_size<T: ComplexField>(m: usize, n: usize) -> usize {
    recommended_block_size::<T>(m, n)
}

/// The scratch of one participant for an `m x n` matrix in blocks of `bs`: a trailing update
/// of all columns, or a panel factorization.
fn part_scratch<T: ComplexField>(m: usize, n: usize, bs: usize) -> usize {
    let req = apply_scratch::<T>(m, bs, n).or(faer_qr_scratch::<T>(
        m,
        bs,
        bs,
        Par::Seq,
        Default::default(),
    ));
    req.unaligned_bytes_required().next_multiple_of(ALIGN)
}

/// The scratch [`qr_in_place`] needs for an `m x n` matrix in blocks of `bs` on at most
/// `width` participants: the larger of faer's serial QR's (`bs x n`) and one block row of the
/// trailing matrix per participant (`bs x n` each: one panel's worth for a square matrix).
pub fn qr_in_place_scratch<T: ComplexField>(
    m: usize,
    n: usize,
    bs: usize,
    width: usize,
) -> StackReq {
    let w = width.max(1);
    // The serial path takes faer's own scratch; a parallel one a block row per participant.
    let parallel = StackReq::all_of(&[
        StackReq::new_aligned::<u8>(w * part_scratch::<T>(m, n, bs.max(1)), ALIGN),
        StackReq::new::<Mutex<&mut [MaybeUninit<u8>]>>(w),
    ]);
    parallel.or(faer_qr_scratch::<T>(
        m,
        n,
        bs.max(1),
        Par::Seq,
        Default::default(),
    ))
}

/// Factors `A` in place as `A = Q R`: `R` (`min(m, n) x n`, upper trapezoidal) on and above
/// the diagonal, the Householder vectors of `Q` below it (unit diagonal implied), and the
/// block-reflector factors in `h` (`bs x min(m, n)`, `bs = h.nrows()`), in faer's layout.
/// A rank-deficient matrix is factored too (`A = Q R`, `Q` unitary; faer's panel kernel skips
/// the reflector of a column that is already zero, storing an identity reflector there).
/// `width` bounds the participants the stack was sized for ([`qr_in_place_scratch`]).
///
/// # Panics
/// When `h` is not `bs x min(m, n)` with `bs >= 1`, or the stack is smaller than
/// [`qr_in_place_scratch`] for `width`.
pub fn qr_in_place<T>(
    a: MatMut<'_, T>,
    h: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    params: QrParams,
    width: usize,
    stack: &mut MemStack,
) where
    T: ComplexField + Scalar + Send + Sync,
{
    let (m, n) = (a.nrows(), a.ncols());
    let size = m.min(n);
    let bs = h.nrows();
    assert!(
        bs >= 1 && h.ncols() == size,
        "qr_in_place: h must be bs x min(m, n)"
    );
    let slots_w = width.max(1);
    let call = call_region(m, n, bs).map(|r| gate::call::<T>(exec, r, params.threshold));
    let w0 = call.as_ref().map_or(1, Call::width).min(slots_w);
    if w0 <= 1 {
        // Serial from the start (and so to the end: later sections are smaller).
        faer_qr(a, h, Par::Seq, stack, Default::default());
        return;
    }
    let per = part_scratch::<T>(m, n, bs);
    let (bytes, stack) = stack.make_aligned_uninit::<u8>(slots_w * per, ALIGN);
    let (slots, _) = stack.collect(bytes.chunks_mut(per).map(Mutex::new));
    let mut qr = Qr {
        a,
        h,
        slots: &slots,
        bs,
    };
    let levels = Levels::new(bs, bs, size, n);
    let Ok(()) = lookahead::drive::<T, _>(exec, &mut qr, &levels, w0, params.threshold, slots_w);
}

/// The scratch of one participant.
type Slot<'b> = Mutex<&'b mut [MaybeUninit<u8>]>;

/// A QR that went parallel, as the lookahead driver runs it.
struct Qr<'a, 'b, T> {
    a: MatMut<'a, T>,
    h: MatMut<'a, T>,
    /// One scratch per participant.
    slots: &'a [Slot<'b>],
    bs: usize,
}

impl<'a, 'b, T: ComplexField + Send + Sync> Factorization for Qr<'a, 'b, T> {
    const SITE: &'static str = "qr";
    type Error = Infallible;
    type Lead<'s>
        = MatMut<'s, T>
    where
        Self: 's;
    type Step<'s>
        = Step<'s, 'b, T>
    where
        Self: 's;

    fn first_panel(&mut self) -> Result<(), Infallible> {
        let b = self.bs.min(self.h.ncols());
        let mut slot = lock(&self.slots[0]);
        factor_panel(
            self.a.rb_mut().subcols_mut(0, b),
            self.h.rb_mut().subcols_mut(0, b),
            MemStack::new(&mut slot),
        );
        Ok(())
    }

    fn region(&self, p: &Panel) -> Option<Region> {
        panel_section(self.a.nrows(), self.a.ncols(), p.k, p.k2 - p.k, p.b2)
    }

    fn section(&mut self, p: &Panel) -> (Step<'_, 'b, T>, MatMut<'_, T>) {
        let Panel { k, k2, b2, .. } = *p;
        let (done, rest) = self.h.rb_mut().split_at_col_mut(k2);
        let step = Step {
            tiles: Tiles::new(self.a.rb_mut()),
            t: done.into_const().subcols(k, k2 - k).subrows(0, k2 - k),
            slots: self.slots,
            k,
            k2,
            b2,
        };
        (step, rest.subcols_mut(0, b2))
    }
}

fn lock<'a, G>(m: &'a Mutex<G>) -> std::sync::MutexGuard<'a, G> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The region of the whole call: a QR of `m x n` in panels of `bs`, one section per panel
/// that has trailing columns; `None` when no panel has any.
fn call_region(m: usize, n: usize, bs: usize) -> Option<Region> {
    let sections = gate::panel_sections(m, n, bs);
    (sections > 0).then(|| Region {
        site: "qr",
        dims: [m, n, bs],
        units: cost::householder(m, n),
        family: Family::Qr,
        sections,
        scope: Scope::Call,
        call_units: cost::householder(m, n),
    })
}

/// The region of the section after panel `k..k + b`, which also factors the next panel of
/// width `b2`; `None` when it has no trailing columns.
fn panel_section(m: usize, n: usize, k: usize, b: usize, b2: usize) -> Option<Region> {
    let k2 = k + b;
    let cols = n.checked_sub(k2).filter(|&c| c > 0)?;
    let col = cost::update_column(m - k, b);
    let lead = b2 as f64 * col + PANEL_COST * cost::panel(m - k2, b2);
    let shared = cols.saturating_sub(b2) as f64 * col;
    Some(Region {
        site: "qr/panel",
        dims: [m - k, n - k, b],
        units: lead + shared,
        family: Family::Qr,
        sections: 1,
        scope: Scope::Section,
        call_units: cost::householder(m, n),
    })
}

/// One section: the update after panel `k..k2`.
struct Step<'s, 'b, T> {
    tiles: Tiles<'s, T>,
    /// The panel's block-reflector factor, `b x b`.
    t: MatRef<'s, T>,
    slots: &'s [Slot<'b>],
    k: usize,
    k2: usize,
    /// The next panel's width (0 after the last panel).
    b2: usize,
}

impl<T: ComplexField + Send + Sync> Step<'_, '_, T> {
    /// The panel's Householder vectors.
    fn v(&self) -> MatRef<'_, T> {
        let m = self.tiles.nrows();
        // SAFETY: the panel's columns k..k2 are in no participant's tile.
        unsafe { self.tiles.view(self.k, m, self.k, self.k2) }
    }
}

impl<'s, T: ComplexField + Send + Sync> lookahead::Step<MatMut<'s, T>> for Step<'s, '_, T> {
    fn lead(&self, h: &mut MatMut<'s, T>) {
        // Lookahead: the next panel first, factored at once.
        let (k, k2, m) = (self.k, self.k2, self.tiles.nrows());
        let mut slot = lock(&self.slots[0]);
        let stack = MemStack::new(&mut slot);
        // SAFETY: the next panel's columns k2..k2 + b2 (rows k..m) are the lead's alone; the
        // claims hand out only the columns after them.
        let mut panel = unsafe { self.tiles.tile(k, m, k2, k2 + self.b2) };
        apply_transpose(self.v(), self.t, Conj::Yes, panel.rb_mut(), Par::Seq, stack);
        factor_panel(panel.subrows_mut(k2 - k, m - k2), h.rb_mut(), stack);
    }

    fn update(&self, i: usize, c0: usize, c1: usize) {
        let (k, k2, m) = (self.k, self.k2, self.tiles.nrows());
        let mut slot = lock(&self.slots[i]);
        // SAFETY: the claims partition the trailing columns after the next panel (rows k..m).
        let cols = unsafe { self.tiles.tile(k, m, k2 + c0, k2 + c1) };
        apply_transpose(
            self.v(),
            self.t,
            Conj::Yes,
            cols,
            Par::Seq,
            MemStack::new(&mut slot),
        );
    }
}

/// Factors `panel` (`rows x b`, `rows >= b`) with faer's serial QR as ONE block of `b`
/// reflectors, its factor `T` in `t` (`b x b`).
fn factor_panel<T: ComplexField>(panel: MatMut<'_, T>, t: MatMut<'_, T>, stack: &mut MemStack) {
    let b = panel.ncols();
    faer_qr(
        panel,
        t.subrows_mut(0, b),
        Par::Seq,
        stack,
        Default::default(),
    );
}

/// Overwrites `b` (`m` rows) with `Q B` (`adjoint == false`) or `Q^H B`, where `Q` is the
/// Householder sequence of a factorization by [`qr_in_place`]: `v` its `m x min(m, n)`
/// vectors (the factors' first `min(m, n)` columns) and `h` its block factors. Column chunks
/// of `b` run on `exec`'s participants when the gate says it pays (family [`Family::Qr`]),
/// each with faer's serial block-reflector product and a scratch of its own (one allocation
/// per chunk).
///
/// # Panics
/// When `v` and `b` differ in rows or `h` is not `bs x v.ncols()`.
pub fn apply_q_in_place<T>(
    v: MatRef<'_, T>,
    h: MatRef<'_, T>,
    b: MatMut<'_, T>,
    adjoint: bool,
    exec: &(impl Executor + ?Sized),
    threshold: Option<ParThreshold>,
) where
    T: ComplexField + Scalar + Send + Sync,
{
    let (m, s, k) = (v.nrows(), v.ncols(), b.ncols());
    assert!(b.nrows() == m && h.ncols() == s, "apply_q_in_place: shapes");
    if m == 0 || s == 0 || k == 0 {
        return;
    }
    let bs = h.nrows();
    let apply = |c: MatMut<'_, T>| {
        let cols = c.ncols();
        let mut buf = faer::dyn_stack::MemBuffer::new(seq_scratch::<T>(m, bs, cols));
        let stack = MemStack::new(&mut buf);
        if adjoint {
            apply_seq_transpose(v, h, Conj::Yes, c, Par::Seq, stack);
        } else {
            apply_seq(v, h, Conj::No, c, Par::Seq, stack);
        }
    };
    let units = k as f64 * (2.0 * m as f64 * s as f64 - (s * s) as f64 / 2.0);
    let region = Region {
        site: "qr/apply",
        dims: [m, s, k],
        units,
        family: Family::Qr,
        sections: 1,
        scope: Scope::Call,
        call_units: units,
    };
    let call = gate::call::<T>(exec, region, threshold);
    let w = call.width().min(k);
    if w <= 1 {
        return apply(b);
    }
    let tiles = Tiles::new(b);
    call::chunks(exec, w, &|i: usize, chunks: usize| {
        let n = chunks.min(k);
        if i >= n {
            return;
        }
        let (c0, c1) = (i * k / n, (i + 1) * k / n);
        // SAFETY: chunk i owns columns c0..c1; the ranges partition 0..k.
        apply(unsafe { tiles.tile(0, m, c0, c1) });
    });
}
