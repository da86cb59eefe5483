//! One front of the multifrontal LU: assemble `A`'s assigned rows and the children's updates
//! into a dense block, factor its pivot columns with partial pivoting over all its rows (every
//! row that can pivot them is there: George and Ng's row merge), solve its block of `U`, and
//! form the update of its unpivoted rows that its parent assembles. A front reads only its
//! children's updates and writes only its own factor, so disjoint subtrees run at once
//! (`docs/sparse-lu.md`).

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::{temp_mat_scratch, temp_mat_zeroed};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::math_utils::one;
use faer::traits::ComplexField;
use faer::{Accum, Mat, MatMut, MatRef};
use teamalg_gates::{ParThreshold, Scalar};

use super::tree::Analysis;
use super::Lu;
use crate::drive::frontal::{self, PivotFailure, UpdateRef};
use crate::gemm::{matmul, GemmParams};
use crate::lu::partial::{apply_swaps, lu_in_place, lu_in_place_scratch, LuParams};
use crate::par::Executor;
use crate::triangular::{solve_in_place, Diag, SolveParams, SolveSide, Triangle};

/// A front's share of the factor.
#[derive(Debug, Clone)]
pub struct Front<T> {
    /// `A`'s rows of the front, its pivot rows first (row `k` pivots the front's column `k`).
    pub rows: Vec<usize>,
    /// `rows x cols`: `L` below the diagonal (unit), `U`'s diagonal block on and above it.
    pub lu: Mat<T>,
    /// `cols x live.len()`: `U`'s block in the front's other columns that it reaches.
    pub u: Mat<T>,
    /// The columns of `u`, as places in the front's pattern (ascending): the others of `U`'s
    /// block are zero.
    pub live: Vec<usize>,
}

/// The scratch one participant's fronts need (the largest front's).
pub fn step_scratch<T: ComplexField>(analysis: &Analysis) -> StackReq {
    let (r, cols) = analysis.max_front();
    // The swaps, then the dense LU's scratch or the gathered live columns.
    StackReq::all_of(&[
        StackReq::new::<usize>(r),
        StackReq::any_of(&[
            lu_in_place_scratch::<T>(r, cols),
            temp_mat_scratch::<T>(r, cols),
        ]),
    ])
}

/// Front `s`: assembled from `A`'s `values` (in the analysed pattern's order) and its
/// children's `updates` (ascending), factored on `exec` (the dense kernels ask the gate, as
/// every dense region does). `right` (zeroed, `rows x pattern`) receives the front's other
/// columns: `U`'s block on top (copied into the front), the update below. `pos` is the
/// participant's column map (`n` entries, any content). Returns the front and the rows of its
/// update.
#[allow(clippy::too_many_arguments)]
pub fn step<T>(
    analysis: &Analysis,
    s: usize,
    values: &[T],
    updates: &[UpdateRef<'_, T>],
    mut right: MatMut<'_, T>,
    pos: &mut [usize],
    exec: &(impl Executor + ?Sized),
    threshold: Option<ParThreshold>,
    stack: &mut MemStack,
) -> Result<(Front<T>, Vec<usize>), PivotFailure>
where
    T: ComplexField + Scalar + Send + Sync,
{
    let cols = analysis.columns(s);
    let pattern = analysis.pattern(s);
    let (c, p, r) = (cols.len(), pattern.len(), analysis.rows(s));
    for (k, j) in cols.clone().enumerate() {
        pos[j] = k;
    }
    for (k, &j) in pattern.iter().enumerate() {
        pos[j] = c + k;
    }
    // The pivot columns and the others apart: the first is `L` and `U`'s diagonal block as
    // they are, the second `U`'s block above the update.
    debug_assert!(
        right.nrows() == r && right.ncols() == p,
        "front {s}: its other columns"
    );
    let mut lu = Mat::<T>::zeros(r, c);
    let mut rows = Vec::with_capacity(r);
    for &i in analysis.assigned(s) {
        let q = rows.len();
        let (at, src) = analysis.row(i);
        for (&j, &k) in at.iter().zip(src) {
            let t = pos[j];
            match t < c {
                true => lu[(q, t)] = values[k].clone(),
                false => right[(q, t - c)] = values[k].clone(),
            }
        }
        rows.push(i);
    }
    let mut at = Vec::with_capacity(updates.len());
    for update in updates {
        at.push(rows.len());
        rows.extend_from_slice(update.rows);
    }
    frontal::extend_add(
        &Lu(analysis),
        s,
        updates,
        &at,
        None,
        pos,
        lu.as_mut(),
        right.rb_mut(),
        exec,
        threshold,
    );
    debug_assert_eq!(rows.len(), r, "front {s}: its rows");
    let pivots = r.min(c);
    let (mut swaps, stack) = stack.make_with(pivots, |_| 0usize);
    let lu_params = LuParams {
        threshold,
        ..Default::default()
    };
    let info = lu_in_place(lu.as_mut(), &mut swaps, exec, lu_params, stack);
    let failed = match info.zero_pivot {
        Some(k) => Some(k),
        None if r < c => Some(r),
        None => None,
    };
    if let Some(k) = failed {
        return Err(PivotFailure {
            column: cols.start + k,
        });
    }
    for (k, &w) in swaps.iter().enumerate() {
        rows.swap(k, w);
    }
    let mut live = Vec::new();
    if p > 0 {
        apply_swaps(right.rb_mut(), 0, &swaps);
        // A column of `U12` whose pivot rows are all zero stays zero through the solve and adds
        // nothing to the update: about half of a 3D grid's large fronts' columns (the bound
        // on the structure is `A^T A`'s; the pivots met fill less of it). Only the others are
        // solved and updated, gathered when that leaves some out.
        live = (0..p)
            .filter(|&j| {
                let col = right.rb().col(j).subrows(0, c);
                col.iter().any(|v| *v != T::zero_impl())
            })
            .collect();
        let (l11, l21) = lu.as_ref().split_at_row(c);
        if live.len() == p {
            update(l11, l21, right.rb_mut(), exec, threshold);
        } else if !live.is_empty() {
            let (mut w, _) = temp_mat_zeroed::<T, _, _>(r, live.len(), stack);
            let mut w = w.as_mat_mut();
            for (k, &j) in live.iter().enumerate() {
                w.rb_mut().col_mut(k).copy_from(right.rb().col(j));
            }
            update(l11, l21, w.rb_mut(), exec, threshold);
            for (k, &j) in live.iter().enumerate() {
                right.rb_mut().col_mut(j).copy_from(w.rb().col(k));
            }
        }
    }
    // `U12` by its live columns: the others are zero (about half of a large 3D front's).
    let mut u = Mat::<T>::zeros(c, live.len());
    for (k, &j) in live.iter().enumerate() {
        u.col_mut(k).copy_from(right.rb().col(j).subrows(0, c));
    }
    let rest = rows[c..].to_vec();
    Ok((Front { rows, lu, u, live }, rest))
}

/// `U12 = L11^-1 A12` in the top rows of `right` and `A22 -= L21 U12` below them, on `exec`.
fn update<T>(
    l11: MatRef<'_, T>,
    l21: MatRef<'_, T>,
    right: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    threshold: Option<ParThreshold>,
) where
    T: ComplexField + Scalar + Send + Sync,
{
    let c = l11.nrows();
    let (mut u12, mut rest) = right.split_at_row_mut(c);
    let l11 = l11.subcols(0, c);
    solve_in_place(
        l11,
        u12.rb_mut(),
        SolveSide::Left,
        Triangle::Lower,
        Diag::Unit,
        exec,
        SolveParams { threshold },
    );
    if rest.nrows() > 0 {
        matmul(
            rest.rb_mut(),
            Accum::Add,
            l21,
            u12.rb(),
            -one::<T>(),
            exec,
            GemmParams { threshold },
        );
    }
}
