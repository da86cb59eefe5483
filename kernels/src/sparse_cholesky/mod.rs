//! Sparse Cholesky `LL^H`, supernodal and left-looking, as faer's, with the elimination tree's
//! independent subtrees as the unit of parallel work (`docs/sparse-cholesky.md`).
//!
//! [`tree`] is the analysis (faer's symbolic analysis in a postorder of its tree, and the tree
//! beside it), [`crate::drive::forest`] the cut into subtrees and a top, [`numeric`] the left-looking step, and
//! [`llt_in_place`] the factorization: the whole call asks the gate once; serial, it is faer's
//! own numeric factorization (its bits); parallel, the participants claim the subtrees
//! heaviest first, each on its own slice of the values, and the top's supernodes follow on the
//! caller, each gathering its updates by column chunks on the team and factoring its diagonal
//! block and panel with teamalg's dense kernels.

pub mod cost;
pub mod numeric;
pub mod tree;

use std::sync::Mutex;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::LdltError;
use faer::linalg::cholesky::llt::factor::LltError;
use faer::reborrow::{IntoConst, Reborrow, ReborrowMut};
use faer::sparse::linalg::cholesky::{LdltRef, LltRef};
use faer::sparse::utils::{permute_self_adjoint_scratch, permute_self_adjoint_to_unsorted};
use faer::sparse::SparseColMatRef;
use faer::traits::ComplexField;
use faer::{Conj, MatMut, Par, Side};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::cholesky::ldlt::{
    ldlt_in_place as dense_ldlt, ldlt_in_place_scratch as dense_ldlt_scratch, LdltParams,
};
use crate::cholesky::llt::{
    cholesky_in_place as dense_llt, cholesky_in_place_scratch, CholeskyParams,
};
use crate::drive::batch::Claims;
use crate::drive::columns::by_columns;
use crate::drive::forest;
use crate::drive::slots::Slots;
use crate::exec::call;
use crate::exec::par::part_start;
use crate::exec::tiles::Tiles;
use crate::gate::{self, Region, Scope};
use crate::par::Executor;
use crate::triangular::{solve_in_place as dense_solve, Diag, SolveParams, SolveSide, Triangle};

pub use numeric::{Kind, PivotFailure};

/// The columns of an update a top chunk forms at once: its temporary is the update's rows
/// times this (a chunk of a root's 2 000 columns would otherwise hold 8 MB per participant).
const GATHER_BLOCK: usize = 64;
pub use tree::Analysis;

/// Parameters of [`llt_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SparseLltParams {
    /// How the call decides to go parallel; `None` leaves it to the executor's model (the
    /// pool's threshold for [`Family::SparseCholesky`], else the rule).
    pub threshold: Option<ParThreshold>,
}

/// The scratch [`llt_in_place`] and [`ldlt_in_place`] need for `analysis`, on the caller
/// (each other participant takes its own buffer).
pub fn llt_in_place_scratch<T: ComplexField>(analysis: &Analysis) -> StackReq {
    if analysis.nrows() == 0 {
        return StackReq::EMPTY;
    }
    let sym = analysis.symbolic();
    let s = analysis.supernodal();
    let (n, nnz) = (analysis.nrows(), analysis.a_nnz());
    let top_cols = (0..s.n_supernodes())
        .map(|k| s.supernode_end()[k] - s.supernode_begin()[k])
        .max()
        .unwrap_or(0);
    let lower = StackReq::all_of(&[
        StackReq::new::<T>(nnz),
        StackReq::new::<usize>(n + 1),
        StackReq::new::<usize>(nnz),
    ]);
    StackReq::any_of(&[
        sym.factorize_numeric_llt_scratch::<T>(Par::Seq, Default::default()),
        sym.factorize_numeric_ldlt_scratch::<T>(Par::Seq, Default::default()),
        StackReq::all_of(&[
            lower,
            StackReq::any_of(&[
                permute_self_adjoint_scratch::<usize>(n),
                numeric::factor_scratch::<T>(analysis),
                cholesky_in_place_scratch::<T>(top_cols),
                dense_ldlt_scratch::<T>(top_cols),
            ]),
            StackReq::new::<usize>(n),
        ]),
    ])
}

/// The scratch [`ldlt_in_place`] needs: [`llt_in_place_scratch`]'s.
pub fn ldlt_in_place_scratch<T: ComplexField>(analysis: &Analysis) -> StackReq {
    llt_in_place_scratch::<T>(analysis)
}

/// Factors the self-adjoint `A` as `P A P^T = L D L^H` without pivoting (`L` unit lower, `D`
/// real, on the diagonal of each supernode's diagonal block, faer's layout), as
/// [`llt_in_place`] factors `L L^H`; a zero pivot is the `PivotFailure`.
pub fn ldlt_in_place<T>(
    analysis: &Analysis,
    a: SparseColMatRef<'_, usize, T>,
    side: Side,
    values: &mut [T],
    exec: &(impl Executor + ?Sized),
    params: SparseLltParams,
    stack: &mut MemStack,
) -> Result<(), PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
{
    factor_in_place(Kind::Ldlt, analysis, a, side, values, exec, params, stack)
}

/// Factors the self-adjoint `A` (its `side` triangle; the pattern `analysis` was made from) as
/// `P A P^T = L L^H` into `values` (faer's supernodal layout, `symbolic().len_val()` entries),
/// on `exec`. On error (`PivotFailure`, its column in the analysis's order) `values` holds a
/// partial factor.
///
/// # Panics
/// When `values` or `A` does not match the analysis, or the stack is smaller than
/// [`llt_in_place_scratch`].
pub fn llt_in_place<T>(
    analysis: &Analysis,
    a: SparseColMatRef<'_, usize, T>,
    side: Side,
    values: &mut [T],
    exec: &(impl Executor + ?Sized),
    params: SparseLltParams,
    stack: &mut MemStack,
) -> Result<(), PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
{
    factor_in_place(Kind::Llt, analysis, a, side, values, exec, params, stack)
}

/// [`llt_in_place`] or [`ldlt_in_place`].
#[allow(clippy::too_many_arguments)]
fn factor_in_place<T>(
    kind: Kind,
    analysis: &Analysis,
    a: SparseColMatRef<'_, usize, T>,
    side: Side,
    values: &mut [T],
    exec: &(impl Executor + ?Sized),
    params: SparseLltParams,
    stack: &mut MemStack,
) -> Result<(), PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
{
    let sym = analysis.symbolic();
    assert_eq!(
        values.len(),
        sym.len_val(),
        "sparse factorization: values' length"
    );
    assert!(
        a.nrows() == analysis.nrows() && a.ncols() == analysis.nrows(),
        "sparse factorization: A is not the analysis's order"
    );
    if analysis.nrows() == 0 {
        return Ok(());
    }
    let units = analysis.total_work();
    let n = analysis.nrows();
    let region = Region {
        site: "sparse_cholesky",
        dims: [n, analysis.supernodes(), 0],
        units,
        family: Family::SparseCholesky,
        sections: 1,
        scope: Scope::Call,
        call_units: units,
    };
    // A tree with nothing to run at once (a chain of small supernodes) asks nothing.
    let full = exec.width().max(1);
    let at_full = forest::cut(analysis.forest(), full);
    let call = at_full
        .pays(analysis.forest())
        .then(|| gate::call::<T>(exec, region, params.threshold));
    let width = call.as_ref().map_or(1, |c| c.width());
    // The cut again only when the gate chose another width.
    let cut = if width == full {
        at_full
    } else {
        forest::cut(analysis.forest(), width)
    };
    if width <= 1 || !cut.pays(analysis.forest()) {
        let failed = match kind {
            Kind::Llt => sym
                .factorize_numeric_llt(
                    values,
                    a,
                    side,
                    Default::default(),
                    Par::Seq,
                    stack,
                    Default::default(),
                )
                .err()
                .map(|LltError::NonPositivePivot { index }| index),
            Kind::Ldlt => sym
                .factorize_numeric_ldlt(
                    values,
                    a,
                    side,
                    Default::default(),
                    Par::Seq,
                    stack,
                    Default::default(),
                )
                .err()
                .map(|LdltError::ZeroPivot { index }| index),
        };
        return failed.map_or(Ok(()), |column| Err(PivotFailure { column }));
    }
    // A's lower triangle in the analysis's order, as faer's own step makes it.
    let nnz = a.compute_nnz();
    let (mut val, stack) = stack.make_with(nnz, |_| T::zero_impl());
    let (mut col_ptr, stack) = stack.make_with(n + 1, |_| 0usize);
    let (mut row_idx, stack) = stack.make_with(nnz, |_| 0usize);
    let lower = permute_self_adjoint_to_unsorted(
        &mut val,
        &mut col_ptr,
        &mut row_idx,
        a,
        sym.perm().expect("the analysis always orders"),
        side,
        Side::Lower,
        stack,
    );
    let lower = lower.into_const();
    let failed = subtrees(kind, analysis, &cut, lower, values, exec, params, stack).err();
    // After a failure in the subtrees, the top supernodes before its column still run: a
    // serial factorization meets a failure among them first.
    let before = failed.map_or(usize::MAX, |e| e.column);
    let sym = analysis.supernodal();
    let (mut map, stack) = stack.make_with(n, |_| usize::MAX);
    for &s in cut
        .top
        .iter()
        .filter(|&&s| sym.supernode_begin()[s] < before)
    {
        top(
            kind, analysis, s, lower, values, &mut map, exec, params, stack,
        )?;
    }
    failed.map_or(Ok(()), Err)
}

/// The subtrees' section: the participants claim the subtrees heaviest first, one at a time,
/// each factoring its subtree on its own slice of the values with its own scratch. Every
/// subtree runs to its end or its first failed pivot; the failure in the lowest column is the
/// one a serial factorization would meet first.
#[allow(clippy::too_many_arguments)]
fn subtrees<T>(
    kind: Kind,
    analysis: &Analysis,
    cut: &forest::Cut,
    lower: SparseColMatRef<'_, usize, T>,
    values: &mut [T],
    exec: &(impl Executor + ?Sized),
    params: SparseLltParams,
    stack: &mut MemStack,
) -> Result<(), PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
{
    let count = cut.subtrees.len();
    let width = if count < 2 {
        1
    } else {
        let region = Region {
            site: "sparse_cholesky/subtrees",
            dims: [analysis.nrows(), count, 0],
            units: cut.subtree_work,
            family: Family::SparseCholesky,
            sections: 1,
            scope: Scope::Section,
            call_units: analysis.total_work(),
        };
        gate::width::<T>(exec, region, params.threshold).min(count)
    };
    // Each subtree's values, one slice each, in the order of the cut.
    let mut by_start: Vec<usize> = (0..count).collect();
    by_start.sort_by_key(|&i| cut.subtrees[i].start);
    let mut slices: Vec<(usize, &mut [T])> = Vec::with_capacity(count);
    let mut rest: &mut [T] = values;
    let mut offset = 0;
    for &i in &by_start {
        let at = numeric::values_of(analysis, cut.subtrees[i].clone());
        let (_, r) = std::mem::take(&mut rest).split_at_mut(at.start - offset);
        let (mine, r) = r.split_at_mut(at.len());
        rest = r;
        offset = at.end;
        slices.push((i, mine));
    }
    slices.sort_by_key(|(i, _)| *i);
    let mut slices: Vec<&mut [T]> = slices.into_iter().map(|(_, s)| s).collect();
    let failed: Mutex<Option<PivotFailure>> = Mutex::new(None);
    let fail = |e: PivotFailure| {
        let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
        if f.map_or(true, |f| e.column < f.column) {
            *f = Some(e);
        }
    };
    if width <= 1 {
        for (i, range) in cut.subtrees.iter().enumerate() {
            let base = numeric::values_of(analysis, range.clone()).start;
            if let Err(e) =
                numeric::factor(analysis, kind, lower, slices[i], base, range.clone(), stack)
            {
                fail(e);
            }
        }
    } else {
        let slots = Slots::new(&mut slices);
        let claims = Claims::one_at_a_time(count);
        let scratch = numeric::factor_scratch::<T>(analysis);
        call::run(exec, width, &|_| {
            let mut mem: Option<MemBuffer> = None;
            while let Some(mine) = claims.claim() {
                for i in mine {
                    // SAFETY: `claims` hands out each index once, so this participant alone
                    // holds subtree `i`'s slice.
                    let slice: &mut [T] = unsafe { slots.get(i) };
                    let range = cut.subtrees[i].clone();
                    let base = numeric::values_of(analysis, range.clone()).start;
                    let mem = mem.get_or_insert_with(|| MemBuffer::new(scratch));
                    if let Err(e) = numeric::factor(
                        analysis,
                        kind,
                        lower,
                        slice,
                        base,
                        range,
                        MemStack::new(mem),
                    ) {
                        fail(e);
                    }
                }
            }
        });
    }
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// One supernode of the top, on the caller: its updates gathered by column chunks on the team
/// (each chunk writes only its columns), then its diagonal block and panel by teamalg's dense
/// Cholesky and triangular solve, each asking the gate as every dense region does.
#[allow(clippy::too_many_arguments)]
fn top<T>(
    kind: Kind,
    analysis: &Analysis,
    s: usize,
    lower: SparseColMatRef<'_, usize, T>,
    values: &mut [T],
    map: &mut [usize],
    exec: &(impl Executor + ?Sized),
    params: SparseLltParams,
    stack: &mut MemStack,
) -> Result<(), PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
{
    let sym = analysis.supernodal();
    let cpv = sym.col_ptr_for_val();
    let (start, end) = (sym.supernode_begin()[s], sym.supernode_end()[s]);
    let ncols = end - start;
    let nrows = ncols + sym.supernode(s).pattern().len();
    let (head, tail) = values.split_at_mut(cpv[s]);
    let head: &[T] = head;
    let mut ls =
        MatMut::from_column_major_slice_mut(&mut tail[..cpv[s + 1] - cpv[s]], nrows, ncols);
    ls.fill(T::zero_impl());
    numeric::mark(analysis, s, map);
    numeric::scatter(analysis, s, lower, ls.rb_mut(), map);
    let own = cost::supernode(sym, s, &[]);
    let region = Region {
        site: "sparse_cholesky/gather",
        dims: [ncols, nrows, analysis.descendants(s).len()],
        units: analysis.work(s) - own,
        family: Family::SparseCholesky,
        sections: 1,
        scope: Scope::Section,
        call_units: analysis.total_work(),
    };
    let width = gate::width::<T>(exec, region, params.threshold).min(ncols);
    if width <= 1 {
        numeric::gather(
            analysis,
            kind,
            s,
            head,
            0,
            ls.rb_mut(),
            0,
            usize::MAX,
            map,
            stack,
        );
    } else {
        // Chunks by the width alone, so that every executor of one width rounds alike.
        let chunks = (2 * width).min(ncols);
        let tiles = Tiles::new(ls.rb_mut());
        let map: &[usize] = map;
        call::chunks_of(exec, width, chunks, &|c, n| {
            let (c0, c1) = (part_start(c, ncols, n), part_start(c + 1, ncols, n));
            // SAFETY: chunk `c` owns columns `c0..c1` of the block; the chunks partition the
            // columns, and the executor runs each chunk once.
            let cols = unsafe { tiles.tile(0, nrows, c0, c1) };
            let block = GATHER_BLOCK.min(c1 - c0);
            let mut mem = MemBuffer::new(numeric::gather_scratch::<T>(analysis, s, block));
            let stack = MemStack::new(&mut mem);
            numeric::gather(analysis, kind, s, head, 0, cols, c0, block, map, stack);
        });
    }
    numeric::unmark(analysis, s, map);
    let (mut diag, mut panel) = ls.split_at_row_mut(ncols);
    // The call's own threshold, where it set one, governs its dense regions too.
    let threshold = params.threshold;
    let failed = match kind {
        Kind::Llt => {
            let dense = CholeskyParams {
                threshold,
                ..CholeskyParams::default()
            };
            dense_llt(diag.rb_mut(), exec, dense, stack)
                .err()
                .map(|e| e.index)
        }
        Kind::Ldlt => {
            let dense = LdltParams {
                threshold,
                ..LdltParams::default()
            };
            let failed = dense_ldlt(diag.rb_mut(), exec, dense, stack)
                .err()
                .map(|e| e.index);
            // Nothing above the diagonal, as faer's step leaves it.
            for j in 1..ncols {
                diag.rb_mut()
                    .col_mut(j)
                    .subrows_mut(0, j)
                    .fill(T::zero_impl());
            }
            failed
        }
    };
    if let Some(index) = failed {
        return Err(PivotFailure {
            column: start + index,
        });
    }
    // The panel `P` becomes `P L^-H`: `L Y = P^H`, then `P = Y^H`. The solve takes `P^H` as
    // the transposed view of `P` with its entries conjugated, in place.
    let unit = match kind {
        Kind::Llt => Diag::NonUnit,
        Kind::Ldlt => Diag::Unit,
    };
    conjugate(panel.rb_mut());
    dense_solve(
        diag.rb(),
        panel.rb_mut().transpose_mut(),
        SolveSide::Left,
        Triangle::Lower,
        unit,
        exec,
        SolveParams { threshold },
    );
    conjugate(panel.rb_mut());
    if kind == Kind::Ldlt {
        numeric::scale_by_inverse_diagonal(diag.rb(), panel);
    }
    Ok(())
}

/// Conjugates every entry of `m` in place (nothing in real arithmetic).
fn conjugate<T: ComplexField>(mut m: MatMut<'_, T>) {
    if T::IS_REAL {
        return;
    }
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            let x = &mut m[(i, j)];
            *x = faer::traits::math_utils::conj(&*x);
        }
    }
}

/// The scratch [`solve_in_place`] needs on the caller for `k` right-hand sides.
pub fn solve_in_place_scratch<T: ComplexField>(analysis: &Analysis, k: usize) -> StackReq {
    analysis.symbolic().solve_in_place_scratch::<T>(k, Par::Seq)
}

/// Overwrites `rhs` with `A^-1 rhs` (or `conj(A)^-1 rhs`), `A`'s factor of `kind` in `values`
/// ([`llt_in_place`], [`ldlt_in_place`]), on `exec`: the columns of `rhs` are solved apart, by faer's serial
/// supernodal solve, in chunks on the participants when the gate finds that it pays (family
/// [`Family::SparseCholesky`], [`cost::solve`] multiply-adds). A column's result does not
/// depend on who solves it.
///
/// # Panics
/// When `rhs` does not have the analysis's rows, `values` its length, or the stack is smaller
/// than [`solve_in_place_scratch`].
#[allow(clippy::too_many_arguments)]
pub fn solve_in_place<T>(
    analysis: &Analysis,
    kind: Kind,
    values: &[T],
    conj: Conj,
    rhs: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    params: SparseLltParams,
    stack: &mut MemStack,
) where
    T: ComplexField + Scalar + Send + Sync,
{
    let (n, k) = (rhs.nrows(), rhs.ncols());
    assert_eq!(n, analysis.nrows(), "solve_in_place: rhs' rows");
    if n == 0 {
        return;
    }
    let solve = |conj: Conj, rhs: MatMut<'_, T>, stack: &mut MemStack| match kind {
        Kind::Llt => LltRef::new(analysis.symbolic(), values).solve_in_place_with_conj(
            conj,
            rhs,
            Par::Seq,
            stack,
        ),
        Kind::Ldlt => LdltRef::new(analysis.symbolic(), values).solve_in_place_with_conj(
            conj,
            rhs,
            Par::Seq,
            stack,
        ),
    };
    by_columns(
        exec,
        "sparse_cholesky/solve",
        Family::SparseCholesky,
        cost::solve(values.len(), k),
        params.threshold,
        rhs,
        |rhs| solve(conj, rhs, stack),
        &|cols| {
            let mut mem = MemBuffer::new(solve_in_place_scratch::<T>(analysis, cols.ncols()));
            solve(conj, cols, MemStack::new(&mut mem));
        },
    );
}
