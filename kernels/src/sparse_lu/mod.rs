//! Sparse LU with partial pivoting, `P A Q = L U`, multifrontal over the column elimination
//! tree, with the tree's independent subtrees as the unit of parallel work
//! (`docs/sparse-lu.md`).
//!
//! [`tree`] is the analysis (faer's COLAMD order and supernodal structure of `A^T A`, in a
//! postorder, and the fronts' [`Forest`](crate::drive::forest::Forest)), [`front`] one front's
//! step, and [`factor`] the factorization on the [multifrontal driver](crate::drive::frontal):
//! the whole call asks the gate once; serial, the fronts run in order on the caller;
//! parallel, the participants claim the subtrees of the [cut](crate::drive::forest::cut)
//! heaviest first, each with its own column map and scratch, and the top's fronts follow on
//! the caller, their dense work (panel LU, solve, update) on the team through teamalg's dense
//! kernels.

pub mod cost;
pub mod front;
pub mod tree;

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::matmul::matmul_with_conj;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place_with_conj, solve_unit_lower_triangular_in_place_with_conj,
    solve_unit_upper_triangular_in_place_with_conj, solve_upper_triangular_in_place_with_conj,
};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::math_utils::{one, sub};
use faer::traits::ComplexField;
use faer::{Accum, Conj, Mat, MatMut, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::drive::columns::by_columns;
use crate::drive::forest;
use crate::drive::frontal::{self, Fronts, Sites};
use crate::par::Executor;

pub use crate::drive::frontal::{PivotFailure, UpdateRef};
pub use front::Front;
pub use tree::{Analysis, Merge};

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

/// The LU's fronts, as the [multifrontal driver](crate::drive::frontal) runs them.
#[derive(Debug, Clone, Copy)]
pub struct Lu<'a>(pub &'a Analysis);

impl<T> Fronts<T> for Lu<'_>
where
    T: ComplexField + Scalar + Send + Sync,
{
    type Front = Front<T>;

    fn forest(&self) -> &forest::Forest {
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

    /// All the front's rows: `U`'s block on top, the update below.
    fn block(&self, s: usize) -> (usize, usize) {
        (self.0.rows(s), self.0.forest().cols(s))
    }

    fn scratch(&self, _: usize) -> StackReq {
        front::step_scratch::<T>(self.0)
    }

    fn family(&self) -> (Family, Sites) {
        let sites = Sites {
            call: "sparse_lu",
            subtrees: "sparse_lu/subtrees",
            extend_add: "sparse_lu/extend_add",
        };
        (Family::SparseLu, sites)
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

/// The scratch [`factor`] needs on the caller (each other participant takes its own).
pub fn factor_scratch<T: ComplexField>(analysis: &Analysis) -> StackReq {
    // The driver's [`frontal::scratch`] for the LU's fronts, whose step's scratch does not
    // depend on the width.
    StackReq::and(
        StackReq::new::<usize>(analysis.ncols()),
        front::step_scratch::<T>(analysis),
    )
}

/// Factors `A` (`values` in the order of the pattern `analysis` was made from) as
/// `P A Q = L U`, on `exec`. A front with no nonzero pivot for one of its columns, or a
/// structurally singular pattern, is the `PivotFailure` of the first such column in the
/// analysis's order that a serial factorization meets.
///
/// # Panics
/// When `values` has fewer entries than the pattern, the analysis is not the LU's, or the
/// stack is smaller than [`factor_scratch`].
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
    assert_eq!(analysis.merge(), Merge::Lu, "sparse LU: a QR's analysis");
    if let Some(column) = analysis.structurally_singular() {
        return Err(PivotFailure { column });
    }
    let fronts = frontal::factor(&Lu(analysis), values, exec, params.threshold, stack)?;
    Ok(Factor { fronts })
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
    let threshold = params.threshold;
    by_columns(
        exec,
        "sparse_lu/solve",
        Family::SparseLu,
        units,
        threshold,
        rhs,
        solve,
        &solve,
    );
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
    use faer::dyn_stack::MemBuffer;
    use faer::sparse::{SparseColMat, Triplet};
    use faer::Mat;

    use super::*;
    use crate::par::Seq;

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
