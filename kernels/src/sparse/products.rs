//! Sparse times dense: `C = alpha A B` (or `C += alpha A B`) with `A` sparse (CSC) and `B`
//! dense. The columns of `B` and `C` are split among the participants, and each runs faer's
//! serial product on its chunk: every column of `B` costs `nnz(A)` multiply-adds, so equal
//! column counts are equal work, and no two chunks write the same column of `C`.

use faer::reborrow::Reborrow;
use faer::sparse::linalg::matmul::{
    sparse_dense_matmul as faer_sparse_dense, sparse_sparse_matmul_numeric as faer_numeric,
    sparse_sparse_matmul_numeric_scratch as faer_numeric_scratch,
    sparse_sparse_matmul_symbolic as faer_symbolic, SparseMatMulInfo,
};
use faer::sparse::{FaerError, SparseColMat, SparseColMatRef};
use faer::traits::math_utils::zero;
use faer::traits::{ComplexField, Conjugate, Index, SignedIndex};
use faer::{Accum, MatMut, MatRef, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::exec::call;
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::{part_start, Executor};
use crate::exec::tiles::Tiles;

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
    let units = super::cost::product(a.compute_nnz(), n);
    let region = product_region("sparse_dense", [m, n, k], units);
    let call = gate::call::<T>(exec, region, params.threshold);
    let w = call.width().min(n);
    if w <= 1 {
        faer_sparse_dense(c, accum, a, b, alpha, Par::Seq);
        return;
    }
    let tiles = Tiles::new(c);
    call::chunks(exec, w, &|i: usize, chunks: usize| {
        let w = chunks.min(n);
        if i >= w {
            return;
        }
        let (c0, c1) = (part_start(i, n, w), part_start(i + 1, n, w));
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
type Slot<I> = std::sync::Mutex<
    Option<Result<(faer::sparse::SymbolicSparseColMat<I>, SparseMatMulInfo), FaerError>>,
>;

/// `alpha A B` with `A` and `B` sparse (CSC), on `exec`, as a new sparse matrix with sorted
/// row indices. One region of as many multiply-adds as the product takes (each stored entry
/// `B[k, j]` meets the `nnz(A[:, k])` entries of its column of `A`), family
/// [`Family::SparseProduct`]. The columns of `B` are cut into chunks of about equal multiply-adds;
/// each participant runs faer's serial symbolic product on its chunks; then the result's arrays
/// are allocated once and each chunk copies its row indices into its range and runs faer's
/// serial numeric product straight into its range of values, so the product is exactly
/// faer's, with no second copy of the values.
///
/// Errors: `FaerError::IndexOverflow` when the product has more entries than `I` can index
/// (`I::Signed::MAX`, as faer's serial product), `FaerError::OutOfMemory` when its arrays do
/// not fit.
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
    let call = gate::call::<T>(exec, region, params.threshold);
    let w = call.width().min(n);
    if w <= 1 {
        return faer::sparse::linalg::matmul::sparse_sparse_matmul(a, b, alpha, Par::Seq);
    }
    // Chunk c of `chunks` holds the columns whose multiply-adds start in its share of the total.
    let bounds = |c: usize, chunks: usize| -> (usize, usize) {
        let at = |c: usize| prefix.partition_point(|&p| p < units * c as f64 / chunks as f64);
        let start = if c == 0 { 0 } else { at(c).min(n) };
        let end = if c + 1 == chunks { n } else { at(c + 1).min(n) };
        (start, end.max(start))
    };
    let chunks = exec.chunks(w);
    // Pass 1: each chunk's structure (faer's symbolic product of A and its columns of B).
    let parts: Vec<Slot<I>> = (0..chunks).map(|_| std::sync::Mutex::new(None)).collect();
    call::chunks_of(exec, w, chunks, &|c: usize, chunks: usize| {
        let (c0, c1) = bounds(c, chunks);
        let r = faer_symbolic(a.symbolic(), columns(b, c0, c1).symbolic());
        *parts[c].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
    });
    let parts = parts
        .into_iter()
        .map(|p| {
            let p = p.into_inner().unwrap_or_else(|e| e.into_inner());
            p.expect("every chunk ran")
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Pass 2: the row indices copied and the values computed straight into the result.
    assemble(m, n, &parts, exec, w, |c, dst| {
        let (c0, c1) = bounds(c, chunks);
        let mut buf =
            faer::dyn_stack::MemBuffer::new(faer_numeric_scratch::<I, T>(dst.symbolic(), Par::Seq));
        let stack = faer::dyn_stack::MemStack::new(&mut buf);
        let info = &parts[c].1;
        faer_numeric(
            dst,
            Accum::Add,
            a,
            columns(b, c0, c1),
            alpha.clone(),
            info,
            Par::Seq,
            stack,
        );
    })
}

/// Columns `c0..c1` of `b`, as a matrix of their own (sharing `b`'s arrays).
fn columns<'a, I: Index, T>(
    b: SparseColMatRef<'a, I, T>,
    c0: usize,
    c1: usize,
) -> SparseColMatRef<'a, I, T> {
    let sym = b.symbolic();
    let cols = faer::sparse::SymbolicSparseColMatRef::new_unsorted_checked(
        b.nrows(),
        c1 - c0,
        &sym.col_ptr()[c0..=c1],
        sym.col_nnz().map(|nnz| &nnz[c0..c1]),
        sym.row_idx(),
    );
    SparseColMatRef::new(cols, b.val())
}

/// Builds the product from its chunks' structures: one allocation of the final row indices and
/// values; then each chunk, on the participants, copies its row indices into its range,
/// zeroes its values and has `numeric(c, dst)` add its product into them (faer's numeric
/// product, the same arithmetic as its serial call, so the result is bitwise faer's).
fn assemble<I, T>(
    m: usize,
    n: usize,
    parts: &[(faer::sparse::SymbolicSparseColMat<I>, SparseMatMulInfo)],
    exec: &(impl Executor + ?Sized),
    w: usize,
    numeric: impl Fn(usize, faer::sparse::SparseColMatMut<'_, I, T>) + Sync,
) -> Result<SparseColMat<I, T>, FaerError>
where
    I: Index,
    T: ComplexField + Send + Sync,
{
    let lens: Vec<usize> = parts.iter().map(|p| p.0.row_idx().len()).collect();
    let (col_ptr, total) = column_pointers::<I>(
        n,
        parts.iter().flat_map(|(p, _)| {
            let ptr = p.col_ptr();
            (0..p.ncols()).map(move |j| ptr[j + 1].zx() - ptr[j].zx())
        }),
    )?;
    let mut row_idx: Vec<I> = Vec::new();
    let mut val: Vec<T> = Vec::new();
    row_idx
        .try_reserve_exact(total)
        .map_err(|_| FaerError::OutOfMemory)?;
    val.try_reserve_exact(total)
        .map_err(|_| FaerError::OutOfMemory)?;
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
        call::chunks_of(exec, w, dests.len(), &|c: usize, _chunks: usize| {
            let Some((r, v)) = dests[c].lock().unwrap_or_else(|e| e.into_inner()).take() else {
                return;
            };
            let sym = parts[c].0.rb();
            for (dst, src) in r.iter_mut().zip(sym.row_idx()) {
                dst.write(*src);
            }
            for x in v.iter_mut() {
                x.write(zero());
            }
            // SAFETY: every element of `v` was initialized just above.
            let v = unsafe { &mut *(v as *mut [std::mem::MaybeUninit<T>] as *mut [T]) };
            numeric(c, faer::sparse::SparseColMatMut::new(sym, v));
            done.fetch_add(1, std::sync::atomic::Ordering::Release);
        });
        // Checked, not assumed: the slots are read as initialized below.
        assert_eq!(done.load(std::sync::atomic::Ordering::Acquire), parts.len());
    }
    // SAFETY: the ranges of `lens` partition 0..total, and each of the `parts.len()` chunks
    // (the assert above counted them all) wrote every slot of its range: its row indices, as
    // many as its structure holds, and its values (zeroed, then added to).
    unsafe {
        row_idx.set_len(total);
        val.set_len(total);
    }
    // SAFETY: each chunk's structure is faer's symbolic product, a valid m-row structure with
    // sorted, distinct row indices; `column_pointers` appended its columns in order, advancing
    // by each column's entries from 0 with every pointer at most `I::Signed::MAX` (it refused
    // a larger total), so no pointer wrapped: `col_ptr` has n + 1 non-decreasing entries ending
    // at `total == row_idx.len()` (the chunks' columns are the n columns of the product, and
    // their entries are the `lens` summed into `total`), and every column's rows are in
    // bounds, sorted and distinct.
    let symbolic =
        unsafe { faer::sparse::SymbolicSparseColMat::new_unchecked(m, n, col_ptr, None, row_idx) };
    Ok(SparseColMat::new(symbolic, val))
}

/// The product's column pointers, from its columns' entry counts in order, and the total
/// entry count. Errors: `IndexOverflow` when the total passes `I::Signed::MAX` (faer's own
/// limit for a structure: its symbolic product refuses the same), checked before anything is
/// allocated so that no pointer wraps; `OutOfMemory` when the pointers do not fit.
pub(crate) fn column_pointers<I: Index>(
    n: usize,
    col_lens: impl Iterator<Item = usize> + Clone,
) -> Result<(Vec<I>, usize), FaerError> {
    let max = <I::Signed as SignedIndex>::MAX.zx();
    let total = col_lens
        .clone()
        .try_fold(0usize, |at, len| at.checked_add(len).filter(|&t| t <= max))
        .ok_or(FaerError::IndexOverflow)?;
    let mut col_ptr = Vec::new();
    col_ptr
        .try_reserve_exact(n + 1)
        .map_err(|_| FaerError::OutOfMemory)?;
    col_ptr.push(I::truncate(0));
    let mut at = 0usize;
    for len in col_lens {
        at += len;
        // Exact: `at <= total <= I::Signed::MAX`, which `I` holds.
        col_ptr.push(I::truncate(at));
    }
    Ok((col_ptr, total))
}

#[cfg(test)]
mod tests {
    use super::column_pointers;
    use faer::sparse::FaerError;

    const LIMIT: usize = i32::MAX as usize; // u32's `Signed::MAX`

    #[test]
    fn pointers_advance_by_each_column() {
        let (ptr, total) = column_pointers::<u32>(4, [2usize, 0, 3, 1].into_iter()).unwrap();
        assert_eq!(ptr, [0, 2, 2, 5, 6]);
        assert_eq!(total, 6);
    }

    #[test]
    fn a_total_at_the_index_limit_fits() {
        let half = LIMIT / 2;
        let (ptr, total) = column_pointers::<u32>(2, [half, LIMIT - half].into_iter()).unwrap();
        assert_eq!(total, LIMIT);
        assert_eq!(ptr, [0, half as u32, LIMIT as u32]);
    }

    #[test]
    fn a_total_past_the_index_limit_is_refused() {
        // 2^31 entries in u32 indices: the old concatenation wrapped the last pointer to
        // 2^31 as u32 (a valid-looking u32, past faer's signed limit) with no error.
        let r = column_pointers::<u32>(3, [1usize << 30, 1 << 30, 0].into_iter());
        assert_eq!(r.unwrap_err(), FaerError::IndexOverflow);
        // Far past it: 3 * 2^31 would wrap a u32 to 2^31.
        let r = column_pointers::<u32>(3, [1usize << 31; 3].into_iter());
        assert_eq!(r.unwrap_err(), FaerError::IndexOverflow);
        // A usize sum that itself overflows.
        let r = column_pointers::<usize>(2, [usize::MAX, 2].into_iter());
        assert_eq!(r.unwrap_err(), FaerError::IndexOverflow);
    }
}
