//! The multifrontal driver the sparse LU and QR share (`docs/sparse-lu.md`, "The driver"): a
//! [`Forest`] of fronts in a postorder, each front assembled from `A`'s rows and its
//! children's updates, factored, and leaving an update for its parent. A front reads only its
//! children's updates and writes only its own factor, so disjoint subtrees run at once.
//!
//! The whole call asks the gate once. Serial, the fronts run in order on the caller with their
//! updates on one reused stack; parallel, the participants claim the subtrees of the
//! [cut](forest::cut) heaviest first (one at a time), each with its own column map, scratch and
//! stack, and the top's fronts follow on the caller, their dense work on the team. What a
//! front does is its method's ([`Fronts::step`]); the order, the claims, the stack and the
//! extend-add are here.

use std::ops::Range;
use std::sync::Mutex;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::reborrow::ReborrowMut;
use faer::traits::math_utils::add;
use faer::traits::ComplexField;
use faer::{Mat, MatMut, MatRef};
use teamalg_gates::{Family, ParThreshold, Scalar};

use super::batch::Claims;
use super::forest::{self, Cut, Forest};
use crate::exec::call;
use crate::exec::par::part_start;
use crate::exec::tiles::Tiles;
use crate::gate::{self, Region, Scope};
use crate::par::{Executor, Seq};

/// What moving one entry of a front costs (zeroing it, assembling `A`'s entries and the
/// children's updates into it, copying the factor and the update out), in multiply-adds.
pub const ENTRY: f64 = 30.0;

/// The update entries below which a front's extend-add stays on the caller (a quarter of a
/// million entries: about 2 ms of adds).
const MIN_SHARED: usize = 1 << 18;

/// The regions' names of one method.
#[derive(Debug, Clone, Copy)]
pub struct Sites {
    /// The whole call.
    pub call: &'static str,
    /// The subtrees' section.
    pub subtrees: &'static str,
    /// A top front's extend-add.
    pub extend_add: &'static str,
}

/// A multifrontal factorization's fronts, as the driver runs them.
pub trait Fronts<T>: Sync {
    /// A front's share of the factor.
    type Front: Send;

    /// The fronts' tree, in a postorder, with each front's work and pivot columns.
    fn forest(&self) -> &Forest;

    /// `A`'s columns (the column map's length).
    fn ncols(&self) -> usize;

    /// Front `s`'s pivot columns.
    fn columns(&self, s: usize) -> Range<usize>;

    /// Front `s`'s other columns, ascending.
    fn pattern(&self, s: usize) -> &[usize];

    /// Front `s`'s block of other columns, as its step writes it: `rows x pattern`, its update
    /// below the first `skip` rows.
    fn block(&self, s: usize) -> (usize, usize);

    /// The scratch one step needs at most, its dense kernels on up to `width` participants.
    fn scratch(&self, width: usize) -> StackReq;

    /// The gate's family and the regions' names.
    fn family(&self) -> (Family, Sites);

    /// Front `s`: assembled from `A`'s `values` and its children's `updates` (ascending, the
    /// extend-add is [`extend_add`]), factored on `exec`. `right` (zeroed, [`Fronts::block`])
    /// receives its other columns, the update below the first `skip` rows. `pos` is the
    /// participant's column map (`ncols` entries, any content). Returns the front and the
    /// update's row labels (the LU's: `A`'s rows; empty where rows have no label).
    #[allow(clippy::too_many_arguments)]
    fn step<E: Executor + ?Sized>(
        &self,
        s: usize,
        values: &[T],
        updates: &[UpdateRef<'_, T>],
        right: MatMut<'_, T>,
        pos: &mut [usize],
        exec: &E,
        threshold: Option<ParThreshold>,
        stack: &mut MemStack,
    ) -> Result<(Self::Front, Vec<usize>), PivotFailure>;
}

/// A front whose pivot columns found no nonzero pivot: the factorization stopped at `column`
/// (in the analysis's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PivotFailure {
    /// The column, in the analysis's order.
    pub column: usize,
}

/// What a front leaves to its parent.
#[derive(Debug)]
pub struct Update<T> {
    /// The front that left it.
    pub front: usize,
    /// The update's row labels.
    pub rows: Vec<usize>,
    /// The front's other columns: the update is below the first `skip` rows (the LU's `U`,
    /// copied into its factor), so it is handed on without a copy.
    pub block: Mat<T>,
    /// The rows of `block` above the update.
    pub skip: usize,
}

impl<T> Update<T> {
    /// The update as its parent reads it.
    pub fn view(&self) -> UpdateRef<'_, T> {
        UpdateRef {
            front: self.front,
            rows: &self.rows,
            block: self
                .block
                .as_ref()
                .subrows(self.skip, self.block.nrows() - self.skip),
        }
    }
}

/// A child's update as its parent reads it, wherever it is kept.
#[derive(Debug, Clone, Copy)]
pub struct UpdateRef<'a, T> {
    /// The front that left it.
    pub front: usize,
    /// Its row labels.
    pub rows: &'a [usize],
    /// `len x pattern`, the columns those of the front's pattern.
    pub block: MatRef<'a, T>,
}

/// The scratch [`factor`] needs on the caller (each other participant takes its own).
pub fn scratch<T, F: Fronts<T>>(fronts: &F, width: usize) -> StackReq {
    StackReq::and(
        StackReq::new::<usize>(fronts.ncols()),
        fronts.scratch(width),
    )
}

/// Runs every front on `exec`, asking the gate once for the call (family and sites:
/// [`Fronts::family`], `units` the tree's total work). A failed pivot is the first in the
/// analysis's order that a serial run meets.
///
/// # Panics
/// When the stack is smaller than [`scratch`] for `exec`'s width.
pub fn factor<T, F, E>(
    fronts: &F,
    values: &[T],
    exec: &E,
    threshold: Option<ParThreshold>,
    stack: &mut MemStack,
) -> Result<Vec<F::Front>, PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
    F: Fronts<T>,
    E: Executor + ?Sized,
{
    let forest = fronts.forest();
    if forest.is_empty() {
        return Ok(Vec::new());
    }
    let (family, sites) = fronts.family();
    let units = forest.total_work();
    let region = Region {
        site: sites.call,
        dims: [fronts.ncols(), forest.len(), 0],
        units,
        family,
        sections: 1,
        scope: Scope::Call,
        call_units: units,
    };
    // A tree with nothing to run at once (a chain of small fronts) asks nothing.
    let full = exec.width().max(1);
    let at_full = forest::cut(forest, full);
    let call = at_full
        .pays(forest)
        .then(|| gate::call::<T>(exec, region, threshold));
    let width = call.as_ref().map_or(1, |c| c.width());
    let cut = if width == full {
        at_full
    } else {
        forest::cut(forest, width)
    };
    let (mut pos, stack) = stack.make_with(fronts.ncols(), |_| 0usize);
    if width <= 1 || !cut.pays(forest) {
        let (done, _) = run(
            fronts,
            0..forest.len(),
            values,
            &mut pos,
            &mut Vec::new(),
            stack,
        )?;
        return Ok(done);
    }
    let mut done: Vec<Option<F::Front>> = (0..forest.len()).map(|_| None).collect();
    let mut updates: Vec<Option<Update<T>>> = (0..forest.len()).map(|_| None).collect();
    let failed = subtrees(
        fronts,
        &cut,
        values,
        exec,
        threshold,
        &mut done,
        &mut updates,
    )
    .err();
    // After a failure in the subtrees, the top fronts before its column still run: a serial
    // run meets a failure among them first.
    let before = failed.map_or(usize::MAX, |e| e.column);
    for &s in cut
        .top
        .iter()
        .filter(|&&s| fronts.columns(s).start < before)
    {
        let mut children: Vec<usize> = forest.children(s).collect();
        children.reverse();
        let ups: Vec<Update<T>> = children
            .iter()
            .map(|&c| updates[c].take().expect("a child runs before its parent"))
            .collect();
        let views: Vec<UpdateRef<'_, T>> = ups.iter().map(Update::view).collect();
        let (r, skip) = fronts.block(s);
        let mut right = Mat::<T>::zeros(r, fronts.pattern(s).len());
        let (f, rows) = fronts.step(
            s,
            values,
            &views,
            right.as_mut(),
            &mut pos,
            exec,
            threshold,
            stack,
        )?;
        drop(views);
        drop(ups);
        done[s] = Some(f);
        updates[s] = Some(Update {
            front: s,
            rows,
            block: right,
            skip,
        });
    }
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(done
        .into_iter()
        .map(|f| f.expect("every front runs"))
        .collect())
}

/// The fronts a run made, and the updates it left.
type Ran<F, T> = (Vec<F>, Vec<Update<T>>);

/// An update kept on a run's stack: `r x p` entries from `at`, the update below the first
/// `skip` rows.
struct Kept {
    front: usize,
    rows: Vec<usize>,
    at: usize,
    r: usize,
    p: usize,
    skip: usize,
}

/// The entries a run of `range`'s fronts keeps on its stack at most: in a postorder a front's
/// children's updates are the last ones kept, and its own block goes above them while it
/// reads them, then down in their place.
fn stack_len<T>(fronts: &impl Fronts<T>, range: Range<usize>) -> usize {
    let forest = fronts.forest();
    let mut kept: Vec<(usize, usize)> = Vec::new();
    let (mut top, mut most) = (0usize, 0usize);
    for s in range {
        let k = forest.children(s).count();
        let base = kept[kept.len() - k..].first().map_or(top, |&(at, _)| at);
        kept.truncate(kept.len() - k);
        let len = fronts.block(s).0 * fronts.pattern(s).len();
        most = most.max(top + len);
        kept.push((base, len));
        top = base + len;
    }
    most
}

/// The fronts of `range` (a subtree, or every front), in order on the caller with serial dense
/// kernels. Their blocks of other columns live on one stack (`keep`, reused: no front
/// allocates or faults in fresh memory for them): each front's children's updates are the
/// last ones kept (a postorder). Returns the fronts and the updates left (the roots'), copied
/// out.
fn run<T, F>(
    fronts: &F,
    range: Range<usize>,
    values: &[T],
    pos: &mut [usize],
    keep: &mut Vec<T>,
    stack: &mut MemStack,
) -> Result<Ran<F::Front, T>, PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
    F: Fronts<T>,
{
    let forest = fronts.forest();
    let need = stack_len(fronts, range.clone());
    if keep.len() < need {
        keep.resize(need, T::zero_impl());
    }
    let mut done = Vec::with_capacity(range.len());
    let mut kept: Vec<Kept> = Vec::new();
    let mut top = 0;
    for s in range {
        let k = forest.children(s).count();
        let kids = kept.split_off(kept.len() - k);
        let base = kids.first().map_or(top, |kid| kid.at);
        let ((r, skip), p) = (fronts.block(s), fronts.pattern(s).len());
        let (below, above) = keep.split_at_mut(top);
        let mine = &mut above[..r * p];
        mine.fill(T::zero_impl());
        let views: Vec<UpdateRef<'_, T>> = kids
            .iter()
            .map(|kid| UpdateRef {
                front: kid.front,
                rows: &kid.rows,
                block: MatRef::from_column_major_slice(
                    &below[kid.at..kid.at + kid.r * kid.p],
                    kid.r,
                    kid.p,
                )
                .subrows(kid.skip, kid.r - kid.skip),
            })
            .collect();
        let right = MatMut::from_column_major_slice_mut(mine, r, p);
        let (f, rows) = fronts.step(s, values, &views, right, pos, &Seq, None, stack)?;
        drop(views);
        // Down in the children's place (`base <= top`: a forward copy never overwrites what it
        // has still to read).
        for i in 0..r * p {
            keep[base + i] = keep[top + i].clone();
        }
        done.push(f);
        kept.push(Kept {
            front: s,
            rows,
            at: base,
            r,
            p,
            skip,
        });
        top = base + r * p;
    }
    let left = kept
        .into_iter()
        .map(|kid| {
            let block = MatRef::from_column_major_slice(
                &keep[kid.at..kid.at + kid.r * kid.p],
                kid.r,
                kid.p,
            );
            Update {
                front: kid.front,
                block: block.subrows(kid.skip, kid.r - kid.skip).to_owned(),
                rows: kid.rows,
                skip: 0,
            }
        })
        .collect();
    Ok((done, left))
}

/// The subtrees' section: the participants claim the subtrees heaviest first, one at a time,
/// each running its fronts with its own column map and scratch. Every subtree runs to its end
/// or its first failed pivot; the failure in the lowest column is the one a serial run would
/// meet first.
fn subtrees<T, F, E>(
    fronts: &F,
    cut: &Cut,
    values: &[T],
    exec: &E,
    threshold: Option<ParThreshold>,
    done: &mut [Option<F::Front>],
    updates: &mut [Option<Update<T>>],
) -> Result<(), PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
    F: Fronts<T>,
    E: Executor + ?Sized,
{
    let forest = fronts.forest();
    let (family, sites) = fronts.family();
    let count = cut.subtrees.len();
    let width = if count < 2 {
        1
    } else {
        let region = Region {
            site: sites.subtrees,
            dims: [fronts.ncols(), count, 0],
            units: cut.subtree_work,
            family,
            sections: 1,
            scope: Scope::Section,
            call_units: forest.total_work(),
        };
        gate::width::<T>(exec, region, threshold).min(count)
    };
    type Done<F, T> = (usize, Vec<F>, Vec<Update<T>>);
    let finished: Mutex<Vec<Done<F::Front, T>>> = Mutex::new(Vec::with_capacity(count));
    let failed: Mutex<Option<PivotFailure>> = Mutex::new(None);
    let fail = |e: PivotFailure| {
        let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
        if f.map_or(true, |f| e.column < f.column) {
            *f = Some(e);
        }
    };
    let need = scratch(fronts, 1);
    let claims = Claims::one_at_a_time(count);
    let body = || {
        let mut mem: Option<MemBuffer> = None;
        let mut keep: Vec<T> = Vec::new();
        while let Some(mine) = claims.claim() {
            for i in mine {
                let range = cut.subtrees[i].clone();
                let mem = mem.get_or_insert_with(|| MemBuffer::new(need));
                let stack = MemStack::new(mem);
                let (mut pos, stack) = stack.make_with(fronts.ncols(), |_| 0usize);
                match run(fronts, range.clone(), values, &mut pos, &mut keep, stack) {
                    Ok((f, u)) => {
                        finished
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push((range.start, f, u))
                    }
                    Err(e) => fail(e),
                }
            }
        }
    };
    if width <= 1 {
        body();
    } else {
        call::run(exec, width, &|_| body());
    }
    for (start, f, u) in finished.into_inner().unwrap_or_else(|p| p.into_inner()) {
        for (k, f) in f.into_iter().enumerate() {
            done[start + k] = Some(f);
        }
        for u in u {
            let at = u.front;
            updates[at] = Some(u);
        }
    }
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Adds the children's `updates` into the front's columns (`left`: its pivot columns, `right`:
/// the others; `pos` maps a column to its place), update `k` at rows `at[k]..` (through `map`
/// when given: row `q` to row `map[q]`): by chunks of the front's columns on the team when the
/// gate finds that it pays (each chunk writes only its columns).
#[allow(clippy::too_many_arguments)]
pub fn extend_add<T, F, E>(
    fronts: &F,
    s: usize,
    updates: &[UpdateRef<'_, T>],
    at: &[usize],
    map: Option<&[usize]>,
    pos: &[usize],
    left: MatMut<'_, T>,
    right: MatMut<'_, T>,
    exec: &E,
    threshold: Option<ParThreshold>,
) where
    T: ComplexField + Scalar + Send + Sync,
    F: Fronts<T>,
    E: Executor + ?Sized,
{
    let (c, p) = (left.ncols(), right.ncols());
    let entries: usize = updates
        .iter()
        .map(|u| u.block.nrows() * u.block.ncols())
        .sum();
    let (family, sites) = fronts.family();
    let region = Region {
        site: sites.extend_add,
        dims: [left.nrows(), c + p, 0],
        units: ENTRY * entries as f64,
        family,
        sections: 1,
        scope: Scope::Section,
        call_units: fronts.forest().total_work(),
    };
    let width = match exec.width() > 1 && entries >= MIN_SHARED {
        true => gate::width::<T>(exec, region, threshold),
        false => 1,
    };
    let (left, right) = (Tiles::new(left), Tiles::new(right));
    let r = left.nrows();
    let chunk = |c0: usize, c1: usize| {
        for (update, &q) in updates.iter().zip(at) {
            let child = fronts.pattern(update.front);
            debug_assert!(child.iter().all(
                |j| fronts.columns(s).contains(j) || fronts.pattern(s).binary_search(j).is_ok()
            ));
            let len = update.block.nrows();
            for (k, &j) in child.iter().enumerate() {
                let t = pos[j];
                if t < c0 || t >= c1 {
                    continue;
                }
                // SAFETY: the chunks partition the front's columns, and this one writes only
                // column `t` of its own range, in `left` or `right`.
                let mut col = unsafe {
                    match t < c {
                        true => left.tile(0, r, t, t + 1),
                        false => right.tile(0, r, t - c, t - c + 1),
                    }
                };
                let dst = col.rb_mut().col_mut(0).try_as_col_major_mut();
                let dst = dst.expect("a front is column-major").as_slice_mut();
                let src = update.block.col(k).try_as_col_major();
                let src = &src.expect("an update is column-major").as_slice()[..len];
                match map {
                    None => {
                        for (d, v) in dst[q..q + len].iter_mut().zip(src) {
                            *d = add(d, v);
                        }
                    }
                    Some(map) => {
                        for (&to, v) in map[q..q + len].iter().zip(src) {
                            dst[to] = add(&dst[to], v);
                        }
                    }
                }
            }
        }
    };
    if width <= 1 {
        return chunk(0, c + p);
    }
    let n = c + p;
    call::chunks_of(exec, width, width, &|k, w| {
        chunk(part_start(k, n, w), part_start(k + 1, n, w))
    });
}
