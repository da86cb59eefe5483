//! Bunch-Kaufman, `P A P^T = L B L^H` of a Hermitian matrix (lower; `L` unit lower
//! triangular, `B` block diagonal with blocks of order 1 and 2), blocked right-looking as
//! LAPACK's `hetrf`.
//!
//! Per panel of `block_size` columns, serially: each column is formed updated (`A[:, j] - L
//! W[j, :]^H` over the panel's columns so far, `W = L B` kept in a buffer), the partial
//! Bunch-Kaufman test (`alpha = (1 + sqrt 17) / 8`) picks a pivot of order 1 or 2 and swaps it
//! into place symmetrically, and the trailing diagonal is updated at once (the test reads it).
//! Then ONE section updates the strict lower triangle of the trailing matrix, `A22 -= L W^H`,
//! in column chunks of about equal cost (`lower_update.rs`, as `LDL^H`'s), and the
//! panel's swaps reach the columns left of it. A panel ends one column early when its last
//! pivot could be of order 2. The same algorithm runs serially when the gate (family
//! [`Family::Lblt`]) keeps the call on one thread, so every executor gives the same factors.
//! Design record: `docs/kernels.md`.

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::matmul::matmul as faer_matmul;
use faer::linalg::temp_mat_scratch;
use faer::linalg::temp_mat_zeroed;
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::math_utils::{
    abs, abs1, abs2, conj, from_f64, from_real, mul, mul_real, one, real, recip, sqrt, sub, zero,
};
use faer::traits::ComplexField;
use faer::{Accum, MatMut, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use super::lower_update::LowerUpdate;
use crate::exec::call::Call;
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;

/// Parameters of [`lblt_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct LbltParams {
    /// Panel width (at least 2); 0 picks the default, 32.
    pub block_size: usize,
    /// How the call and each panel's section decide to go parallel (family
    /// [`Family::Lblt`]); `None` leaves it to the executor's model.
    pub threshold: Option<ParThreshold>,
}

/// The default panel width. The panel's column updates are matrix-vector products whose
/// work grows with the width squared (`n^2 bs / 4` in all), against a trailing update that
/// runs faster in wider panels: on the AMD EPYC host 32 beat 24 and 48 at orders 512 and
/// 1024 (`docs/perf/runs/kernels-log.md`, "LDL^H and Bunch-Kaufman").
const PANEL: usize = 32;

/// The panel width for `params`.
fn block_size(params: LbltParams) -> usize {
    match params.block_size {
        0 => PANEL,
        b => b,
    }
    .max(2)
}

/// The scratch [`lblt_in_place`] needs for an `n x n` matrix: one panel's `W`.
pub fn lblt_in_place_scratch<T: ComplexField>(n: usize, params: LbltParams) -> StackReq {
    temp_mat_scratch::<T>(n, block_size(params).min(n.max(1)))
}

/// Factors the lower triangle of the Hermitian matrix `A` in place as `P A P^T = L B L^H`:
/// `L` strictly below the diagonal (its unit diagonal implicit), `B`'s diagonal on the
/// diagonal (real) and its subdiagonal in `subdiag` (`subdiag[i] = B[(i + 1, i)]`, nonzero
/// exactly at the first index of each block of order 2). `swaps` receives the symmetric row
/// and column interchanges in order: step `i` swapped `i` and `swaps[i]` (`P` is their
/// product, applied from `0` up). The strict upper triangle is not read; afterwards it holds
/// unspecified values. A singular matrix factors too (a zero in `B`).
///
/// # Panics
/// When `A` is not square, `subdiag` or `swaps` is not of its order, or the stack is smaller
/// than [`lblt_in_place_scratch`].
pub fn lblt_in_place<T>(
    mut a: MatMut<'_, T>,
    subdiag: &mut [T],
    swaps: &mut [usize],
    exec: &(impl Executor + ?Sized),
    params: LbltParams,
    stack: &mut MemStack,
) where
    T: ComplexField + Scalar + Send + Sync,
{
    let n = a.nrows();
    assert_eq!(a.ncols(), n, "lblt_in_place: A must be square");
    assert!(
        subdiag.len() == n && swaps.len() == n,
        "lblt_in_place: subdiag and swaps must have A's order"
    );
    if n == 0 {
        return;
    }
    let bs = block_size(params);
    let units = crate::cholesky::cost::llt(n);
    let call = if n > bs {
        let region = Region {
            site: "lblt",
            dims: [n, n, bs],
            units,
            family: Family::Lblt,
            sections: n.div_ceil(bs) - 1,
            scope: Scope::Call,
            call_units: units,
        };
        Some(gate::call::<T>(exec, region, params.threshold))
    } else {
        None
    };
    let w = call.as_ref().map_or(1, Call::width);
    if w > 1 {
        exec.warm(w);
    }
    let (mut buf, _) = temp_mat_zeroed::<T, _, _>(n, bs.min(n), stack);
    let mut buf = buf.as_mat_mut();
    let mut k = 0;
    while k < n {
        let m = n - k;
        let last = m <= bs;
        let done = {
            let ar = a.rb_mut().submatrix_mut(k, k, m, m);
            let panel = buf.rb_mut().subrows_mut(0, m);
            factor_panel(ar, panel, &mut subdiag[k..], &mut swaps[k..], k, last)
        };
        let t = m - done;
        if t > 0 {
            let region = Region {
                site: "lblt/panel",
                dims: [m, t, done],
                units: (t * t) as f64 * done as f64 / 2.0,
                family: Family::Lblt,
                sections: 1,
                scope: Scope::Section,
                call_units: units,
            };
            let wk = gate::width::<T>(exec, region, params.threshold).min(w);
            let (left, trailing) = a
                .rb_mut()
                .submatrix_mut(k + done, k, t, m)
                .split_at_col_mut(done);
            let wp = buf.rb().submatrix(done, 0, t, done);
            LowerUpdate::new(trailing, left.rb(), wp, true).run(exec, wk);
        }
        // The panel's interchanges reach the columns left of it (earlier panels' `L`), a
        // column at a time so each column is read once.
        for j in 0..k {
            let mut col = a.rb_mut().col_mut(j);
            for i in k..k + done {
                let p = swaps[i];
                if p != i {
                    let x = col[i].clone();
                    col[i] = col[p].clone();
                    col[p] = x;
                }
            }
        }
        k += done;
    }
}

/// Factors up to a panel of the trailing matrix `a` (`m x m`, at global offset `k0`): all of
/// it when `last`, else `w.ncols() - 1` columns or `w.ncols()` when the last pivot is of order
/// 2. `w` is the panel's `W` (`m x bs`). Returns the columns factored; the trailing matrix
/// after them still owes `L W^H` off its diagonal.
fn factor_panel<T: ComplexField>(
    mut a: MatMut<'_, T>,
    mut w: MatMut<'_, T>,
    subdiag: &mut [T],
    swaps: &mut [usize],
    k0: usize,
    last: bool,
) -> usize {
    let m = a.nrows();
    let kmax = if last { m } else { (w.ncols() - 1).min(m) };
    let alpha = mul_real(
        &(one::<T::Real>() + sqrt(&from_f64::<T::Real>(17.0))),
        &from_f64::<T::Real>(0.125),
    );
    let mut kk = 0;
    while kk < kmax {
        let (r, gamma_i) = updated_column(a.rb(), w.rb_mut(), kk, kk, kk);
        let mut piv = kk;
        let mut pair = None;
        if kk + 1 < m && gamma_i != zero::<T::Real>() {
            let akk = abs(&real(&a[(kk, kk)]));
            if akk < mul_real(&alpha, &gamma_i) {
                let (_, gamma_r) = updated_column(a.rb(), w.rb_mut(), kk, r, kk + 1);
                if akk * gamma_r.clone() >= alpha.clone() * gamma_i.clone() * gamma_i.clone() {
                    // Column kk is pivot enough against column r's growth.
                } else if abs(&real(&a[(r, r)])) >= alpha.clone() * gamma_r {
                    piv = r;
                    for i in kk..m {
                        w[(i, kk)] = w[(i, kk + 1)].clone();
                    }
                } else {
                    pair = Some(r);
                }
            }
        }
        match pair {
            None => {
                if piv != kk {
                    swap_hermitian(a.rb_mut(), w.rb_mut(), kk, piv);
                }
                eliminate_one(a.rb_mut(), w.rb(), kk, gamma_i == zero::<T::Real>());
                subdiag[kk] = zero();
                swaps[kk] = k0 + piv;
                kk += 1;
            }
            Some(r) => {
                if r != kk + 1 {
                    swap_hermitian(a.rb_mut(), w.rb_mut(), kk + 1, r);
                }
                subdiag[kk] = eliminate_two(a.rb_mut(), w.rb(), kk);
                subdiag[kk + 1] = zero();
                swaps[kk] = k0 + kk;
                swaps[kk + 1] = k0 + r;
                kk += 2;
            }
        }
    }
    kk
}

/// Forms column `src` of the trailing matrix as updated by the panel's `kk` columns so far,
/// rows `kk..m`, into `w[.., dst]`: `A[:, src] - L W[src, :]^H`, its diagonal entry the
/// (already updated) `A[src, src]`. Returns the largest off-diagonal entry's row and its size
/// (`|re| + |im|`, LAPACK's `cabs1`).
fn updated_column<T: ComplexField>(
    a: faer::MatRef<'_, T>,
    mut w: MatMut<'_, T>,
    kk: usize,
    src: usize,
    dst: usize,
) -> (usize, T::Real) {
    let m = a.nrows();
    for i in kk..m {
        // The lower triangle holds A: row `src` left of the diagonal, column `src` below.
        w[(i, dst)] = if i < src {
            conj(&a[(src, i)])
        } else {
            a[(i, src)].clone()
        };
    }
    if kk > 0 {
        let (wl, mut wr) = w.rb_mut().split_at_col_mut(kk);
        let target = wr.rb_mut().col_mut(dst - kk).subrows_mut(kk, m - kk);
        let lhs = a.submatrix(kk, 0, m - kk, kk);
        let rhs = wl.rb().row(src).adjoint();
        faer_matmul(
            target.as_mat_mut(),
            Accum::Add,
            lhs,
            rhs.as_mat(),
            -one::<T>(),
            Par::Seq,
        );
    }
    w[(src, dst)] = from_real(&real(&a[(src, src)]));
    let (mut best, mut at) = (zero::<T::Real>(), src);
    for i in kk..m {
        if i != src {
            let x = abs1(&w[(i, dst)]);
            if x > best {
                best = x;
                at = i;
            }
        }
    }
    (at, best)
}

/// The symmetric interchange of rows and columns `p < q` of the Hermitian `a` (lower
/// triangle), with rows `p` and `q` of the panel's `w`.
fn swap_hermitian<T: ComplexField>(mut a: MatMut<'_, T>, mut w: MatMut<'_, T>, p: usize, q: usize) {
    let m = a.nrows();
    let swap = |a: &mut MatMut<'_, T>, x: (usize, usize), y: (usize, usize)| {
        let t = a[x].clone();
        a[x] = a[y].clone();
        a[y] = t;
    };
    for j in 0..p {
        swap(&mut a, (p, j), (q, j));
    }
    for i in q + 1..m {
        swap(&mut a, (i, p), (i, q));
    }
    for j in p + 1..q {
        let t = conj(&a[(j, p)]);
        a[(j, p)] = conj(&a[(q, j)]);
        a[(q, j)] = t;
    }
    a[(q, p)] = conj(&a[(q, p)]);
    swap(&mut a, (p, p), (q, q));
    for j in 0..w.ncols() {
        let t = w[(p, j)].clone();
        w[(p, j)] = w[(q, j)].clone();
        w[(q, j)] = t;
    }
}

/// A pivot of order 1 at `kk`: `L[:, kk] = W[:, kk] / d` below it, and the trailing
/// diagonal updated at once. A column with nothing below it to eliminate (`empty`) keeps a
/// zero `L` column.
fn eliminate_one<T: ComplexField>(
    mut a: MatMut<'_, T>,
    w: faer::MatRef<'_, T>,
    kk: usize,
    empty: bool,
) {
    let m = a.nrows();
    let d = real(&w[(kk, kk)]);
    a[(kk, kk)] = from_real(&d);
    if empty || d == zero::<T::Real>() {
        for i in kk + 1..m {
            a[(i, kk)] = zero();
        }
        return;
    }
    let d_inv = recip(&d);
    for i in kk + 1..m {
        let l = mul_real(&w[(i, kk)], &d_inv);
        let diag = real(&a[(i, i)]) - d.clone() * abs2(&l);
        a[(i, i)] = from_real(&diag);
        a[(i, kk)] = l;
    }
}

/// A pivot of order 2 at `kk, kk + 1`: `[L0 L1] = [W0 W1] B^-1` below it with `B = [[a00,
/// conj(a10)], [a10, a11]]`, scaled by `|a10|` against overflow, and the trailing diagonal
/// updated at once. Returns `a10`.
fn eliminate_two<T: ComplexField>(mut a: MatMut<'_, T>, w: faer::MatRef<'_, T>, kk: usize) -> T {
    let m = a.nrows();
    let (a00, a11, a10) = (
        real(&w[(kk, kk)]),
        real(&w[(kk + 1, kk + 1)]),
        w[(kk + 1, kk)].clone(),
    );
    let size = abs(&a10);
    let inv = recip(&size);
    let (d00, d11) = (a00.clone() * inv.clone(), a11.clone() * inv.clone());
    let phase = mul_real(&a10, &inv);
    // B^-1 = [[a11, -conj(a10)], [-a10, a00]] / det, det = |a10|^2 (d00 d11 - 1).
    let t = recip(&(d00.clone() * d11.clone() - one::<T::Real>())) * inv;
    for i in kk + 2..m {
        let (x0, x1) = (w[(i, kk)].clone(), w[(i, kk + 1)].clone());
        let l0 = mul_real(&sub(&mul_real(&x0, &d11), &mul(&x1, &phase)), &t);
        let l1 = mul_real(&sub(&mul_real(&x1, &d00), &mul(&x0, &conj(&phase))), &t);
        let drop = real(&mul(&x0, &conj(&l0))) + real(&mul(&x1, &conj(&l1)));
        let diag = real(&a[(i, i)]) - drop;
        a[(i, i)] = from_real(&diag);
        a[(i, kk)] = l0;
        a[(i, kk + 1)] = l1;
    }
    a[(kk, kk)] = from_real(&a00);
    a[(kk + 1, kk + 1)] = from_real(&a11);
    a[(kk + 1, kk)] = zero();
    a10
}
