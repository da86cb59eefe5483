//! The SVD of a general matrix, `A = U diag(s) V^H`: the bidiagonalization on the executor
//! ([`crate::bidiag`]), the explicit Householder factors formed in column chunks on the executor
//! ([`crate::qr::apply_q_in_place`]), the bidiagonal made real by unit phases folded into those
//! factors, then teamalg's bidiagonal QR ([`crate::bidiag_svd`]) rotating the factors in row
//! strips. A wide matrix is handled through its adjoint. That path runs when
//! [`SvdParams::own`] asks for it; by default faer's serial SVD runs, which is faster today.
//! Design record: `docs/svd.md`.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::linalg::svd::{svd as faer_svd, svd_scratch as faer_svd_scratch, ComputeSvdVectors};
use faer::traits::ComplexField;
use faer::{Mat, MatMut, MatRef, Par};
use teamalg_gates::ParThreshold;

use crate::bidiag::{bidiag_in_place, bidiag_in_place_scratch};
use crate::bidiag_svd::{bidiag_svd, BidiagSvdError, BidiagSvdParams, Real, Rotate};
use crate::par::Executor;
use crate::qr::apply_q_in_place;

/// Parameters of [`svd`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SvdParams {
    /// Whether teamalg's own path runs (the bidiagonalization on the executor, the Householder
    /// factors formed on the executor, teamalg's bidiagonal QR rotating them on the executor).
    /// `false`, the default, runs faer's serial SVD instead: teamalg's path measured slower
    /// than it with vectors at every size on the development host (`docs/perf/kernels.md`),
    /// and a call must never be slower than serial.
    pub own: bool,
    /// The bidiagonal solver's batches and threshold.
    pub solver: BidiagSvdParams,
    /// How forming the Householder factors decides to go parallel (family `Qr`); `None` leaves
    /// it to the executor's model.
    pub threshold: Option<ParThreshold>,
    /// How the bidiagonalization decides to go parallel (family `BidiagStep`); `None` leaves
    /// it to the executor's model.
    pub bidiag: Option<ParThreshold>,
}

fn mul<T: Rotate>(a: T, b: T) -> T {
    let ((ar, ai), (br, bi)) = (a.parts(), b.parts());
    T::from_parts(ar * br - ai * bi, ar * bi + ai * br)
}

fn conj<T: Rotate>(a: T) -> T {
    let (re, im) = a.parts();
    T::from_parts(re, -im)
}

fn abs<T: Rotate>(a: T) -> T::Real {
    let (re, im) = a.parts();
    re.hypot(im)
}

/// `z / |z|`, or one for zero.
fn phase<T: Rotate>(z: T) -> T {
    let r = abs(z);
    if r == <T as Rotate>::Real::ZERO {
        T::from_parts(<T as Rotate>::Real::ONE, <T as Rotate>::Real::ZERO)
    } else {
        let (re, im) = z.parts();
        T::from_parts(re / r, im / r)
    }
}

/// The SVD of `a` (`m x n`, `k = min(m, n)`): `s` (`k` entries) gets the singular values,
/// non-increasing; `u`, if given, gets the left singular vectors (`m x k`, thin, or `m x m`,
/// full) and `v` the right ones (`n x k` or `n x n`), so that `A = U diag(s) V^H` on their
/// first `k` columns. `u` and `v` must be column-major.
///
/// # Errors
/// [`BidiagSvdError::NotFinite`] when `a` holds an infinity or a NaN;
/// [`BidiagSvdError::NoConvergence`] from the bidiagonal solver (from faer's, on the default
/// path, with every value counted as unconverged).
///
/// # Panics
/// When `s`, `u` or `v` has the wrong shape.
///
/// # Example
/// ```
/// use faer::mat;
/// use teamalg_kernels::par::Seq;
/// use teamalg_kernels::svd::{svd, SvdParams};
///
/// let a = mat![[3.0f64, 0.0], [4.0, 5.0]];
/// let mut s = [0.0; 2];
/// svd(a.as_ref(), &mut s, None, None, &Seq, SvdParams::default()).unwrap();
/// // The singular values of [3 0; 4 5] are sqrt(45) and sqrt(5).
/// assert!((s[0] - 45f64.sqrt()).abs() < 1e-14 && (s[1] - 5f64.sqrt()).abs() < 1e-14);
/// ```
pub fn svd<T>(
    a: MatRef<'_, T>,
    s: &mut [<T as Rotate>::Real],
    u: Option<MatMut<'_, T>>,
    v: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    params: SvdParams,
) -> Result<(), BidiagSvdError>
where
    T: Rotate + ComplexField,
{
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    assert_eq!(s.len(), k, "s must have min(m, n) entries");
    if let Some(u) = &u {
        assert!(
            u.nrows() == m && (u.ncols() == k || u.ncols() == m),
            "u must be m x min(m, n) or m x m"
        );
    }
    if let Some(v) = &v {
        assert!(
            v.nrows() == n && (v.ncols() == k || v.ncols() == n),
            "v must be n x min(m, n) or n x n"
        );
    }
    for i in 0..m {
        for j in 0..n {
            let (re, im) = a[(i, j)].parts();
            if !re.is_finite() || !im.is_finite() {
                return Err(BidiagSvdError::NotFinite);
            }
        }
    }
    if k == 0 {
        for x in [u, v].into_iter().flatten() {
            identity(x);
        }
        return Ok(());
    }
    if !params.own {
        return faer_serial(a, s, u, v);
    }
    if m >= n {
        tall(a.to_owned(), s, u, v, exec, params)
    } else {
        // A^H = U' S V'^H, so A = V' S U'^H.
        let adj = Mat::from_fn(n, m, |i, j| conj(a[(j, i)]));
        tall(adj, s, v, u, exec, params)
    }
}

/// faer's serial SVD, into the same outputs.
fn faer_serial<T>(
    a: MatRef<'_, T>,
    s: &mut [<T as Rotate>::Real],
    u: Option<MatMut<'_, T>>,
    v: Option<MatMut<'_, T>>,
) -> Result<(), BidiagSvdError>
where
    T: Rotate + ComplexField,
{
    let k = s.len();
    let want = |x: &Option<MatMut<'_, T>>| match x {
        None => ComputeSvdVectors::No,
        Some(x) if x.ncols() == k => ComputeSvdVectors::Thin,
        Some(_) => ComputeSvdVectors::Full,
    };
    let (wu, wv) = (want(&u), want(&v));
    let req = faer_svd_scratch::<T>(a.nrows(), a.ncols(), wu, wv, Par::Seq, Default::default());
    let mut buf = MemBuffer::new(req);
    let mut vals = Mat::<T>::zeros(k, 1);
    faer_svd(
        a,
        vals.as_mut().col_mut(0).as_diagonal_mut(),
        u,
        v,
        Par::Seq,
        MemStack::new(&mut buf),
        Default::default(),
    )
    .map_err(|_| BidiagSvdError::NoConvergence { unconverged: k })?;
    for (si, x) in s.iter_mut().zip(vals.col(0).iter()) {
        *si = x.parts().0;
    }
    Ok(())
}

/// Sets `x` to the first columns of the identity.
fn identity<T: Rotate>(mut x: MatMut<'_, T>) {
    let (zero, one) = (<T as Rotate>::Real::ZERO, <T as Rotate>::Real::ONE);
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            x[(i, j)] = T::from_parts(if i == j { one } else { zero }, zero);
        }
    }
}

/// Scales column `j` of `x` by `p[j]` for every `j < p.len()`.
fn scale_cols<T: Rotate>(mut x: MatMut<'_, T>, p: &[T]) {
    for (j, pj) in p.iter().enumerate() {
        for i in 0..x.nrows() {
            x[(i, j)] = mul(x[(i, j)], *pj);
        }
    }
}

/// The SVD of a tall (or square) matrix, which it consumes.
fn tall<T>(
    mut bid: Mat<T>,
    s: &mut [<T as Rotate>::Real],
    u: Option<MatMut<'_, T>>,
    v: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    params: SvdParams,
) -> Result<(), BidiagSvdError>
where
    T: Rotate + ComplexField,
{
    let (m, n) = (bid.nrows(), bid.ncols());
    let bs = recommended_block_size::<T>(m, n);
    let mut hl = Mat::<T>::zeros(bs, n);
    let mut hr = Mat::<T>::zeros(bs, n - 1);
    {
        let mut buf = MemBuffer::new(bidiag_in_place_scratch::<T>(m, n));
        bidiag_in_place(
            bid.as_mut(),
            hl.as_mut(),
            hr.as_mut(),
            exec,
            params.bidiag,
            MemStack::new(&mut buf),
        );
    }
    // B = P R Q^H with unit phases P, Q and R real: r_i = |d_i q_i| once p_i = phase(d_i q_i),
    // and the superdiagonal |e_i| once q_{i+1} = phase(p_i conj(e_i)).
    let (mut p, mut q) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut d, mut e) = (Vec::with_capacity(n), Vec::with_capacity(n - 1));
    q.push(T::from_parts(
        <T as Rotate>::Real::ONE,
        <T as Rotate>::Real::ZERO,
    ));
    for i in 0..n {
        let dq = mul(bid[(i, i)], q[i]);
        p.push(phase(dq));
        d.push(abs(dq));
        if i + 1 < n {
            let ei = bid[(i, i + 1)];
            q.push(phase(mul(p[i], conj(ei))));
            e.push(abs(ei));
        }
    }
    let u = u.map(|mut u| {
        identity(u.as_mut());
        apply_q_in_place(
            bid.as_ref(),
            hl.as_ref(),
            u.as_mut(),
            false,
            exec,
            params.threshold,
        );
        scale_cols(u.as_mut(), &p);
        u
    });
    let v = v.map(|mut v| {
        identity(v.as_mut());
        if n > 1 {
            // The right reflectors sit in the rows of the upper triangle: their conjugate
            // transpose, as columns, is an ordinary Householder sequence on rows 1..n.
            let basis = Mat::from_fn(n - 1, n - 1, |r, c| {
                if r >= c {
                    conj(bid[(c, r + 1)])
                } else {
                    T::from_parts(<T as Rotate>::Real::ZERO, <T as Rotate>::Real::ZERO)
                }
            });
            let hr = Mat::from_fn(hr.nrows(), hr.ncols(), |r, c| conj(hr[(r, c)]));
            apply_q_in_place(
                basis.as_ref(),
                hr.as_ref(),
                v.as_mut().subrows_mut(1, n - 1),
                false,
                exec,
                params.threshold,
            );
        }
        scale_cols(v.as_mut(), &q);
        v
    });
    let u = u.map(|u| u.subcols_mut(0, n));
    let v = v.map(|v| v.subcols_mut(0, n));
    bidiag_svd::<T>(&mut d, &mut e, u, v, exec, params.solver)?;
    s.copy_from_slice(&d);
    Ok(())
}
