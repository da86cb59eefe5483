//! The singular value decomposition, `A = U diag(s) V^H`: owned ([`Svd::new`], full, and
//! [`Svd::new_thin`], [`singular_values`]) or into the caller's storage ([`svd_into`], and
//! [`svd_into_with_scratch`] with the caller's scratch too).

use faer::dyn_stack::{MemStack, StackReq};
use faer::mat::AsMatRef;
use faer::traits::{ComplexField, Conjugate};
use faer::{Accum, Mat, MatMut, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::bidiag_svd::{BidiagSvdError, BidiagSvdParams, Real, Rotate};
use teamalg_kernels::par::Executor;
use teamalg_kernels::svd::{
    svd_scratch as kernel_svd_scratch, svd_with_scratch, SvdParams, SvdPath,
};

use super::views::canonical;
use super::scratch;
use super::check::{self, Stored};
use super::{Dim, Field, LinalgError, Options};

/// The real type of `T`'s magnitudes: `f64` for `f64` and `c64`, `f32` for `f32` and `c32`;
/// for a [`Field`] the same type as faer's `T::Real`.
pub type RealOf<T> = <T as Rotate>::RealPart;

/// Which singular vectors an SVD forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SvdVectors {
    /// The first `min(m, n)` columns of `U` and `V` (the thin SVD).
    Thin,
    /// All of `U` (`m x m`) and `V` (`n x n`).
    Full,
}

/// The SVD `A = U diag(s) V^H` of an `m x n` matrix: the singular values non-increasing and
/// non-negative, `U` and `V` with orthonormal columns, thin (`m x k` and `n x k`, `k =
/// min(m, n)`) or full. For values only from order 128, with vectors from 256 on shapes at
/// most twice as long as wide (`teamalg::kernels::svd::auto_runs_own`), this is
/// teamalg's own path (`teamalg::kernels::svd`: the bidiagonalization on the executor, then
/// with vectors the bidiagonal divide and conquer and the back-transformations on the
/// executor, for values alone dqds); otherwise faer's serial SVD behind the facade's checks,
/// which measured faster there (`docs/svd.md`). The choice of path is a measured one, not a
/// promise: `docs/perf/runs/kernels-log.md` lists the cells where the default path was slower than
/// faer's serial SVD (in the host's degraded states, and near the thresholds).
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg, Pool};
///
/// let team = Pool::builder().threads(2).build()?.into_team(2)?;
/// let a = Mat::<f64>::from_fn(6, 4, |i, j| ((i * 7 + j * 3) % 5) as f64 - 2.0);
/// let svd = linalg::Svd::new_thin(&a, &team)?;
/// assert_eq!((svd.u().ncols(), svd.v().ncols(), svd.s().len()), (4, 4, 4));
/// assert!(svd.s().windows(2).all(|w| w[0] >= w[1]));
/// assert!((svd.reconstruct() - &a).norm_max() < 1e-12);
/// // The values alone, and the full factors:
/// let s = linalg::singular_values(&a, &team)?;
/// assert!((s[0] - svd.s()[0]).abs() < 1e-12);
/// let full = linalg::Svd::new(&a, &team)?;
/// assert_eq!((full.u().ncols(), full.v().ncols()), (6, 4));
/// # Ok::<(), teamalg::Error>(())
/// ```
// `Send` and `Sync` are automatic and sound: owned matrices, a vector and the options,
// read-only through `&Svd`.
#[derive(Debug, Clone)]
pub struct Svd<T: Rotate> {
    s: Vec<RealOf<T>>,
    u: Mat<T>,
    v: Mat<T>,
    /// The call's options, which its least squares and pseudo-inverse keep (the cut-off,
    /// the finiteness check, the products' thresholds).
    options: Options,
}

impl<T: Field> Svd<T> {
    /// The full SVD of `a` (which may be a conjugated view), on `exec`: `U` is `m x m` and
    /// `V` is `n x n`, as faer's `Svd::new`. Errors: [`LinalgError::OutOfMemory`] (the
    /// factors, the scratch and a conjugated view's copy are sized before anything is read),
    /// [`LinalgError::NotFinite`] (checked first of the rest), [`LinalgError::NoConvergence`].
    pub fn new<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Self, LinalgError> {
        Self::new_with(a, SvdVectors::Full, exec, &Options::new())
    }

    /// The thin SVD of `a`: `U` is `m x k` and `V` is `n x k`, `k = min(m, n)`, as faer's
    /// `Svd::new_thin`. Errors as [`Svd::new`].
    pub fn new_thin<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Self, LinalgError> {
        Self::new_with(a, SvdVectors::Thin, exec, &Options::new())
    }

    /// The SVD of `a` with the vectors asked for and the call's [`Options`]: the finiteness
    /// check; the thresholds of families `BidiagStep` (the bidiagonalization), `BidiagSvdDc`
    /// and `Gemm` (the divide and conquer and its products), `Qr` (the back-transformations)
    /// and `HouseholderRank1` (the bidiagonal QR's rotations) reach teamalg's own path when
    /// the facade runs it (see [`Svd`]), not faer's serial SVD.
    pub fn new_with<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        vectors: SvdVectors,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Self, LinalgError> {
        let a = a.as_mat_ref();
        let (m, n) = (a.nrows(), a.ncols());
        let k = m.min(n);
        let (uc, vc) = match vectors {
            SvdVectors::Thin => (k, k),
            SvdVectors::Full => (m, n),
        };
        // The factors are sized first: a result too large to hold is refused before `a` is
        // copied or read.
        let (mut u, mut v) = (scratch::zeros("svd", m, uc)?, scratch::zeros("svd", n, vc)?);
        let mut s = scratch::vec("svd", k, RealOf::<T>::ZERO)?;
        let mut copy = None;
        let a = canonical("svd", a, &mut copy)?;
        scratch::with("svd", svd_scratch::<T>(m, n, true), |stack| {
            let (u, v) = (Some(u.as_mut()), Some(v.as_mut()));
            run(a.as_ref(), &mut s, u, v, exec, options, stack)
        })??;
        Ok(Svd { s, u, v, options: *options })
    }

    /// The singular values, non-increasing.
    pub fn s(&self) -> &[RealOf<T>] {
        &self.s
    }

    /// The left singular vectors, as columns.
    pub fn u(&self) -> MatRef<'_, T> {
        self.u.as_ref()
    }

    /// The right singular vectors, as columns.
    pub fn v(&self) -> MatRef<'_, T> {
        self.v.as_ref()
    }

    /// The cutoff below which a singular value counts as zero: `rcond s_max`, with `rcond`
    /// by default `max(m, n)` times the machine epsilon (numpy's and LAPACK's `gelsd` rule).
    fn cutoff(&self, rcond: Option<RealOf<T>>) -> RealOf<T> {
        let (m, n) = (self.u.nrows(), self.v.nrows());
        // `EPS` is the unit roundoff, half the machine epsilon.
        let default = RealOf::<T>::EPS * RealOf::<T>::from_f64(2.0 * m.max(n) as f64);
        let top = self.s.first().copied().unwrap_or(RealOf::<T>::ZERO);
        let kept = self.options.cutoff_rcond().map(RealOf::<T>::from_f64);
        rcond.or(kept).unwrap_or(default) * top
    }

    /// The numerical rank: how many singular values exceed `rcond s_max` (`rcond` by
    /// default the factorization's [`Options::cutoff`], else `max(m, n)` times the machine
    /// epsilon, `f64::EPSILON` for `f64`).
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::Svd, Exec};
    ///
    /// // Rank 1: every column a multiple of the first.
    /// let a = Mat::<f64>::from_fn(4, 3, |i, j| (i + 1) as f64 * (j + 1) as f64);
    /// assert_eq!(Svd::new_thin(&a, &Exec::serial())?.rank(None), 1);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn rank(&self, rcond: Option<RealOf<T>>) -> usize {
        let cut = self.cutoff(rcond);
        self.s.iter().filter(|&&x| x > cut).count()
    }

    /// The 2-norm condition number `s_max / s_min`: infinite for a singular matrix, 1 for an
    /// empty one.
    pub fn cond(&self) -> RealOf<T> {
        match (self.s.first(), self.s.last()) {
            (Some(&top), Some(&low)) if low > RealOf::<T>::ZERO => top / low,
            (Some(_), Some(_)) => RealOf::<T>::ONE / RealOf::<T>::ZERO,
            _ => RealOf::<T>::ONE,
        }
    }

    /// `V_r diag(1 / s_r) U_r^H B` over the `r` singular values above the cutoff.
    /// Its two products run on `exec` with `options`' thresholds.
    fn pseudo_apply(
        &self,
        op: &'static str,
        b: MatRef<'_, T>,
        rcond: Option<RealOf<T>>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Mat<T>, LinalgError> {
        let r = self.rank(rcond);
        let (u, v) = (self.u.as_ref().subcols(0, r), self.v.as_ref().subcols(0, r));
        // The factors are finite (checked when made), and so is `b` where it was asked.
        let products = options.check_finite(false);
        let mut c = scratch::zeros::<T>(op, r, b.ncols())?;
        let mut x = scratch::zeros::<T>(op, v.nrows(), b.ncols())?;
        super::matmul_with(c.as_mut(), Accum::Replace, u.adjoint(), b, T::one_impl(), exec, &products)?;
        for i in 0..r {
            let inv = RealOf::<T>::ONE / self.s[i];
            for j in 0..c.ncols() {
                let (re, im) = c[(i, j)].parts();
                c[(i, j)] = T::from_parts(re * inv, im * inv);
            }
        }
        super::matmul_with(x.as_mut(), Accum::Replace, v, c.as_ref(), T::one_impl(), exec, &products)?;
        Ok(x)
    }

    /// The minimum-norm least-squares solution `X` (`n x k`) of `A X = B` (`B`: `m x k`, may be
    /// a conjugated view), its two products on `exec`: among the `X` minimizing
    /// `||A X - B||`, the one of least norm, with the singular values at or below
    /// `rcond s_max` taken as zero (`rcond` by default `max(m, n)` times the machine epsilon;
    /// another through [`Svd::lstsq_with`] and [`Options::cutoff`]), as LAPACK's `gelsd`.
    /// Right for every shape and rank, where [`Qr::lstsq`](super::Qr::lstsq) needs full
    /// column rank. Errors: [`LinalgError::ShapeMismatch`] (`B` must have `m` rows),
    /// [`LinalgError::NotFinite`], [`LinalgError::OutOfMemory`].
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::Svd, Exec};
    ///
    /// // Rank 1: x0 + 2 x1 = 3 three times over. The minimum-norm solution is (0.6, 1.2).
    /// let a = Mat::<f64>::from_fn(3, 2, |i, j| (i + 1) as f64 * (j + 1) as f64);
    /// let b = Mat::<f64>::from_fn(3, 1, |i, _| 3.0 * (i + 1) as f64);
    /// let x = Svd::new_thin(&a, &Exec::serial())?.lstsq(&b, &Exec::serial())?;
    /// assert!((x[(0, 0)] - 0.6).abs() < 1e-12 && (x[(1, 0)] - 1.2).abs() < 1e-12);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn lstsq<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<T>, LinalgError> {
        self.lstsq_with(b, exec, &self.options)
    }

    /// [`Svd::lstsq`] with the call's [`Options`]: the cut-off ([`Options::cutoff`]) and the
    /// products' thresholds (family `Gemm`); `B` is checked for finiteness always, as the SVD
    /// checks `A`.
    pub fn lstsq_with<B: Conjugate<Canonical = T>>(
        &self,
        b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Mat<T>, LinalgError> {
        let op = "lstsq";
        let b = b.as_mat_ref();
        check::dim(op, "B", Dim::Rows, self.u.nrows(), b.nrows())?;
        // A conjugated view's copy, the canonical `B` the checks and products read.
        let b = scratch::copy(op, b)?;
        // Always, as the SVD checks `A` always (`Options::check_finite`).
        check::finite(op, "B", b.as_ref(), Stored::All)?;
        let rcond = options.cutoff_rcond().map(RealOf::<T>::from_f64);
        self.pseudo_apply(op, b.as_ref(), rcond, exec, options)
    }

    /// The Moore-Penrose pseudo-inverse `A^+` (`n x m`), its products on `exec`, with the
    /// singular values at or below `rcond s_max` taken as zero (as [`Svd::lstsq`]; another
    /// cut-off through [`Svd::pseudoinverse_with`]). Errors: [`LinalgError::OutOfMemory`].
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::Svd, Exec};
    ///
    /// let a = Mat::<f64>::from_fn(3, 2, |i, j| (i + 1) as f64 * (j + 1) as f64);
    /// let p = Svd::new_thin(&a, &Exec::serial())?.pseudoinverse(&Exec::serial())?;
    /// // A A^+ A = A.
    /// assert!((&a * &p * &a - &a).norm_max() < 1e-12);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn pseudoinverse(&self, exec: &(impl Executor + ?Sized)) -> Result<Mat<T>, LinalgError> {
        self.pseudoinverse_with(exec, &self.options)
    }

    /// [`Svd::pseudoinverse`] with the call's [`Options`]: the cut-off
    /// ([`Options::cutoff`]) and the products' thresholds.
    pub fn pseudoinverse_with(
        &self,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Mat<T>, LinalgError> {
        let op = "pseudoinverse";
        let m = self.u.nrows();
        let mut eye = scratch::zeros::<T>(op, m, m)?;
        for i in 0..m {
            eye[(i, i)] = T::one_impl();
        }
        let rcond = options.cutoff_rcond().map(RealOf::<T>::from_f64);
        self.pseudo_apply(op, eye.as_ref(), rcond, exec, options)
    }

    /// `ln|det(A)|` of a square `A`: the sum of the logarithms of the singular values
    /// (`-inf` when one is zero); the SVD holds no sign (`det(U) det(V^H)` is not formed).
    /// Errors: [`LinalgError::NotSquare`].
    pub fn log_abs_det(&self) -> Result<RealOf<T>, LinalgError> {
        let (m, n) = (self.u.nrows(), self.v.nrows());
        if m != n {
            return Err(LinalgError::NotSquare { op: "log_abs_det", operand: "A", rows: m, cols: n });
        }
        let log = self.s.iter().map(|s| s.to_f64().ln()).sum::<f64>();
        Ok(RealOf::<T>::from_f64(log))
    }

    /// `A` again: `U_k diag(s) V_k^H` over the first `k = min(m, n)` columns (serially; a
    /// check, not a kernel).
    pub fn reconstruct(&self) -> Mat<T> {
        let k = self.s.len();
        let (u, v) = (self.u.as_ref().subcols(0, k), self.v.as_ref().subcols(0, k));
        let us = Mat::from_fn(u.nrows(), k, |i, j| {
            let (re, im) = u[(i, j)].parts();
            T::from_parts(re * self.s[j], im * self.s[j])
        });
        us * v.adjoint()
    }
}

/// The singular values of `a` (which may be a conjugated view), non-increasing, on `exec`;
/// no vectors are formed. Errors as [`Svd::new`].
pub fn singular_values<T: Field, A: Conjugate<Canonical = T>>(
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    exec: &(impl Executor + ?Sized),
) -> Result<Vec<RealOf<T>>, LinalgError> {
    singular_values_with(a, exec, &Options::new())
}

/// [`singular_values`] with the call's [`Options`] (thresholds).
pub fn singular_values_with<T: Field, A: Conjugate<Canonical = T>>(
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<Vec<RealOf<T>>, LinalgError> {
    let a = a.as_mat_ref();
    let k = a.nrows().min(a.ncols());
    let mut s = scratch::vec("singular_values", k, RealOf::<T>::ZERO)?;
    let mut copy = None;
    let a = canonical("singular_values", a, &mut copy)?;
    let req = svd_scratch::<T>(a.nrows(), a.ncols(), false);
    scratch::with("singular_values", req, |stack| {
        run(a.as_ref(), &mut s, None, None, exec, options, stack)
    })??;
    Ok(s)
}

/// The SVD of `a` (`m x n`, `k = min(m, n)`) into the caller's storage, on `exec`: `s` (`k`
/// entries) gets the singular values; `u`, if given, the left singular vectors (`m x k` or
/// `m x m`), `v` the right ones (`n x k` or `n x n`). `a` is only read. A full `u` or `v` is
/// overwritten whole, an orthonormal basis whatever it held before (its columns past `k` span
/// the complement).
///
/// Errors: [`LinalgError::ShapeMismatch`] for `s`, `u` or `v` (`u` and `v` are checked
/// against the thin shape when their column count is neither), [`LinalgError::NotFinite`]
/// (checked first: nothing is written), [`LinalgError::NoConvergence`] (then `s`, `u` and `v`
/// hold no result), [`LinalgError::OutOfMemory`] (the scratch, or the copy of a conjugated
/// view, cannot be allocated; nothing is written).
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg, Exec};
///
/// let a = Mat::<f64>::from_fn(3, 5, |i, j| (i + 2 * j) as f64);
/// let mut s = [0.0; 3];
/// let mut v = Mat::<f64>::zeros(5, 3);
/// linalg::svd_into(a.as_ref(), &mut s, None, Some(v.as_mut()), &Exec::serial(), &linalg::Options::new())?;
/// // Rank 2: the third value is zero to rounding.
/// assert!(s[2] < 1e-12 * s[0]);
/// let mut short = [0.0; 2];
/// let err = linalg::svd_into(a.as_ref(), &mut short, None, None, &Exec::serial(), &linalg::Options::new());
/// assert!(matches!(err, Err(linalg::LinalgError::ShapeMismatch { operand: "s", .. })));
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
pub fn svd_into<T: Field, A: Conjugate<Canonical = T>>(
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    s: &mut [RealOf<T>],
    u: Option<MatMut<'_, T>>,
    v: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<(), LinalgError> {
    let mut copy = None;
    let a = canonical("svd", a.as_mat_ref(), &mut copy)?;
    let vectors = u.is_some() || v.is_some();
    let req = svd_scratch::<T>(a.nrows(), a.ncols(), vectors);
    scratch::with("svd", req, |stack| {
        svd_into_with_scratch(a, s, u, v, exec, options, stack)
    })?
}

/// The scratch [`svd_into_with_scratch`] needs for an `m x n` matrix, with or without vectors
/// (thin or full), whichever path the call takes.
pub fn svd_scratch<T: ComplexField>(m: usize, n: usize, vectors: bool) -> StackReq {
    kernel_svd_scratch::<T>(m, n, vectors)
}

/// [`svd_into`] taking its scratch from `stack` (at least [`svd_scratch`] of the shape): no
/// matrix of the matrix's size is allocated, so a caller that calls it many times touches no
/// fresh memory; what is still allocated is far smaller (vectors of `O(n)` entries, the
/// back-transformations' per-chunk scratch).
///
/// ```
/// use faer::dyn_stack::{MemBuffer, MemStack};
/// use faer::Mat;
/// use teamalg::{linalg, Exec};
///
/// let (m, n) = (150, 140);
/// let mut buf = MemBuffer::new(linalg::svd_scratch::<f64>(m, n, true));
/// let a = Mat::<f64>::from_fn(m, n, |i, j| ((i * 7 + j * 13) % 11) as f64 + (i == j) as u8 as f64);
/// let (mut s, mut u, mut v) = (vec![0.0; n], Mat::<f64>::zeros(m, n), Mat::<f64>::zeros(n, n));
/// let opts = linalg::Options::new();
/// for _ in 0..3 {
///     let stack = MemStack::new(&mut buf);
///     linalg::svd_into_with_scratch(a.as_ref(), &mut s, Some(u.as_mut()), Some(v.as_mut()), &Exec::serial(), &opts, stack)?;
/// }
/// let us = Mat::<f64>::from_fn(m, n, |i, j| u[(i, j)] * s[j]);
/// assert!((us * v.transpose() - &a).norm_max() < 1e-11);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
///
/// Errors: [`LinalgError::ScratchTooSmall`] when `stack` is smaller than [`svd_scratch`] of
/// the shape (with `vectors` true when `u` or `v` is given), and those of [`svd_into`];
/// nothing is written then.
pub fn svd_into_with_scratch<T: Field, A: Conjugate<Canonical = T>>(
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    s: &mut [RealOf<T>],
    u: Option<MatMut<'_, T>>,
    v: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> Result<(), LinalgError> {
    let mut copy = None;
    let a = canonical("svd", a.as_mat_ref(), &mut copy)?;
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    check::dim("svd", "s", Dim::Rows, k, s.len())?;
    for (name, x, rows) in [("U", u.as_ref(), m), ("V", v.as_ref(), n)] {
        if let Some(x) = x {
            check::dim("svd", name, Dim::Rows, rows, x.nrows())?;
            if x.ncols() != rows {
                check::dim("svd", name, Dim::Cols, k, x.ncols())?;
            }
        }
    }
    let req = svd_scratch::<T>(m, n, u.is_some() || v.is_some());
    check::scratch("svd", stack, req)?;
    run(a, s, u, v, exec, options, stack)
}

/// The kernel. It checks `A`'s finiteness itself before it writes, whatever the options say
/// (see [`Options::check_finite`]: an SVD of NaN has no meaning, and its iterations would not
/// converge), and then starts a full `U` or `V` as the identity (so it comes back orthonormal
/// whatever the caller's buffer held), so the facade neither scans `A` nor prepares the
/// factors; `A` is scanned again only on a refusal, to name the entry.
fn run<T: Field>(
    a: MatRef<'_, T>,
    s: &mut [RealOf<T>],
    u: Option<MatMut<'_, T>>,
    v: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> Result<(), LinalgError> {
    // The kernel's default path: teamalg's own where it measured faster than faer's serial SVD
    // (values only from 128, with vectors from 256 up to twice as long as wide), faer's serial
    // SVD elsewhere; the thresholds
    // reach the own path's regions when it runs.
    let params = SvdParams {
        path: SvdPath::Auto,
        solver: BidiagSvdParams {
            threshold: options.get(Family::HouseholderRank1),
            ..BidiagSvdParams::default()
        },
        threshold: options.get(Family::Qr),
        bidiag: options.get(Family::BidiagStep),
        dc: options.get(Family::BidiagSvdDc),
        gemm: options.get(Family::Gemm),
    };
    svd_with_scratch(a, s, u, v, exec, params, stack).map_err(|e| match e {
        // The kernel refused non-finite input before writing: name the entry.
        BidiagSvdError::NotFinite => check::finite("svd", "A", a, Stored::All)
            .err()
            .unwrap_or(LinalgError::NoConvergence { op: "svd" }),
        BidiagSvdError::NoConvergence { .. } => LinalgError::NoConvergence { op: "svd" },
    })
}
