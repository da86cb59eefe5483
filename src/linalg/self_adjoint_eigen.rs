//! The eigendecomposition of a self-adjoint matrix, `A = U diag(w) U^H`: owned
//! ([`SelfAdjointEigen::new`], [`self_adjoint_eigenvalues`]) or into the caller's storage
//! ([`self_adjoint_eigen_into`], with scratch [`self_adjoint_eigen_into_with_scratch`]).

use faer::dyn_stack::{MemStack, StackReq};
use faer::mat::AsMatRef;
use faer::traits::{ComplexField, Conjugate};
use faer::{Accum, Mat, MatMut, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::bidiag_svd::{Real, Rotate};
use teamalg_kernels::evd::{
    self_adjoint_evd_scratch, self_adjoint_evd_with_scratch, EvdError, EvdParams,
};
use teamalg_kernels::par::Executor;

use super::views::canonical;
use super::{hermitian, scratch};
use super::check;
use super::svd::RealOf;
use super::{det, Dim, Field, LinalgError, Options};

/// The eigendecomposition `A = U diag(w) U^H` of a self-adjoint (real symmetric or complex
/// Hermitian) matrix, read from its lower triangle: the eigenvalues non-decreasing, `U`
/// unitary. The tridiagonalization, the tridiagonal solver (with vectors) and the
/// back-transformation each run on the executor where the gate says it pays (`docs/svd.md`,
/// "The self-adjoint EVD").
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg, Pool};
///
/// let team = Pool::builder().threads(2).build()?.into_team(2)?;
/// // The second difference matrix: eigenvalues 2 - 2 cos(k pi / 6), k = 1..5.
/// let a = Mat::<f64>::from_fn(5, 5, |i, j| match i.abs_diff(j) { 0 => 2.0, 1 => -1.0, _ => 0.0 });
/// let eig = linalg::SelfAdjointEigen::new(&a, &team)?;
/// for (k, w) in eig.w().iter().enumerate() {
///     let exact = 2.0 - 2.0 * ((k + 1) as f64 * std::f64::consts::PI / 6.0).cos();
///     assert!((w - exact).abs() < 1e-14);
/// }
/// assert!((eig.reconstruct() - &a).norm_max() < 1e-14);
/// let w = linalg::self_adjoint_eigenvalues(&a, &team)?;
/// assert!((w[4] - eig.w()[4]).abs() < 1e-14);
/// # Ok::<(), teamalg::Error>(())
/// ```
// `Send` and `Sync` are automatic and sound: an owned matrix and a vector, read-only through
// `&SelfAdjointEigen`.
#[derive(Debug, Clone)]
pub struct SelfAdjointEigen<T: Rotate> {
    w: Vec<RealOf<T>>,
    u: Mat<T>,
    /// The call's options, which its pseudo-inverse keeps (the cut-off, the product's
    /// thresholds).
    options: Options,
}

impl<T: Field> SelfAdjointEigen<T> {
    /// The eigendecomposition of `a` (which may be a conjugated view), reading its lower
    /// triangle, on `exec`. Errors: [`LinalgError::NotSquare`], [`LinalgError::OutOfMemory`]
    /// (the vectors, the scratch and a conjugated view's copy are sized before anything is
    /// read) and [`LinalgError::NotFinite`] (checked first), [`LinalgError::NoConvergence`].
    pub fn new<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Self, LinalgError> {
        Self::new_with(a, exec, &Options::new())
    }

    /// [`SelfAdjointEigen::new`] with the call's [`Options`] (family `TridiagStep` for the
    /// tridiagonalization, `TridiagEvdDc` and `Gemm` for the tridiagonal solver with vectors,
    /// `Qr` for the back-transformation).
    pub fn new_with<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Self, LinalgError> {
        let a = a.as_mat_ref();
        let n = check(a.canonical())?;
        // The vectors are sized first: a result too large to hold is refused before `a` is
        // copied or read.
        let mut u = scratch::zeros("self_adjoint_eigen", n, n)?;
        let mut w = scratch::vec("self_adjoint_eigen", n, RealOf::<T>::ZERO)?;
        let mut copy = None;
        let a = canonical("self_adjoint_eigen", a, &mut copy)?;
        let req = self_adjoint_evd_scratch::<T>(n, true);
        scratch::with("self_adjoint_eigen", req, |stack| {
            run(a.as_ref(), &mut w, Some(u.as_mut()), exec, options, stack)
        })??;
        Ok(SelfAdjointEigen { w, u, options: *options })
    }

    /// The eigenvalues, non-decreasing.
    pub fn w(&self) -> &[RealOf<T>] {
        &self.w
    }

    /// The eigenvectors, as columns (`A U = U diag(w)`).
    pub fn u(&self) -> MatRef<'_, T> {
        self.u.as_ref()
    }

    /// `A` again: `U diag(w) U^H` (serially; a check, not a kernel).
    pub fn reconstruct(&self) -> Mat<T> {
        self.weighted(Some)
    }

    /// `U_r diag(f(w_r)) U_r^H` over the eigenvalues where `f` gives a value.
    fn weighted(&self, f: impl Fn(RealOf<T>) -> Option<RealOf<T>>) -> Mat<T> {
        let u = self.u.as_ref();
        let keep: Vec<(usize, RealOf<T>)> =
            (0..self.w.len()).filter_map(|j| f(self.w[j]).map(|x| (j, x))).collect();
        let uw = Mat::from_fn(u.nrows(), keep.len(), |i, k| {
            let (j, x) = keep[k];
            let (re, im) = u[(i, j)].parts();
            T::from_parts(re * x, im * x)
        });
        let ur = Mat::from_fn(u.nrows(), keep.len(), |i, k| u[(i, keep[k].0)]);
        uw * ur.adjoint()
    }

    /// The Moore-Penrose pseudo-inverse `A^+ = U_r diag(1 / w_r) U_r^H` over the eigenvalues
    /// with `|w| > rcond max|w|` (`rcond` by default `n` times the machine epsilon, as
    /// [`Svd::pseudoinverse`](super::Svd::pseudoinverse); another through
    /// [`SelfAdjointEigen::pseudoinverse_with`] and [`Options::cutoff`]), its product on
    /// `exec`; the inverse when none is cut. Errors: [`LinalgError::OutOfMemory`].
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::{linalg::SelfAdjointEigen, Exec};
    ///
    /// // Indefinite and singular: eigenvalues -1, 0, 3.
    /// let a = faer::mat![[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 0.0f64]];
    /// let p = SelfAdjointEigen::new(&a, &Exec::serial())?.pseudoinverse(&Exec::serial())?;
    /// assert!((&a * &p * &a - &a).norm_max() < 1e-12);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn pseudoinverse(&self, exec: &(impl Executor + ?Sized)) -> Result<Mat<T>, LinalgError> {
        self.pseudoinverse_with(exec, &self.options)
    }

    /// [`SelfAdjointEigen::pseudoinverse`] with the call's [`Options`]: the cut-off
    /// ([`Options::cutoff`]) and the product's thresholds (family `Gemm`).
    pub fn pseudoinverse_with(
        &self,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Mat<T>, LinalgError> {
        let op = "pseudoinverse";
        let n = self.w.len();
        let top = self.w.iter().fold(RealOf::<T>::ZERO, |m, x| {
            if x.abs() > m {
                x.abs()
            } else {
                m
            }
        });
        // `EPS` is the unit roundoff, half the machine epsilon.
        let default = RealOf::<T>::EPS * RealOf::<T>::from_f64(2.0 * n as f64);
        let rcond = options.cutoff_rcond().map(RealOf::<T>::from_f64);
        let cut = rcond.unwrap_or(default) * top;
        let keep: Vec<usize> = (0..n).filter(|&j| self.w[j].abs() > cut).collect();
        let u = self.u.as_ref();
        let (mut uw, mut ur) = (scratch::zeros::<T>(op, n, keep.len())?, scratch::zeros::<T>(op, n, keep.len())?);
        let mut x = scratch::zeros::<T>(op, n, n)?;
        for (k, &j) in keep.iter().enumerate() {
            let inv = RealOf::<T>::ONE / self.w[j];
            for i in 0..n {
                let (re, im) = u[(i, j)].parts();
                uw[(i, k)] = T::from_parts(re * inv, im * inv);
                ur[(i, k)] = u[(i, j)];
            }
        }
        // The factors are finite (checked when made).
        let product = options.check_finite(false);
        super::matmul_with(x.as_mut(), Accum::Replace, uw.as_ref(), ur.adjoint(), T::one_impl(), exec, &product)?;
        Ok(x)
    }

    /// `det(A)`, the product of the eigenvalues (real for a self-adjoint `A`, given as `T`).
    /// Always `Ok`: the `Result` is every determinant's shape.
    pub fn determinant(&self) -> Result<T, LinalgError> {
        Ok(det::product(self.as_scalars(), false))
    }

    /// `(sign, ln|det(A)|)` from the eigenvalues: see
    /// [`FullPivLu::slogdet`](super::FullPivLu::slogdet).
    pub fn slogdet(&self) -> Result<(T, T::Real), LinalgError> {
        Ok(det::slogdet(self.as_scalars(), false))
    }

    /// `ln|det(A)|` ([`SelfAdjointEigen::slogdet`]'s second part).
    pub fn log_abs_det(&self) -> Result<T::Real, LinalgError> {
        self.slogdet().map(|(_, l)| l)
    }

    /// The eigenvalues as scalars of `T`.
    fn as_scalars(&self) -> impl Iterator<Item = T> + '_ {
        self.w.iter().map(|&w| T::from_parts(w, RealOf::<T>::ZERO))
    }
}

/// The eigenvalues of the self-adjoint `a` (which may be a conjugated view), reading its
/// lower triangle, non-decreasing, on `exec`; no vectors are formed. Errors as
/// [`SelfAdjointEigen::new`].
pub fn self_adjoint_eigenvalues<T: Field, A: Conjugate<Canonical = T>>(
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    exec: &(impl Executor + ?Sized),
) -> Result<Vec<RealOf<T>>, LinalgError> {
    self_adjoint_eigenvalues_with(a, exec, &Options::new())
}

/// [`self_adjoint_eigenvalues`] with the call's [`Options`] (the triangle read, the Hermitian
/// check, thresholds).
pub fn self_adjoint_eigenvalues_with<T: Field, A: Conjugate<Canonical = T>>(
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<Vec<RealOf<T>>, LinalgError> {
    let a = a.as_mat_ref();
    let n = check(a.canonical())?;
    let mut w = scratch::vec("self_adjoint_eigenvalues", n, RealOf::<T>::ZERO)?;
    let mut copy = None;
    let a = canonical("self_adjoint_eigenvalues", a, &mut copy)?;
    let req = self_adjoint_evd_scratch::<T>(n, false);
    scratch::with("self_adjoint_eigenvalues", req, |stack| {
        run(a.as_ref(), &mut w, None, exec, options, stack)
    })??;
    Ok(w)
}

/// The scratch [`self_adjoint_eigen_into_with_scratch`] needs for order `n`, with or without
/// vectors.
pub fn self_adjoint_eigen_scratch<T: ComplexField>(n: usize, vectors: bool) -> StackReq {
    self_adjoint_evd_scratch::<T>(n, vectors)
}

/// The eigendecomposition of the self-adjoint `a` (`n x n`, its lower triangle read) into the
/// caller's storage, on `exec`: `w` (`n` entries) gets the eigenvalues, `u`, if given
/// (`n x n`), the eigenvectors.
///
/// Errors: [`LinalgError::NotSquare`], [`LinalgError::ShapeMismatch`] for `w` or `u`,
/// [`LinalgError::NotFinite`] (checked first: nothing is written),
/// [`LinalgError::NoConvergence`] (then `w` and `u` hold no result),
/// [`LinalgError::OutOfMemory`] (the scratch, or the copy of a conjugated view, cannot be
/// allocated; nothing is written).
pub fn self_adjoint_eigen_into<T: Field, A: Conjugate<Canonical = T>>(
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    w: &mut [RealOf<T>],
    u: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<(), LinalgError> {
    let mut copy = None;
    let a = canonical("self_adjoint_eigen", a.as_mat_ref(), &mut copy)?;
    let req = self_adjoint_evd_scratch::<T>(a.nrows(), u.is_some());
    scratch::with("self_adjoint_eigen", req, |stack| {
        self_adjoint_eigen_into_with_scratch(a, w, u, exec, options, stack)
    })?
}

/// [`self_adjoint_eigen_into`] taking its scratch from `stack` (at least
/// [`self_adjoint_eigen_scratch`] of the order): no `n x n` matrix is allocated, only the
/// back-transformation's per-chunk scratch and the parallel reduction's step vectors.
///
/// ```
/// use faer::dyn_stack::{MemBuffer, MemStack};
/// use faer::{c64, Mat};
/// use teamalg::{linalg, Exec};
///
/// let n = 40;
/// let mut buf = MemBuffer::new(linalg::self_adjoint_eigen_scratch::<c64>(n, true));
/// let a = Mat::<c64>::from_fn(n, n, |i, j| match i.abs_diff(j) {
///     0 => c64::new(i as f64, 0.0),
///     1 if i > j => c64::new(0.0, 1.0),
///     1 => c64::new(0.0, -1.0),
///     _ => c64::new(0.0, 0.0),
/// });
/// let (mut w, mut u) = (vec![0.0; n], Mat::<c64>::zeros(n, n));
/// let opts = linalg::Options::new();
/// for _ in 0..3 {
///     let stack = MemStack::new(&mut buf);
///     linalg::self_adjoint_eigen_into_with_scratch(a.as_ref(), &mut w, Some(u.as_mut()), &Exec::serial(), &opts, stack)?;
/// }
/// let uw = Mat::<c64>::from_fn(n, n, |i, j| u[(i, j)] * w[j]);
/// assert!((&a * &u - uw).norm_max() < 1e-12);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
///
/// Errors: [`LinalgError::ScratchTooSmall`] when `stack` is smaller than
/// [`self_adjoint_eigen_scratch`] (with vectors when `u` is given), and those of
/// [`self_adjoint_eigen_into`]; nothing is written then.
pub fn self_adjoint_eigen_into_with_scratch<T: Field, A: Conjugate<Canonical = T>>(
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    w: &mut [RealOf<T>],
    u: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> Result<(), LinalgError> {
    let mut copy = None;
    let a = canonical("self_adjoint_eigen", a.as_mat_ref(), &mut copy)?;
    let n = check::square("self_adjoint_eigen", "A", a)?;
    check::dim("self_adjoint_eigen", "w", Dim::Rows, n, w.len())?;
    if let Some(u) = &u {
        check::dim("self_adjoint_eigen", "U", Dim::Rows, n, u.nrows())?;
        check::dim("self_adjoint_eigen", "U", Dim::Cols, n, u.ncols())?;
    }
    check(a)?;
    check::scratch("self_adjoint_eigen", stack, self_adjoint_evd_scratch::<T>(n, u.is_some()))?;
    run(a, w, u, exec, options, stack)
}

/// What every EVD checks before it writes: squareness. Returns the order. The lower
/// triangle's finiteness the kernel checks itself before it writes, whatever the options say
/// (see [`Options::check_finite`]), so the facade does not scan it a second time.
fn check<T: Field>(a: MatRef<'_, T>) -> Result<usize, LinalgError> {
    check::square("self_adjoint_eigen", "A", a)
}

/// The kernel on square input.
fn run<T: Field>(
    a: MatRef<'_, T>,
    w: &mut [RealOf<T>],
    u: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
    stack: &mut MemStack,
) -> Result<(), LinalgError> {
    if options.checks_hermitian() {
        hermitian::check("self_adjoint_eigen", a, options, true)?;
    }
    // The caller's matrix, whose entries a refusal names (not the mirrored copy's).
    let given = a;
    // The upper triangle, when the options read it, mirrored into a lower one the kernel reads.
    let mut mirrored = None;
    let a = if options.read_side() == faer::Side::Upper {
        let m = mirrored.insert(scratch::copy("self_adjoint_eigen", a)?);
        hermitian::to_lower(m.as_mut(), options);
        m.as_ref()
    } else {
        a
    };
    let params = EvdParams {
        tridiag: options.get(Family::TridiagStep),
        threshold: options.get(Family::Qr),
        solver: options.get(Family::TridiagEvdDc),
        gemm: options.get(Family::Gemm),
    };
    self_adjoint_evd_with_scratch(a, w, u, exec, params, stack).map_err(|e| match e {
        // The kernel refused non-finite input before writing: name the entry, searched in the
        // triangle the caller's matrix is read from, so that its position is the caller's.
        EvdError::NotFinite => {
            check::finite("self_adjoint_eigen", "A", given, hermitian::stored(options))
                .err()
                .unwrap_or(LinalgError::NoConvergence {
                    op: "self_adjoint_eigen",
                })
        }
        EvdError::NoConvergence => LinalgError::NoConvergence {
            op: "self_adjoint_eigen",
        },
    })
}
