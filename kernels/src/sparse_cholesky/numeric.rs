//! The left-looking step over supernodes, as faer's serial supernodal factorization runs it,
//! written with faer's public dense kernels: for each supernode, scatter `A`'s entries into its
//! block, subtract each descendant's update (gathered, formed by one product, scattered), factor
//! the diagonal block and solve the panel below it. A supernode writes only its own block and
//! reads only its descendants', so disjoint subtrees can run at once on disjoint slices of the
//! values (`docs/sparse-cholesky.md`).

use std::ops::Range;

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::{
    cholesky_in_place as ldlt_in_place, cholesky_in_place_scratch as ldlt_in_place_scratch,
    LdltError, LdltRegularization,
};
use faer::linalg::cholesky::llt::factor::{
    cholesky_in_place, cholesky_in_place_scratch, LltError, LltRegularization,
};
use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_unit_lower_triangular_in_place,
};
use faer::linalg::{temp_mat_scratch, temp_mat_zeroed};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::sparse::SparseColMatRef;
use faer::traits::math_utils::{add, mul_real, real, recip, sub};
use faer::traits::ComplexField;
use faer::{Accum, MatMut, MatRef, Par};

use super::tree::Analysis;

/// Which factorization the step makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `L L^H`, `L` lower triangular.
    Llt,
    /// `L D L^H` without pivoting, `L` unit lower triangular and `D` real, stored on the
    /// diagonal of each supernode's diagonal block.
    Ldlt,
}

/// A pivot that failed: not positive (`L L^H`) or zero (`L D L^H`); the factorization stopped
/// at `column` (in the analysis's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PivotFailure {
    /// The column, in the permuted order.
    pub column: usize,
}

/// The scratch [`factor`] needs for the supernodes of `analysis`.
pub fn factor_scratch<T: ComplexField>(analysis: &Analysis) -> StackReq {
    let s = analysis.supernodal();
    let (mut cols, mut rows) = (0, 0);
    for k in 0..s.n_supernodes() {
        cols = cols.max(s.supernode_end()[k] - s.supernode_begin()[k]);
        rows = rows.max(s.supernode(k).pattern().len());
    }
    StackReq::all_of(&[
        StackReq::new::<usize>(s.nrows()),
        StackReq::any_of(&[
            StackReq::all_of(&[
                StackReq::new::<usize>(rows),
                temp_mat_scratch::<T>(cols, cols),
                temp_mat_scratch::<T>(rows, cols),
            ]),
            cholesky_in_place_scratch::<T>(cols, Par::Seq, Default::default()),
            ldlt_in_place_scratch::<T>(cols, Par::Seq, Default::default()),
        ]),
    ])
}

/// Factors the supernodes `supernodes` (ascending, each after its descendants) of the permuted
/// lower triangle `a_lower` (the analysis's order, entries within its pattern) serially.
/// `values` holds the factor's values from offset `base` (`symbolic.col_ptr_for_val()`), which
/// must be at most the offset of the first descendant of every supernode factored: a union of
/// whole subtrees starts at its first supernode's offset, the rest at 0. Each block is zeroed
/// when its step starts (as faer's step does, while it is in cache).
pub fn factor<T: ComplexField>(
    analysis: &Analysis,
    kind: Kind,
    a_lower: SparseColMatRef<'_, usize, T>,
    values: &mut [T],
    base: usize,
    supernodes: impl IntoIterator<Item = usize>,
    stack: &mut MemStack,
) -> Result<(), PivotFailure> {
    let sym = analysis.supernodal();
    let cpv = sym.col_ptr_for_val();
    let n = sym.nrows();
    let (mut map, stack) = stack.make_with(n, |_| usize::MAX);
    for s in supernodes {
        let (start, end) = (sym.supernode_begin()[s], sym.supernode_end()[s]);
        let ncols = end - start;
        let pattern = sym.supernode(s).pattern();
        let (head, tail) = values.split_at_mut(cpv[s] - base);
        let mut ls = MatMut::from_column_major_slice_mut(
            &mut tail[..cpv[s + 1] - cpv[s]],
            ncols + pattern.len(),
            ncols,
        );
        ls.fill(T::zero_impl());
        mark(analysis, s, &mut map);
        scatter(analysis, s, a_lower, ls.rb_mut(), &map);
        gather(
            analysis,
            kind,
            s,
            head,
            base,
            ls.rb_mut(),
            0,
            usize::MAX,
            &map,
            stack,
        );
        finish(analysis, kind, s, ls, stack)?;
        unmark(analysis, s, &mut map);
    }
    Ok(())
}

/// Points `map` at supernode `s`'s block: each row of its pattern to its row in the block.
pub(crate) fn mark(analysis: &Analysis, s: usize, map: &mut [usize]) {
    let sym = analysis.supernodal();
    let ncols = sym.supernode_end()[s] - sym.supernode_begin()[s];
    for (i, &r) in sym.supernode(s).pattern().iter().enumerate() {
        map[r] = ncols + i;
    }
}

/// Clears what [`mark`] set.
pub(crate) fn unmark(analysis: &Analysis, s: usize, map: &mut [usize]) {
    for &r in analysis.supernodal().supernode(s).pattern() {
        map[r] = usize::MAX;
    }
}

/// Adds `A`'s lower entries of supernode `s`'s columns into its block `ls` (rows through
/// `map`, from [`mark`]).
pub(crate) fn scatter<T: ComplexField>(
    analysis: &Analysis,
    s: usize,
    a_lower: SparseColMatRef<'_, usize, T>,
    mut ls: MatMut<'_, T>,
    map: &[usize],
) {
    let sym = analysis.supernodal();
    let (start, end) = (sym.supernode_begin()[s], sym.supernode_end()[s]);
    for j in start..end {
        for (i, v) in a_lower.row_idx_of_col(j).zip(a_lower.val_of_col(j)) {
            if i < j {
                continue;
            }
            let row = if i < end { i - start } else { map[i] };
            let x = &mut ls[(row, j - start)];
            *x = add(&*x, v);
        }
    }
}

/// The scratch [`gather`] needs for `cols` of supernode `s`'s columns.
pub(crate) fn gather_scratch<T: ComplexField>(
    analysis: &Analysis,
    s: usize,
    cols: usize,
) -> StackReq {
    let sym = analysis.supernodal();
    let start = sym.supernode_begin()[s];
    // The descendants' longest rows below `s`'s first column, and their widest block.
    let (mut rows, mut width) = (0, 0);
    for &d in analysis.descendants(s) {
        let pattern = sym.supernode(d).pattern();
        rows = rows.max(pattern.len() - pattern.partition_point(|&i| i < start));
        width = width.max(sym.supernode_end()[d] - sym.supernode_begin()[d]);
    }
    StackReq::all_of(&[
        StackReq::new::<usize>(rows),
        temp_mat_scratch::<T>(cols, width),
        temp_mat_scratch::<T>(rows, cols),
    ])
}

/// Subtracts every descendant's update from the columns `c0..c0 + cols.ncols()` of supernode
/// `s`'s block (`cols`: those columns, every row). `head` holds the values before `s`'s block
/// from offset `base`; `map` is [`mark`]'s. The whole block (`c0 = 0`) takes each update in
/// one product, as faer's step does; a part of the block takes the part of each update that
/// lands in its columns, so parts of one block can be gathered at once. Each update is formed
/// `block` columns at a time (`usize::MAX`: whole, as faer forms it), which bounds the
/// temporary ([`gather_scratch`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather<T: ComplexField>(
    analysis: &Analysis,
    kind: Kind,
    s: usize,
    head: &[T],
    base: usize,
    mut cols: MatMut<'_, T>,
    c0: usize,
    block: usize,
    map: &[usize],
    stack: &mut MemStack,
) {
    let sym = analysis.supernodal();
    let cpv = sym.col_ptr_for_val();
    let (start, end) = (sym.supernode_begin()[s], sym.supernode_end()[s]);
    let (lo, hi) = (start + c0, start + c0 + cols.ncols());
    let block = block.max(1);
    for &d in analysis.descendants(s) {
        let (d_start, d_end) = (sym.supernode_begin()[d], sym.supernode_end()[d]);
        let d_ncols = d_end - d_start;
        let d_pattern = sym.supernode(d).pattern();
        let ld = MatRef::from_column_major_slice(
            &head[cpv[d] - base..cpv[d + 1] - base],
            d_ncols + d_pattern.len(),
            d_ncols,
        );
        let p0 = d_pattern.partition_point(|&i| i < start);
        let mid = d_pattern[p0..].partition_point(|&i| i < end);
        // The update's columns that land in `lo..hi`, and the rows from the first of them.
        let first = d_pattern[p0..p0 + mid].partition_point(|&i| i < lo);
        let last = d_pattern[p0..p0 + mid].partition_point(|&i| i < hi);
        // At most `block` of them at a time: the temporary is the rows times `block`.
        let mut j0 = first;
        while j0 < last {
            let j1 = (j0 + block).min(last);
            // The update's rows, from the first column's down, and where each lands in the block.
            let nb = d_pattern.len() - p0 - j0;
            let nc = j1 - j0;
            let below = ld.subrows(d_ncols + p0 + j0, nb);
            let here = below.subrows(0, nc);
            let (rows, stack) = stack.make_with(nb, |k| {
                let r = d_pattern[p0 + j0 + k];
                if j0 + k < mid {
                    r - start
                } else {
                    map[r]
                }
            });
            // `L D L^H`'s update is `X D Y^H`: the product's right side is `Y D` (`D` real).
            let ldlt = kind == Kind::Ldlt;
            let (mut scaled, stack) =
                temp_mat_zeroed::<T, _, _>(if ldlt { nc } else { 0 }, d_ncols, stack);
            let mut scaled = scaled.as_mat_mut();
            let right = if ldlt {
                for j in 0..d_ncols {
                    let dj = real(&ld[(j, j)]);
                    for i in 0..nc {
                        scaled[(i, j)] = mul_real(&here[(i, j)], &dj);
                    }
                }
                scaled.rb()
            } else {
                here
            };
            let (mut update, _) = temp_mat_zeroed::<T, _, _>(nb, nc, stack);
            let mut update = update.as_mat_mut();
            // The square part's lower triangle (the block's own columns), then the rows below it.
            let (square, rest) = update.rb_mut().split_at_row_mut(nc);
            triangular::matmul(
                square,
                BlockStructure::TriangularLower,
                Accum::Replace,
                here,
                BlockStructure::Rectangular,
                right.adjoint(),
                BlockStructure::Rectangular,
                T::one_impl(),
                Par::Seq,
            );
            matmul(
                rest,
                Accum::Replace,
                below.subrows(nc, nb - nc),
                right.adjoint(),
                T::one_impl(),
                Par::Seq,
            );
            for jj in 0..nc {
                let col = d_pattern[p0 + j0 + jj] - lo;
                let target = cols.rb_mut().col_mut(col).try_as_col_major_mut();
                let target = target
                    .expect("a block's column is contiguous")
                    .as_slice_mut();
                let u = update.rb().col(jj).try_as_col_major();
                let u = u.expect("a temporary's column is contiguous").as_slice();
                for (k, &row) in rows.iter().enumerate().skip(jj) {
                    target[row] = sub(&target[row], &u[k]);
                }
            }
            j0 = j1;
        }
    }
}

/// Factors supernode `s`'s diagonal block and solves the panel below it, serially.
pub(crate) fn finish<T: ComplexField>(
    analysis: &Analysis,
    kind: Kind,
    s: usize,
    ls: MatMut<'_, T>,
    stack: &mut MemStack,
) -> Result<(), PivotFailure> {
    let start = analysis.supernodal().supernode_begin()[s];
    let ncols = ls.ncols();
    let (mut top, mut bottom) = ls.split_at_row_mut(ncols);
    let failed = match kind {
        Kind::Llt => cholesky_in_place(
            top.rb_mut(),
            LltRegularization::default(),
            Par::Seq,
            stack,
            Default::default(),
        )
        .err()
        .map(|LltError::NonPositivePivot { index }| index),
        Kind::Ldlt => ldlt_in_place(
            top.rb_mut(),
            LdltRegularization::default(),
            Par::Seq,
            stack,
            Default::default(),
        )
        .err()
        .map(|LdltError::ZeroPivot { index }| index),
    };
    if let Some(index) = failed {
        return Err(PivotFailure {
            column: start + index,
        });
    }
    match kind {
        Kind::Llt => solve_lower_triangular_in_place(
            top.rb().conjugate(),
            bottom.rb_mut().transpose_mut(),
            Par::Seq,
        ),
        Kind::Ldlt => {
            // As faer's step: nothing above the diagonal, then `P L^-H D^-1`.
            for j in 1..ncols {
                top.rb_mut()
                    .col_mut(j)
                    .subrows_mut(0, j)
                    .fill(T::zero_impl());
            }
            solve_unit_lower_triangular_in_place(
                top.rb().conjugate(),
                bottom.rb_mut().transpose_mut(),
                Par::Seq,
            );
            scale_by_inverse_diagonal(top.rb(), bottom);
        }
    }
    Ok(())
}

/// Scales column `j` of `panel` by `1 / D_j`, `D` the real diagonal of `diag`.
pub(crate) fn scale_by_inverse_diagonal<T: ComplexField>(
    diag: MatRef<'_, T>,
    mut panel: MatMut<'_, T>,
) {
    for j in 0..diag.ncols() {
        let d = recip(&real(&diag[(j, j)]));
        for i in 0..panel.nrows() {
            let x = &mut panel[(i, j)];
            *x = mul_real(&*x, &d);
        }
    }
}

/// The values of `analysis`'s supernodes `range` (a union of whole subtrees): their offsets in
/// the factor's values.
pub fn values_of(analysis: &Analysis, range: Range<usize>) -> Range<usize> {
    let cpv = analysis.supernodal().col_ptr_for_val();
    cpv[range.start]..cpv[range.end]
}

#[cfg(test)]
mod tests {
    use faer::c64;
    use faer::dyn_stack::MemBuffer;
    use faer::sparse::utils::{permute_self_adjoint_scratch, permute_self_adjoint_to_unsorted};
    use faer::sparse::{SparseColMat, Triplet};
    use faer::Side;

    use super::*;

    trait Entry: ComplexField + Copy + PartialEq + std::fmt::Debug {
        fn of(x: f64, y: f64) -> Self;
        fn mag(&self) -> f64;
        fn minus(&self, other: &Self) -> f64;
    }
    impl Entry for f64 {
        fn of(x: f64, _: f64) -> Self {
            x
        }
        fn mag(&self) -> f64 {
            self.abs()
        }
        fn minus(&self, other: &Self) -> f64 {
            (self - other).abs()
        }
    }
    impl Entry for c64 {
        fn of(x: f64, y: f64) -> Self {
            c64::new(x, y)
        }
        fn mag(&self) -> f64 {
            self.norm()
        }
        fn minus(&self, other: &Self) -> f64 {
            (self - other).norm()
        }
    }

    /// The lower triangle of a `k x k` grid's 5-point operator plus `shift` on the diagonal
    /// (positive definite for `shift > 0`), with complex couplings for `c64`.
    fn grid<T: Entry>(k: usize, shift: f64) -> SparseColMat<usize, T> {
        let mut t = Vec::new();
        for x in 0..k {
            for y in 0..k {
                let i = x * k + y;
                t.push(Triplet::new(i, i, T::of(4.0 + shift, 0.0)));
                if x + 1 < k {
                    t.push(Triplet::new(i + k, i, T::of(-1.0, 0.25)));
                }
                if y + 1 < k {
                    t.push(Triplet::new(i + 1, i, T::of(-1.0, -0.25)));
                }
            }
        }
        SparseColMat::try_new_from_triplets(k * k, k * k, &t).unwrap()
    }

    /// A random sparse pattern's lower triangle, diagonally dominant.
    fn random<T: Entry>(n: usize, per_col: usize) -> SparseColMat<usize, T> {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut t = Vec::new();
        for i in 0..n {
            t.push(Triplet::new(i, i, T::of(4.0 * per_col as f64 + 1.0, 0.0)));
            for _ in 0..per_col {
                let j = (next() % n as u64) as usize;
                if j != i {
                    t.push(Triplet::new(i.max(j), i.min(j), T::of(-1.0, 0.5)));
                }
            }
        }
        SparseColMat::try_new_from_triplets(n, n, &t).unwrap()
    }

    /// `a`'s lower triangle in the analysis's order.
    fn permuted<T: Entry>(
        analysis: &Analysis,
        a: &SparseColMat<usize, T>,
    ) -> SparseColMat<usize, T> {
        let (n, nnz) = (a.nrows(), a.compute_nnz());
        let (mut v, mut c, mut r) = (
            vec![T::of(0.0, 0.0); nnz],
            vec![0usize; n + 1],
            vec![0usize; nnz],
        );
        let mut mem = MemBuffer::new(permute_self_adjoint_scratch::<usize>(n));
        let perm = analysis.symbolic().perm().unwrap();
        let p = permute_self_adjoint_to_unsorted(
            &mut v,
            &mut c,
            &mut r,
            a.as_ref(),
            perm,
            Side::Lower,
            Side::Lower,
            MemStack::new(&mut mem),
        );
        let p = p.rb();
        SparseColMat::new(p.symbolic().to_owned().unwrap(), p.val().to_vec())
    }

    /// faer's serial factor with the same analysis.
    fn faer_factor<T: Entry>(analysis: &Analysis, a: &SparseColMat<usize, T>) -> Vec<T> {
        let sym = analysis.symbolic();
        let mut values = vec![T::of(0.0, 0.0); sym.len_val()];
        let req = sym.factorize_numeric_llt_scratch::<T>(Par::Seq, Default::default());
        let mut mem = MemBuffer::new(req);
        sym.factorize_numeric_llt(
            &mut values,
            a.as_ref(),
            Side::Lower,
            Default::default(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .unwrap();
        values
    }

    /// Every subtree below the roots' children on its own thread, each on its own slice of
    /// the values, then the rest on the caller.
    fn by_subtrees<T: Entry>(analysis: &Analysis, lower: &SparseColMat<usize, T>) -> Vec<T> {
        let ns = analysis.supernodes();
        let len = analysis.supernodal().len_val();
        let mut values = vec![T::of(0.0, 0.0); len];
        let tops: Vec<usize> = (0..ns)
            .filter(|&s| {
                analysis
                    .parent(s)
                    .is_some_and(|p| analysis.parent(p).is_none())
            })
            .collect();
        let mut done = vec![false; ns];
        {
            let mut rest: &mut [T] = &mut values;
            let mut offset = 0;
            let mut jobs = Vec::new();
            for &c in &tops {
                let range = analysis.subtree(c);
                range.clone().for_each(|s| done[s] = true);
                let at = values_of(analysis, range.clone());
                let (_, r) = std::mem::take(&mut rest).split_at_mut(at.start - offset);
                let (mine, r) = r.split_at_mut(at.len());
                rest = r;
                offset = at.end;
                jobs.push((mine, at.start, range));
            }
            std::thread::scope(|scope| {
                for (mine, base, range) in jobs {
                    scope.spawn(move || {
                        let mut mem = MemBuffer::new(factor_scratch::<T>(analysis));
                        factor(
                            analysis,
                            Kind::Llt,
                            lower.as_ref(),
                            mine,
                            base,
                            range,
                            MemStack::new(&mut mem),
                        )
                        .unwrap();
                    });
                }
            });
        }
        let left: Vec<usize> = (0..ns).filter(|&s| !done[s]).collect();
        let mut mem = MemBuffer::new(factor_scratch::<T>(analysis));
        factor(
            analysis,
            Kind::Llt,
            lower.as_ref(),
            &mut values,
            0,
            left,
            MemStack::new(&mut mem),
        )
        .unwrap();
        values
    }

    /// The factor serially and by subtrees: the same bits either way (a supernode's
    /// arithmetic does not depend on who runs it), and faer's serial factor's bits in real
    /// arithmetic; in complex, faer's update kernel rounds differently, so to `1e-13`.
    fn factors_as_faer<T: Entry>(a: SparseColMat<usize, T>) {
        let analysis = Analysis::new(a.symbolic(), Side::Lower).unwrap();
        let want = faer_factor(&analysis, &a);
        let lower = permuted(&analysis, &a);
        let ns = analysis.supernodes();
        let mut serial = vec![T::of(0.0, 0.0); want.len()];
        let mut mem = MemBuffer::new(factor_scratch::<T>(&analysis));
        factor(
            &analysis,
            Kind::Llt,
            lower.as_ref(),
            &mut serial,
            0,
            0..ns,
            MemStack::new(&mut mem),
        )
        .unwrap();
        assert!(
            by_subtrees(&analysis, &lower) == serial,
            "subtrees: not the serial bits"
        );
        if T::IS_REAL {
            assert!(serial == want, "not faer's bits");
        }
        let top = want.iter().map(|x| x.mag()).fold(0.0, f64::max);
        let off = serial
            .iter()
            .zip(&want)
            .map(|(x, y)| x.minus(y))
            .fold(0.0, f64::max);
        assert!(
            off <= 1e-13 * top,
            "{off:e} from faer's factor (largest entry {top:e})"
        );
    }

    #[test]
    fn the_tree_is_a_postorder_with_contiguous_subtrees() {
        for a in [
            grid::<f64>(30, 0.5),
            random::<f64>(2000, 3),
            random::<f64>(5000, 2),
        ] {
            let analysis = Analysis::new(a.symbolic(), Side::Lower).unwrap();
            let ns = analysis.supernodes();
            let mut inside = vec![0usize; ns];
            for s in 0..ns {
                if let Some(p) = analysis.parent(s) {
                    assert!(p > s);
                    inside[p] += inside[s] + 1;
                }
                // The subtree is exactly the range: its size is the count of descendants.
                assert_eq!(analysis.subtree(s).len(), inside[s] + 1, "supernode {s}");
                for &d in analysis.descendants(s) {
                    assert!(analysis.subtree(s).contains(&d) && d != s);
                }
            }
        }
    }

    #[test]
    fn a_grid_factors_as_faer_serially_and_by_subtrees() {
        factors_as_faer(grid::<f64>(40, 0.1));
        factors_as_faer(grid::<c64>(24, 0.1));
    }

    #[test]
    fn a_random_pattern_factors_as_faer() {
        factors_as_faer(random::<f64>(3000, 3));
        factors_as_faer(random::<c64>(1500, 3));
    }

    /// The `LDL^H` step against faer's `factorize_numeric_ldlt`: to `1e-13` of the largest
    /// entry (the update is formed as `X (Y D)^H`, faer's kernel scales inside its product).
    #[test]
    fn the_ldlt_step_is_faers_to_rounding() {
        let a = grid::<c64>(30, 0.3);
        let analysis = Analysis::new(a.symbolic(), Side::Lower).unwrap();
        let sym = analysis.symbolic();
        let mut want = vec![c64::new(0.0, 0.0); sym.len_val()];
        let req = sym.factorize_numeric_ldlt_scratch::<c64>(Par::Seq, Default::default());
        let mut mem = MemBuffer::new(req);
        sym.factorize_numeric_ldlt(
            &mut want,
            a.as_ref(),
            Side::Lower,
            Default::default(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .unwrap();
        let lower = permuted(&analysis, &a);
        let mut got = vec![c64::new(0.0, 0.0); sym.len_val()];
        let mut mem = MemBuffer::new(factor_scratch::<c64>(&analysis));
        let ns = analysis.supernodes();
        let stack = MemStack::new(&mut mem);
        factor(
            &analysis,
            Kind::Ldlt,
            lower.as_ref(),
            &mut got,
            0,
            0..ns,
            stack,
        )
        .unwrap();
        let top = want.iter().map(|x| x.norm()).fold(0.0, f64::max);
        let off = got
            .iter()
            .zip(&want)
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max);
        assert!(off <= 1e-13 * top, "{off:e} from faer's factor");
    }

    #[test]
    fn an_indefinite_matrix_names_its_column() {
        let a = grid::<f64>(10, -4.5);
        let analysis = Analysis::new(a.symbolic(), Side::Lower).unwrap();
        let lower = permuted(&analysis, &a);
        let mut values = vec![0.0; analysis.supernodal().len_val()];
        let mut mem = MemBuffer::new(factor_scratch::<f64>(&analysis));
        let ns = analysis.supernodes();
        let e = factor(
            &analysis,
            Kind::Llt,
            lower.as_ref(),
            &mut values,
            0,
            0..ns,
            MemStack::new(&mut mem),
        );
        // faer's step names the same column.
        let sym = analysis.symbolic();
        let mut faer_values = vec![0.0; sym.len_val()];
        let mut mem =
            MemBuffer::new(sym.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()));
        let want = sym.factorize_numeric_llt(
            &mut faer_values,
            a.as_ref(),
            Side::Lower,
            Default::default(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        );
        let Err(LltError::NonPositivePivot { index }) = want else {
            panic!("faer factored an indefinite matrix")
        };
        assert_eq!(e, Err(PivotFailure { column: index }));
    }
}
