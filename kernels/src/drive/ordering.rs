//! Fill-reducing orderings beside faer's AMD and COLAMD: the graphs the sparse analyses order
//! (`A + A^H`'s for the Cholesky, the columns' `A^H A` for the LU and QR) and, with the feature
//! `metis`, METIS's nested dissection of them (`docs/sparse-ordering.md`).

use faer::sparse::{FaerError, SymbolicSparseColMatRef};
use faer::Side;

/// One METIS call at a time: METIS keeps its random generator's state in globals, and swaps
/// the process's SIGABRT and SIGTERM handlers for its own during a call (restoring them
/// after), which two calls at once would leave swapped.
#[cfg(feature = "metis")]
static METIS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A simple undirected graph (no self-loops, no repeated edges), by adjacency lists:
/// vertex `v`'s neighbours are `adj[ptr[v]..ptr[v + 1]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// Where each vertex's list starts, and the end of the last (`len() + 1` entries).
    pub ptr: Vec<usize>,
    /// The lists, one after another.
    pub adj: Vec<usize>,
}

impl Graph {
    /// How many vertices.
    pub fn len(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Whether the graph has no vertex.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Vertex `v`'s neighbours.
    pub fn neighbours(&self, v: usize) -> &[usize] {
        &self.adj[self.ptr[v]..self.ptr[v + 1]]
    }

    /// The graph of the symmetric matrix whose `side` triangle `pattern` holds (the other
    /// triangle's entries and the diagonal are ignored).
    pub fn symmetric(pattern: SymbolicSparseColMatRef<'_, usize>, side: Side) -> Graph {
        let n = pattern.ncols();
        let kept = |i: usize, j: usize| match side {
            Side::Lower => i > j,
            Side::Upper => i < j,
        };
        // Both directions of each kept entry, repeats included; then each list deduplicated.
        let mut count = vec![0usize; n + 1];
        for j in 0..n {
            for i in pattern.row_idx_of_col(j).filter(|&i| kept(i, j)) {
                count[i + 1] += 1;
                count[j + 1] += 1;
            }
        }
        for v in 0..n {
            count[v + 1] += count[v];
        }
        let mut next = count.clone();
        let mut adj = vec![0usize; count[n]];
        for j in 0..n {
            for i in pattern.row_idx_of_col(j).filter(|&i| kept(i, j)) {
                adj[next[i]] = j;
                next[i] += 1;
                adj[next[j]] = i;
                next[j] += 1;
            }
        }
        dedup(n, &count, &adj)
    }

    /// The column intersection graph of `pattern` (`m x n`): columns `j` and `k` adjacent
    /// when a row holds both, the graph of `A^H A` without its diagonal. A dense row makes it
    /// dense, as it makes `A^H A`.
    ///
    /// # Errors
    /// [`FaerError::OutOfMemory`] when its lists do not fit in memory,
    /// [`FaerError::IndexOverflow`] when their length overflows `usize`.
    pub fn columns(pattern: SymbolicSparseColMatRef<'_, usize>) -> Result<Graph, FaerError> {
        let (m, n) = (pattern.nrows(), pattern.ncols());
        // The pattern by rows: row `i`'s columns are `row_col[row_ptr[i]..row_ptr[i + 1]]`.
        let mut row_ptr = vec![0usize; m + 1];
        for j in 0..n {
            for i in pattern.row_idx_of_col(j) {
                row_ptr[i + 1] += 1;
            }
        }
        for i in 0..m {
            row_ptr[i + 1] += row_ptr[i];
        }
        let mut next = row_ptr.clone();
        let mut row_col = vec![0usize; row_ptr[m]];
        for j in 0..n {
            for i in pattern.row_idx_of_col(j) {
                row_col[next[i]] = j;
                next[i] += 1;
            }
        }
        // Column `j`'s neighbours: the columns of its rows, each once (`mark[k] == j`);
        // counted first, so that a graph too large for memory is an error, not an abort.
        // `mark[k] == j`: column `k` already listed for column `j`.
        let each = |j: usize, mark: &mut [usize], f: &mut dyn FnMut(usize)| {
            mark[j] = j;
            for i in pattern.row_idx_of_col(j) {
                for &k in &row_col[row_ptr[i]..row_ptr[i + 1]] {
                    if mark[k] != j {
                        mark[k] = j;
                        f(k);
                    }
                }
            }
        };
        let mut mark = vec![usize::MAX; n];
        let mut ptr = vec![0usize; n + 1];
        for j in 0..n {
            let mut count = 0usize;
            each(j, &mut mark, &mut |_| count += 1);
            ptr[j + 1] = ptr[j].checked_add(count).ok_or(FaerError::IndexOverflow)?;
        }
        let mut adj = Vec::new();
        adj.try_reserve_exact(ptr[n])
            .map_err(|_| FaerError::OutOfMemory)?;
        mark.fill(usize::MAX);
        for j in 0..n {
            each(j, &mut mark, &mut |k| adj.push(k));
        }
        Ok(Graph { ptr, adj })
    }
}

/// The graph whose lists are `adj[count[v]..count[v + 1]]` with their repeats removed.
fn dedup(n: usize, count: &[usize], adj: &[usize]) -> Graph {
    let mut mark = vec![usize::MAX; n];
    let mut ptr = vec![0usize; n + 1];
    let mut out = Vec::with_capacity(adj.len());
    for v in 0..n {
        for &u in &adj[count[v]..count[v + 1]] {
            if mark[u] != v {
                mark[u] = v;
                out.push(u);
            }
        }
        ptr[v + 1] = out.len();
    }
    Graph { ptr, adj: out }
}

/// METIS's nested dissection of `graph`: the order (`order[k]` is the vertex numbered `k`-th).
/// A graph without edges keeps its order. Calls run one at a time (METIS keeps global
/// state); while one runs, SIGABRT and SIGTERM go to METIS's handler, which ends the call.
///
/// # Panics
/// When METIS fails other than for memory: an internal error, or a SIGTERM during the call.
///
/// # Errors
/// [`FaerError::IndexOverflow`] when the graph has more vertices or edge ends than METIS's
/// 32-bit indices count; [`FaerError::OutOfMemory`] when METIS runs out of memory.
#[cfg(feature = "metis")]
pub fn dissection(graph: &Graph) -> Result<Vec<usize>, FaerError> {
    use metis_sys as m;
    let n = graph.len();
    if graph.adj.is_empty() {
        return Ok((0..n).collect());
    }
    let idx = |x: usize| m::idx_t::try_from(x).map_err(|_| FaerError::IndexOverflow);
    let mut nvtxs = idx(n)?;
    idx(graph.adj.len())?;
    // In range: every entry is at most `adj.len()` or below `n`, both checked above.
    let mut xadj: Vec<m::idx_t> = graph.ptr.iter().map(|&p| p as m::idx_t).collect();
    let mut adjncy: Vec<m::idx_t> = graph.adj.iter().map(|&v| v as m::idx_t).collect();
    let (mut perm, mut iperm) = (vec![0 as m::idx_t; n], vec![0 as m::idx_t; n]);
    let mut options = [0 as m::idx_t; m::METIS_NOPTIONS as usize];
    // A panic cannot leave METIS's state half-written: none happens while the lock is held.
    let _one = METIS.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: 1. `options` holds METIS_NOPTIONS entries, as `METIS_SetDefaultOptions` writes.
    unsafe { m::METIS_SetDefaultOptions(options.as_mut_ptr()) };
    options[m::moptions_et_METIS_OPTION_NUMBERING as usize] = 0;
    // SAFETY: 2. `xadj` has `nvtxs + 1` entries and `adjncy` `xadj[nvtxs]`, every entry of it a
    // vertex below `nvtxs` (a `Graph`'s lists); `perm` and `iperm` have `nvtxs` entries each;
    // `options` is METIS's full array (1.). METIS reads the graph and writes only the two
    // permutations; no pointer outlives the call. A null `vwgt` asks for unit weights.
    // METIS's globals (its random state, the signal handlers it swaps) are touched by this
    // call alone: every call holds `METIS`.
    let status = unsafe {
        m::METIS_NodeND(
            &mut nvtxs,
            xadj.as_mut_ptr(),
            adjncy.as_mut_ptr(),
            std::ptr::null_mut(),
            options.as_mut_ptr(),
            perm.as_mut_ptr(),
            iperm.as_mut_ptr(),
        )
    };
    match status {
        m::rstatus_et_METIS_OK => Ok(perm.into_iter().map(|v| v as usize).collect()),
        m::rstatus_et_METIS_ERROR_MEMORY => Err(FaerError::OutOfMemory),
        // METIS_ERROR_INPUT would be a graph this module built wrong; METIS_ERROR, one of its
        // internal checks or a SIGTERM while it ran (its handler turns it into this status).
        other => panic!("METIS_NodeND failed on a graph of {n} vertices (status {other})"),
    }
}

/// The inverse of the order `fwd`.
pub fn inverse(fwd: &[usize]) -> Vec<usize> {
    let mut inv = vec![0usize; fwd.len()];
    for (k, &v) in fwd.iter().enumerate() {
        inv[v] = k;
    }
    inv
}

#[cfg(test)]
mod tests {
    use faer::sparse::SymbolicSparseColMat;

    use super::*;

    fn pattern(m: usize, n: usize, entries: &[(usize, usize)]) -> SymbolicSparseColMat<usize> {
        let pairs: Vec<faer::sparse::Pair<usize, usize>> = entries
            .iter()
            .map(|&(i, j)| faer::sparse::Pair::new(i, j))
            .collect();
        SymbolicSparseColMat::try_new_from_indices(m, n, &pairs)
            .unwrap()
            .0
    }

    fn sorted(g: &Graph) -> Vec<Vec<usize>> {
        (0..g.len())
            .map(|v| {
                let mut l = g.neighbours(v).to_vec();
                l.sort_unstable();
                l
            })
            .collect()
    }

    #[test]
    fn symmetric_graph_reads_one_triangle() {
        // Lower: (1,0), (2,0), (2,1); an upper entry (0,2) that must be ignored; diagonals.
        let p = pattern(
            3,
            3,
            &[(0, 0), (1, 0), (2, 0), (0, 2), (2, 1), (1, 1), (2, 2)],
        );
        let lower = Graph::symmetric(p.as_ref(), Side::Lower);
        assert_eq!(sorted(&lower), vec![vec![1, 2], vec![0, 2], vec![0, 1]]);
        let upper = Graph::symmetric(p.as_ref(), Side::Upper);
        assert_eq!(sorted(&upper), vec![vec![2], vec![], vec![0]]);
    }

    #[test]
    fn column_graph_joins_columns_sharing_a_row() {
        // Row 0 holds columns 0 and 2 twice over (two rows); row 2 holds 1 and 3.
        let p = pattern(
            4,
            4,
            &[(0, 0), (0, 2), (1, 0), (1, 2), (2, 1), (2, 3), (3, 3)],
        );
        let g = Graph::columns(p.as_ref()).unwrap();
        assert_eq!(sorted(&g), vec![vec![2], vec![3], vec![0], vec![1]]);
        // 5 x 4, row 3 and column 2 empty, row 4 holding columns 0, 1 and 3.
        let p = pattern(5, 4, &[(0, 0), (1, 1), (2, 3), (4, 0), (4, 1), (4, 3)]);
        let g = Graph::columns(p.as_ref()).unwrap();
        assert_eq!(sorted(&g), vec![vec![1, 3], vec![0, 3], vec![], vec![0, 1]]);
    }

    #[cfg(feature = "metis")]
    #[test]
    fn dissection_numbers_a_separator_last() {
        // A path of 31 vertices: every nested dissection numbers a middle vertex last, so
        // that both halves are eliminated apart; AMD's order of a path starts at an end.
        let n = 31;
        let entries: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| {
                [(i, i)]
                    .into_iter()
                    .chain((i + 1 < n).then_some((i + 1, i)))
            })
            .collect();
        let p = pattern(n, n, &entries);
        let g = Graph::symmetric(p.as_ref(), Side::Lower);
        let order = dissection(&g).unwrap();
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..n).collect::<Vec<_>>());
        let last = order[n - 1];
        assert!((n / 4..3 * n / 4).contains(&last), "separator {last}");
        // Edgeless: the identity.
        let d = pattern(3, 3, &[(0, 0), (1, 1), (2, 2)]);
        let g = Graph::symmetric(d.as_ref(), Side::Lower);
        assert_eq!(dissection(&g).unwrap(), vec![0, 1, 2]);
    }

    /// The share of `forest`'s work above the subtrees a team of two shares
    /// ([`crate::drive::forest::cut`]), and how many subtrees.
    #[cfg(feature = "metis")]
    fn top(forest: &crate::drive::forest::Forest) -> (f64, usize) {
        let c = crate::drive::forest::cut(forest, 2);
        (1.0 - c.subtree_work / forest.total_work(), c.subtrees.len())
    }

    /// Nested dissection of a 2D grid, for the Cholesky's graph and for the LU's columns'
    /// graph: a tree with subtrees to share (not a chain, as the grid's own numbering gives),
    /// and for the Cholesky less work than AMD's order (as on every large enough 2D grid).
    #[cfg(feature = "metis")]
    #[test]
    fn dissection_of_a_grid_gives_a_tree_to_share() {
        use crate::{sparse_cholesky::tree as cholesky, sparse_lu::tree as lu};
        let k = 48;
        let mut entries = Vec::new();
        for x in 0..k {
            for y in 0..k {
                let i = x * k + y;
                entries.push((i, i));
                if x + 1 < k {
                    entries.extend([(i + k, i), (i, i + k)]);
                }
                if y + 1 < k {
                    entries.extend([(i + 1, i), (i, i + 1)]);
                }
            }
        }
        let p = pattern(k * k, k * k, &entries);
        let order = dissection(&Graph::symmetric(p.as_ref(), Side::Lower)).unwrap();
        let nd = cholesky::Analysis::ordered(p.as_ref(), Side::Lower, Some(&order)).unwrap();
        let amd = cholesky::Analysis::new(p.as_ref(), Side::Lower).unwrap();
        let (share, subtrees) = top(nd.forest());
        assert!(
            share < 0.5 && subtrees >= 2,
            "Cholesky: top {share}, {subtrees} subtrees"
        );
        let (nd, amd) = (nd.total_work(), amd.total_work());
        assert!(
            nd < amd,
            "Cholesky: work {nd:e} by dissection, {amd:e} by AMD"
        );
        let order = dissection(&Graph::columns(p.as_ref()).unwrap()).unwrap();
        let nd = lu::Analysis::ordered(p.as_ref(), Some(&order)).unwrap();
        let (share, subtrees) = top(nd.forest());
        assert!(
            share < 0.5 && subtrees >= 2,
            "LU: top {share}, {subtrees} subtrees"
        );
    }
}
