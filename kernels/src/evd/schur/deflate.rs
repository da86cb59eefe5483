//! Aggressive early deflation (Braman, Byers and Mathias; LAPACK's `zlaqr3`): the Schur form
//! of a window at the bottom of the active block, the eigenvalues whose spike entry is
//! negligible deflated, the others moved up and their part returned to Hessenberg form. What
//! does not deflate gives the next sweep its shifts.

use faer::{Mat, MatMut};

use super::far::{self, Team};
use super::scalar::Cplx;
use super::small::{lahqr, reflector, tolerances, Reach};
use crate::exec::par::Executor;
use crate::spectral::scalar::Real;

/// What a deflation window found.
#[derive(Debug)]
pub(crate) struct Deflation<C> {
    /// Eigenvalues deflated at the bottom.
    pub(crate) deflated: usize,
    /// The undeflated eigenvalues of the window, bottom last: the next sweep's shifts.
    pub(crate) shifts: Vec<C>,
}

/// Deflates what it can from the window of `nw` rows at the bottom of `ktop..=kbot`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn deflate<C: Cplx, E: Executor + ?Sized>(
    h: &mut MatMut<'_, C>,
    z: Option<&mut MatMut<'_, C>>,
    ktop: usize,
    kbot: usize,
    nw: usize,
    reach: Reach,
    team: &Team<'_, E>,
) -> Deflation<C> {
    let n = h.nrows();
    let nw = nw.min(kbot + 1 - ktop);
    let kwtop = kbot + 1 - nw;
    let s = if kwtop == ktop {
        C::ZERO
    } else {
        h[(kwtop, kwtop - 1)]
    };
    let mut t = Mat::<C>::from_fn(nw, nw, |i, j| {
        if i <= j + 1 {
            h[(kwtop + i, kwtop + j)]
        } else {
            C::ZERO
        }
    });
    let mut v = Mat::<C>::from_fn(nw, nw, |i, j| if i == j { C::ONE } else { C::ZERO });
    if lahqr(
        &mut t.as_mut(),
        Some(&mut v.as_mut()),
        0,
        nw - 1,
        Reach { top: 0, end: nw },
    )
    .is_err()
    {
        // The window's own iterations failed: nothing deflates, the matrix is unchanged, and
        // the partly converged diagonal still gives shifts.
        return Deflation {
            deflated: 0,
            shifts: (0..nw).map(|i| t[(i, i)]).collect(),
        };
    }
    let (ulp, small) = tolerances::<C>(n);
    let mut ns = nw;
    let mut ilst = 0;
    while ilst < ns {
        let tt = t[(ns - 1, ns - 1)];
        let size = if tt.abs1() == <C::R as Real>::ZERO {
            s.abs1()
        } else {
            tt.abs1()
        };
        let bound = if small > ulp * size {
            small
        } else {
            ulp * size
        };
        if (s * v[(0, ns - 1)].conj()).abs1() <= bound {
            ns -= 1;
        } else {
            move_up(&mut t.as_mut(), &mut v.as_mut(), ns - 1, ilst);
            ilst += 1;
        }
    }
    // The undeflated eigenvalues, before their part returns to Hessenberg form.
    let shifts: Vec<C> = (0..ns).map(|i| t[(i, i)]).collect();
    if ns == nw && s != C::ZERO {
        // Nothing deflated: the matrix stays as it was (LAPACK's `zlaqr3` does the same).
        return Deflation {
            deflated: 0,
            shifts,
        };
    }
    let s = if ns == 0 { C::ZERO } else { s };
    if ns > 1 && s != C::ZERO {
        // The spike's undeflated part to a multiple of e1, then that part back to Hessenberg.
        let mut work: Vec<C> = (0..ns).map(|j| v[(0, j)].conj()).collect();
        let g = reflector(work[0], &mut work[1..]);
        work[0] = C::ONE;
        for i in 2..nw {
            for j in 0..i - 1 {
                t[(i, j)] = C::ZERO;
            }
        }
        reflect_left(&mut t.as_mut(), &work, 0, g.tau, 0..nw);
        reflect_right(&mut t.as_mut(), &work, 0, g.tau, 0..ns);
        reflect_right(&mut v.as_mut(), &work, 0, g.tau, 0..nw);
        for c in 0..ns.saturating_sub(2) {
            let mut x: Vec<C> = (c + 2..ns).map(|i| t[(i, c)]).collect();
            let g = reflector(t[(c + 1, c)], &mut x);
            t[(c + 1, c)] = g.beta;
            for i in c + 2..ns {
                t[(i, c)] = C::ZERO;
            }
            let mut hv = Vec::with_capacity(ns - c - 1);
            hv.push(C::ONE);
            hv.extend_from_slice(&x);
            reflect_left(&mut t.as_mut(), &hv, c + 1, g.tau, c + 1..nw);
            reflect_right(&mut t.as_mut(), &hv, c + 1, g.tau, 0..ns);
            reflect_right(&mut v.as_mut(), &hv, c + 1, g.tau, 0..nw);
        }
    }
    if kwtop > ktop {
        h[(kwtop, kwtop - 1)] = s * v[(0, 0)].conj();
    }
    for j in 0..nw {
        for i in 0..nw {
            h[(kwtop + i, kwtop + j)] = if i <= j + 1 { t[(i, j)] } else { C::ZERO };
        }
    }
    far::apply(h, z, v.as_ref(), kwtop, reach, team);
    Deflation {
        deflated: nw - ns,
        shifts,
    }
}

/// Moves the diagonal entry `from` of the triangular `t` up to `to` by swaps of neighbours
/// (LAPACK's `ztrexc`), `v` taking the rotations.
fn move_up<C: Cplx>(t: &mut MatMut<'_, C>, v: &mut MatMut<'_, C>, from: usize, to: usize) {
    let n = t.nrows();
    for k in (to..from).rev() {
        let (t11, t22) = (t[(k, k)], t[(k + 1, k + 1)]);
        let (c, sn) = rotation(t[(k, k + 1)], t22 - t11);
        for j in k + 2..n {
            let (x, y) = (t[(k, j)], t[(k + 1, j)]);
            t[(k, j)] = x.scale(c) + sn * y;
            t[(k + 1, j)] = y.scale(c) - sn.conj() * x;
        }
        let snc = sn.conj();
        for i in 0..k {
            let (x, y) = (t[(i, k)], t[(i, k + 1)]);
            t[(i, k)] = x.scale(c) + snc * y;
            t[(i, k + 1)] = y.scale(c) - sn * x;
        }
        t[(k, k)] = t22;
        t[(k + 1, k + 1)] = t11;
        for i in 0..v.nrows() {
            let (x, y) = (v[(i, k)], v[(i, k + 1)]);
            v[(i, k)] = x.scale(c) + snc * y;
            v[(i, k + 1)] = y.scale(c) - sn * x;
        }
    }
}

/// The rotation `[c s; -conj(s) c]` taking `[f; g]` to `[r; 0]` (`c` real).
fn rotation<C: Cplx>(f: C, g: C) -> (C::R, C) {
    let zero = <C::R as Real>::ZERO;
    if g == C::ZERO {
        return (<C::R as Real>::ONE, C::ZERO);
    }
    if f == C::ZERO {
        return (zero, g.conj().scale(<C::R as Real>::ONE / g.abs()));
    }
    let (fa, ga) = (f.re().hypot(f.im()), g.re().hypot(g.im()));
    let d = fa.hypot(ga);
    let phase = f.scale(<C::R as Real>::ONE / fa);
    (fa / d, phase * g.conj().scale(<C::R as Real>::ONE / d))
}

/// `G^H` from the left on rows `r0..r0 + v.len()`, columns `cols` (`G = I - tau v v^H`).
fn reflect_left<C: Cplx>(
    a: &mut MatMut<'_, C>,
    v: &[C],
    r0: usize,
    tau: C,
    cols: std::ops::Range<usize>,
) {
    let tc = tau.conj();
    for j in cols {
        let mut s = C::ZERO;
        for (i, vi) in v.iter().enumerate() {
            s += vi.conj() * a[(r0 + i, j)];
        }
        let s = tc * s;
        for (i, vi) in v.iter().enumerate() {
            a[(r0 + i, j)] -= s * *vi;
        }
    }
}

/// `G` from the right on columns `c0..c0 + v.len()`, rows `rows`.
fn reflect_right<C: Cplx>(
    a: &mut MatMut<'_, C>,
    v: &[C],
    c0: usize,
    tau: C,
    rows: std::ops::Range<usize>,
) {
    for i in rows {
        let mut s = C::ZERO;
        for (j, vj) in v.iter().enumerate() {
            s += a[(i, c0 + j)] * *vj;
        }
        let s = tau * s;
        for (j, vj) in v.iter().enumerate() {
            a[(i, c0 + j)] -= s * vj.conj();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::linalg::matmul::matmul;
    use faer::{c64, Accum, Par};

    /// Moving a diagonal entry up keeps `T` triangular and `V^H T0 V = T`, with the entry at
    /// its new place and the ones it passed one place down.
    #[test]
    fn move_up_reorders_by_a_unitary_similarity() {
        let n = 7;
        let t0 = Mat::<c64>::from_fn(n, n, |i, j| {
            if i <= j {
                c64::new(
                    (i * 3 + j) as f64 * 0.37 - 1.0,
                    (j as f64 - i as f64) * 0.21,
                )
            } else {
                c64::ZERO
            }
        });
        let mut t = t0.clone();
        let mut v = Mat::<c64>::identity(n, n);
        move_up(&mut t.as_mut(), &mut v.as_mut(), 5, 1);
        assert_eq!(t[(1, 1)], t0[(5, 5)]);
        for k in 1..5 {
            assert!((t[(k + 1, k + 1)] - t0[(k, k)]).norm() < 1e-12);
        }
        let mut tv = Mat::<c64>::zeros(n, n);
        matmul(
            tv.as_mut(),
            Accum::Replace,
            t0.as_ref(),
            v.as_ref(),
            c64::ONE,
            Par::Seq,
        );
        let mut r = t.clone();
        matmul(
            r.as_mut(),
            Accum::Add,
            v.adjoint(),
            tv.as_ref(),
            -c64::ONE,
            Par::Seq,
        );
        for j in 0..n {
            for i in 0..n {
                assert!(r[(i, j)].norm() < 1e-12, "({i}, {j}): {}", r[(i, j)]);
                if i > j {
                    assert!(t[(i, j)].norm() < 1e-12);
                }
            }
        }
    }
}
