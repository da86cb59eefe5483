//! The cut: which subtrees of the supernodal tree the participants claim, and which supernodes
//! (the top) run after them on the caller, their dense work on the team. Geist and Ng's
//! subtree-to-processor mapping, balanced by claims instead of a fixed assignment: from the
//! roots down, the heaviest subtree is replaced by its children until none is heavier than a
//! fair share of the rest, so that claiming the heaviest first keeps the participants within
//! one small subtree of each other.

use std::ops::Range;

use super::tree::Analysis;

/// A subtree may be at most this fraction of the subtrees' work per participant: with claims
/// heaviest first, the participants then finish within this fraction of a share of each other.
const SHARE: f64 = 0.25;

/// The subtrees the participants claim, and the top.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// The subtrees, as ranges of supernodes, heaviest first.
    pub subtrees: Vec<Range<usize>>,
    /// The supernodes above the subtrees, ascending (each after its descendants).
    pub top: Vec<usize>,
    /// The subtrees' work, in multiply-adds.
    pub subtree_work: f64,
    /// The heaviest subtree's work.
    pub heaviest: f64,
}

/// A supernode narrower than this runs its dense work on one participant: the dense kernels'
/// panels are 32 columns wide, and their gate keeps a block of fewer than two panels serial.
pub const WIDE: usize = 64;

impl Cut {
    /// Whether the cut has anything to run at once: two subtrees, or a top supernode wide
    /// enough for the team. Otherwise (a chain of small supernodes) the factorization is
    /// serial whatever the width.
    pub fn pays(&self, analysis: &Analysis) -> bool {
        let s = analysis.supernodal();
        self.subtrees.len() >= 2
            || self
                .top
                .iter()
                .any(|&k| s.supernode_end()[k] - s.supernode_begin()[k] >= WIDE)
    }
}

/// The cut of `analysis`'s tree for `width` participants. A width of 1 gives the roots'
/// subtrees and an empty top; a chain gives no subtree to share, its supernodes in the top.
pub fn cut(analysis: &Analysis, width: usize) -> Cut {
    let mut roots: Vec<usize> = analysis.roots().collect();
    let mut top = Vec::new();
    let mut total: f64 = roots.iter().map(|&s| analysis.subtree_work(s)).sum();
    if width > 1 {
        while let Some((at, &h)) = roots.iter().enumerate().max_by(|a, b| {
            analysis
                .subtree_work(*a.1)
                .total_cmp(&analysis.subtree_work(*b.1))
        }) {
            let heavy = analysis.subtree_work(h);
            if heavy <= SHARE * total / width as f64 {
                break;
            }
            // Too heavy for a share: its children become subtrees, and it joins the top,
            // where its dense work runs on the team (a leaf too: a dense matrix's one
            // supernode).
            roots.swap_remove(at);
            top.push(h);
            total -= analysis.work(h);
            roots.extend(analysis.children(h));
        }
    }
    top.sort_unstable();
    roots.sort_by(|a, b| {
        analysis
            .subtree_work(*b)
            .total_cmp(&analysis.subtree_work(*a))
            .then(a.cmp(b))
    });
    Cut {
        heaviest: roots.first().map_or(0.0, |&s| analysis.subtree_work(s)),
        subtrees: roots.iter().map(|&s| analysis.subtree(s)).collect(),
        top,
        subtree_work: total,
    }
}

#[cfg(test)]
mod tests {
    use faer::sparse::{SparseColMat, Triplet};
    use faer::Side;

    use super::*;

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
            let cut = cut(&analysis, width);
            covers(&analysis, &cut);
            assert!(cut.subtrees.len() >= width, "{width}: {cut:?}");
            assert!(cut.heaviest <= SHARE * cut.subtree_work / width as f64);
            assert!(
                cut.subtree_work >= 0.5 * analysis.total_work(),
                "most of the work is below the cut"
            );
        }
        let one = cut(&analysis, 1);
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
        let cut = cut(&analysis, 2);
        covers(&analysis, &cut);
        assert!(!cut.pays(&analysis), "{} subtrees", cut.subtrees.len());
        assert!(
            super::cut(&Analysis::new(grid(40).symbolic(), Side::Lower).unwrap(), 2)
                .pays(&Analysis::new(grid(40).symbolic(), Side::Lower).unwrap())
        );
    }
}
