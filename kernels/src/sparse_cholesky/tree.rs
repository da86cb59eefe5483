//! The analysis of a pattern: faer's supernodal symbolic Cholesky, ordered by AMD and then by a
//! postorder of the elimination tree (so that every subtree is a contiguous range of
//! supernodes, and its values one contiguous slice), and the supernodal tree faer computes but
//! keeps private: each supernode's parent, the first supernode of its subtree, and the
//! descendants whose rows update it.

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

/// A pattern's analysis, made once and shared by every factorization of that pattern.
#[derive(Debug)]
pub struct Analysis {
    symbolic: SymbolicCholesky<usize>,
    /// Each supernode's parent (`None`: a root).
    parent: Vec<Option<usize>>,
    /// The first supernode of each supernode's subtree (a postorder: the subtree of `s` is
    /// `first[s]..=s`).
    first: Vec<usize>,
    /// The descendants that update each supernode, ascending: `idx[ptr[s]..ptr[s + 1]]`.
    desc_ptr: Vec<usize>,
    desc_idx: Vec<usize>,
    /// The entries of the analysed pattern.
    a_nnz: usize,
    /// Each supernode's step, in multiply-adds ([`super::cost::supernode`]).
    work: Vec<f64>,
    /// Each supernode's subtree's work, in multiply-adds.
    subtree_work: Vec<f64>,
}

impl Analysis {
    /// Analyses the pattern of a self-adjoint matrix given by its `side` triangle (the other
    /// entries are ignored).
    pub fn new(
        pattern: SymbolicSparseColMatRef<'_, usize>,
        side: Side,
    ) -> Result<Analysis, FaerError> {
        let n = pattern.nrows();
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
            ..Default::default()
        };
        let amd = factorize_symbolic_cholesky(pattern, side, SymmetricOrdering::Amd, params)?;
        // The tree of the AMD-ordered pattern, in a postorder: faer's AMD ordering is not
        // always one, and a subtree must be a contiguous range of supernodes.
        let (fwd, inv) = match amd.perm() {
            Some(perm) => postorder(pattern, side, perm)?,
            None => ((0..n).collect(), (0..n).collect()),
        };
        let perm = PermRef::new_checked(&fwd, &inv, n);
        // An explicit permutation: faer's identity ordering reads only the upper triangle.
        let symbolic =
            factorize_symbolic_cholesky(pattern, side, SymmetricOrdering::Custom(perm), params)?;
        let (parent, first, desc_ptr, desc_idx) = match symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(s) => tree(s),
            // faer keeps an empty matrix simplicial whatever it is asked.
            SymbolicCholeskyRaw::Simplicial(_) if n == 0 => Default::default(),
            SymbolicCholeskyRaw::Simplicial(_) => unreachable!("the analysis is forced supernodal"),
        };
        let mut analysis = Analysis {
            symbolic,
            parent,
            first,
            desc_ptr,
            desc_idx,
            a_nnz: pattern.compute_nnz(),
            work: Vec::new(),
            subtree_work: Vec::new(),
        };
        let work: Vec<f64> = (0..analysis.supernodes())
            .map(|s| cost::supernode(analysis.supernodal(), s, analysis.descendants(s)))
            .collect();
        let mut subtree_work = work.clone();
        for s in 0..analysis.supernodes() {
            if let Some(p) = analysis.parent[s] {
                subtree_work[p] += subtree_work[s];
            }
        }
        analysis.work = work;
        analysis.subtree_work = subtree_work;
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

    /// How many supernodes.
    pub fn supernodes(&self) -> usize {
        self.parent.len()
    }

    /// Supernode `s`'s parent (`None`: a root).
    pub fn parent(&self, s: usize) -> Option<usize> {
        self.parent[s]
    }

    /// The supernodes of `s`'s subtree, `s` last.
    pub fn subtree(&self, s: usize) -> Range<usize> {
        self.first[s]..s + 1
    }

    /// The supernodes whose rows update `s`, ascending (all in its subtree).
    pub fn descendants(&self, s: usize) -> &[usize] {
        &self.desc_idx[self.desc_ptr[s]..self.desc_ptr[s + 1]]
    }

    /// Supernode `s`'s step, in multiply-adds ([`cost::supernode`]).
    pub fn work(&self, s: usize) -> f64 {
        self.work[s]
    }

    /// The work of `s`'s subtree (`s` and every supernode below it), in multiply-adds.
    pub fn subtree_work(&self, s: usize) -> f64 {
        self.subtree_work[s]
    }

    /// The whole factorization's work, in multiply-adds.
    pub fn total_work(&self) -> f64 {
        self.work.iter().sum()
    }

    /// The roots of the supernodal tree (a forest when the matrix is reducible), ascending.
    pub fn roots(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.supernodes()).filter(|&s| self.parent[s].is_none())
    }

    /// The children of `s`, last first: in a postorder, `s`'s last child is `s - 1`, and each
    /// child's previous sibling ends just before the child's subtree starts.
    pub fn children(&self, s: usize) -> impl Iterator<Item = usize> + '_ {
        let first = self.first[s];
        let mut next = s;
        std::iter::from_fn(move || {
            if next <= first {
                return None;
            }
            let child = next - 1;
            next = self.first[child];
            Some(child)
        })
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

/// The supernodal tree of `s`: parents, subtree starts, and descendant lists (CSR).
#[allow(clippy::type_complexity)]
fn tree(
    s: &SymbolicSupernodalCholesky<usize>,
) -> (Vec<Option<usize>>, Vec<usize>, Vec<usize>, Vec<usize>) {
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
    let mut first: Vec<usize> = (0..ns).collect();
    for k in 0..ns {
        if let Some(p) = parent[k] {
            debug_assert!(p > k, "a parent follows its children");
            first[p] = first[p].min(first[k]);
        }
    }
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
    (parent, first, count, idx)
}
