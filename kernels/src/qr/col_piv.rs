//! QR with column pivoting, `A P = Q R` (LAPACK's `geqp2`): at step `k` the remaining column
//! of largest norm moves to position `k`, so `|R_00| >= |R_11| >= ...` and a numerical rank
//! shows on `R`'s diagonal.
//!
//! The pivot needs every trailing column's norm after the previous reflector, so each step
//! is one section: the pivot column's own pending update and its reflector (serial, `O(m)`),
//! then the trailing columns in chunks of whole blocks of columns. Each reflector's update of
//! the trailing columns is delayed by one step and fused with the next step's products, as in
//! faer's serial kernel: one pass over each column applies reflector `k - 1`'s rank-one update
//! and accumulates reflector `k`'s product (`spectral::fused`, SIMD), so each entry is read
//! and written once per step; then the column's row `k` and its norm, downdated by LAPACK's
//! rule (recomputed from the rows below when the downdate has cancelled more than `sqrt(eps)`
//! of it). The blocks are counted from the step's first trailing column, so every block's
//! work is the same on every width, and so is the result. When the gate keeps the whole call
//! serial (family [`Family::QrColPivStep`]), the matrix goes to faer's serial column-pivoted QR
//! instead (its pivots may differ from the parallel path's on ties to rounding); a zero
//! matrix, which faer's scaling would turn into NaN, takes this kernel's steps at width 1.
//! Either way the block factors of `Q` are faer's layout, the one
//! [`crate::qr::apply_q_in_place`] reads. Design record: `docs/kernels.md`.

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::householder::{make_householder_in_place, upgrade_householder_factor};
use faer::linalg::qr::col_pivoting::factor::{
    qr_in_place as faer_qr, qr_in_place_scratch as faer_qr_scratch,
};
use faer::perm::swap_cols_idx;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::math_utils::{
    abs, eps, from_real, min_positive, mul_real, one, recip, sqrt, zero,
};
use faer::traits::ComplexField;
use faer::{Mat, MatMut, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use super::cost;
use crate::exec::call::{self, Call};
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::{part_start, Executor};
use crate::exec::tiles::Tiles;
use crate::spectral::fused::Fused;

/// Parameters of [`col_piv_qr_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ColPivQrParams {
    /// How the call and each step decide to go parallel (family [`Family::QrColPivStep`]);
    /// `None` leaves it to the executor's model.
    pub threshold: Option<ParThreshold>,
}

/// The scratch of [`col_piv_qr_in_place`] for an `m x n` matrix: faer's serial path's (two
/// vectors of `n`); the parallel path keeps its norms and coefficients in buffers of its own
/// (and factors a matrix that is not column-major in a column-major copy).
pub fn col_piv_qr_in_place_scratch<T: ComplexField>(m: usize, n: usize) -> StackReq {
    faer_qr_scratch::<usize, T>(m, n, 1, Par::Seq, Default::default())
}

/// Factors `a` (`m x n`) in place as `A P = Q R`: `R` on and above the diagonal, the
/// Householder vectors below it, the block factors in `h` (`bs x min(m, n)`, faer's layout),
/// and the permutation in `perm` (column `j` of `A P` is column `perm[j]` of `A`) and
/// `perm_inv`. Returns the number of column transpositions (the sign of `det P`).
///
/// # Panics
/// When `h` is not `bs x min(m, n)` with `bs >= 1`, `perm` or `perm_inv` is not `n` long, or
/// the stack is smaller than [`col_piv_qr_in_place_scratch`].
pub fn col_piv_qr_in_place<T>(
    mut a: MatMut<'_, T>,
    mut h: MatMut<'_, T>,
    perm: &mut [usize],
    perm_inv: &mut [usize],
    exec: &(impl Executor + ?Sized),
    params: ColPivQrParams,
    stack: &mut MemStack,
) -> usize
where
    T: ComplexField + Scalar + Send + Sync + Fused,
{
    let (m, n) = (a.nrows(), a.ncols());
    let size = m.min(n);
    assert!(
        h.nrows() >= 1 && h.ncols() == size,
        "col_piv_qr_in_place: h must be bs x min(m, n)"
    );
    assert!(perm.len() == n && perm_inv.len() == n);
    let units = cost::col_piv_from(m, n, 0);
    let region = Region {
        site: "col_piv_qr",
        dims: [m, n, 0],
        units,
        family: Family::QrColPivStep,
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
    if w <= 1 && scales(a.rb()) {
        let (info, _) = faer_qr(a, h, perm, perm_inv, Par::Seq, stack, Default::default());
        return info.transposition_count;
    }
    if w > 1 {
        exec.warm(w);
    }
    // The fused pass reads columns as slices: a strided `a` is factored in a column-major copy.
    let swaps = if a.row_stride() == 1 {
        factor(a.rb_mut(), h.rb_mut(), perm, exec, w, params.threshold)
    } else {
        let mut copy = a.to_owned();
        let swaps = factor(copy.as_mut(), h.rb_mut(), perm, exec, w, params.threshold);
        a.copy_from(&copy);
        swaps
    };
    block_factors(a, h);
    for (j, &p) in perm.iter().enumerate() {
        perm_inv[p] = j;
    }
    swaps
}

/// Whether faer's serial path may take `a`: it divides the matrix by its largest column norm
/// first, which a zero matrix (or one so small that the norm's reciprocal overflows) turns
/// into NaN; those take the parallel path's code at width 1. A largest entry of at least the
/// smallest normal number bounds that norm away from the overflow (one vectorized read, where
/// the column norms themselves cost a tenth of a small factorization).
fn scales<T: ComplexField>(a: faer::MatRef<'_, T>) -> bool {
    a.norm_max() >= min_positive::<T::Real>()
}

/// The pivoted factorization on at most `w` participants per step: the reflectors' scalars
/// in `h`'s first row; returns the transpositions.
///
/// Each reflector's update of the trailing columns is delayed by one step and fused with the
/// next step's products (faer's serial order): at step `k`, one pass over each trailing
/// column applies reflector `k - 1`'s rank-one update below row `k` and accumulates `v_k^H`
/// of the result ([`Fused::reflect_pass`]), so every entry is read and written once per step.
fn factor<T>(
    mut a: MatMut<'_, T>,
    mut h: MatMut<'_, T>,
    perm: &mut [usize],
    exec: &(impl Executor + ?Sized),
    w: usize,
    threshold: Option<ParThreshold>,
) -> usize
where
    T: ComplexField + Scalar + Send + Sync + Fused,
{
    let (m, n) = (a.nrows(), a.ncols());
    // Row 0: the columns' downdated norms; row 1: each norm when last computed in full.
    let mut norms = Mat::<T::Real>::zeros(2, n);
    for j in 0..n {
        let v = a.rb().col(j).norm_l2();
        norms[(0, j)] = v.clone();
        norms[(1, j)] = v;
    }
    for (j, p) in perm.iter_mut().enumerate() {
        *p = j;
    }
    // Each column's coefficient of the pending update (reflector k - 1's, then k's).
    let mut dots = Mat::<T>::zeros(1, n);
    let mut swaps = 0;
    for k in 0..m.min(n) {
        let p = pivot(norms.as_ref().row(0).subcols(k, n - k)) + k;
        if p != k {
            swaps += 1;
            perm.swap(k, p);
            swap_cols_idx(a.rb_mut(), k, p);
            swap_cols_idx(norms.as_mut(), k, p);
            swap_cols_idx(dots.as_mut(), k, p);
        }
        let pending = k > 0;
        if pending {
            // Column k's own pending update, rows k..m: reflector k - 1 (stored below its
            // diagonal) times its coefficient.
            let d = dots[(0, k)];
            let (left, mut right) = a.rb_mut().subrows_mut(k, m - k).split_at_col_mut(k);
            let vp = left.rb().col(k - 1);
            let mut col = right.rb_mut().col_mut(0);
            for i in 0..m - k {
                col[i] += vp[i] * d;
            }
        }
        let (mut head, tail) = a.rb_mut().subcols_mut(k, 1).split_at_row_mut(k + 1);
        let info = make_householder_in_place(&mut head[(k, 0)], tail.col_mut(0));
        h[(0, k)] = from_real::<T>(&info.tau);
        if k + 1 == n {
            break;
        }
        // 1 / tau: zero for the identity reflector of a column that is already zero.
        let tau_inv = recip(&info.tau);
        let step = Step {
            a: Tiles::new(a.rb_mut()),
            norms: Tiles::new(norms.as_mut()),
            dots: Tiles::new(dots.as_mut()),
            k,
            pending,
            tau_inv,
        };
        let cols = n - k - 1;
        let region = Region {
            site: "col_piv_qr/step",
            dims: [m - k, cols, k],
            units: ((m - k) * cols) as f64,
            family: Family::QrColPivStep,
            sections: 1,
            scope: Scope::Section,
            call_units: cost::col_piv_from(m, n, k),
        };
        // Chunks of whole blocks, counted from column k + 1: a block is the same columns on
        // every width, and so is its arithmetic.
        let blocks = cols.div_ceil(BLOCK);
        let wk = if w > 1 {
            gate::width::<T>(exec, region, threshold).min(w).min(blocks)
        } else {
            1
        };
        if wk <= 1 {
            step.columns(k + 1, n);
        } else {
            call::chunks(exec, wk, &|c, chunks| {
                let at = |c| (k + 1 + BLOCK * part_start(c, blocks, chunks)).min(n);
                step.columns(at(c), at(c + 1));
            });
        }
    }
    swaps
}

/// The index of the largest entry of `norms` (the first, on ties, as LAPACK's `idamax`).
fn pivot<R: PartialOrd>(norms: faer::RowRef<'_, R>) -> usize {
    let mut best = 0;
    for j in 1..norms.ncols() {
        if norms[j] > norms[best] {
            best = j;
        }
    }
    best
}

/// Columns a participant handles at a time, counted from the step's first trailing column so
/// that every width does the same arithmetic on each column.
const BLOCK: usize = 32;

/// One step over the trailing columns, shared by its participants.
struct Step<'a, T: ComplexField> {
    a: Tiles<'a, T>,
    norms: Tiles<'a, T::Real>,
    /// Each column's pending coefficient: reflector k - 1's, then the step's.
    dots: Tiles<'a, T>,
    k: usize,
    /// Whether reflector `k - 1`'s update is pending (every step but the first).
    pending: bool,
    tau_inv: T::Real,
}

impl<T: ComplexField + Fused> Step<'_, T> {
    /// Columns `c0..c1` (after column k): reflector k - 1's pending update and reflector k's
    /// product in one pass, then row k, the new coefficient and the norm.
    fn columns(&self, c0: usize, c1: usize) {
        let (k, m) = (self.k, self.a.nrows());
        // SAFETY: columns k - 1 and k, rows k..m (the two reflectors below their diagonals,
        // and column k's row k, R's entry, which is not read), are written before the section
        // and in no participant's tile; the columns `c0..c1 > k`, their norms and their
        // dots are this chunk's alone (the chunks partition the trailing columns).
        let (reflectors, mut cols, mut norms, mut dots) = unsafe {
            (
                self.a.view(k, m, k.saturating_sub(1), k + 1),
                self.a.tile(k, m, c0, c1),
                self.norms.tile(0, 2, c0, c1),
                self.dots.tile(0, 1, c0, c1),
            )
        };
        let v = reflectors.col(reflectors.ncols() - 1).subrows(1, m - k - 1);
        let v = v.try_as_col_major().expect("column-major").as_slice();
        // The previous reflector's row k, and its rows below.
        let (l, vp) = if self.pending {
            let vp = reflectors.col(0);
            (
                vp[0],
                Some(
                    vp.subrows(1, m - k - 1)
                        .try_as_col_major()
                        .expect("column-major")
                        .as_slice(),
                ),
            )
        } else {
            (zero(), None)
        };
        let len = c1 - c0;
        for b0 in (0..len).step_by(BLOCK) {
            let b = BLOCK.min(len - b0);
            let mut blk = dots.rb_mut().subcols_mut(b0, b);
            let zeros = || -> [T; BLOCK] { core::array::from_fn(|_| zero()) };
            let (mut d, mut acc, mut r) = (zeros(), zeros(), zeros());
            if self.pending {
                for j in 0..b {
                    d[j] = blk[(0, j)];
                }
            }
            let (mut head, below) = cols.rb_mut().subcols_mut(b0, b).split_at_row_mut(1);
            T::reflect_pass(below, vp.map(|vp| (vp, &d[..b])), v, &mut acc[..b]);
            for j in 0..b {
                // Row k: its pending update, then reflector k's.
                let u = head[(0, j)] + l * d[j];
                let dk = -mul_real(&(u + acc[j]), &self.tau_inv);
                r[j] = u + dk;
                head[(0, j)] = r[j];
                blk[(0, j)] = dk;
            }
            for j in 0..b {
                if downdate(norms.rb_mut().col_mut(b0 + j), &r[j]) {
                    // Cancelled: reflector k's update applied now (its coefficient then
                    // zero), and the norm of the rows below row k computed afresh, scaled as
                    // faer's norms are.
                    let dk = core::mem::replace(&mut blk[(0, j)], zero());
                    let mut col = cols.rb_mut().col_mut(b0 + j).subrows_mut(1, m - k - 1);
                    for i in 0..m - k - 1 {
                        col[i] += v[i] * dk;
                    }
                    let fresh = col.rb().norm_l2();
                    let mut norm = norms.rb_mut().col_mut(b0 + j);
                    norm[0] = fresh.clone();
                    norm[1] = fresh;
                }
            }
        }
    }
}

/// LAPACK's downdate of a column's norm `norm[0]` once its row `k` (`head`) is done: from the
/// norm itself while it keeps more than `sqrt(eps)` of the norm last computed in full
/// (`norm[1]`); else `true`, for the caller to compute it afresh from the rows below.
fn downdate<T: ComplexField>(mut norm: faer::ColMut<'_, T::Real>, head: &T) -> bool {
    let (n1, n2) = (norm[0].clone(), norm[1].clone());
    if n1 == zero() {
        return false;
    }
    let ratio = abs(head) / n1.clone();
    let mut t = one::<T::Real>() - ratio.clone() * ratio;
    if t < zero() {
        t = zero();
    }
    let q = n1.clone() / n2;
    if t.clone() * q.clone() * q <= sqrt(&eps::<T::Real>()) {
        true
    } else {
        norm[0] = n1 * sqrt(&t);
        false
    }
}

/// Turns the reflectors' scalars in `h`'s first row into the block factors of faer's layout
/// (blocks of `h.nrows()` reflectors), as faer's own pivoted QR does.
fn block_factors<T: ComplexField>(a: MatMut<'_, T>, mut h: MatMut<'_, T>) {
    let (size, bs) = (h.ncols(), h.nrows());
    let mut j = 0;
    while j < size {
        let b = bs.min(size - j);
        let mut t = h.rb_mut().subcols_mut(j, b).subrows_mut(0, b);
        for i in 0..b {
            t[(i, i)] = t[(0, i)].clone();
        }
        upgrade_householder_factor(t, a.rb().get(j.., j..j + b), b, 1, Par::Seq);
        j += b;
    }
}
