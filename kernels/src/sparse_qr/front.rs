//! One front of the multifrontal QR: assemble `A`'s assigned rows and the children's upper
//! trapezoids into a dense block, factor the whole block by Householder reflections, keep the
//! reflectors and its pivot rows of `R`, and hand the rows of `R` below them (upper
//! trapezoidal, at most as many as its other columns) to its parent. The rows below those are
//! zero: they are the residual's, and the solve reads them from the reflectors.

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::householder::{
    apply_block_householder_sequence_transpose_on_the_left_in_place_scratch as apply_scratch,
    apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj as apply_adjoint,
};
use faer::linalg::qr::no_pivoting::factor::qr_in_place as faer_qr;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::ComplexField;
use faer::{Conj, MatMut, MatRef, Par};
use teamalg_gates::{ParThreshold, Scalar};

use super::Qr;
use crate::drive::frontal::{self, PivotFailure, UpdateRef};
use crate::par::Executor;
use crate::qr::householder::{
    apply_q_in_place, block_size, qr_in_place, qr_in_place_scratch, QrParams,
};
use crate::sparse_lu::Analysis;

/// A front's share of the factor.
#[derive(Debug, Clone)]
pub struct Front<T> {
    /// `rows x (cols + pattern)`, column-major ([`Front::qr`]).
    values: Vec<T>,
    nrows: usize,
    /// Where each row came from: `A`'s row `i < m`, or `m + t` for row `t` of the children's
    /// handed rows stacked in the children's order.
    pub rows: Vec<usize>,
    /// The reflectors, block by block along the staircase.
    pub blocks: Vec<Block>,
    /// The blocks' block factors, one after another.
    tau: Vec<T>,
}

impl<T> Front<T> {
    /// `rows x (cols + pattern)`, its rows in staircase order (by their first nonzero
    /// column): the front's pivot rows of `R` on and above the diagonal of its first `cols`
    /// rows, the reflectors' vectors below the diagonal (the rows between, above the diagonal,
    /// are the part handed on, read from the parent's front).
    pub fn qr(&self) -> MatRef<'_, T> {
        let ncols = self.values.len().checked_div(self.nrows).unwrap_or(0);
        MatRef::from_column_major_slice(&self.values, self.nrows, ncols)
    }

    /// Block `b`'s reflectors (`rows x len`, below the diagonal) and block factors.
    pub fn reflectors(&self, b: &Block) -> (MatRef<'_, T>, MatRef<'_, T>) {
        let v = self.qr().submatrix(b.at, b.at, b.rows, b.len);
        let h = &self.tau[b.from..b.from + b.bs * b.len];
        (v, MatRef::from_column_major_slice(h, b.bs, b.len))
    }
}

/// One block of a front's reflectors: `len` reflectors from the diagonal at `at`, on the
/// `rows` rows from `at` (the rows below are zero in its columns), their block factors
/// (`bs x len`, faer's layout) in the front's block factors from `from` ([`Front::reflectors`]).
#[derive(Debug, Clone, Copy)]
pub struct Block {
    /// The first column, and row.
    pub at: usize,
    /// The rows the reflectors reach.
    pub rows: usize,
    /// How many reflectors.
    pub len: usize,
    /// The block factors' rows.
    pub bs: usize,
    /// Where the block factors start.
    pub from: usize,
}

/// The scratch one front needs at most, its QR on up to `width` participants: the largest
/// front's (faer's block size grows with the area and the smaller side).
pub fn step_scratch<T: ComplexField>(analysis: &Analysis, width: usize) -> StackReq {
    let (r, cols) = analysis.max_front();
    let bs = block_size::<T>(r, cols);
    // The rows' first columns, order and places, then the QR or a block reflector.
    StackReq::all_of(&[
        StackReq::new::<(usize, usize)>(r),
        StackReq::new::<usize>(r),
        StackReq::new::<usize>(r),
        StackReq::any_of(&[
            qr_in_place_scratch::<T>(r, cols, bs, width),
            apply_scratch::<T>(r, bs, cols),
        ]),
    ])
}

/// Front `s`: assembled from `A`'s `values` and its children's `updates` (ascending), factored
/// on `exec`; `right` (zeroed, `handed x pattern`) receives the rows of `R` it hands on. `pos`
/// is the participant's column map.
///
/// The rows go in staircase order (by their first nonzero column: `A`'s rows by their
/// entries, a child's handed row `t` from its pattern's column `t`, as it is upper
/// trapezoidal), and the front is factored in blocks along the staircase: a block's reflectors
/// reach only the rows that start at or before its columns (the others are zero there), as
/// faer's supernodal QR does. Steps narrower than half a block are merged.
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
    let (c, p, r, m) = (
        cols.len(),
        pattern.len(),
        analysis.rows(s),
        analysis.nrows(),
    );
    let total = c + p;
    for (k, j) in cols.clone().enumerate() {
        pos[j] = k;
    }
    for (k, &j) in pattern.iter().enumerate() {
        pos[j] = c + k;
    }
    // Each row's first column and source, in assembly order, then sorted by first column
    // (the lists on the participant's stack: a front allocates only what it keeps).
    let (mut lead, stack) = stack.make_with(r, |_| (0usize, 0usize));
    let assigned = analysis.assigned(s);
    for (q, &i) in assigned.iter().enumerate() {
        let first = analysis.row(i).0.iter().map(|&j| pos[j]).min();
        lead[q] = (first.unwrap_or(0), i);
    }
    let mut at = Vec::with_capacity(updates.len());
    let mut q = assigned.len();
    for update in updates {
        at.push(q);
        let child = analysis.pattern(update.front);
        for &j in &child[..update.block.nrows()] {
            lead[q] = (pos[j], m + q - assigned.len());
            q += 1;
        }
    }
    debug_assert_eq!(q, r, "front {s}: its rows");
    let (mut order, stack) = stack.make_with(r, |q| q);
    order.sort_by_key(|&q| lead[q].0);
    let (mut dest, stack) = stack.make_with(r, |_| 0usize);
    for (to, &q) in order.iter().enumerate() {
        dest[q] = to;
    }
    // A zeroed vector (a `memset`), not `Mat::zeros` (an element at a time): for many small
    // fronts the zeroing is a fifth of the step.
    let mut storage = vec![T::zero_impl(); r * total];
    let mut qr = MatMut::from_column_major_slice_mut(&mut storage, r, total);
    for (q, &i) in analysis.assigned(s).iter().enumerate() {
        let (at, src) = analysis.row(i);
        for (&j, &k) in at.iter().zip(src) {
            qr[(dest[q], pos[j])] = values[k].clone();
        }
    }
    {
        let (left, other) = qr.rb_mut().split_at_col_mut(c);
        frontal::extend_add(
            &Qr(analysis),
            s,
            updates,
            &at,
            Some(&dest),
            pos,
            left,
            other,
            exec,
            threshold,
        );
    }
    let rows: Vec<usize> = order.iter().map(|&q| lead[q].1).collect();
    for (d, &q) in dest.iter_mut().zip(order.iter()) {
        *d = lead[q].0;
    }
    let (blocks, tau) = staircase(qr.rb_mut(), &dest, exec, threshold, stack);
    // The rows of `R` below the pivot rows, upper trapezoidal: the parent's.
    let handed = r.min(total) - c;
    debug_assert!(right.nrows() == handed && right.ncols() == p);
    for j in 0..p {
        for i in 0..handed.min(j + 1) {
            right.rb_mut()[(i, j)] = qr[(c + i, c + j)].clone();
        }
    }
    Ok((
        Front {
            values: storage,
            nrows: r,
            rows,
            blocks,
            tau,
        },
        Vec::new(),
    ))
}

/// Householder QR of `a` (`r x total`) whose row `q` is zero left of column `first[q]`
/// (ascending): blocks of reflectors along the staircase, each applied to the columns right of
/// it on the rows it reaches.
fn staircase<T>(
    mut a: MatMut<'_, T>,
    first: &[usize],
    exec: &(impl Executor + ?Sized),
    threshold: Option<ParThreshold>,
    stack: &mut MemStack,
) -> (Vec<Block>, Vec<T>)
where
    T: ComplexField + Scalar + Send + Sync,
{
    let (r, total) = (a.nrows(), a.ncols());
    let kk = r.min(total);
    let merge = (block_size::<T>(r, total) / 2).max(1);
    let params = QrParams { threshold };
    let mut blocks = Vec::with_capacity(8);
    let mut tau: Vec<T> = Vec::new();
    let (mut d, mut q) = (0usize, 0usize);
    while d < kk {
        // The rows that start before the block's columns end, at least one below the
        // diagonal. A column no row starts in is zero there: faer's QR then stores an identity
        // reflector and the next columns' pivots move up a row (`Q^H A = R` still holds, `R`
        // in echelon form, its diagonal zero from there: a rank-deficient front).
        while q < r && first[q] < d + merge {
            q += 1;
        }
        q = q.max(d + 1);
        let next = if q < r { first[q] } else { total };
        let rows = q - d;
        let width = match q == r {
            true => total - d,
            false => (next.max(d + 1) - d).min(rows),
        };
        let block = a.rb_mut().submatrix_mut(d, d, rows, total - d);
        let (mut left, mut rest) = block.split_at_col_mut(width);
        let k = rows.min(width);
        let (bs, from) = (block_size::<T>(rows, width), tau.len());
        tau.resize(from + bs * k, T::zero_impl());
        let mut h = MatMut::from_column_major_slice_mut(&mut tau[from..], bs, k);
        match exec.width() > 1 {
            true => qr_in_place(left.rb_mut(), h.rb_mut(), exec, params, exec.width(), stack),
            // A subtree's front: faer's serial QR, as teamalg's QR's serial path is, without
            // its gate question.
            false => {
                faer_qr(
                    left.rb_mut(),
                    h.rb_mut(),
                    Par::Seq,
                    stack,
                    Default::default(),
                );
            }
        }
        if rest.ncols() > 0 {
            let v = left.rb().subcols(0, k);
            match exec.width() > 1 {
                true => apply_q_in_place(v, h.rb(), rest, true, exec, threshold),
                false => apply_adjoint(v, h.rb(), Conj::Yes, rest.rb_mut(), Par::Seq, stack),
            }
        }
        blocks.push(Block {
            at: d,
            rows,
            len: k,
            bs,
            from,
        });
        d += k;
    }
    (blocks, tau)
}
