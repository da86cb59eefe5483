//! The analysis of an unsymmetric or rectangular pattern for the multifrontal LU and QR:
//! faer's COLAMD column ordering, the column elimination tree (the tree of `A^T A`) in a
//! postorder, and faer's supernodal structure of `R^H` for `A^T A = R^H R`
//! (`qr::supernodal`), which is `R`'s for the QR and bounds the factors of every row pivoting
//! for the LU (George and Ng): supernode `s`'s front has the columns of `s` and of its `R`
//! pattern, and the rows of `A` whose first column falls in `s` beside the rows its children
//! leave ([`Merge`]). Beside it, the [`Forest`] of fronts with each front's rows and work, and
//! `A`'s rows with their columns in the analysis's order.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::perm::PermRef;
use faer::sparse::linalg::cholesky::supernodal::SymbolicSupernodalCholesky;
use faer::sparse::linalg::qr::supernodal::{
    factorize_supernodal_symbolic_qr, factorize_supernodal_symbolic_qr_scratch,
    SymbolicSupernodalQr,
};
use faer::sparse::linalg::{colamd, qr};
use faer::sparse::{FaerError, SymbolicSparseColMatRef};

use crate::drive::forest::Forest;

/// Which rows a front hands its parent, and so the fronts' rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// The LU's: every row that did not pivot one of its columns (`rows - cols`).
    Lu,
    /// The QR's: the rows of its `R` below its pivot rows (`min(rows, cols + pattern) - cols`,
    /// upper trapezoidal); the others are zero once the front is factored.
    Qr,
}

/// A pattern's analysis, made once and shared by every factorization of that pattern.
#[derive(Debug)]
pub struct Analysis {
    merge: Merge,
    m: usize,
    n: usize,
    /// The column ordering: column `k` of the analysis's order is `A`'s column `fwd[k]`.
    fwd: Vec<usize>,
    inv: Vec<usize>,
    /// faer's supernodal structure of `R^H` (`None` for an empty matrix).
    symbolic: Option<SymbolicSupernodalQr<usize>>,
    /// The fronts' tree, each front's work ([`cost::front`]) and pivot columns.
    forest: Forest,
    /// Each front's rows (`A`'s assigned rows and the rows its children hand on).
    rows: Vec<usize>,
    /// The rows of `A` assigned to each front (their first column is one of its columns):
    /// `assigned[assigned_ptr[s]..assigned_ptr[s + 1]]`, ascending.
    assigned_ptr: Vec<usize>,
    assigned: Vec<usize>,
    /// `A` by rows: row `i`'s entries are `row_col[row_ptr[i]..row_ptr[i + 1]]` (columns in
    /// the analysis's order) with their values at `row_src[..]` in `A`'s values.
    row_ptr: Vec<usize>,
    row_col: Vec<usize>,
    row_src: Vec<usize>,
    /// The first column (in the analysis's order) that no row can pivot: the pattern is
    /// structurally singular.
    structural: Option<usize>,
    /// The rows of `A` without entries.
    empty: Vec<usize>,
    /// The largest front's rows and columns, for the scratch.
    max_rows: usize,
    max_cols: usize,
}

impl Analysis {
    /// Analyses the pattern of a square matrix for the LU (compressed: `A`'s values are read
    /// in its order).
    ///
    /// # Panics
    /// When the pattern is not square.
    pub fn new(pattern: SymbolicSparseColMatRef<'_, usize>) -> Result<Analysis, FaerError> {
        Analysis::ordered(pattern, None)
    }

    /// [`Analysis::new`] with the column ordering `order` (`order[k]` is the column
    /// eliminated `k`-th) in place of COLAMD's.
    ///
    /// # Panics
    /// When the pattern is not square, or `order` is not a permutation of its columns.
    pub fn ordered(
        pattern: SymbolicSparseColMatRef<'_, usize>,
        order: Option<&[usize]>,
    ) -> Result<Analysis, FaerError> {
        assert_eq!(
            pattern.nrows(),
            pattern.ncols(),
            "sparse LU: the pattern is not square"
        );
        Analysis::with(pattern, Merge::Lu, super::cost::front, order)
    }

    /// Analyses the pattern of an `m x n` matrix with `merge`'s fronts, each front's work
    /// `work(rows, cols, pattern)` (the QR's analysis is `sparse_qr::analyse`), its columns
    /// ordered by `order` (`order[k]` is the column eliminated `k`-th) or, without one, by
    /// COLAMD.
    ///
    /// # Panics
    /// When `order` is not a permutation of the columns.
    pub fn with(
        pattern: SymbolicSparseColMatRef<'_, usize>,
        merge: Merge,
        work: fn(usize, usize, usize) -> f64,
        order: Option<&[usize]>,
    ) -> Result<Analysis, FaerError> {
        let (m, n) = (pattern.nrows(), pattern.ncols());
        let nnz = pattern.compute_nnz();
        let (row_ptr, row_col_a, row_src) = by_rows(pattern);
        let mut analysis = Analysis {
            merge,
            m,
            n,
            fwd: Vec::new(),
            inv: Vec::new(),
            symbolic: None,
            forest: Forest::default(),
            rows: Vec::new(),
            assigned_ptr: vec![0],
            assigned: Vec::new(),
            row_ptr,
            row_col: Vec::new(),
            row_src,
            structural: None,
            empty: Vec::new(),
            max_rows: 0,
            max_cols: 0,
        };
        if n == 0 {
            analysis.empty = (0..m).collect();
            return Ok(analysis);
        }
        let req = StackReq::any_of(&[
            colamd::order_scratch::<usize>(m, n, nnz),
            qr::col_etree_scratch::<usize>(m, n),
            qr::postorder_scratch::<usize>(n),
            qr::column_counts_aat_scratch::<usize>(n, m),
            factorize_supernodal_symbolic_qr_scratch::<usize>(m, n),
        ]);
        let mut mem = MemBuffer::try_new(req).map_err(|_| FaerError::OutOfMemory)?;
        let stack = MemStack::new(&mut mem);
        let (fwd, mut inv) = match order {
            Some(order) => (order.to_vec(), crate::drive::ordering::inverse(order)),
            None => {
                let (mut fwd, mut inv) = (vec![0usize; n], vec![0usize; n]);
                colamd::order(&mut fwd, &mut inv, pattern, Default::default(), stack)?;
                (fwd, inv)
            }
        };
        // A postorder of the column tree, composed with the order: every subtree is then a
        // contiguous range of columns, and of supernodes.
        let mut etree = vec![0usize; n];
        let mut post = vec![0usize; n];
        {
            let perm = PermRef::new_checked(&fwd, &inv, n);
            let tree = qr::col_etree(pattern, Some(perm), &mut etree, stack);
            qr::postorder(&mut post, tree, stack);
        }
        let fwd: Vec<usize> = post.iter().map(|&k| fwd[k]).collect();
        for (k, &j) in fwd.iter().enumerate() {
            inv[j] = k;
        }
        let perm = PermRef::new_checked(&fwd, &inv, n);
        let tree = qr::col_etree(pattern, Some(perm), &mut etree, stack);
        let identity: Vec<usize> = (0..n).collect();
        let (mut col_counts, mut min_col) = (vec![0usize; n], vec![0usize; m]);
        // The counts read `A^T`: `A` by rows, its columns as `A`'s.
        let at = SymbolicSparseColMatRef::new_unsorted_checked(
            n,
            m,
            &analysis.row_ptr,
            None,
            &row_col_a,
        );
        qr::column_counts_ata(
            &mut col_counts,
            &mut min_col,
            at,
            Some(perm),
            tree,
            &identity,
            stack,
        );
        let symbolic = factorize_supernodal_symbolic_qr(
            pattern,
            Some(perm),
            min_col.clone(),
            tree,
            &col_counts,
            stack,
            Default::default(),
        )?;
        analysis.row_col = row_col_a.iter().map(|&j| inv[j]).collect();
        analysis.fwd = fwd;
        analysis.inv = inv;
        analysis.fronts(symbolic.R_adjoint(), &min_col, work);
        analysis.symbolic = Some(symbolic);
        Ok(analysis)
    }

    /// The fronts: rows assigned by first column, the tree, each front's rows and work.
    fn fronts(
        &mut self,
        r: &SymbolicSupernodalCholesky<usize>,
        min_col: &[usize],
        work_of: fn(usize, usize, usize) -> f64,
    ) {
        let (n, ns) = (self.n, r.n_supernodes());
        let mut owner = vec![0usize; n];
        for s in 0..ns {
            owner[r.supernode_begin()[s]..r.supernode_end()[s]].fill(s);
        }
        // A row without entries has no first column (faer marks it with -1): it can pivot
        // nothing, and the count below finds the column left without a row.
        let mut count = vec![0usize; ns + 1];
        for &j in min_col.iter().filter(|&&j| j < n) {
            count[owner[j] + 1] += 1;
        }
        for s in 0..ns {
            count[s + 1] += count[s];
        }
        self.empty = (0..self.m).filter(|&i| min_col[i] >= n).collect();
        let mut next = count.clone();
        let mut assigned = vec![0usize; count[ns]];
        for (i, &j) in min_col.iter().enumerate().filter(|(_, &j)| j < n) {
            assigned[next[owner[j]]] = i;
            next[owner[j]] += 1;
        }
        let parent: Vec<Option<usize>> = (0..ns)
            .map(|s| r.supernode(s).pattern().first().map(|&j| owner[j]))
            .collect();
        let mut rows: Vec<usize> = (0..ns).map(|s| count[s + 1] - count[s]).collect();
        let mut work = vec![0.0; ns];
        let mut cols = vec![0usize; ns];
        for s in 0..ns {
            let c = r.supernode_end()[s] - r.supernode_begin()[s];
            let p = r.supernode(s).pattern().len();
            cols[s] = c;
            if rows[s] < c && self.structural.is_none() {
                self.structural = Some(r.supernode_begin()[s] + rows[s]);
            }
            work[s] = work_of(rows[s], c, p);
            self.max_rows = self.max_rows.max(rows[s]);
            self.max_cols = self.max_cols.max(c + p);
            if let Some(q) = parent[s] {
                rows[q] += self.handed(rows[s], c, p);
            }
        }
        self.assigned_ptr = count;
        self.assigned = assigned;
        self.rows = rows;
        self.forest = Forest::new(parent, work, cols);
    }

    /// The rows a front of `r` rows, `c` pivot columns and `p` other columns hands its parent
    /// ([`Merge`]).
    fn handed(&self, r: usize, c: usize, p: usize) -> usize {
        match self.merge {
            Merge::Lu => r.saturating_sub(c),
            Merge::Qr => r.min(c + p).saturating_sub(c),
        }
    }

    /// Which rows the fronts hand on: the LU's or the QR's.
    pub fn merge(&self) -> Merge {
        self.merge
    }

    /// `A`'s rows.
    pub fn nrows(&self) -> usize {
        self.m
    }

    /// `A`'s columns.
    pub fn ncols(&self) -> usize {
        self.n
    }

    /// The rows front `s` hands its parent, below its pivot rows.
    pub fn handed_rows(&self, s: usize) -> usize {
        self.handed(self.rows[s], self.forest.cols(s), self.pattern(s).len())
    }

    /// The column ordering `Q` (`P A Q = L U`, `A Q = Q_h R`): column `k` is `A`'s column
    /// `fwd()[k]`.
    pub fn col_perm(&self) -> PermRef<'_, usize> {
        PermRef::new_checked(&self.fwd, &self.inv, self.n)
    }

    /// The fronts' tree, with each front's work and pivot columns.
    pub fn forest(&self) -> &Forest {
        &self.forest
    }

    /// How many fronts.
    pub fn fronts_len(&self) -> usize {
        self.forest.len()
    }

    /// Front `s`'s pivot columns, in the analysis's order.
    pub fn columns(&self, s: usize) -> std::ops::Range<usize> {
        let r = self.structure();
        r.supernode_begin()[s]..r.supernode_end()[s]
    }

    /// Front `s`'s other columns (the `R` pattern of its supernode), ascending, each after
    /// its pivot columns.
    pub fn pattern(&self, s: usize) -> &[usize] {
        self.structure().supernode(s).pattern()
    }

    /// Front `s`'s rows.
    pub fn rows(&self, s: usize) -> usize {
        self.rows[s]
    }

    /// The rows of `A` assigned to front `s`, ascending.
    pub fn assigned(&self, s: usize) -> &[usize] {
        &self.assigned[self.assigned_ptr[s]..self.assigned_ptr[s + 1]]
    }

    /// Row `i` of `A`: its columns in the analysis's order, and where each value is in `A`'s
    /// values.
    pub fn row(&self, i: usize) -> (&[usize], &[usize]) {
        let range = self.row_ptr[i]..self.row_ptr[i + 1];
        (&self.row_col[range.clone()], &self.row_src[range])
    }

    /// The first column (in the analysis's order) that no row can pivot, when the pattern is
    /// structurally singular (for the QR: structurally rank-deficient).
    pub fn structurally_singular(&self) -> Option<usize> {
        self.structural
    }

    /// The entries the factorization stores: the LU each front's `rows x cols` block of `L`
    /// and `cols x pattern` block of `U`, the QR each front whole (`rows x (cols + pattern)`:
    /// its reflectors and its rows of `R`).
    pub fn len_values(&self) -> usize {
        (0..self.fronts_len())
            .map(|s| {
                let (r, c, p) = (self.rows[s], self.forest.cols(s), self.pattern(s).len());
                match self.merge {
                    Merge::Lu => r * c + c * p,
                    Merge::Qr => r * (c + p),
                }
            })
            .sum()
    }

    /// The rows of `A` without entries, in no front (ascending).
    pub fn empty_rows(&self) -> &[usize] {
        &self.empty
    }

    /// The largest front's rows and columns.
    pub fn max_front(&self) -> (usize, usize) {
        (self.max_rows, self.max_cols)
    }

    fn structure(&self) -> &SymbolicSupernodalCholesky<usize> {
        self.symbolic
            .as_ref()
            .expect("an empty matrix has no front")
            .R_adjoint()
    }
}

/// `A` by rows: row pointers, the columns, and each entry's place in `A`'s values.
fn by_rows(a: SymbolicSparseColMatRef<'_, usize>) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let n = a.nrows();
    let mut ptr = vec![0usize; n + 1];
    for j in 0..a.ncols() {
        for &i in a.row_idx_of_col_raw(j) {
            ptr[i + 1] += 1;
        }
    }
    for i in 0..n {
        ptr[i + 1] += ptr[i];
    }
    let mut next = ptr.clone();
    let mut col = vec![0usize; ptr[n]];
    let mut src = vec![0usize; ptr[n]];
    for j in 0..a.ncols() {
        let start = a.col_ptr()[j];
        for (k, &i) in a.row_idx_of_col_raw(j).iter().enumerate() {
            col[next[i]] = j;
            src[next[i]] = start + k;
            next[i] += 1;
        }
    }
    (ptr, col, src)
}
