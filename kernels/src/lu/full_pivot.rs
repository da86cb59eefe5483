//! LU with full pivoting, `P A Q = L U` (LAPACK's `getc2`): at step `k` the largest entry of
//! the trailing block moves to position `(k, k)`, by a row and a column exchange, so every
//! multiplier of `L` is at most 1 in size (`sqrt(2)` in modulus for complex types, whose size
//! here is `max(|re|, |im|)`) and the rank shows on `U`'s diagonal.
//!
//! The pivot needs the whole trailing block after the previous step's rank-one update, so
//! each step is one section: the exchanges and the multipliers of column `k` (serial, `O(m +
//! n)`), then the trailing columns in chunks of whole blocks of columns, each block updated by
//! faer's product and each of its columns' largest entries found while the block is in cache.
//! The blocks are counted from the step's first trailing column, so every block's work is the
//! same on every width, and so is the result. An entry's size is the largest of its real and
//! imaginary parts' magnitudes (faer's `norm_max`, which finds a column's largest entry in
//! one vectorized pass). When the gate keeps the whole call serial (family
//! [`Family::LuFullStep`]), the matrix goes to faer's serial full-pivoting LU instead (its
//! fused update is faster on one core; its pivots may differ from the parallel path's on
//! ties). Design record: `docs/kernels.md`.

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::lu::full_pivoting::factor::{
    lu_in_place as faer_lu, lu_in_place_scratch as faer_lu_scratch,
};
use faer::linalg::matmul::matmul;
use faer::perm::{swap_cols_idx, swap_rows_idx};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::math_utils::{abs, imag, one, real, recip, zero};
use faer::traits::ComplexField;
use faer::{Accum, MatMut, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use super::cost;
use crate::exec::call::{self, Call};
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::{part_start, Executor};
use crate::exec::tiles::Tiles;

/// Parameters of [`full_piv_lu_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct FullPivLuParams {
    /// How the call and each step decide to go parallel (family [`Family::LuFullStep`]);
    /// `None` leaves it to the executor's model.
    pub threshold: Option<ParThreshold>,
}

/// What [`full_piv_lu_in_place`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullPivLuInfo {
    /// Row and column exchanges together (the sign of `det P det Q`).
    pub transpositions: usize,
    /// The pivots that are not exactly zero: every pivot after the first zero one is zero too
    /// (the trailing block was zero), so `U`'s diagonal is nonzero exactly on `0..rank`.
    pub rank: usize,
}

/// The scratch of [`full_piv_lu_in_place`] for an `m x n` matrix: faer's serial path's (its
/// transpositions); the parallel path keeps its column maxima in a buffer of its own.
pub fn full_piv_lu_in_place_scratch<T: ComplexField>(m: usize, n: usize) -> StackReq {
    faer_lu_scratch::<usize, T>(m, n, Par::Seq, Default::default())
}

/// Factors `a` (`m x n`) in place as `P A Q = L U`: `L` (unit lower) below the diagonal, `U`
/// on and above it; row `i` of `P A Q` is row `row_perm[i]` of `A` (`row_perm_inv` the
/// inverse) and column `j` is column `col_perm[j]` (`col_perm_inv` the inverse).
///
/// # Panics
/// When a permutation's length is not `m` (rows) or `n` (columns), or the stack is smaller
/// than [`full_piv_lu_in_place_scratch`].
#[allow(clippy::too_many_arguments)]
pub fn full_piv_lu_in_place<T>(
    mut a: MatMut<'_, T>,
    row_perm: &mut [usize],
    row_perm_inv: &mut [usize],
    col_perm: &mut [usize],
    col_perm_inv: &mut [usize],
    exec: &(impl Executor + ?Sized),
    params: FullPivLuParams,
    stack: &mut MemStack,
) -> FullPivLuInfo
where
    T: ComplexField + Scalar + Send + Sync,
{
    let (m, n) = (a.nrows(), a.ncols());
    assert!(row_perm.len() == m && row_perm_inv.len() == m);
    assert!(col_perm.len() == n && col_perm_inv.len() == n);
    let size = m.min(n);
    let units = cost::full_pivot_from(m, n, 0);
    let region = Region {
        site: "full_piv_lu",
        dims: [m, n, 0],
        units,
        family: Family::LuFullStep,
        sections: size,
        scope: Scope::Call,
        call_units: units,
    };
    let call = if size > 1 {
        Some(gate::call::<T>(exec, region, params.threshold))
    } else {
        None
    };
    let w = call.as_ref().map_or(1, Call::width);
    if w <= 1 {
        let (info, _, _) = faer_lu(
            a.rb_mut(),
            row_perm,
            row_perm_inv,
            col_perm,
            col_perm_inv,
            Par::Seq,
            stack,
            Default::default(),
        );
        let rank = (0..size).take_while(|&i| a[(i, i)] != zero()).count();
        return FullPivLuInfo {
            transpositions: info.transposition_count,
            rank,
        };
    }
    exec.warm(w);
    let info = factor(a, row_perm, col_perm, exec, w, params.threshold);
    for (i, &p) in row_perm.iter().enumerate() {
        row_perm_inv[p] = i;
    }
    for (j, &p) in col_perm.iter().enumerate() {
        col_perm_inv[p] = j;
    }
    info
}

/// The size of an entry that pivoting compares: `|x|` for a real `x`, the larger of the
/// magnitudes of the real and imaginary parts for a complex one (what faer's `norm_max`
/// takes the largest of).
fn size_of<T: ComplexField>(x: &T) -> T::Real {
    let (re, im) = (abs(&real(x)), abs(&imag(x)));
    if im > re {
        im
    } else {
        re
    }
}

/// Columns a participant updates at a time (the block's update and its maxima meet it in
/// cache).
const BLOCK: usize = 32;

/// The pivoted factorization on at most `w` participants per step.
fn factor<T>(
    mut a: MatMut<'_, T>,
    row_perm: &mut [usize],
    col_perm: &mut [usize],
    exec: &(impl Executor + ?Sized),
    w: usize,
    threshold: Option<ParThreshold>,
) -> FullPivLuInfo
where
    T: ComplexField + Scalar + Send + Sync,
{
    let (m, n) = (a.nrows(), a.ncols());
    for (i, p) in row_perm.iter_mut().enumerate() {
        *p = i;
    }
    for (j, p) in col_perm.iter_mut().enumerate() {
        *p = j;
    }
    // Each trailing column's largest entry: its size and its row.
    let mut max = vec![zero::<T::Real>(); n];
    let mut row = vec![0usize; n];
    for j in 0..n {
        (max[j], row[j]) = column_max(a.rb().col(j).subrows(0, m), 0);
    }
    let mut transpositions = 0;
    let size = m.min(n);
    for k in 0..size {
        // The first largest, in column order, then row order (as a serial scan finds it).
        let mut q = k;
        for j in k + 1..n {
            if max[j] > max[q] {
                q = j;
            }
        }
        if max[q] == zero() {
            // The trailing block is zero (or not a number): every later pivot is zero.
            return FullPivLuInfo {
                transpositions,
                rank: k,
            };
        }
        let p = row[q];
        if p != k {
            transpositions += 1;
            row_perm.swap(k, p);
            swap_rows_idx(a.rb_mut(), k, p);
        }
        if q != k {
            transpositions += 1;
            col_perm.swap(k, q);
            swap_cols_idx(a.rb_mut(), k, q);
        }
        let inv = recip(&a[(k, k)]);
        for i in k + 1..m {
            a[(i, k)] = a[(i, k)].clone() * inv.clone();
        }
        if k + 1 == n || k + 1 == m {
            continue;
        }
        let cols = n - k - 1;
        let step = Step {
            a: Tiles::new(a.rb_mut()),
            max: Tiles::new(MatMut::from_column_major_slice_mut(&mut max, 1, n)),
            row: Tiles::new(MatMut::from_column_major_slice_mut(&mut row, 1, n)),
            k,
        };
        let region = Region {
            site: "full_piv_lu/step",
            dims: [m - k - 1, cols, k],
            units: ((m - k - 1) * cols) as f64,
            family: Family::LuFullStep,
            sections: 1,
            scope: Scope::Section,
            call_units: cost::full_pivot_from(m, n, k),
        };
        // Chunks of whole blocks, counted from column k + 1: a block is the same columns on
        // every width, and so is its arithmetic.
        let blocks = cols.div_ceil(BLOCK);
        let wk = gate::width::<T>(exec, region, threshold).min(w).min(blocks);
        if wk <= 1 {
            step.columns(k + 1, n);
        } else {
            call::chunks(exec, wk, &|c, chunks| {
                let at = |c| (k + 1 + BLOCK * part_start(c, blocks, chunks)).min(n);
                step.columns(at(c), at(c + 1));
            });
        }
    }
    let rank = (0..size).take_while(|&i| a[(i, i)] != zero()).count();
    FullPivLuInfo {
        transpositions,
        rank,
    }
}

/// The size and row of the first largest entry of `col`, whose first row is row `r0`.
fn column_max<T: ComplexField>(col: faer::ColRef<'_, T>, r0: usize) -> (T::Real, usize) {
    let best = col.as_mat().norm_max();
    let at = (0..col.nrows())
        .find(|&i| size_of(&col[i]) == best)
        .unwrap_or(0);
    (best, r0 + at)
}

/// One step's update of the trailing columns, shared by its participants.
struct Step<'a, T: ComplexField> {
    a: Tiles<'a, T>,
    max: Tiles<'a, T::Real>,
    row: Tiles<'a, usize>,
    k: usize,
}

impl<T: ComplexField> Step<'_, T> {
    /// Updates columns `c0..c1` (rows `k + 1..m`) by the step's rank-one product and finds
    /// each one's largest entry.
    fn columns(&self, c0: usize, c1: usize) {
        let (k, m) = (self.k, self.a.nrows());
        // SAFETY: column k below the diagonal (the multipliers) and row k are written before
        // the step and in no participant's tile (row k of the chunk's columns is only read:
        // `urow` covers row k, `cols` starts at row k + 1); columns `c0..c1 > k`, their maxima
        // and rows are this chunk's alone (the chunks partition the trailing columns).
        let (l, urow, mut cols, mut max, mut row) = unsafe {
            (
                self.a.view(k + 1, m, k, k + 1),
                self.a.view(k, k + 1, c0, c1),
                self.a.tile(k + 1, m, c0, c1),
                self.max.tile(0, 1, c0, c1),
                self.row.tile(0, 1, c0, c1),
            )
        };
        let len = c1 - c0;
        for b0 in (0..len).step_by(BLOCK) {
            let b = BLOCK.min(len - b0);
            let mut block = cols.rb_mut().subcols_mut(b0, b);
            matmul(
                block.rb_mut(),
                Accum::Add,
                l,
                urow.subcols(b0, b),
                -one::<T>(),
                Par::Seq,
            );
            for j in 0..b {
                let (size, at) = column_max(block.rb().col(j), k + 1);
                max[(0, b0 + j)] = size;
                row[(0, b0 + j)] = at;
            }
        }
    }
}
