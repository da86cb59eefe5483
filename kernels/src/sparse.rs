//! Sparse times dense: `C = alpha A B` (or `C += alpha A B`) with `A` sparse (CSC) and `B`
//! dense. The columns of `B` and `C` are split among the participants, and each runs faer's
//! serial product on its chunk: every column of `B` costs `nnz(A)` multiply-adds, so equal
//! column counts are equal work, and no two chunks write the same column of `C`.

use faer::sparse::linalg::matmul::sparse_dense_matmul as faer_sparse_dense;
use faer::sparse::{FaerError, SparseColMat, SparseColMatRef};
use faer::traits::{ComplexField, Conjugate, Index};
use faer::{Accum, MatMut, MatRef, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::gate::{self, Region, Scope};
use crate::par::Executor;
use crate::tiles::Tiles;

/// How [`sparse_dense_matmul`] decides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SparseParams {
    /// How the region decides to go parallel; `None` leaves it to the executor's model (the
    /// pool's threshold for [`Family::SparseProduct`], else the rule).
    pub threshold: Option<ParThreshold>,
}

/// `C = alpha A B` (`Accum::Replace`) or `C += alpha A B` (`Accum::Add`) with `A` sparse, on
/// `exec`: one region of `nnz(A) * ncols(B)` multiply-adds, family
/// [`Family::SparseProduct`], split by columns of `B`. `A` and `B` may be conjugated.
///
/// # Panics
/// When the shapes do not agree (`teamalg::linalg::sparse_dense_matmul` checks them and
/// returns an error).
pub fn sparse_dense_matmul<I, T, A, B>(
    c: MatMut<'_, T>,
    accum: Accum,
    a: SparseColMatRef<'_, I, A>,
    b: MatRef<'_, B>,
    alpha: T,
    exec: &(impl Executor + ?Sized),
    params: SparseParams,
) where
    I: Index,
    T: ComplexField + Scalar + Send + Sync,
    A: Conjugate<Canonical = T>,
    B: Conjugate<Canonical = T>,
{
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    assert!(
        a.nrows() == m && b.nrows() == k && b.ncols() == n,
        "sparse_dense_matmul: C is {m}x{n}, A is {}x{}, B is {}x{}",
        a.nrows(),
        a.ncols(),
        b.nrows(),
        b.ncols()
    );
    let units = a.compute_nnz() as f64 * n as f64;
    let region = product_region("sparse_dense", [m, n, k], units);
    let w = gate::width::<T>(exec, region, params.threshold).min(n);
    if w <= 1 {
        faer_sparse_dense(c, accum, a, b, alpha, Par::Seq);
        return;
    }
    let tiles = Tiles::new(c);
    exec.run_chunks(w, &|i: usize, chunks: usize| {
        let w = chunks.min(n);
        if i >= w {
            return;
        }
        let (c0, c1) = (i * n / w, (i + 1) * n / w);
        // SAFETY: chunk i owns columns c0..c1 of C; the ranges partition 0..n.
        let ci = unsafe { tiles.tile(0, m, c0, c1) };
        faer_sparse_dense(
            ci,
            accum,
            a,
            b.subcols(c0, c1 - c0),
            alpha.clone(),
            Par::Seq,
        );
    });
}

/// A sparse product's one region: a whole call of `units` multiply-adds, one section.
fn product_region(site: &'static str, dims: [usize; 3], units: f64) -> Region {
    Region {
        site,
        dims,
        units,
        family: Family::SparseProduct,
        sections: 1,
        scope: Scope::Call,
        call_units: units,
    }
}

/// Where a chunk's product is left for the join.
type Slot<I, T> = std::sync::Mutex<Option<Result<SparseColMat<I, T>, FaerError>>>;

/// `alpha A B` with `A` and `B` sparse (CSC), on `exec`, as a new sparse matrix with sorted
/// row indices. One region of as many multiply-adds as the product takes (each stored entry
/// `B[k, j]` meets the `nnz(A[:, k])` entries of its column of `A`), family
/// [`Family::SparseProduct`]. The columns of `B` are cut into chunks of about equal multiply-adds;
/// each participant runs faer's serial product (symbolic, then numeric) on its chunks, and the
/// results are joined column after column, so the product is exactly faer's.
///
/// Errors: faer's, when memory runs out.
///
/// # Panics
/// When `A`'s columns are not `B`'s rows.
pub fn sparse_sparse_matmul<I, T, A, B>(
    a: SparseColMatRef<'_, I, A>,
    b: SparseColMatRef<'_, I, B>,
    alpha: T,
    exec: &(impl Executor + ?Sized),
    params: SparseParams,
) -> Result<faer::sparse::SparseColMat<I, T>, faer::sparse::FaerError>
where
    I: Index,
    T: ComplexField + Scalar + Send + Sync,
    A: Conjugate<Canonical = T>,
    B: Conjugate<Canonical = T>,
{
    use faer::sparse::linalg::matmul::sparse_sparse_matmul as faer_sparse_sparse;
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    assert!(
        b.nrows() == k,
        "sparse_sparse_matmul: A is {m}x{k}, B is {}x{n}",
        b.nrows()
    );
    // Multiply-adds up to the end of each column of B.
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0.0f64);
    for j in 0..n {
        let col: f64 = b
            .row_idx_of_col(j)
            .map(|r| a.row_idx_of_col_raw(r).len() as f64)
            .sum();
        prefix.push(prefix[j] + col);
    }
    let units = prefix[n];
    let region = product_region("sparse_sparse", [m, n, k], units);
    let w = gate::width::<T>(exec, region, params.threshold).min(n);
    if w <= 1 {
        return faer_sparse_sparse(a, b, alpha, Par::Seq);
    }
    // Chunk c of `chunks` holds the columns whose multiply-adds start in its share of the total.
    let bounds = |c: usize, chunks: usize| -> (usize, usize) {
        let at = |c: usize| prefix.partition_point(|&p| p < units * c as f64 / chunks as f64);
        let start = if c == 0 { 0 } else { at(c).min(n) };
        let end = if c + 1 == chunks { n } else { at(c + 1).min(n) };
        (start, end.max(start))
    };
    let chunks = exec.chunks(w);
    let parts: Vec<Slot<I, T>> = (0..chunks).map(|_| std::sync::Mutex::new(None)).collect();
    exec.run_chunks(w, &|c: usize, chunks: usize| {
        let (c0, c1) = bounds(c, chunks);
        let sym = b.symbolic();
        let cols = faer::sparse::SymbolicSparseColMatRef::new_unsorted_checked(
            k,
            c1 - c0,
            &sym.col_ptr()[c0..=c1],
            sym.col_nnz().map(|nnz| &nnz[c0..c1]),
            sym.row_idx(),
        );
        let chunk = SparseColMatRef::new(cols, b.val());
        let r = faer_sparse_sparse(a, chunk, alpha.clone(), Par::Seq);
        *parts[c].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
    });
    let parts = parts
        .into_iter()
        .map(|p| {
            let p = p.into_inner().unwrap_or_else(|e| e.into_inner());
            p.expect("every chunk ran")
        })
        .collect::<Result<Vec<_>, _>>()?;
    join(m, n, &parts, exec, w)
}

/// Joins the chunks' products column after column into one matrix. The copying runs on the
/// participants, each into its own range of the result (a serial join cost more than the
/// chunks' products: it copies and faults in the whole result on one thread).
fn join<I, T>(
    m: usize,
    n: usize,
    parts: &[faer::sparse::SparseColMat<I, T>],
    exec: &(impl Executor + ?Sized),
    w: usize,
) -> Result<faer::sparse::SparseColMat<I, T>, faer::sparse::FaerError>
where
    I: Index,
    T: ComplexField + Send + Sync,
{
    let nnz = |p: &faer::sparse::SparseColMat<I, T>| -> usize {
        (0..p.ncols())
            .map(|j| p.as_ref().row_idx_of_col_raw(j).len())
            .sum()
    };
    let lens: Vec<usize> = parts.iter().map(nnz).collect();
    let total: usize = lens.iter().sum();
    let mut col_ptr = Vec::with_capacity(n + 1);
    col_ptr.push(I::truncate(0));
    let mut at = 0usize;
    for p in parts {
        for j in 0..p.ncols() {
            at += p.as_ref().row_idx_of_col_raw(j).len();
            col_ptr.push(I::truncate(at));
        }
    }
    let mut row_idx: Vec<I> = Vec::with_capacity(total);
    let mut val: Vec<T> = Vec::with_capacity(total);
    {
        let (mut ri, mut vi) = (
            &mut row_idx.spare_capacity_mut()[..total],
            &mut val.spare_capacity_mut()[..total],
        );
        let mut dests = Vec::with_capacity(parts.len());
        for &len in &lens {
            let (r, r_rest) = std::mem::take(&mut ri).split_at_mut(len);
            let (v, v_rest) = std::mem::take(&mut vi).split_at_mut(len);
            dests.push(std::sync::Mutex::new(Some((r, v))));
            (ri, vi) = (r_rest, v_rest);
        }
        let done = std::sync::atomic::AtomicUsize::new(0);
        exec.run_chunks(w, &|c: usize, _chunks: usize| {
            let Some((r, v)) = dests[c].lock().unwrap_or_else(|e| e.into_inner()).take() else {
                return;
            };
            let p = parts[c].as_ref();
            let (mut r, mut v) = (r.iter_mut(), v.iter_mut());
            for j in 0..p.ncols() {
                for (x, y) in p.row_idx_of_col_raw(j).iter().zip(p.val_of_col(j)) {
                    r.next().expect("sized from the same columns").write(*x);
                    v.next()
                        .expect("sized from the same columns")
                        .write(y.clone());
                }
            }
            done.fetch_add(1, std::sync::atomic::Ordering::Release);
        });
        // Checked, not assumed: the slots are read as initialized below.
        assert_eq!(done.load(std::sync::atomic::Ordering::Acquire), parts.len());
    }
    // SAFETY: the ranges of `lens` partition 0..total, and each of the `parts.len()` chunks
    // (the assert above counted them all) wrote every slot of its range, as many as its columns
    // hold; so the first `total` elements of both vectors are initialized.
    unsafe {
        row_idx.set_len(total);
        val.set_len(total);
    }
    // SAFETY: each chunk is a valid m-row matrix with sorted row indices (faer's product
    // returns one), and its columns were appended in order with `col_ptr` advancing by each
    // column's entries from 0: so `col_ptr` has n + 1 non-decreasing entries ending at
    // `row_idx.len()`, and every column's rows are in bounds, sorted and distinct.
    let symbolic =
        unsafe { faer::sparse::SymbolicSparseColMat::new_unchecked(m, n, col_ptr, None, row_idx) };
    Ok(faer::sparse::SparseColMat::new(symbolic, val))
}
