//! The eigenvectors of an upper triangular Schur form `T`: column `k` of `X` solves
//! `(T - t_kk I) x = 0` with `x_k = 1` and `x_i = 0` below, by back substitution (LAPACK's
//! `ztrevc`, a near-zero pivot raised to `max(ulp |t_kk|, safe_min n / ulp)`). The columns
//! are independent: chunks of them, of about equal work, go to the team.

use faer::MatMut;
use faer::MatRef;
use teamalg_gates::{Family, ParThreshold};

use super::scalar::Cplx;
use super::small::tolerances;
use crate::exec::call;
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;
use crate::exec::tiles::Tiles;
use crate::spectral::fused::column;
use crate::spectral::scalar::Real;

/// Chunks of columns per participant: the later columns cost more, and a claimed chunk
/// evens out what a static split would not.
const CHUNKS_PER: usize = 4;

/// Writes into the column-major `x` (`n x n`) the eigenvectors of the upper triangular `t`
/// as the columns of an upper triangular matrix with a unit diagonal.
///
/// # Panics
/// When the shapes differ or `x` is not column-major.
pub fn triangular_eigenvectors<C: Cplx>(
    t: MatRef<'_, C>,
    x: MatMut<'_, C>,
    exec: &(impl Executor + ?Sized),
    threshold: Option<ParThreshold>,
) {
    let n = t.nrows();
    assert!(t.ncols() == n && x.nrows() == n && x.ncols() == n && x.row_stride() == 1);
    if n == 0 {
        return;
    }
    let units = (n * n * n) as f64 / 6.0;
    let region = Region {
        site: "schur/vectors",
        dims: [n, n, 0],
        units,
        family: Family::TriangularSolve,
        sections: 1,
        scope: Scope::Call,
        call_units: units,
    };
    let call = gate::call::<C>(exec, region, threshold);
    let w = call.width();
    let (ulp, small) = tolerances::<C>(n);
    let tiles = Tiles::new(x);
    let chunks = if w <= 1 { 1 } else { w * CHUNKS_PER };
    // Column k costs about k^2: chunk c ends where the cumulative cost reaches c / chunks.
    let bound = |c: usize| -> usize {
        if c >= chunks {
            n
        } else {
            ((c as f64 / chunks as f64).cbrt() * n as f64) as usize
        }
    };
    let solve = |c: usize, _: usize| {
        let (k0, k1) = (bound(c), bound(c + 1));
        if k1 <= k0 {
            return;
        }
        // SAFETY: chunk c owns columns k0..k1 of x; the bounds partition 0..n.
        let mut xc = unsafe { tiles.tile(0, n, k0, k1) };
        for k in k0..k1 {
            let col = column(xc.as_mut(), k - k0);
            let lambda = t[(k, k)];
            let smin = {
                let s = ulp * lambda.abs1();
                if s > small {
                    s
                } else {
                    small
                }
            };
            for (i, xi) in col.iter_mut().enumerate() {
                *xi = if i < k { -t[(i, k)] } else { C::ZERO };
            }
            col[k] = C::ONE;
            for i in (0..k).rev() {
                let mut d = t[(i, i)] - lambda;
                if d.abs1() < smin {
                    d = C::new(smin, <C::R as Real>::ZERO);
                }
                let xi = col[i].quot(d);
                col[i] = xi;
                if i > 0 {
                    let ti = t.col(i).subrows(0, i);
                    match ti.try_as_col_major() {
                        Some(ti) => C::axpy(&mut col[..i], -xi, ti.as_slice()),
                        None => {
                            for (xr, tr) in col[..i].iter_mut().zip(ti.iter()) {
                                *xr -= xi * *tr;
                            }
                        }
                    }
                }
            }
        }
    };
    call::chunks_of(exec, w, chunks, &solve);
}
