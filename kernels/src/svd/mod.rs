//! The SVD of a general matrix, `A = U diag(s) V^H`, on teamalg's own path: the
//! bidiagonalization on the executor ([`crate::svd::bidiag`]), the bidiagonal made real by unit
//! phases, then with vectors the bidiagonal divide and conquer ([`crate::svd::bidiag_dc`], its top
//! tear on the executor) and the Householder factors applied to its vectors in column chunks
//! on the executor ([`crate::qr::householder::apply_q_in_place`]); for values only dqds, and for small
//! orders with vectors the bidiagonal QR ([`bidiag_svd`](mod@crate::svd::bidiag_svd)). A wide
//! matrix is handled through its adjoint. [`SvdPath::Auto`], the default, runs that path where it measured faster than
//! faer's serial SVD and faer's serial SVD elsewhere. Design record: `docs/svd.md`.

pub mod bidiag;
pub mod bidiag_dc;
pub mod bidiag_svd;
pub mod cost;
pub(crate) mod dqds;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::linalg::svd::{svd as faer_svd, svd_scratch as faer_svd_scratch, ComputeSvdVectors};
use faer::linalg::{temp_mat_scratch, temp_mat_zeroed};
use faer::mat::AsMatMut;
use faer::traits::ComplexField;
use faer::{MatMut, MatRef, Par};
use teamalg_gates::ParThreshold;

use teamalg_gates::Family;

use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;
use crate::gemm::GemmParams;
use crate::qr::householder::{self as qr, apply_q_in_place, QrParams};
use crate::svd::bidiag::{bidiag_in_place, bidiag_in_place_scratch};
use crate::svd::bidiag_svd::{bidiag_svd, BidiagSvdError, BidiagSvdParams, Real, Rotate};

/// Which SVD runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SvdPath {
    /// teamalg's own path where it measured faster than faer's serial SVD
    /// ([`auto_runs_own`]: values only from order [`AUTO_MIN_ORDER`] at any aspect, with
    /// vectors from [`AUTO_MIN_ORDER_VECTORS`] up to an aspect of 2); faer's serial SVD
    /// otherwise. On the 2-vCPU EPYC host the own path measured 1.2 to 1.3x faster than faer's
    /// serial SVD with vectors at order 256 of square matrices and 1.5 to 1.6x at 512 and
    /// 1024, 1.25 to 1.6x for values only from 128, about even with vectors at 128 and up to
    /// 1.5x slower at 64 (`docs/perf/runs/kernels-log.md`, runs A, F and G, 2026-12-02). The path is
    /// chosen where it measured faster, which does not promise every call: in the host's
    /// degraded states the own path measured slower than serial (runs B and C there).
    #[default]
    Auto,
    /// faer's serial SVD.
    Faer,
    /// teamalg's own path, whatever the shape.
    Own,
}

/// Longer than this times wide, the own path takes a QR step first ([`qr_first`]): faer's
/// ratio.
pub const QR_FIRST: f64 = 11.0 / 6.0;

/// The smallest order [`SvdPath::Auto`] runs teamalg's own path at, values only.
pub const AUTO_MIN_ORDER: usize = 128;

/// The smallest order [`SvdPath::Auto`] runs teamalg's own path at, with vectors.
pub const AUTO_MIN_ORDER_VECTORS: usize = 256;

/// Whether [`SvdPath::Auto`] runs teamalg's own path on an `m x n` matrix, with `vectors` or
/// values only: values only from order [`AUTO_MIN_ORDER`] at any aspect, with vectors from
/// [`AUTO_MIN_ORDER_VECTORS`] on shapes at most twice as long as wide. Measured on the 2-vCPU
/// EPYC host (against faer's serial SVD): square f64 with vectors at 128 took 1.00 to 1.12 of
/// faer's time over six runs (0.79 on the Xeon host), from 256 0.64 to 0.81; at twice as
/// long (a QR step first) 1.23 at 256 x 128, 0.80 at 512 x 256, 0.69 at 1024 x 512; at four
/// times 1.33, 1.05 and 1.00 (the QR step and `Q`'s product dominate and gain little on two
/// cores); values only 0.62 to 0.81 square, 0.67 to 0.99 at twice and 0.71 to 0.82 at four
/// times.
pub fn auto_runs_own(m: usize, n: usize, vectors: bool) -> bool {
    let (big, k) = (m.max(n), m.min(n));
    if vectors {
        k >= AUTO_MIN_ORDER_VECTORS && big <= 2 * k
    } else {
        k >= AUTO_MIN_ORDER
    }
}

/// Parameters of [`svd`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SvdParams {
    /// Which SVD runs.
    pub path: SvdPath,
    /// The bidiagonal solver's batches and threshold.
    pub solver: BidiagSvdParams,
    /// How forming the Householder factors decides to go parallel (family `Qr`); `None` leaves
    /// it to the executor's model.
    pub threshold: Option<ParThreshold>,
    /// How the bidiagonalization decides to go parallel (family `BidiagStep`); `None` leaves
    /// it to the executor's model.
    pub bidiag: Option<ParThreshold>,
    /// How the bidiagonal divide and conquer (with vectors, above order
    /// [`bidiag_dc::LEAF`]) decides to solve its two halves at once and merge them on the
    /// executor (family `BidiagSvdDc`); `None` leaves it to the executor's model.
    pub dc: Option<ParThreshold>,
    /// How the divide and conquer's top merge decides to run its GEMMs in parallel (family
    /// `Gemm`); `None` leaves it to the executor's model.
    pub gemm: Option<ParThreshold>,
}

fn mul<T: Rotate>(a: T, b: T) -> T {
    let ((ar, ai), (br, bi)) = (a.parts(), b.parts());
    T::from_parts(ar * br - ai * bi, ar * bi + ai * br)
}

fn conj<T: Rotate>(a: T) -> T {
    let (re, im) = a.parts();
    T::from_parts(re, -im)
}

fn abs<T: Rotate>(a: T) -> T::RealPart {
    let (re, im) = a.parts();
    re.hypot(im)
}

/// `z / |z|`, or one for zero.
fn phase<T: Rotate>(z: T) -> T {
    let r = abs(z);
    if r == <T as Rotate>::RealPart::ZERO {
        T::from_parts(<T as Rotate>::RealPart::ONE, <T as Rotate>::RealPart::ZERO)
    } else {
        let (re, im) = z.parts();
        T::from_parts(re / r, im / r)
    }
}

/// The SVD of `a` (`m x n`, `k = min(m, n)`): `s` (`k` entries) gets the singular values,
/// non-increasing; `u`, if given, gets the left singular vectors (`m x k`, thin, or `m x m`,
/// full) and `v` the right ones (`n x k` or `n x n`), so that `A = U diag(s) V^H` on their
/// first `k` columns. `u` and `v` must be column-major. A full `u` or `v` is overwritten
/// whole, an orthonormal basis whatever it held before (its columns past `k` span the
/// complement).
///
/// # Errors
/// [`BidiagSvdError::NotFinite`] when `a` holds an infinity or a NaN (checked first: nothing
/// is written);
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
    s: &mut [<T as Rotate>::RealPart],
    u: Option<MatMut<'_, T>>,
    v: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    params: SvdParams,
) -> Result<(), BidiagSvdError>
where
    T: Rotate + ComplexField,
{
    let req = svd_scratch::<T>(a.nrows(), a.ncols(), u.is_some() || v.is_some());
    let mut buf = MemBuffer::new(req);
    svd_with_scratch(a, s, u, v, exec, params, MemStack::new(&mut buf))
}

/// The scratch [`svd_with_scratch`] needs for an `m x n` matrix, with or without vectors
/// (thin or full): the working copy, its Householder factors, the bidiagonal's vectors and the
/// divide and conquer's scratch, or faer's own scratch, whichever path runs.
pub fn svd_scratch<T: ComplexField>(m: usize, n: usize, vectors: bool) -> StackReq {
    let (big, k) = (m.max(n), m.min(n));
    if k == 0 {
        return StackReq::EMPTY;
    }
    // Every pairing the call may ask for (each of U and V none, thin or full).
    let kinds = [
        ComputeSvdVectors::No,
        ComputeSvdVectors::Thin,
        ComputeSvdVectors::Full,
    ];
    let kinds = if vectors { &kinds[..] } else { &kinds[..1] };
    let faer_reqs: Vec<StackReq> = kinds
        .iter()
        .flat_map(|&wu| kinds.iter().map(move |&wv| (wu, wv)))
        .map(|(wu, wv)| {
            StackReq::all_of(&[
                temp_mat_scratch::<T>(k, 1),
                faer_svd_scratch::<T>(m, n, wu, wv, Par::Seq, Default::default()),
            ])
        })
        .collect();
    let own = StackReq::all_of(&[
        temp_mat_scratch::<T>(big, k),
        StackReq::any_of(&[tall_scratch::<T>(big, k), skinny_scratch::<T>(big, k)]),
    ]);
    StackReq::any_of(&[StackReq::any_of(&faer_reqs), own])
}

/// What [`tall`] takes from the stack for a `big x k` matrix (with vectors or not).
fn tall_scratch<T: ComplexField>(big: usize, k: usize) -> StackReq {
    let bs = recommended_block_size::<T>(big, k);
    let vectors_req = StackReq::all_of(&[
        temp_mat_scratch::<T::Real>(k, k).array(2),
        StackReq::any_of(&[
            bidiag_dc::solve_scratch::<T::Real>(k),
            StackReq::all_of(&[
                temp_mat_scratch::<T>(k.saturating_sub(1), k.saturating_sub(1)),
                temp_mat_scratch::<T>(bs, k.saturating_sub(1)),
            ]),
        ]),
    ]);
    StackReq::all_of(&[
        temp_mat_scratch::<T>(bs, k),
        temp_mat_scratch::<T>(bs, k.saturating_sub(1)),
        StackReq::any_of(&[bidiag_in_place_scratch::<T>(big, k), vectors_req]),
    ])
}

/// What [`skinny`] takes from the stack for a `big x k` matrix: the QR's block factors, `R`,
/// `R`'s left vectors and the square path's scratch (the QR's own scratch is allocated, as
/// its size depends on the executor's width).
fn skinny_scratch<T: ComplexField>(big: usize, k: usize) -> StackReq {
    StackReq::all_of(&[
        temp_mat_scratch::<T>(qr::block_size::<T>(big, k), k),
        temp_mat_scratch::<T>(k, k).array(2),
        tall_scratch::<T>(k, k),
    ])
}

/// [`svd`] in the caller's scratch ([`svd_scratch`]): every matrix comes from it; what is
/// still allocated is far smaller (the vectors of `O(n)` entries, the back-transformation's
/// per-chunk scratch, the bidiagonal QR's batches of rotations).
///
/// # Errors
/// As [`svd`].
///
/// # Panics
/// As [`svd`], and when `stack` is smaller than [`svd_scratch`] of the shape (with `vectors`
/// true when `u` or `v` is given).
pub fn svd_with_scratch<T>(
    a: MatRef<'_, T>,
    s: &mut [<T as Rotate>::RealPart],
    mut u: Option<MatMut<'_, T>>,
    mut v: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    params: SvdParams,
    stack: &mut MemStack,
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
    for j in 0..n {
        for i in 0..m {
            let (re, im) = a[(i, j)].parts();
            if !re.is_finite() || !im.is_finite() {
                return Err(BidiagSvdError::NotFinite);
            }
        }
    }
    // A full factor starts as the identity, whichever path runs (and for k = 0 that is the
    // whole answer): faer's serial SVD of a shape longer than 11/6 times wide (a QR first, so
    // every k = 1) forms a full factor as `Q [U_R X; 0 I]` without writing `X`, which would
    // keep the caller's buffer. After the finiteness refusal above, which writes nothing.
    let (ur, vr) = (
        u.as_mut().map(|x| x.as_mut()),
        v.as_mut().map(|x| x.as_mut()),
    );
    for x in [ur, vr].into_iter().flatten() {
        if x.ncols() > k {
            identity(x);
        }
    }
    if k == 0 {
        return Ok(());
    }
    let own = match params.path {
        SvdPath::Own => true,
        SvdPath::Faer => false,
        SvdPath::Auto => auto_runs_own(m, n, u.is_some() || v.is_some()),
    };
    if !own {
        return faer_serial(a, s, u, v, stack);
    }
    let (big, _) = (m.max(n), k);
    let (mut bid, stack) = temp_mat_zeroed::<T, _, _>(big, k, stack);
    let mut bid = bid.as_mat_mut();
    let (u, v) = if m >= n {
        bid.copy_from(a);
        (u, v)
    } else {
        // A^H = U' S V'^H, so A = V' S U'^H.
        for j in 0..k {
            for i in 0..big {
                bid[(i, j)] = conj(a[(j, i)]);
            }
        }
        (v, u)
    };
    if qr_first(big, k) {
        skinny(bid, s, u, v, exec, params, stack)
    } else {
        tall(bid, s, u, v, exec, params, stack)
    }
}

/// Whether the own path factors a `big x k` matrix `A = Q R` first and takes the SVD of the
/// square `R`: longer than [`QR_FIRST`] times wide, where the QR (blocked, its updates GEMMs
/// on the executor) costs less than the bidiagonalization's extra `2 (big - k) k^2`.
pub fn qr_first(big: usize, k: usize) -> bool {
    big as f64 > QR_FIRST * k as f64
}

/// The SVD of a matrix much longer than wide (`m x n`, [`qr_first`]), reduced in place in
/// `a`: `A = Q R`, `R = U_R S V^H` by [`tall`], `U = Q [U_R 0; 0 I]` on the executor.
fn skinny<T>(
    mut a: MatMut<'_, T>,
    s: &mut [<T as Rotate>::RealPart],
    u: Option<MatMut<'_, T>>,
    v: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    params: SvdParams,
    stack: &mut MemStack,
) -> Result<(), BidiagSvdError>
where
    T: Rotate + ComplexField,
{
    let (m, n) = (a.nrows(), a.ncols());
    let bs = qr::block_size::<T>(m, n);
    let (mut h, stack) = temp_mat_zeroed::<T, _, _>(bs, n, stack);
    let mut h = h.as_mat_mut();
    let width = exec.width();
    let mut buf = MemBuffer::new(qr::qr_in_place_scratch::<T>(m, n, bs, width));
    let qr_params = QrParams {
        threshold: params.threshold,
    };
    qr::qr_in_place(
        a.as_mut(),
        h.as_mut(),
        exec,
        qr_params,
        width,
        MemStack::new(&mut buf),
    );
    let (mut r, stack) = temp_mat_zeroed::<T, _, _>(n, n, stack);
    let mut r = r.as_mat_mut();
    for j in 0..n {
        for i in 0..=j {
            r[(i, j)] = a[(i, j)];
        }
    }
    let Some(mut u) = u else {
        return tall(r, s, None, v, exec, params, stack);
    };
    let (mut ur, stack) = temp_mat_zeroed::<T, _, _>(n, n, stack);
    let mut ur = ur.as_mat_mut();
    tall(r, s, Some(ur.as_mut()), v, exec, params, stack)?;
    // U = Q [U_R 0; 0 I]: a full U's other columns start as the identity's.
    identity(u.as_mut());
    u.as_mut().submatrix_mut(0, 0, n, n).copy_from(&ur);
    apply_q_in_place(a.as_ref(), h.as_ref(), u, false, exec, params.threshold);
    Ok(())
}

/// faer's serial SVD, into the same outputs.
fn faer_serial<T>(
    a: MatRef<'_, T>,
    s: &mut [<T as Rotate>::RealPart],
    u: Option<MatMut<'_, T>>,
    v: Option<MatMut<'_, T>>,
    stack: &mut MemStack,
) -> Result<(), BidiagSvdError>
where
    T: Rotate + ComplexField,
{
    let k = s.len();
    let (mut vals, stack) = temp_mat_zeroed::<T, _, _>(k, 1, stack);
    let mut vals = vals.as_mat_mut();
    faer_svd(
        a,
        vals.as_mut().col_mut(0).as_diagonal_mut(),
        u,
        v,
        Par::Seq,
        stack,
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
    let (zero, one) = (<T as Rotate>::RealPart::ZERO, <T as Rotate>::RealPart::ONE);
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

/// The SVD of a tall (or square) matrix, reduced in place in `bid`.
fn tall<T>(
    mut bid: MatMut<'_, T>,
    s: &mut [<T as Rotate>::RealPart],
    u: Option<MatMut<'_, T>>,
    v: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    params: SvdParams,
    stack: &mut MemStack,
) -> Result<(), BidiagSvdError>
where
    T: Rotate + ComplexField,
{
    let (m, n) = (bid.nrows(), bid.ncols());
    let bs = recommended_block_size::<T>(m, n);
    let (mut hl, stack) = temp_mat_zeroed::<T, _, _>(bs, n, stack);
    let mut hl = hl.as_mat_mut();
    let (mut hr, stack) = temp_mat_zeroed::<T, _, _>(bs, n - 1, stack);
    let mut hr = hr.as_mat_mut();
    bidiag_in_place(
        bid.as_mut(),
        hl.as_mut(),
        hr.as_mut(),
        exec,
        params.bidiag,
        stack,
    );
    let (bid, hl, hr) = (bid.as_ref(), hl.as_ref(), hr.as_ref());
    // B = P R Q^H with unit phases P, Q and R real: r_i = |d_i q_i| once p_i = phase(d_i q_i),
    // and the superdiagonal |e_i| once q_{i+1} = phase(p_i conj(e_i)).
    let (mut p, mut q) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut d, mut e) = (Vec::with_capacity(n), Vec::with_capacity(n - 1));
    q.push(T::from_parts(
        <T as Rotate>::RealPart::ONE,
        <T as Rotate>::RealPart::ZERO,
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
    let factors = Factors { bid, hl, hr };
    if n > bidiag_dc::LEAF && (u.is_some() || v.is_some()) {
        return by_dc(factors, (&d, &e), (&p, &q), (s, u, v), exec, params, stack);
    }
    let u = u.map(|mut u| {
        identity(u.as_mut());
        apply_q_in_place(bid, hl, u.as_mut(), false, exec, params.threshold);
        scale_cols(u.as_mut(), &p);
        u
    });
    let v = v.map(|mut v| {
        identity(v.as_mut());
        factors.right_q(v.as_mut(), exec, params.threshold, stack);
        scale_cols(v.as_mut(), &q);
        v
    });
    let u = u.map(|u| u.subcols_mut(0, n));
    let v = v.map(|v| v.subcols_mut(0, n));
    bidiag_svd::<T>(&mut d, &mut e, u, v, exec, params.solver)?;
    s.copy_from_slice(&d);
    Ok(())
}

/// The bidiagonalization's packed result: the reduced matrix with the reflectors below the
/// diagonal and right of the superdiagonal, and the block factors of each side.
#[derive(Clone, Copy)]
struct Factors<'a, T> {
    bid: MatRef<'a, T>,
    hl: MatRef<'a, T>,
    hr: MatRef<'a, T>,
}

impl<T> Factors<'_, T>
where
    T: Rotate + ComplexField,
{
    /// `X <- Q_r X` on rows `1..n` of `x`, `Q_r` the right reflectors.
    fn right_q(
        &self,
        x: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
        threshold: Option<ParThreshold>,
        stack: &mut MemStack,
    ) {
        let n = self.bid.ncols();
        if n < 2 {
            return;
        }
        // The right reflectors sit in the rows of the upper triangle: their conjugate
        // transpose, as columns, is an ordinary Householder sequence on rows 1..n.
        let (mut basis, stack) = temp_mat_zeroed::<T, _, _>(n - 1, n - 1, stack);
        let mut basis = basis.as_mat_mut();
        // A transpose in tiles, so that neither side is swept along a row (in column-major
        // storage each entry of a row is a cache line and a page of its own).
        const TILE: usize = 32;
        for c0 in (0..n - 1).step_by(TILE) {
            for r0 in (c0..n - 1).step_by(TILE) {
                for r in r0..(r0 + TILE).min(n - 1) {
                    for c in c0..(c0 + TILE).min(r + 1) {
                        basis[(r, c)] = conj(self.bid[(c, r + 1)]);
                    }
                }
            }
        }
        let (mut hr, _) = temp_mat_zeroed::<T, _, _>(self.hr.nrows(), self.hr.ncols(), stack);
        let mut hr = hr.as_mat_mut();
        for c in 0..self.hr.ncols() {
            for r in 0..self.hr.nrows() {
                hr[(r, c)] = conj(self.hr[(r, c)]);
            }
        }
        apply_q_in_place(
            basis.as_ref(),
            hr.as_ref(),
            x.subrows_mut(1, n - 1),
            false,
            exec,
            threshold,
        );
    }
}

/// Where the values and the vectors (if asked for) of an SVD go.
type Outputs<'a, T> = (
    &'a mut [<T as Rotate>::RealPart],
    Option<MatMut<'a, T>>,
    Option<MatMut<'a, T>>,
);

/// The vectors by the bidiagonal divide and conquer: `B = U_B S V_B^T` (real), then
/// `U = Q_l P U_B` and `V = Q_r Q V_B`, the phases scaling rows and the reflectors applied to
/// the result on the executor (the remaining columns of a full `U` start as the identity's).
fn by_dc<T>(
    factors: Factors<'_, T>,
    (d, e): (&[<T as Rotate>::RealPart], &[<T as Rotate>::RealPart]),
    (p, q): (&[T], &[T]),
    (s, u, v): Outputs<'_, T>,
    exec: &(impl Executor + ?Sized),
    params: SvdParams,
    stack: &mut MemStack,
) -> Result<(), BidiagSvdError>
where
    T: Rotate + ComplexField,
{
    let n = d.len();
    let units = n as f64 * n as f64;
    let region = Region {
        site: "svd/solver",
        dims: [n, n, n],
        units,
        family: Family::BidiagSvdDc,
        // The halves, the roots, the recomputed z, and per side the vectors and two products.
        sections: 9,
        scope: Scope::Call,
        call_units: units,
    };
    let call = gate::call::<<T as Rotate>::RealPart>(exec, region, params.dc);
    let divide = bidiag_dc::Divide {
        width: call.width(),
        gemm: GemmParams {
            threshold: params.gemm,
        },
    };
    let (mut ub, stack) = temp_mat_zeroed::<<T as Rotate>::RealPart, _, _>(n, n, stack);
    let mut ub = ub.as_mat_mut();
    let (mut vb, stack) = temp_mat_zeroed::<<T as Rotate>::RealPart, _, _>(n, n, stack);
    let mut vb = vb.as_mat_mut();
    bidiag_dc::solve((d, e), s, ub.as_mut(), vb.as_mut(), divide, exec, stack)?;
    let zero = <T as Rotate>::RealPart::ZERO;
    if let Some(mut u) = u {
        let m = u.nrows();
        for j in 0..u.ncols() {
            for i in 0..m {
                u[(i, j)] = if i < n && j < n {
                    mul(p[i], T::from_parts(ub[(i, j)], zero))
                } else {
                    T::from_parts(
                        if i == j {
                            <T as Rotate>::RealPart::ONE
                        } else {
                            zero
                        },
                        zero,
                    )
                };
            }
        }
        apply_q_in_place(
            factors.bid,
            factors.hl,
            u.as_mut(),
            false,
            exec,
            params.threshold,
        );
    }
    if let Some(mut v) = v {
        for j in 0..n {
            for i in 0..n {
                v[(i, j)] = mul(q[i], T::from_parts(vb[(i, j)], zero));
            }
        }
        factors.right_q(v.as_mut(), exec, params.threshold, stack);
    }
    Ok(())
}
