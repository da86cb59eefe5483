//! GEMM: `C = alpha A B` or `C += alpha A B`, tiles of C across the participants of one
//! section, each tile a serial faer `matmul`.
//!
//! C is split by rows when it has at least one row per participant (measured on 2 cores: rows
//! reach 2.0x at n >= 512, columns 1.65 to 1.74x), else by columns.

pub mod cost;

use faer::linalg::matmul::matmul as faer_matmul;
use faer::traits::ComplexField;
use faer::traits::Conjugate;
use faer::{Accum, MatMut, MatRef, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::exec::call;
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::{part_start, Executor};
use crate::exec::tiles::Tiles;

/// Parameters of [`matmul`].
#[derive(Debug, Clone, Copy, Default)]
pub struct GemmParams {
    /// How the one region decides to go parallel; `None` leaves it to the executor's model
    /// (the pool's threshold for [`Family::Gemm`], else the rule).
    pub threshold: Option<ParThreshold>,
}

/// The scratch [`matmul`] needs: none (faer's serial GEMM needs none).
pub fn matmul_scratch() -> faer::dyn_stack::StackReq {
    faer::dyn_stack::StackReq::EMPTY
}

/// `C = alpha A B` (`Accum::Replace`) or `C += alpha A B` (`Accum::Add`), on `exec`. `A` and
/// `B` may be conjugated views (`a.conjugate()`, `a.adjoint()`), as in faer's `matmul`.
///
/// # Panics
/// When the shapes do not agree (`teamalg::linalg::matmul` checks them and returns an error).
pub fn matmul<T, A, B>(
    c: MatMut<'_, T>,
    accum: Accum,
    a: MatRef<'_, A>,
    b: MatRef<'_, B>,
    alpha: T,
    exec: &(impl Executor + ?Sized),
    params: GemmParams,
) where
    T: ComplexField + Scalar + Send + Sync,
    A: Conjugate<Canonical = T> + Sync,
    B: Conjugate<Canonical = T> + Sync,
{
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    assert!(
        a.nrows() == m && b.nrows() == k && b.ncols() == n,
        "matmul: C is {m}x{n}, A is {}x{}, B is {}x{}",
        a.nrows(),
        a.ncols(),
        b.nrows(),
        b.ncols()
    );
    let region = Region {
        site: "gemm",
        dims: [m, n, k],
        units: cost::gemm(m, n, k),
        family: Family::Gemm,
        sections: 1,
        scope: Scope::Call,
        call_units: cost::gemm(m, n, k),
    };
    let by_rows = m >= n.min(exec.width());
    let call = gate::call::<T>(exec, region, params.threshold);
    let w = call.width().min(if by_rows { m } else { n });
    if w <= 1 || k == 0 {
        faer_matmul(c, accum, a, b, alpha, Par::Seq);
        return;
    }
    let tiles = Tiles::new(c);
    // Chunks of C claimed by the participants (one each on a team; more on a plain token,
    // whose helpers may fall behind on a busy host), never thinner than a row or column.
    call::chunks(exec, w, &|i: usize, chunks: usize| {
        let w = chunks.min(if by_rows { m } else { n });
        if i >= w {
            return;
        }
        if by_rows {
            let (r0, r1) = (i * m / w, (i + 1) * m / w);
            // SAFETY: chunk i owns rows r0..r1; the ranges partition 0..m.
            let ci = unsafe { tiles.tile(r0, r1, 0, n) };
            faer_matmul(
                ci,
                accum,
                a.subrows(r0, r1 - r0),
                b,
                alpha.clone(),
                Par::Seq,
            );
        } else {
            let (c0, c1) = (part_start(i, n, w), part_start(i + 1, n, w));
            // SAFETY: chunk i owns columns c0..c1; the ranges partition 0..n.
            let ci = unsafe { tiles.tile(0, m, c0, c1) };
            faer_matmul(
                ci,
                accum,
                a,
                b.subcols(c0, c1 - c0),
                alpha.clone(),
                Par::Seq,
            );
        }
    });
}
