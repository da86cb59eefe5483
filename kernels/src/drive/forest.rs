//! The tree of a sparse factorization and its cut: which subtrees the participants claim, and
//! which nodes (the top) run after them on the caller, their dense work on the team. Geist and
//! Ng's subtree-to-processor mapping, balanced by claims instead of a fixed assignment: from
//! the roots down, the heaviest subtree is replaced by its children until none is heavier than
//! a fair share of the rest, so that claiming the heaviest first keeps the participants within
//! one small subtree of each other. The sparse Cholesky's supernodal tree and the sparse LU's
//! front tree are both a [`Forest`] (`docs/sparse-cholesky.md`, `docs/sparse-lu.md`).

use std::ops::Range;

/// A subtree may be at most this fraction of the subtrees' work per participant: with claims
/// heaviest first, the participants then finish within this fraction of a share of each other.
const SHARE: f64 = 0.25;

/// A node narrower than this runs its dense work on one participant: the dense kernels'
/// panels are 32 columns wide, and their gate keeps a block of fewer than two panels serial.
pub const WIDE: usize = 64;

/// A tree (a forest when the matrix is reducible) of nodes numbered in a postorder, so that
/// every subtree is a contiguous range of nodes, with each node's work and columns.
#[derive(Debug, Clone, Default)]
pub struct Forest {
    /// Each node's parent (`None`: a root).
    parent: Vec<Option<usize>>,
    /// The first node of each node's subtree (the subtree of `s` is `first[s]..=s`).
    first: Vec<usize>,
    /// Each node's work, in multiply-adds.
    work: Vec<f64>,
    /// Each subtree's work.
    subtree_work: Vec<f64>,
    /// Each node's columns.
    cols: Vec<usize>,
    /// The whole tree's work (asked per node by the regions near the root).
    total: f64,
}

impl Forest {
    /// The forest of `parent` (each node's parent, after it: a postorder), `work` and `cols`
    /// per node.
    ///
    /// # Panics
    /// When the lengths differ or a parent does not follow its child.
    pub fn new(parent: Vec<Option<usize>>, work: Vec<f64>, cols: Vec<usize>) -> Forest {
        let n = parent.len();
        assert!(work.len() == n && cols.len() == n, "Forest::new: lengths");
        let mut first: Vec<usize> = (0..n).collect();
        let mut subtree_work = work.clone();
        for s in 0..n {
            if let Some(p) = parent[s] {
                assert!(p > s, "Forest::new: a parent follows its children");
                first[p] = first[p].min(first[s]);
                subtree_work[p] += subtree_work[s];
            }
        }
        let total = work.iter().sum();
        Forest {
            parent,
            first,
            work,
            subtree_work,
            cols,
            total,
        }
    }

    /// How many nodes.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Whether there is no node.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Node `s`'s parent (`None`: a root).
    pub fn parent(&self, s: usize) -> Option<usize> {
        self.parent[s]
    }

    /// The nodes of `s`'s subtree, `s` last.
    pub fn subtree(&self, s: usize) -> Range<usize> {
        self.first[s]..s + 1
    }

    /// Node `s`'s work, in multiply-adds.
    pub fn work(&self, s: usize) -> f64 {
        self.work[s]
    }

    /// The work of `s`'s subtree (`s` and every node below it).
    pub fn subtree_work(&self, s: usize) -> f64 {
        self.subtree_work[s]
    }

    /// The whole factorization's work.
    pub fn total_work(&self) -> f64 {
        self.total
    }

    /// Node `s`'s columns.
    pub fn cols(&self, s: usize) -> usize {
        self.cols[s]
    }

    /// The roots, ascending.
    pub fn roots(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len()).filter(|&s| self.parent[s].is_none())
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
}

/// The subtrees the participants claim, and the top.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// The subtrees, as ranges of nodes, heaviest first.
    pub subtrees: Vec<Range<usize>>,
    /// The nodes above the subtrees, ascending (each after its descendants).
    pub top: Vec<usize>,
    /// The subtrees' work, in multiply-adds.
    pub subtree_work: f64,
    /// The heaviest subtree's work.
    pub heaviest: f64,
}

impl Cut {
    /// Whether the cut has anything to run at once: two subtrees, or a top node wide enough
    /// for the team. Otherwise (a chain of small nodes) the factorization is serial whatever
    /// the width.
    pub fn pays(&self, forest: &Forest) -> bool {
        self.subtrees.len() >= 2 || self.top.iter().any(|&k| forest.cols(k) >= WIDE)
    }
}

/// The cut of `forest` for `width` participants. A width of 1 gives the roots' subtrees and an
/// empty top; a chain gives no subtree to share, its nodes in the top.
pub fn cut(forest: &Forest, width: usize) -> Cut {
    let mut roots: Vec<usize> = forest.roots().collect();
    let mut top = Vec::new();
    let mut total: f64 = roots.iter().map(|&s| forest.subtree_work(s)).sum();
    if width > 1 {
        while let Some((at, &h)) = roots.iter().enumerate().max_by(|a, b| {
            forest
                .subtree_work(*a.1)
                .total_cmp(&forest.subtree_work(*b.1))
        }) {
            let heavy = forest.subtree_work(h);
            if heavy <= SHARE * total / width as f64 {
                break;
            }
            // Too heavy for a share: its children become subtrees, and it joins the top,
            // where its dense work runs on the team (a leaf too: a dense matrix's one node).
            roots.swap_remove(at);
            top.push(h);
            total -= forest.work(h);
            roots.extend(forest.children(h));
        }
    }
    top.sort_unstable();
    roots.sort_by(|a, b| {
        forest
            .subtree_work(*b)
            .total_cmp(&forest.subtree_work(*a))
            .then(a.cmp(b))
    });
    Cut {
        heaviest: roots.first().map_or(0.0, |&s| forest.subtree_work(s)),
        subtrees: roots.iter().map(|&s| forest.subtree(s)).collect(),
        top,
        subtree_work: total,
    }
}

/// The share bound, for the trees' tests.
#[cfg(test)]
pub(crate) const TEST_SHARE: f64 = SHARE;
