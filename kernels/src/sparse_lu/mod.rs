//! Sparse LU with partial pivoting, `P A Q = L U`, multifrontal over the column elimination
//! tree, with the tree's independent subtrees as the unit of parallel work
//! (`docs/sparse-lu.md`).
//!
//! [`tree`] is the analysis (faer's COLAMD order and supernodal structure of `A^T A`, in a
//! postorder, and the fronts' [`Forest`](crate::drive::forest::Forest)), [`front`] one front's
//! step, and [`factor`] the factorization: the whole call asks the gate once; serial, the
//! fronts run in order on the caller; parallel, the participants claim the subtrees of the
//! [cut](crate::drive::forest::cut) heaviest first, each with its own column map and scratch,
//! and the top's fronts follow on the caller, their dense work (panel LU, solve, update) on
//! the team through teamalg's dense kernels.

pub mod cost;
pub mod front;
pub mod tree;

use std::sync::Mutex;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::matmul::matmul_with_conj;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place_with_conj, solve_unit_lower_triangular_in_place_with_conj,
    solve_unit_upper_triangular_in_place_with_conj, solve_upper_triangular_in_place_with_conj,
};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::math_utils::{one, sub};
use faer::traits::ComplexField;
use faer::{Accum, Conj, Mat, MatMut, MatRef, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::drive::batch::Claims;
use crate::drive::forest::{self, Cut};
use crate::exec::call;
use crate::exec::par::part_start;
use crate::exec::tiles::Tiles;
use crate::gate::{self, Region, Scope};
use crate::par::{Executor, Seq};

pub use front::{Front, PivotFailure, Update, UpdateRef};
pub use tree::Analysis;

/// Parameters of [`factor`] and [`solve_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SparseLuParams {
    /// How the call decides to go parallel; `None` leaves it to the executor's model (the
    /// pool's threshold for [`Family::SparseLu`], else the rule).
    pub threshold: Option<ParThreshold>,
}

/// The factor `P A Q = L U`: each front's rows, its block of `L` and `U`.
#[derive(Debug, Clone)]
pub struct Factor<T> {
    fronts: Vec<Front<T>>,
}

impl<T> Factor<T> {
    /// The fronts, in the analysis's order.
    pub fn fronts(&self) -> &[Front<T>] {
        &self.fronts
    }

    /// `A`'s row that pivots each column of the analysis's order: `P`.
    pub fn pivot_rows<'a>(&'a self, analysis: &'a Analysis) -> impl Iterator<Item = usize> + 'a {
        self.fronts
            .iter()
            .enumerate()
            .flat_map(move |(s, f)| f.rows[..analysis.forest().cols(s)].iter().copied())
    }
}

/// The scratch [`factor`] needs on the caller (each other participant takes its own).
pub fn factor_scratch<T: ComplexField>(analysis: &Analysis) -> StackReq {
    StackReq::and(
        StackReq::new::<usize>(analysis.nrows()),
        front::step_scratch::<T>(analysis),
    )
}

/// Factors `A` (`values` in the order of the pattern `analysis` was made from) as
/// `P A Q = L U`, on `exec`. A front with no nonzero pivot for one of its columns, or a
/// structurally singular pattern, is the `PivotFailure` of the first such column in the
/// analysis's order that a serial factorization meets.
///
/// # Panics
/// When `values` does not have the pattern's entries, or the stack is smaller than
/// [`factor_scratch`].
pub fn factor<T>(
    analysis: &Analysis,
    values: &[T],
    exec: &(impl Executor + ?Sized),
    params: SparseLuParams,
    stack: &mut MemStack,
) -> Result<Factor<T>, PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
{
    let n = analysis.nrows();
    if n == 0 {
        return Ok(Factor { fronts: Vec::new() });
    }
    if let Some(column) = analysis.structurally_singular() {
        return Err(PivotFailure { column });
    }
    let forest = analysis.forest();
    let units = forest.total_work();
    let region = Region {
        site: "sparse_lu",
        dims: [n, forest.len(), 0],
        units,
        family: Family::SparseLu,
        sections: 1,
        scope: Scope::Call,
        call_units: units,
    };
    // A tree with nothing to run at once (a chain of small fronts) asks nothing.
    let full = exec.width().max(1);
    let at_full = forest::cut(forest, full);
    let call = at_full
        .pays(forest)
        .then(|| gate::call::<T>(exec, region, params.threshold));
    let width = call.as_ref().map_or(1, |c| c.width());
    let cut = if width == full {
        at_full
    } else {
        forest::cut(forest, width)
    };
    let (mut pos, stack) = stack.make_with(n, |_| 0usize);
    if width <= 1 || !cut.pays(forest) {
        let (fronts, _) = run(
            analysis,
            0..forest.len(),
            values,
            &mut pos,
            &mut Vec::new(),
            stack,
        )?;
        return Ok(Factor { fronts });
    }
    let mut fronts: Vec<Option<Front<T>>> = (0..forest.len()).map(|_| None).collect();
    let mut updates: Vec<Option<Update<T>>> = (0..forest.len()).map(|_| None).collect();
    let failed = subtrees(
        analysis,
        &cut,
        values,
        exec,
        params,
        &mut fronts,
        &mut updates,
    )
    .err();
    // After a failure in the subtrees, the top fronts before its column still run: a serial
    // factorization meets a failure among them first.
    let before = failed.map_or(usize::MAX, |e| e.column);
    for &s in cut
        .top
        .iter()
        .filter(|&&s| analysis.columns(s).start < before)
    {
        let mut children: Vec<usize> = forest.children(s).collect();
        children.reverse();
        let ups: Vec<Update<T>> = children
            .iter()
            .map(|&c| updates[c].take().expect("a child runs before its parent"))
            .collect();
        let views: Vec<UpdateRef<'_, T>> = ups.iter().map(Update::view).collect();
        let (r, c) = (analysis.rows(s), forest.cols(s));
        let mut right = Mat::<T>::zeros(r, analysis.pattern(s).len());
        let (f, rows) = front::step(
            analysis,
            s,
            values,
            &views,
            right.as_mut(),
            &mut pos,
            exec,
            params.threshold,
            stack,
        )?;
        drop(views);
        drop(ups);
        fronts[s] = Some(f);
        updates[s] = Some(Update {
            front: s,
            rows,
            block: right,
            skip: c,
        });
    }
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(Factor {
        fronts: fronts
            .into_iter()
            .map(|f| f.expect("every front runs"))
            .collect(),
    })
}

/// The fronts a run made, and the updates it left.
type Ran<T> = (Vec<Front<T>>, Vec<Update<T>>);

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
fn stack_len(analysis: &Analysis, range: std::ops::Range<usize>) -> usize {
    let forest = analysis.forest();
    let mut kept: Vec<(usize, usize)> = Vec::new();
    let (mut top, mut most) = (0usize, 0usize);
    for s in range {
        let k = forest.children(s).count();
        let base = kept[kept.len() - k..].first().map_or(top, |&(at, _)| at);
        kept.truncate(kept.len() - k);
        let len = analysis.rows(s) * analysis.pattern(s).len();
        most = most.max(top + len);
        kept.push((base, len));
        top = base + len;
    }
    most
}

/// The fronts of `range` (a subtree, or every front), in order on the caller with serial dense
/// kernels. Their other columns live on one stack (`keep`, reused: no front allocates or
/// faults in fresh memory for them): each front's children's updates are the last ones kept
/// (a postorder). Returns the fronts and the updates left (the roots'), copied out.
fn run<T>(
    analysis: &Analysis,
    range: std::ops::Range<usize>,
    values: &[T],
    pos: &mut [usize],
    keep: &mut Vec<T>,
    stack: &mut MemStack,
) -> Result<Ran<T>, PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
{
    let forest = analysis.forest();
    let need = stack_len(analysis, range.clone());
    if keep.len() < need {
        keep.resize(need, T::zero_impl());
    }
    let mut fronts = Vec::with_capacity(range.len());
    let mut kept: Vec<Kept> = Vec::new();
    let mut top = 0;
    for s in range {
        let k = forest.children(s).count();
        let kids = kept.split_off(kept.len() - k);
        let base = kids.first().map_or(top, |kid| kid.at);
        let (r, c, p) = (analysis.rows(s), forest.cols(s), analysis.pattern(s).len());
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
                .subrows(kid.skip, kid.rows.len()),
            })
            .collect();
        let right = MatMut::from_column_major_slice_mut(mine, r, p);
        let (f, rows) = front::step(analysis, s, values, &views, right, pos, &Seq, None, stack)?;
        drop(views);
        // Down in the children's place (`base <= top`: a forward copy never overwrites what it
        // has still to read).
        for i in 0..r * p {
            keep[base + i] = keep[top + i].clone();
        }
        fronts.push(f);
        kept.push(Kept {
            front: s,
            rows,
            at: base,
            r,
            p,
            skip: c,
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
                block: block.subrows(kid.skip, kid.rows.len()).to_owned(),
                rows: kid.rows,
                skip: 0,
            }
        })
        .collect();
    Ok((fronts, left))
}

/// The subtrees' section: the participants claim the subtrees heaviest first, one at a time,
/// each running its fronts with its own column map and scratch. Every subtree runs to its end
/// or its first failed pivot; the failure in the lowest column is the one a serial
/// factorization would meet first.
fn subtrees<T>(
    analysis: &Analysis,
    cut: &Cut,
    values: &[T],
    exec: &(impl Executor + ?Sized),
    params: SparseLuParams,
    fronts: &mut [Option<Front<T>>],
    updates: &mut [Option<Update<T>>],
) -> Result<(), PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
{
    let forest = analysis.forest();
    let count = cut.subtrees.len();
    let width = if count < 2 {
        1
    } else {
        let region = Region {
            site: "sparse_lu/subtrees",
            dims: [analysis.nrows(), count, 0],
            units: cut.subtree_work,
            family: Family::SparseLu,
            sections: 1,
            scope: Scope::Section,
            call_units: forest.total_work(),
        };
        gate::width::<T>(exec, region, params.threshold).min(count)
    };
    type Done<T> = (usize, Vec<Front<T>>, Vec<Update<T>>);
    let done: Mutex<Vec<Done<T>>> = Mutex::new(Vec::with_capacity(count));
    let failed: Mutex<Option<PivotFailure>> = Mutex::new(None);
    let fail = |e: PivotFailure| {
        let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
        if f.map_or(true, |f| e.column < f.column) {
            *f = Some(e);
        }
    };
    let scratch = factor_scratch::<T>(analysis);
    let claims = Claims::one_at_a_time(count);
    let body = || {
        let mut mem: Option<MemBuffer> = None;
        let mut keep: Vec<T> = Vec::new();
        while let Some(mine) = claims.claim() {
            for i in mine {
                let range = cut.subtrees[i].clone();
                let mem = mem.get_or_insert_with(|| MemBuffer::new(scratch));
                let stack = MemStack::new(mem);
                let (mut pos, stack) = stack.make_with(analysis.nrows(), |_| 0usize);
                match run(analysis, range.clone(), values, &mut pos, &mut keep, stack) {
                    Ok((f, u)) => {
                        done.lock()
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
    for (start, f, u) in done.into_inner().unwrap_or_else(|p| p.into_inner()) {
        for (k, f) in f.into_iter().enumerate() {
            fronts[start + k] = Some(f);
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

/// Overwrites `rhs` with `A^-1 rhs` (`transpose`: `A^-T rhs`; `conj` conjugates `A`, so
/// `A^-H` is the transpose conjugated), `A`'s factor in `factor`, on `exec`: the columns of
/// `rhs` are solved apart, in chunks on the participants when the gate finds that it pays
/// (family [`Family::SparseLu`], [`cost::solve`] multiply-adds). A column's result does not
/// depend on who solves it.
///
/// # Panics
/// When `rhs` does not have the analysis's rows or the factor is not the analysis's.
#[allow(clippy::too_many_arguments)]
pub fn solve_in_place<T>(
    analysis: &Analysis,
    factor: &Factor<T>,
    transpose: bool,
    conj: Conj,
    rhs: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    params: SparseLuParams,
) where
    T: ComplexField + Scalar + Send + Sync,
{
    let (n, k) = (rhs.nrows(), rhs.ncols());
    assert_eq!(n, analysis.nrows(), "solve_in_place: rhs' rows");
    assert_eq!(
        factor.fronts.len(),
        analysis.fronts_len(),
        "solve_in_place: the factor of another analysis"
    );
    if n == 0 || k == 0 {
        return;
    }
    let solve = |rhs: MatMut<'_, T>| match transpose {
        false => solve_columns(analysis, factor, conj, rhs),
        true => solve_columns_transpose(analysis, factor, conj, rhs),
    };
    let units = cost::solve(analysis.len_values(), k);
    let region = Region {
        site: "sparse_lu/solve",
        dims: [n, k, 0],
        units,
        family: Family::SparseLu,
        sections: 1,
        scope: Scope::Call,
        call_units: units,
    };
    let call = gate::call::<T>(exec, region, params.threshold);
    let width = call.width().min(k);
    if width <= 1 {
        solve(rhs);
        return;
    }
    let tiles = Tiles::new(rhs);
    call::chunks_of(exec, width, width, &|c, w| {
        let (c0, c1) = (part_start(c, k, w), part_start(c + 1, k, w));
        // SAFETY: chunk `c` owns columns `c0..c1`; the chunks partition the columns, and the
        // executor runs each chunk once.
        let cols = unsafe { tiles.tile(0, n, c0, c1) };
        solve(cols);
    });
}

/// `A^-1 b`: `L` forward over the fronts (rows of `b` by `A`'s numbering), then `U` backward
/// (by the analysis's columns), then `Q`.
fn solve_columns<T: ComplexField>(
    analysis: &Analysis,
    factor: &Factor<T>,
    conj: Conj,
    mut b: MatMut<'_, T>,
) {
    let (n, k) = (b.nrows(), b.ncols());
    let mut z = Mat::<T>::zeros(n, k);
    for (s, f) in factor.fronts.iter().enumerate() {
        let cols = analysis.columns(s);
        let (c, r) = (cols.len(), f.rows.len());
        let mut y = z.rb_mut().subrows_mut(cols.start, c);
        for (q, &i) in f.rows[..c].iter().enumerate() {
            for j in 0..k {
                y[(q, j)] = b[(i, j)].clone();
            }
        }
        let l11 = f.lu.as_ref().subrows(0, c);
        solve_unit_lower_triangular_in_place_with_conj(l11, conj, y.rb_mut(), Par::Seq);
        if r > c {
            let mut t = Mat::<T>::zeros(r - c, k);
            let l21 = f.lu.as_ref().subrows(c, r - c);
            matmul_with_conj(
                t.as_mut(),
                Accum::Replace,
                l21,
                conj,
                y.rb(),
                Conj::No,
                one::<T>(),
                Par::Seq,
            );
            for (q, &i) in f.rows[c..].iter().enumerate() {
                for j in 0..k {
                    b[(i, j)] = sub(&b[(i, j)], &t[(q, j)]);
                }
            }
        }
    }
    for (s, f) in factor.fronts.iter().enumerate().rev() {
        let cols = analysis.columns(s);
        let pattern = analysis.pattern(s);
        let c = cols.len();
        let mut g = Mat::<T>::zeros(f.live.len(), k);
        for (q, &at) in f.live.iter().enumerate() {
            for col in 0..k {
                g[(q, col)] = z[(pattern[at], col)].clone();
            }
        }
        let mut t = z.rb_mut().subrows_mut(cols.start, c);
        if !f.live.is_empty() {
            matmul_with_conj(
                t.rb_mut(),
                Accum::Add,
                f.u.as_ref(),
                conj,
                g.as_ref(),
                Conj::No,
                -one::<T>(),
                Par::Seq,
            );
        }
        let u11 = f.lu.as_ref().subrows(0, c);
        solve_upper_triangular_in_place_with_conj(u11, conj, t, Par::Seq);
    }
    let fwd = analysis.col_perm().arrays().0;
    for (kk, &i) in fwd.iter().enumerate() {
        for j in 0..k {
            b[(i, j)] = z[(kk, j)].clone();
        }
    }
}

/// `A^-T b`: `Q^T`, then `U^T` forward over the fronts, then `L^T` backward (rows of the
/// result by `A`'s numbering).
fn solve_columns_transpose<T: ComplexField>(
    analysis: &Analysis,
    factor: &Factor<T>,
    conj: Conj,
    mut b: MatMut<'_, T>,
) {
    let (n, k) = (b.nrows(), b.ncols());
    let mut z = Mat::<T>::zeros(n, k);
    let fwd = analysis.col_perm().arrays().0;
    for (kk, &i) in fwd.iter().enumerate() {
        for j in 0..k {
            z[(kk, j)] = b[(i, j)].clone();
        }
    }
    for (s, f) in factor.fronts.iter().enumerate() {
        let cols = analysis.columns(s);
        let pattern = analysis.pattern(s);
        let c = cols.len();
        let mut t = z.rb_mut().subrows_mut(cols.start, c);
        let u11t = f.lu.as_ref().subrows(0, c).transpose();
        solve_lower_triangular_in_place_with_conj(u11t, conj, t.rb_mut(), Par::Seq);
        if !f.live.is_empty() {
            let mut g = Mat::<T>::zeros(f.live.len(), k);
            matmul_with_conj(
                g.as_mut(),
                Accum::Replace,
                f.u.as_ref().transpose(),
                conj,
                t.rb(),
                Conj::No,
                one::<T>(),
                Par::Seq,
            );
            for (q, &at) in f.live.iter().enumerate() {
                let j = pattern[at];
                for col in 0..k {
                    z[(j, col)] = sub(&z[(j, col)], &g[(q, col)]);
                }
            }
        }
    }
    for (s, f) in factor.fronts.iter().enumerate().rev() {
        let cols = analysis.columns(s);
        let (c, r) = (cols.len(), f.rows.len());
        let mut t = z.as_ref().subrows(cols.start, c).to_owned();
        if r > c {
            let mut g = Mat::<T>::zeros(r - c, k);
            for (q, &i) in f.rows[c..].iter().enumerate() {
                for j in 0..k {
                    g[(q, j)] = b[(i, j)].clone();
                }
            }
            matmul_with_conj(
                t.as_mut(),
                Accum::Add,
                f.lu.as_ref().subrows(c, r - c).transpose(),
                conj,
                g.as_ref(),
                Conj::No,
                -one::<T>(),
                Par::Seq,
            );
        }
        let l11t = f.lu.as_ref().subrows(0, c).transpose();
        solve_unit_upper_triangular_in_place_with_conj(l11t, conj, t.as_mut(), Par::Seq);
        for (q, &i) in f.rows[..c].iter().enumerate() {
            for j in 0..k {
                b[(i, j)] = t[(q, j)].clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use faer::sparse::{SparseColMat, Triplet};
    use faer::Mat;

    use super::*;

    /// An unsymmetric 2D grid operator of `k x k` nodes with a small diagonal.
    fn grid(k: usize, diagonal: f64) -> SparseColMat<usize, f64> {
        let mut t = Vec::new();
        for x in 0..k {
            for y in 0..k {
                let i = x * k + y;
                t.push(Triplet::new(i, i, diagonal * (1.0 + (i % 7) as f64)));
                if x + 1 < k {
                    t.push(Triplet::new(i + k, i, -1.0 - (i % 3) as f64));
                    t.push(Triplet::new(i, i + k, 0.5 + (i % 5) as f64));
                }
                if y + 1 < k {
                    t.push(Triplet::new(i + 1, i, -0.7 - (i % 4) as f64));
                    t.push(Triplet::new(i, i + 1, 1.3 + (i % 2) as f64));
                }
            }
        }
        SparseColMat::try_new_from_triplets(k * k, k * k, &t).unwrap()
    }

    /// `L U` against `P A Q`, densely: every front's rows of `L` and columns of `U` placed in
    /// the pivot order.
    #[test]
    fn the_fronts_multiply_back_to_the_permuted_matrix() {
        for k in [4, 9, 16] {
            let a = grid(k, 0.1);
            let n = k * k;
            let analysis = Analysis::new(a.symbolic()).unwrap();
            let mut mem = MemBuffer::new(factor_scratch::<f64>(&analysis));
            let f = factor(
                &analysis,
                a.val(),
                &Seq,
                Default::default(),
                MemStack::new(&mut mem),
            )
            .unwrap();
            let rows: Vec<usize> = f.pivot_rows(&analysis).collect();
            let mut at = vec![usize::MAX; n];
            for (k, &i) in rows.iter().enumerate() {
                at[i] = k;
            }
            assert!(at.iter().all(|&k| k < n), "P is a permutation");
            let (mut l, mut u) = (Mat::<f64>::zeros(n, n), Mat::<f64>::zeros(n, n));
            for (s, front) in f.fronts().iter().enumerate() {
                let cols = analysis.columns(s);
                let c = cols.len();
                for (q, &i) in front.rows.iter().enumerate() {
                    for j in 0..c {
                        let v = front.lu[(q, j)];
                        if q < c && q <= j {
                            u[(cols.start + q, cols.start + j)] = v;
                        }
                        if q > j {
                            l[(at[i], cols.start + j)] = v;
                        }
                    }
                }
                for q in 0..c {
                    l[(cols.start + q, cols.start + q)] = 1.0;
                    for (k, &at) in front.live.iter().enumerate() {
                        u[(cols.start + q, analysis.pattern(s)[at])] = front.u[(q, k)];
                    }
                }
            }
            let dense = a.to_dense();
            let q = analysis.col_perm().arrays().0;
            let paq = Mat::<f64>::from_fn(n, n, |i, j| dense[(rows[i], q[j])]);
            let lu = &l * &u;
            let off = (&lu - &paq).norm_max();
            assert!(off <= 1e-12 * paq.norm_max() * n as f64, "k {k}: {off:e}");
        }
    }
}
