//! The analysis of a pattern: faer's supernodal symbolic Cholesky, ordered by AMD (or a given
//! order, `crate::drive::ordering`) and then by a postorder of the elimination tree (so that
//! every subtree is a contiguous range of supernodes, and its values one contiguous slice), and
//! the supernodal tree faer computes but keeps private: the supernodal [`Forest`] and the
//! descendants whose rows update each supernode.

use std::ops::Range;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::perm::PermRef;
use faer::reborrow::Reborrow;
use faer::sparse::linalg::cholesky::supernodal::SymbolicSupernodalCholesky;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, simplicial, CholeskySymbolicParams, SymbolicCholesky,
    SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::linalg::{qr, SupernodalThreshold};
use faer::sparse::utils::{permute_self_adjoint_scratch, permute_self_adjoint_to_unsorted};
use faer::sparse::{FaerError, SparseColMatRef, SymbolicSparseColMatRef};
use faer::Side;

use super::cost;
use crate::drive::forest::Forest;

/// A pattern's analysis, made once and shared by every factorization of that pattern.
#[derive(Debug)]
pub struct Analysis {
    symbolic: SymbolicCholesky<usize>,
    /// The supernodal tree, each supernode's work ([`super::cost::supernode`]) and columns.
    forest: Forest,
    /// The descendants that update each supernode, ascending: `idx[ptr[s]..ptr[s + 1]]`.
    desc_ptr: Vec<usize>,
    desc_idx: Vec<usize>,
    /// The entries of the analysed pattern.
    a_nnz: usize,
}

impl Analysis {
    /// Analyses the pattern of a self-adjoint matrix given by its `side` triangle (the other
    /// entries are ignored), ordered by AMD.
    pub fn new(
        pattern: SymbolicSparseColMatRef<'_, usize>,
        side: Side,
    ) -> Result<Analysis, FaerError> {
        Analysis::ordered(pattern, side, None)
    }

    /// [`Analysis::new`] with the ordering `order` (`order[k]` is the column eliminated
    /// `k`-th; a permutation of the columns) in place of AMD's.
    ///
    /// # Panics
    /// When `order` is not a permutation of the columns.
    pub fn ordered(
        pattern: SymbolicSparseColMatRef<'_, usize>,
        side: Side,
        order: Option<&[usize]>,
    ) -> Result<Analysis, FaerError> {
        let n = pattern.nrows();
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
            ..Default::default()
        };
        // The tree of the ordered pattern, in a postorder: neither faer's AMD ordering nor a
        // given one is always one, and a subtree must be a contiguous range of supernodes.
        let (fwd, inv) = match order {
            Some(order) => {
                let inv = crate::drive::ordering::inverse(order);
                postorder(pattern, side, PermRef::new_checked(order, &inv, n))?
            }
            None => {
                let amd =
                    factorize_symbolic_cholesky(pattern, side, SymmetricOrdering::Amd, params)?;
                match amd.perm() {
                    Some(perm) => postorder(pattern, side, perm)?,
                    None => ((0..n).collect(), (0..n).collect()),
                }
            }
        };
        let perm = PermRef::new_checked(&fwd, &inv, n);
        // An explicit permutation: faer's identity ordering reads only the upper triangle.
        let symbolic =
            factorize_symbolic_cholesky(pattern, side, SymmetricOrdering::Custom(perm), params)?;
        let (parent, desc_ptr, desc_idx) = match symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(s) => tree(s),
            // faer keeps an empty matrix simplicial whatever it is asked.
            SymbolicCholeskyRaw::Simplicial(_) if n == 0 => Default::default(),
            SymbolicCholeskyRaw::Simplicial(_) => unreachable!("the analysis is forced supernodal"),
        };
        let mut analysis = Analysis {
            symbolic,
            forest: Forest::default(),
            desc_ptr,
            desc_idx,
            a_nnz: pattern.compute_nnz(),
        };
        let count = parent.len();
        let work: Vec<f64> = (0..count)
            .map(|s| cost::supernode(analysis.supernodal(), s, analysis.descendants(s)))
            .collect();
        let cols: Vec<usize> = (0..count)
            .map(|s| {
                let sym = analysis.supernodal();
                sym.supernode_end()[s] - sym.supernode_begin()[s]
            })
            .collect();
        analysis.forest = Forest::new(parent, work, cols);
        Ok(analysis)
    }

    /// faer's analysis (the ordering, and the supernodal structure).
    pub fn symbolic(&self) -> &SymbolicCholesky<usize> {
        &self.symbolic
    }

    /// The supernodal structure (of a matrix of order at least 1: faer keeps an empty one
    /// simplicial).
    pub fn supernodal(&self) -> &SymbolicSupernodalCholesky<usize> {
        match self.symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(s) => s,
            SymbolicCholeskyRaw::Simplicial(_) => unreachable!("the analysis is forced supernodal"),
        }
    }

    /// The supernodal tree, with each supernode's work and columns.
    pub fn forest(&self) -> &Forest {
        &self.forest
    }

    /// How many supernodes.
    pub fn supernodes(&self) -> usize {
        self.forest.len()
    }

    /// Supernode `s`'s parent (`None`: a root).
    pub fn parent(&self, s: usize) -> Option<usize> {
        self.forest.parent(s)
    }

    /// The supernodes of `s`'s subtree, `s` last.
    pub fn subtree(&self, s: usize) -> Range<usize> {
        self.forest.subtree(s)
    }

    /// The supernodes whose rows update `s`, ascending (all in its subtree).
    pub fn descendants(&self, s: usize) -> &[usize] {
        &self.desc_idx[self.desc_ptr[s]..self.desc_ptr[s + 1]]
    }

    /// Supernode `s`'s step, in multiply-adds ([`cost::supernode`]).
    pub fn work(&self, s: usize) -> f64 {
        self.forest.work(s)
    }

    /// The whole factorization's work, in multiply-adds.
    pub fn total_work(&self) -> f64 {
        self.forest.total_work()
    }

    /// The entries of the analysed pattern (both triangles where it holds both).
    pub fn a_nnz(&self) -> usize {
        self.a_nnz
    }

    /// The order of the matrix.
    pub fn nrows(&self) -> usize {
        self.symbolic.nrows()
    }
}

/// A postorder of the elimination tree of `pattern` permuted by `perm`, composed with `perm`:
/// the permutation (forward, inverse) that orders as `perm` does up to a relabelling that keeps
/// every subtree contiguous.
fn postorder(
    pattern: SymbolicSparseColMatRef<'_, usize>,
    side: Side,
    perm: PermRef<'_, usize>,
) -> Result<(Vec<usize>, Vec<usize>), FaerError> {
    let n = pattern.nrows();
    let nnz = pattern.compute_nnz();
    // One value per stored index, compressed or not.
    let values = vec![0.0f64; pattern.row_idx().len()];
    let a = SparseColMatRef::new(pattern, &values);
    let (mut val, mut col_ptr, mut row_idx) =
        (vec![0.0f64; nnz], vec![0usize; n + 1], vec![0usize; nnz]);
    let mut mem = MemBuffer::try_new(StackReq::any_of(&[
        permute_self_adjoint_scratch::<usize>(n),
        simplicial::prefactorize_symbolic_cholesky_scratch::<usize>(n, nnz),
        qr::postorder_scratch::<usize>(n),
    ]))
    .map_err(|_| FaerError::OutOfMemory)?;
    let stack = MemStack::new(&mut mem);
    // The tree reads the upper triangle.
    let upper = permute_self_adjoint_to_unsorted(
        &mut val,
        &mut col_ptr,
        &mut row_idx,
        a,
        perm,
        side,
        Side::Upper,
        stack,
    );
    let upper = upper.rb();
    let (mut etree, mut counts) = (vec![0isize; n], vec![0usize; n]);
    let tree = simplicial::prefactorize_symbolic_cholesky(
        &mut etree,
        &mut counts,
        upper.symbolic(),
        stack,
    );
    let mut post = vec![0usize; n];
    qr::postorder(&mut post, tree, stack);
    let (amd, _) = perm.arrays();
    let fwd: Vec<usize> = post.iter().map(|&k| amd[k]).collect();
    let mut inv = vec![0usize; n];
    for (k, &i) in fwd.iter().enumerate() {
        inv[i] = k;
    }
    Ok((fwd, inv))
}

/// The supernodal tree of `s`: parents and descendant lists (CSR).
fn tree(s: &SymbolicSupernodalCholesky<usize>) -> (Vec<Option<usize>>, Vec<usize>, Vec<usize>) {
    let (ns, n) = (s.n_supernodes(), s.nrows());
    let mut owner = vec![0usize; n];
    for k in 0..ns {
        owner[s.supernode_begin()[k]..s.supernode_end()[k]].fill(k);
    }
    // A supernode's parent holds the first row of its pattern: the pattern is sorted, and the
    // first off-diagonal row is the tree parent of the supernode's last column.
    let parent: Vec<Option<usize>> = (0..ns)
        .map(|k| s.supernode(k).pattern().first().map(|&r| owner[r]))
        .collect();
    // Supernode `d` updates every supernode that owns a row of its pattern (sorted, so each
    // appears in one run).
    let mut count = vec![0usize; ns + 1];
    for d in 0..ns {
        let mut last = usize::MAX;
        for &r in s.supernode(d).pattern() {
            if owner[r] != last {
                last = owner[r];
                count[last + 1] += 1;
            }
        }
    }
    for k in 0..ns {
        count[k + 1] += count[k];
    }
    let mut next = count.clone();
    let mut idx = vec![0usize; count[ns]];
    for d in 0..ns {
        let mut last = usize::MAX;
        for &r in s.supernode(d).pattern() {
            if owner[r] != last {
                last = owner[r];
                idx[next[last]] = d;
                next[last] += 1;
            }
        }
    }
    (parent, count, idx)
}

#[cfg(test)]
mod tests {
    use faer::sparse::{SparseColMat, Triplet};
    use faer::Side;

    use super::*;
    use crate::drive::forest::{cut, Cut, TEST_SHARE as SHARE};

    fn grid(k: usize) -> SparseColMat<usize, f64> {
        let mut t = Vec::new();
        for x in 0..k {
            for y in 0..k {
                let i = x * k + y;
                t.push(Triplet::new(i, i, 4.5));
                if x + 1 < k {
                    t.push(Triplet::new(i + k, i, -1.0));
                }
                if y + 1 < k {
                    t.push(Triplet::new(i + 1, i, -1.0));
                }
            }
        }
        SparseColMat::try_new_from_triplets(k * k, k * k, &t).unwrap()
    }

    /// Every supernode is in exactly one subtree or in the top, and the top's supernodes are
    /// ancestors of subtrees only.
    fn covers(analysis: &Analysis, cut: &Cut) {
        let mut seen = vec![0u32; analysis.supernodes()];
        for r in &cut.subtrees {
            r.clone().for_each(|s| seen[s] += 1);
        }
        cut.top.iter().for_each(|&s| seen[s] += 1);
        assert!(seen.iter().all(|&c| c == 1), "each supernode once");
        for r in &cut.subtrees {
            let root = r.end - 1;
            assert_eq!(analysis.subtree(root), *r);
            if let Some(p) = analysis.parent(root) {
                assert!(
                    cut.top.binary_search(&p).is_ok(),
                    "a subtree's parent is top"
                );
            }
        }
    }

    #[test]
    fn a_grid_cuts_into_balanced_subtrees() {
        let a = grid(60);
        let analysis = Analysis::new(a.symbolic(), Side::Lower).unwrap();
        for width in [2, 3, 4, 8] {
            let cut = cut(analysis.forest(), width);
            covers(&analysis, &cut);
            assert!(cut.subtrees.len() >= width, "{width}: {cut:?}");
            assert!(cut.heaviest <= SHARE * cut.subtree_work / width as f64);
            assert!(
                cut.subtree_work >= 0.5 * analysis.total_work(),
                "most of the work is below the cut"
            );
        }
        let one = cut(analysis.forest(), 1);
        assert!(one.top.is_empty() && one.subtrees.len() == 1);
    }

    #[test]
    fn a_chain_has_nothing_to_share() {
        // A band of 3 below the diagonal: one chain of small supernodes.
        let n = 600;
        let mut t = Vec::new();
        for j in 0..n {
            t.push(Triplet::new(j, j, 8.0));
            for i in j + 1..(j + 4).min(n) {
                t.push(Triplet::new(i, j, -1.0));
            }
        }
        let a = SparseColMat::<usize, f64>::try_new_from_triplets(n, n, &t).unwrap();
        let analysis = Analysis::new(a.symbolic(), Side::Lower).unwrap();
        let cut = cut(analysis.forest(), 2);
        covers(&analysis, &cut);
        assert!(
            !cut.pays(analysis.forest()),
            "{} subtrees",
            cut.subtrees.len()
        );
        let grid = Analysis::new(grid(40).symbolic(), Side::Lower).unwrap();
        assert!(crate::drive::forest::cut(grid.forest(), 2).pays(grid.forest()));
    }
}
