//! Sparse QR, `A Q_c = Q R` for an `m x n` matrix (`m >= n`), multifrontal over the column
//! elimination tree, with the tree's independent subtrees as the unit of parallel work
//! (`docs/sparse-qr.md`).
//!
//! The analysis is the LU's ([`analyse`]: the same COLAMD order, tree and
//! supernodal structure of `R`, with the QR's row merge), [`front`] one front's step, and
//! [`factor`] the factorization on the [multifrontal driver](crate::drive::frontal), as the
//! LU's: one gate question per call, the subtrees claimed by the participants, the top's
//! fronts on the caller with their Householder QR on the team. [`lstsq_in_place`] applies
//! `Q^H` front by front and solves with `R`.

pub mod cost;
pub mod front;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch as apply_forward_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj as apply_forward,
    apply_block_householder_sequence_transpose_on_the_left_in_place_scratch as apply_scratch,
    apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj as apply_adjoint,
};
use faer::linalg::matmul::{matmul, matmul_with_conj};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place_with_conj, solve_upper_triangular_in_place,
};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::sparse::{FaerError, SymbolicSparseColMatRef};
use faer::traits::math_utils::{one, sub};
use faer::traits::ComplexField;
use faer::{Accum, Conj, Mat, MatMut, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::drive::columns::by_columns;
use crate::drive::forest::Forest;
use crate::drive::frontal::{self, Fronts, PivotFailure, Sites, UpdateRef};
use crate::par::Executor;
use crate::qr::householder::block_size;
use crate::sparse_lu::{Analysis, Merge};

pub use front::Front;

/// Analyses the pattern of an `m x n` matrix, `m >= n`, for the QR: the LU's analysis with
/// the QR's row merge ([`Merge::Qr`]) and work ([`cost::front`]).
///
/// # Panics
/// When the pattern is wide (`m < n`).
pub fn analyse(pattern: SymbolicSparseColMatRef<'_, usize>) -> Result<Analysis, FaerError> {
    analyse_ordered(pattern, None)
}

/// [`analyse`] with the column ordering `order` (`order[k]` is the column eliminated `k`-th)
/// in place of COLAMD's.
///
/// # Panics
/// When the pattern is wide, or `order` is not a permutation of its columns.
pub fn analyse_ordered(
    pattern: SymbolicSparseColMatRef<'_, usize>,
    order: Option<&[usize]>,
) -> Result<Analysis, FaerError> {
    assert!(
        pattern.nrows() >= pattern.ncols(),
        "sparse QR: the pattern is wide"
    );
    Analysis::with(pattern, Merge::Qr, cost::front, order)
}

/// Parameters of [`factor`] and [`lstsq_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SparseQrParams {
    /// How the call decides to go parallel; `None` leaves it to the executor's model (the
    /// pool's threshold for [`Family::SparseQr`], else the rule).
    pub threshold: Option<ParThreshold>,
}

/// The factor `A Q_c = Q R`: each front's reflectors and rows of `R`.
#[derive(Debug, Clone)]
pub struct Factor<T> {
    fronts: Vec<Front<T>>,
}

impl<T: ComplexField> Factor<T> {
    /// The fronts, in the analysis's order.
    pub fn fronts(&self) -> &[Front<T>] {
        &self.fronts
    }

    /// `R`'s diagonal, in the analysis's column order.
    pub fn diagonal<'a>(&'a self, analysis: &'a Analysis) -> impl Iterator<Item = &'a T> + 'a {
        self.fronts
            .iter()
            .enumerate()
            .flat_map(move |(s, f)| (0..analysis.forest().cols(s)).map(move |k| f.qr().get(k, k)))
    }
}

/// The QR's fronts, as the [multifrontal driver](crate::drive::frontal) runs them.
#[derive(Debug, Clone, Copy)]
pub struct Qr<'a>(pub &'a Analysis);

impl<T> Fronts<T> for Qr<'_>
where
    T: ComplexField + Scalar + Send + Sync,
{
    type Front = Front<T>;

    fn forest(&self) -> &Forest {
        self.0.forest()
    }

    fn ncols(&self) -> usize {
        self.0.ncols()
    }

    fn columns(&self, s: usize) -> std::ops::Range<usize> {
        self.0.columns(s)
    }

    fn pattern(&self, s: usize) -> &[usize] {
        self.0.pattern(s)
    }

    /// Only the rows handed on: the front itself is the factor's.
    fn block(&self, s: usize) -> (usize, usize) {
        (self.0.handed_rows(s), 0)
    }

    fn scratch(&self, width: usize) -> StackReq {
        front::step_scratch::<T>(self.0, width)
    }

    fn family(&self) -> (Family, Sites) {
        let sites = Sites {
            call: "sparse_qr",
            subtrees: "sparse_qr/subtrees",
            extend_add: "sparse_qr/extend_add",
        };
        (Family::SparseQr, sites)
    }

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
    ) -> Result<(Front<T>, Vec<usize>), PivotFailure> {
        front::step(
            self.0, s, values, updates, right, pos, exec, threshold, stack,
        )
    }
}

/// The scratch [`factor`] needs on the caller for executors up to `width` wide (each other
/// participant takes its own).
pub fn factor_scratch<T>(analysis: &Analysis, width: usize) -> StackReq
where
    T: ComplexField + Scalar + Send + Sync,
{
    frontal::scratch::<T, _>(&Qr(analysis), width)
}

/// Factors `A` (`values` in the order of the pattern `analysis` was made from) as
/// `A Q_c = Q R`, on `exec`. Every matrix of the pattern has a factor, a rank-deficient one
/// too (its `R` then has zeros, to rounding, on its diagonal); a structurally rank-deficient
/// pattern is refused before any work ([`Analysis::structurally_singular`]).
///
/// # Panics
/// When `values` has fewer entries than the pattern, the analysis is not the QR's or is
/// structurally rank-deficient, or the stack is smaller than [`factor_scratch`] for `exec`'s
/// width.
pub fn factor<T>(
    analysis: &Analysis,
    values: &[T],
    exec: &(impl Executor + ?Sized),
    params: SparseQrParams,
    stack: &mut MemStack,
) -> Factor<T>
where
    T: ComplexField + Scalar + Send + Sync,
{
    assert_eq!(analysis.merge(), Merge::Qr, "sparse QR: an LU's analysis");
    assert!(
        analysis.structurally_singular().is_none(),
        "sparse QR: a structurally rank-deficient pattern"
    );
    let fronts = frontal::factor(&Qr(analysis), values, exec, params.threshold, stack)
        .expect("a QR step does not fail");
    Factor { fronts }
}

/// Least squares in place: `rhs` (`m x k`) becomes `Q^H B` reordered, its first `n` rows the
/// `X` minimizing `||A X - B||` column by column (in `A`'s column order), its last `m - n`
/// rows the residuals' coordinates (their norm is the residual's). The columns are solved
/// apart, in chunks on the participants when the gate finds that it pays (family
/// [`Family::SparseQr`], [`cost::solve`] multiply-adds); a column's result does not depend on
/// who solves it. `R` must be nonsingular (the caller's rank check).
///
/// # Panics
/// When `rhs` does not have `A`'s rows or the factor is not the analysis's.
pub fn lstsq_in_place<T>(
    analysis: &Analysis,
    factor: &Factor<T>,
    rhs: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    params: SparseQrParams,
) where
    T: ComplexField + Scalar + Send + Sync,
{
    by_fronts(
        "lstsq_in_place",
        analysis,
        factor,
        rhs,
        exec,
        params,
        lstsq_columns,
    );
}

/// The checks and the column split the two solves share: `columns` solves a block of `rhs`'s
/// columns, `what` names the solve in the panics.
fn by_fronts<T>(
    what: &str,
    analysis: &Analysis,
    factor: &Factor<T>,
    rhs: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    params: SparseQrParams,
    columns: fn(&Analysis, &Factor<T>, MatMut<'_, T>),
) where
    T: ComplexField + Scalar + Send + Sync,
{
    let (m, k) = (rhs.nrows(), rhs.ncols());
    assert_eq!(m, analysis.nrows(), "{what}: rhs' rows");
    assert_eq!(
        factor.fronts.len(),
        analysis.fronts_len(),
        "{what}: the factor of another analysis"
    );
    if m == 0 || k == 0 {
        return;
    }
    let solve = |cols: MatMut<'_, T>| columns(analysis, factor, cols);
    let units = cost::solve(analysis.len_values(), k);
    by_columns(
        exec,
        "sparse_qr/solve",
        Family::SparseQr,
        units,
        params.threshold,
        rhs,
        solve,
        &solve,
    );
}

/// `Q^H b` front by front in the factorization's order (each front's rows gathered from `b`
/// and its children's handed rows as [`Front::rows`] says, its reflectors applied block by
/// block), then `R^-1` backward, then `Q_c`.
fn lstsq_columns<T: ComplexField>(analysis: &Analysis, factor: &Factor<T>, mut b: MatMut<'_, T>) {
    let (m, k) = (b.nrows(), b.ncols());
    let n = analysis.ncols();
    let forest = analysis.forest();
    let (rows, cols) = analysis.max_front();
    let bs = block_size::<T>(rows, cols);
    let mut mem = MemBuffer::new(apply_scratch::<T>(rows, bs, k));
    let stack = MemStack::new(&mut mem);
    let mut z = Mat::<T>::zeros(n, k);
    let mut rest = Mat::<T>::zeros(m - n, k);
    let mut at = 0;
    let mut handed: Vec<Option<Mat<T>>> = (0..forest.len()).map(|_| None).collect();
    for (s, f) in factor.fronts.iter().enumerate() {
        let (r, c) = (f.qr().nrows(), forest.cols(s));
        let kk = r.min(f.qr().ncols());
        let mut children: Vec<usize> = forest.children(s).collect();
        children.reverse();
        let kids: Vec<Mat<T>> = children
            .iter()
            .map(|&child| {
                handed[child]
                    .take()
                    .expect("a child runs before its parent")
            })
            .collect();
        let mut from = Vec::with_capacity(kids.len() + 1);
        from.push(0);
        for kid in &kids {
            from.push(from[from.len() - 1] + kid.nrows());
        }
        let mut w = Mat::<T>::zeros(r, k);
        for (q, &src) in f.rows.iter().enumerate() {
            if src < m {
                w.row_mut(q).copy_from(b.rb().row(src));
            } else {
                let t = src - m;
                let kid = from.partition_point(|&x| x <= t) - 1;
                w.row_mut(q).copy_from(kids[kid].row(t - from[kid]));
            }
        }
        for block in &f.blocks {
            let (v, h) = f.reflectors(block);
            let part = w.rb_mut().subrows_mut(block.at, block.rows);
            apply_adjoint(v, h, Conj::Yes, part, Par::Seq, stack);
        }
        let start = analysis.columns(s).start;
        z.rb_mut()
            .subrows_mut(start, c)
            .copy_from(w.rb().subrows(0, c));
        handed[s] = Some(w.rb().subrows(c, kk - c).to_owned());
        rest.rb_mut()
            .subrows_mut(at, r - kk)
            .copy_from(w.rb().subrows(kk, r - kk));
        at += r - kk;
    }
    for &i in analysis.empty_rows() {
        rest.row_mut(at).copy_from(b.rb().row(i));
        at += 1;
    }
    debug_assert_eq!(at, m - n, "the residual's coordinates");
    for (s, f) in factor.fronts.iter().enumerate().rev() {
        let cols = analysis.columns(s);
        let pattern = analysis.pattern(s);
        let c = cols.len();
        let mut g = Mat::<T>::zeros(pattern.len(), k);
        for (q, &j) in pattern.iter().enumerate() {
            g.row_mut(q).copy_from(z.row(j));
        }
        let mut t = z.rb_mut().subrows_mut(cols.start, c);
        if !pattern.is_empty() {
            let r12 = f.qr().submatrix(0, c, c, pattern.len());
            matmul(
                t.rb_mut(),
                Accum::Add,
                r12,
                g.as_ref(),
                -one::<T>(),
                Par::Seq,
            );
        }
        let r11 = f.qr().submatrix(0, 0, c, c);
        solve_upper_triangular_in_place(r11, t, Par::Seq);
    }
    let fwd = analysis.col_perm().arrays().0;
    for (j, &i) in fwd.iter().enumerate() {
        b.rb_mut().row_mut(i).copy_from(z.row(j));
    }
    b.subrows_mut(n, m - n).copy_from(&rest);
}

/// The minimum-norm solution of `A^H X = B` in place: `rhs` (`m x k`) holds `B` (`n x k`, in
/// `A`'s column numbering) in its first `n` rows and becomes `X` (`m x k`): with
/// `A Q_c = Q R`, `X = Q [R^-H Q_c^T B; 0]`. For a square `A` this is the solve of
/// `A^H X = B`. Columns are spread over the team as [`lstsq_in_place`]'s. `R` must be
/// nonsingular (the caller's rank check).
///
/// # Panics
/// When `rhs` does not have `A`'s rows or the factor is not the analysis's.
pub fn min_norm_adjoint_in_place<T>(
    analysis: &Analysis,
    factor: &Factor<T>,
    rhs: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    params: SparseQrParams,
) where
    T: ComplexField + Scalar + Send + Sync,
{
    by_fronts(
        "min_norm_adjoint_in_place",
        analysis,
        factor,
        rhs,
        exec,
        params,
        adjoint_columns,
    );
}

/// `Q_c^T b`, then `R^-H` forward over the fronts, then `Q` front by front in reverse (each
/// front's rows from its pivot rows and the rows its parent handed back, its blocks of
/// reflectors applied last first, its rows scattered to `x` and to its children).
fn adjoint_columns<T: ComplexField>(analysis: &Analysis, factor: &Factor<T>, mut b: MatMut<'_, T>) {
    let (m, k) = (b.nrows(), b.ncols());
    let n = analysis.ncols();
    let forest = analysis.forest();
    let fwd = analysis.col_perm().arrays().0;
    let mut y = Mat::<T>::zeros(n, k);
    for (j, &i) in fwd.iter().enumerate() {
        y.row_mut(j).copy_from(b.rb().row(i));
    }
    for (s, f) in factor.fronts.iter().enumerate() {
        let cols = analysis.columns(s);
        let pattern = analysis.pattern(s);
        let c = cols.len();
        let mut t = y.rb_mut().subrows_mut(cols.start, c);
        let r11 = f.qr().submatrix(0, 0, c, c);
        solve_lower_triangular_in_place_with_conj(r11.transpose(), Conj::Yes, t.rb_mut(), Par::Seq);
        if !pattern.is_empty() {
            let mut g = Mat::<T>::zeros(pattern.len(), k);
            let r12 = f.qr().submatrix(0, c, c, pattern.len());
            let (r12t, t) = (r12.transpose(), t.rb());
            matmul_with_conj(
                g.as_mut(),
                Accum::Replace,
                r12t,
                Conj::Yes,
                t,
                Conj::No,
                one::<T>(),
                Par::Seq,
            );
            for (q, &j) in pattern.iter().enumerate() {
                for col in 0..k {
                    y[(j, col)] = sub(&y[(j, col)], &g[(q, col)]);
                }
            }
        }
    }
    let (rows, cols) = analysis.max_front();
    let bs = block_size::<T>(rows, cols);
    let mut mem = MemBuffer::new(apply_forward_scratch::<T>(rows, bs, k));
    let stack = MemStack::new(&mut mem);
    b.fill(T::zero_impl());
    let mut back: Vec<Option<Mat<T>>> = (0..forest.len()).map(|_| None).collect();
    for (s, f) in factor.fronts.iter().enumerate().rev() {
        let (r, c) = (f.qr().nrows(), forest.cols(s));
        let kk = r.min(f.qr().ncols());
        let mut w = Mat::<T>::zeros(r, k);
        let start = analysis.columns(s).start;
        w.rb_mut()
            .subrows_mut(0, c)
            .copy_from(y.rb().subrows(start, c));
        if let Some(h) = back[s].take() {
            w.rb_mut().subrows_mut(c, kk - c).copy_from(&h);
        }
        for block in f.blocks.iter().rev() {
            let (v, h) = f.reflectors(block);
            let part = w.rb_mut().subrows_mut(block.at, block.rows);
            apply_forward(v, h, Conj::No, part, Par::Seq, stack);
        }
        let mut children: Vec<usize> = forest.children(s).collect();
        children.reverse();
        let mut from = Vec::with_capacity(children.len() + 1);
        from.push(0);
        for &child in &children {
            from.push(from[from.len() - 1] + analysis.handed_rows(child));
        }
        let mut kids: Vec<Mat<T>> = children
            .iter()
            .map(|&child| Mat::<T>::zeros(analysis.handed_rows(child), k))
            .collect();
        for (q, &src) in f.rows.iter().enumerate() {
            if src < m {
                b.rb_mut().row_mut(src).copy_from(w.row(q));
            } else {
                let t = src - m;
                let kid = from.partition_point(|&x| x <= t) - 1;
                kids[kid].row_mut(t - from[kid]).copy_from(w.row(q));
            }
        }
        for (&child, kid) in children.iter().zip(kids) {
            back[child] = Some(kid);
        }
    }
}

#[cfg(test)]
mod tests {
    use faer::sparse::{SparseColMat, Triplet};
    use faer::Mat;

    use super::*;
    use crate::par::Seq;

    /// A tall `2 k^2 x k^2` matrix: the 2D grid's couplings over a second block of rows with
    /// one entry per column.
    fn tall(k: usize) -> SparseColMat<usize, f64> {
        let n = k * k;
        let mut t = Vec::new();
        for x in 0..k {
            for y in 0..k {
                let i = x * k + y;
                t.push(Triplet::new(i, i, 4.0 + (i % 3) as f64));
                if x + 1 < k {
                    t.push(Triplet::new(i + k, i, -1.0 - (i % 5) as f64 / 4.0));
                }
                if y + 1 < k {
                    t.push(Triplet::new(i, i + 1, 0.5 + (i % 2) as f64));
                }
                t.push(Triplet::new(n + (i * 7) % n, i, 1.0 + (i % 4) as f64));
            }
        }
        SparseColMat::try_new_from_triplets(2 * n, n, &t).unwrap()
    }

    /// The least-squares solution against the dense normal equations' conditions: the
    /// residual is orthogonal to `A`'s columns, and its norm is the last rows'.
    #[test]
    fn the_solution_makes_the_residual_orthogonal_to_the_columns() {
        for k in [3, 8, 14] {
            let a = tall(k);
            let (m, n) = (a.nrows(), a.ncols());
            let analysis = analyse(a.symbolic()).unwrap();
            let mut mem = MemBuffer::new(factor_scratch::<f64>(&analysis, 1));
            let f = factor(
                &analysis,
                a.val(),
                &Seq,
                Default::default(),
                MemStack::new(&mut mem),
            );
            let b = Mat::<f64>::from_fn(m, 2, |i, j| ((i * 13 + j * 7) % 11) as f64 - 5.0);
            let mut x = b.clone();
            lstsq_in_place(&analysis, &f, x.as_mut(), &Seq, Default::default());
            let dense = a.to_dense();
            let r = &b - &dense * x.subrows(0, n);
            let normal = dense.transpose() * &r;
            let scale = dense.norm_l2() * dense.norm_l2() * b.norm_l2();
            assert!(
                normal.norm_max() <= 1e-13 * scale,
                "k {k}: {:e}",
                normal.norm_max()
            );
            let rest = x.subrows(n, m - n).norm_l2();
            let resid = r.norm_l2();
            assert!(
                (rest - resid).abs() <= 1e-12 * b.norm_l2(),
                "k {k}: {rest} {resid}"
            );

            // The minimum-norm solution of A^T y = c: A^T y = c, and y in A's range (its
            // least-squares residual against A is zero).
            let c = Mat::<f64>::from_fn(n, 1, |i, _| ((i * 5) % 7) as f64 - 3.0);
            let mut y = Mat::<f64>::zeros(m, 1);
            y.as_mut().subrows_mut(0, n).copy_from(&c);
            min_norm_adjoint_in_place(&analysis, &f, y.as_mut(), &Seq, Default::default());
            let off = (dense.transpose() * &y - &c).norm_max();
            assert!(off <= 1e-12 * scale, "k {k}: A^T y - c = {off:e}");
            let mut p = y.clone();
            lstsq_in_place(&analysis, &f, p.as_mut(), &Seq, Default::default());
            let outside = p.subrows(n, m - n).norm_l2();
            assert!(
                outside <= 1e-12 * y.norm_l2(),
                "k {k}: y leaves A's range by {outside:e}"
            );
        }
    }
}
