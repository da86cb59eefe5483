//! The trailing update of the symmetric factorizations, `C -= L W^H` on the lower triangle of
//! the trailing matrix: `LDL^H` and Bunch-Kaufman (`W = L D`, kept in a buffer) cut it into
//! column chunks of about equal cost, one per participant ([`LowerUpdate`]); the Cholesky's
//! claimed chunks (`W = L`) call [`update_columns`] alone.

use faer::linalg::matmul::matmul as faer_matmul;
use faer::linalg::matmul::triangular::{matmul as triangular_matmul, BlockStructure};
use faer::traits::math_utils::one;
use faer::traits::ComplexField;
use faer::{Accum, MatMut, MatRef, Par};

use crate::exec::call;
use crate::exec::par::Executor;
use crate::exec::tiles::Tiles;

/// One panel's update of the trailing lower triangle, shared by its participants.
pub(crate) struct LowerUpdate<'a, T> {
    c: Tiles<'a, T>,
    l: MatRef<'a, T>,
    w: MatRef<'a, T>,
    /// Whether the diagonal is left alone (Bunch-Kaufman updates it as it goes).
    strict: bool,
}

// SAFETY (`Sync` is derived from the parts): `Tiles` is `Sync` for `T: Send`, and the two
// views are read-only `MatRef`s, `Sync` for `T: Sync`.
impl<'a, T: ComplexField> LowerUpdate<'a, T> {
    /// The update `c -= l w^H` of the `t x t` trailing matrix `c` by the panel's `l` and `w`
    /// (each `t x b`, outside `c`); `strict` leaves `c`'s diagonal as it is.
    pub(crate) fn new(c: MatMut<'a, T>, l: MatRef<'a, T>, w: MatRef<'a, T>, strict: bool) -> Self {
        LowerUpdate {
            c: Tiles::new(c),
            l,
            w,
            strict,
        }
    }

    /// Runs the update on `width` participants of `exec` (serially when `width <= 1`).
    pub(crate) fn run(&self, exec: &(impl Executor + ?Sized), width: usize)
    where
        T: Send + Sync,
    {
        let t = self.c.nrows();
        if width <= 1 {
            self.columns(0, t);
        } else {
            call::chunks(exec, width, &|c, chunks| {
                self.columns(chunk_start(c, chunks, t), chunk_start(c + 1, chunks, t));
            });
        }
    }

    /// `C -= L[c0.., :] W[c0..c1, :]^H` on the lower triangle of columns `c0..c1`.
    fn columns(&self, c0: usize, c1: usize) {
        if c1 == c0 {
            return;
        }
        let t = self.c.nrows();
        // SAFETY: the chunks partition the trailing columns; a chunk's tile is its columns'
        // lower part, rows c0..t, which no other chunk touches; `l` and `w` lie outside the
        // trailing matrix (the panel and the buffer).
        let cols = unsafe { self.c.tile(c0, t, c0, c1) };
        update_columns(cols, self.l, self.w, c0, self.strict);
    }
}

/// `C -= L[c.., :] W[c..c + k, :]^H` on the lower triangle of `cols` (the rows from `c` of
/// the `k` trailing columns from `c`): a triangular product on their diagonal block (without
/// its diagonal when `strict`) and a GEMM below it. The Cholesky's update is the one with
/// `W = L`.
pub(crate) fn update_columns<T: ComplexField>(
    cols: MatMut<'_, T>,
    l: MatRef<'_, T>,
    w: MatRef<'_, T>,
    c: usize,
    strict: bool,
) {
    let k = cols.ncols();
    if k == 0 {
        return;
    }
    let lhs = l.subrows(c, l.nrows() - c);
    let rhs = w.subrows(c, k).adjoint();
    let (diag, below) = cols.split_at_row_mut(k);
    let (lhs_diag, lhs_below) = lhs.split_at_row(k);
    let minus = -one::<T>();
    let structure = if strict {
        BlockStructure::StrictTriangularLower
    } else {
        BlockStructure::TriangularLower
    };
    triangular_matmul(
        diag,
        structure,
        Accum::Add,
        lhs_diag,
        BlockStructure::Rectangular,
        rhs,
        BlockStructure::Rectangular,
        minus.clone(),
        Par::Seq,
    );
    faer_matmul(below, Accum::Add, lhs_below, rhs, minus, Par::Seq);
}

/// The first column of chunk `c` of `chunks` over a lower triangle of `t` columns, cut so
/// that each chunk updates about as many entries (column `j` has `t - j`).
pub(crate) fn chunk_start(c: usize, chunks: usize, t: usize) -> usize {
    if c >= chunks {
        return t;
    }
    let frac = c as f64 / chunks as f64;
    let x = t as f64 * (1.0 - (1.0 - frac).sqrt());
    (x.round() as usize).min(t)
}
