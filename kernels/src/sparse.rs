//! Sparse times dense: `C = alpha A B` (or `C += alpha A B`) with `A` sparse (CSC) and `B`
//! dense. The columns of `B` and `C` are split among the participants, and each runs faer's
//! serial product on its chunk: every column of `B` costs `nnz(A)` multiply-adds, so equal
//! column counts are equal work, and no two chunks write the same column of `C`.

use faer::sparse::linalg::matmul::sparse_dense_matmul as faer_sparse_dense;
use faer::sparse::SparseColMatRef;
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
    let region = Region {
        site: "sparse_dense",
        dims: [m, n, k],
        units,
        family: Family::SparseProduct,
        sections: 1,
        scope: Scope::Call,
        call_units: units,
    };
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
