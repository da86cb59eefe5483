//! The eigendecomposition of a general square matrix, `A V = V diag(w)`, with complex
//! eigenvalues and eigenvectors: [`Eigen::new`] and [`eigenvalues`].

use faer::complex::Complex;
use faer::dyn_stack::StackReq;
use faer::linalg::evd::{evd_cplx, evd_real, evd_scratch, ComputeEigenvectors};
use faer::mat::AsMatRef;
use faer::traits::math_utils::{
    abs, add, div, eps, imag, is_finite, max, mul, neg, real, sqrt, zero,
};
use faer::traits::{Conjugate, RealField};
use faer::{Mat, MatMut, MatRef, Par};
use teamalg_gates::Family;
use teamalg_kernels::evd::schur::SchurError;
use teamalg_kernels::par::Executor;

use super::check::{self, Stored};
use super::views::canonical;
use super::{det, norm_l1, real_to_f64, scratch, Field, LinalgError, Lu, Options};

/// The eigendecomposition `A V = V diag(w)` of a square matrix, real or complex, with
/// complex `w` and `V` (a real matrix's complex eigenvalues come in conjugate pairs, each
/// pair's vectors conjugate too). Every column of `V` has unit 2-norm (to rounding; faer's
/// back substitution leaves them unnormalized, so they are scaled here), and `A V = V
/// diag(w)` holds to the backward-error bound `c u n ||A|| ||V||`. For a defective `A` (a
/// Jordan block: fewer independent eigenvectors than `n`) the same holds, but `V` is singular
/// or nearly (the block's columns agree to rounding), so [`Eigen::inverse`] refuses it.
/// Complex input from order [`TEAM_FROM`] on, where the gate sends the work to the team and
/// the CPUs have room for it (teamalg's Schur form is slower than faer's on one thread):
/// faer's Hessenberg reduction, then teamalg's Schur form (multishift QR with aggressive early
/// deflation, its far updates on the team), the eigenvectors of the triangular form in column
/// chunks and their back-transformation by the team's GEMM (`docs/general-evd.md`). Real
/// input, and complex input below that order or where the gate stays serial: faer's
/// Hessenberg reduction, Schur form and back substitution, serially. For a
/// Hermitian matrix use [`SelfAdjointEigen`](super::SelfAdjointEigen) (real eigenvalues,
/// orthonormal vectors, faster).
///
/// ```
/// use faer::{c64, Mat};
/// use teamalg::{linalg::Eigen, Exec};
///
/// // A rotation by 90 degrees: eigenvalues +-i.
/// let a = Mat::<f64>::from_fn(2, 2, |i, j| [[0.0, -1.0], [1.0, 0.0]][i][j]);
/// let evd = Eigen::new(&a, &Exec::serial())?;
/// let mut w: Vec<c64> = evd.eigenvalues().to_vec();
/// w.sort_by(|x, y| x.im.total_cmp(&y.im));
/// assert!((w[0] - c64::new(0.0, -1.0)).norm() < 1e-12 && (w[1] - c64::new(0.0, 1.0)).norm() < 1e-12);
/// // A V = V diag(w), in complex arithmetic.
/// let ac = Mat::<c64>::from_fn(2, 2, |i, j| c64::new(a[(i, j)], 0.0));
/// let v = evd.eigenvectors();
/// let vd = Mat::<c64>::from_fn(2, 2, |i, j| v[(i, j)] * evd.eigenvalues()[j]);
/// assert!((&ac * v - vd).norm_max() < 1e-12);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Eigen<T: Field> {
    values: Vec<Complex<T::Real>>,
    vectors: Mat<Complex<T::Real>>,
}

impl<T: Field> Eigen<T> {
    /// The eigenvalues and eigenvectors of `a` (square; it may be a conjugated view), on
    /// `exec` as the type's docs say (complex input from order [`TEAM_FROM`]); `options`'
    /// threshold for [`Family::Gemm`] decides for the Schur form's far updates.
    /// Errors: [`LinalgError::NotSquare`], [`LinalgError::OutOfMemory`] (the results and the
    /// solver's copy are sized before anything is read), [`LinalgError::NotFinite`] (always
    /// checked: the iteration has no result on NaN), [`LinalgError::NoConvergence`].
    pub fn new<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Self, LinalgError> {
        Self::new_with(a, exec, &Options::new())
    }

    /// [`Eigen::new`] with the call's [`Options`].
    pub fn new_with<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Self, LinalgError> {
        let mut copy = None;
        let a = canonical("eigen", a.as_mat_ref(), &mut copy)?;
        let (values, vectors) = run("eigen", a, true, exec, options)?;
        Ok(Eigen { values, vectors })
    }

    /// The eigenvalues `w`, in the order of `V`'s columns.
    pub fn eigenvalues(&self) -> &[Complex<T::Real>] {
        &self.values
    }

    /// `V`: column `j` is an eigenvector of `w[j]`.
    pub fn eigenvectors(&self) -> MatRef<'_, Complex<T::Real>> {
        self.vectors.as_ref()
    }
}

impl<T: Field> Eigen<T>
where
    Complex<T::Real>: Field<Real = T::Real>,
{
    /// `det(A)`, the product of the eigenvalues (complex; for a real `A` its imaginary part
    /// is rounding). Always `Ok`: the `Result` is every determinant's shape.
    pub fn determinant(&self) -> Result<Complex<T::Real>, LinalgError> {
        Ok(det::product(self.values.iter().cloned(), false))
    }

    /// `(phase, ln|det(A)|)` from the eigenvalues: see
    /// [`FullPivLu::slogdet`](super::FullPivLu::slogdet).
    pub fn slogdet(&self) -> Result<(Complex<T::Real>, T::Real), LinalgError> {
        Ok(det::slogdet(self.values.iter().cloned(), false))
    }

    /// `ln|det(A)|` ([`Eigen::slogdet`]'s second part).
    pub fn log_abs_det(&self) -> Result<T::Real, LinalgError> {
        self.slogdet().map(|(_, l)| l)
    }

    /// `A^-1 = V diag(w)^-1 V^-1` (complex), with `V^-1` from an LU of `V` on `exec`. For a
    /// solve or an inverse of a general matrix an [`Lu`](super::Lu) is cheaper and more
    /// accurate; this is for a caller who holds the decomposition already.
    ///
    /// Errors: [`LinalgError::Singular`] (an eigenvalue is zero; `index` is its position),
    /// [`LinalgError::IllConditioned`] (`rcond(V)` of the unit-norm eigenvectors at most the
    /// square root of the machine epsilon: `A` is defective or nearly, and
    /// `V diag(w)^-1 V^-1` would keep fewer than half the digits; a defective `A`'s computed
    /// `V` is singular only to about `eps |w| / |A|`, so a limit of `n eps` would let some
    /// through with no correct digit).
    ///
    /// ```
    /// use faer::{c64, Mat};
    /// use teamalg::{linalg::{Eigen, LinalgError}, Exec};
    ///
    /// let e = Exec::serial();
    /// let a = faer::mat![[2.0, 1.0], [0.0, 3.0f64]];
    /// let inv = Eigen::new(&a, &e)?.inverse(&e)?;
    /// let want = faer::mat![[0.5, -1.0 / 6.0], [0.0, 1.0 / 3.0f64]];
    /// assert!((0..2).all(|i| (0..2).all(|j| (inv[(i, j)] - c64::new(want[(i, j)], 0.0)).norm() < 1e-12)));
    /// // A Jordan block has one eigenvector: no inverse through V.
    /// let jordan = faer::mat![[1.0, 1.0], [0.0, 1.0f64]];
    /// let err = Eigen::new(&jordan, &e)?.inverse(&e).unwrap_err();
    /// assert!(matches!(err, LinalgError::IllConditioned { op: "inverse", .. }));
    /// # Ok::<(), LinalgError>(())
    /// ```
    pub fn inverse(
        &self,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Mat<Complex<T::Real>>, LinalgError> {
        let op = "inverse";
        let zero = Complex::new(zero(), zero());
        if let Some(index) = self.values.iter().position(|w| *w == zero) {
            return Err(LinalgError::Singular { op, index });
        }
        let v = self.vectors.as_ref();
        let n = v.nrows();
        let lu = Lu::new(v, exec)?;
        let rcond = lu.rcond(norm_l1(v))?;
        let limit = sqrt(&eps::<T::Real>());
        if rcond <= limit {
            let (rcond, limit) = (real_to_f64::<T>(&rcond), real_to_f64::<T>(&limit));
            return Err(LinalgError::IllConditioned { op, rcond, limit });
        }
        // X = V diag(w)^-1, then X V^-1 by a right solve.
        let mut x = Mat::from_fn(n, n, |i, j| div(&v[(i, j)], &self.values[j]));
        lu.rsolve_in_place(x.as_mut(), exec)?;
        Ok(x)
    }
}

/// The eigenvalues of the square `a` (any scalar type, complex results), as [`Eigen::new`]
/// computes them without the vectors (cheaper).
///
/// ```
/// use teamalg::{linalg, Exec};
///
/// let a = faer::mat![[2.0, 0.0], [0.0, 3.0f64]];
/// let mut w = linalg::eigenvalues(&a, &Exec::serial())?;
/// w.sort_by(|x, y| x.re.total_cmp(&y.re));
/// assert_eq!((w[0].re, w[1].re), (2.0, 3.0));
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
pub fn eigenvalues<T: Field, A: Conjugate<Canonical = T>>(
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    exec: &(impl Executor + ?Sized),
) -> Result<Vec<Complex<T::Real>>, LinalgError> {
    eigenvalues_with(a, exec, &Options::new())
}

/// [`eigenvalues`] with the call's [`Options`].
pub fn eigenvalues_with<T: Field, A: Conjugate<Canonical = T>>(
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<Vec<Complex<T::Real>>, LinalgError> {
    let mut copy = None;
    let a = canonical("eigenvalues", a.as_mat_ref(), &mut copy)?;
    Ok(run("eigenvalues", a, false, exec, options)?.0)
}

/// The checked decomposition: real input through faer's real path (pairs of conjugate
/// eigenvalues), complex through the complex one.
#[allow(clippy::type_complexity)]
fn run<T: Field>(
    op: &'static str,
    a: MatRef<'_, T>,
    vectors: bool,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<(Vec<Complex<T::Real>>, Mat<Complex<T::Real>>), LinalgError> {
    let n = check::square(op, "A", a)?;
    let want = if vectors {
        ComputeEigenvectors::Yes
    } else {
        ComputeEigenvectors::No
    };
    let vn = if vectors { n } else { 0 };
    let failed = |_| LinalgError::NoConvergence { op };
    // Sized first: the results and the copy the solver reads are allocated before `a` is
    // scanned, so an `a` too large to hold is refused at once.
    let mut v = scratch::mat(op, vn, vn, |_, _| Complex::new(zero(), zero()))?;
    if T::IS_REAL {
        let ar = scratch::room::<T::Real>(op, n, n)?;
        let mut re = scratch::zeros::<T::Real>(op, n, 1)?;
        let mut im = scratch::zeros::<T::Real>(op, n, 1)?;
        let mut u = scratch::zeros::<T::Real>(op, vn, vn)?;
        check::finite(op, "A", a, Stored::All)?;
        let ar = ar.fill(|i, j| real(&a[(i, j)]));
        let req: StackReq = evd_scratch::<T::Real>(
            n,
            ComputeEigenvectors::No,
            want,
            Par::Seq,
            Default::default(),
        );
        scratch::with(op, req, |stack| {
            evd_real(
                ar.as_ref(),
                re.as_mut().col_mut(0).as_diagonal_mut(),
                im.as_mut().col_mut(0).as_diagonal_mut(),
                None,
                vectors.then(|| u.as_mut()),
                Par::Seq,
                stack,
                Default::default(),
            )
        })?
        .map_err(failed)?;
        let values: Vec<_> = (0..n)
            .map(|i| Complex::new(re[(i, 0)], im[(i, 0)]))
            .collect();
        let mut j = 0;
        while j < vn {
            if im[(j, 0)] == zero() || j + 1 == vn {
                for i in 0..n {
                    v[(i, j)] = Complex::new(u[(i, j)], zero());
                }
                j += 1;
            } else {
                // A conjugate pair: the real and imaginary parts in columns j and j + 1.
                for i in 0..n {
                    let (x, y) = (u[(i, j)], u[(i, j + 1)]);
                    v[(i, j)] = Complex::new(x, y);
                    v[(i, j + 1)] = Complex::new(x, neg(&y));
                }
                j += 2;
            }
        }
        unit_columns(v.as_mut());
        Ok((values, v))
    } else {
        let ac = scratch::room::<Complex<T::Real>>(op, n, n)?;
        let mut w = scratch::mat(op, n, 1, |_, _| Complex::new(zero(), zero()))?;
        check::finite(op, "A", a, Stored::All)?;
        // teamalg's Schur form on the team where it pays (`TeamEvd`), else faer's serial call.
        let mut values = vec![Complex::new(zero(), zero()); n];
        let gemm = options.get(Family::Gemm);
        if T::pays_on_team(n, exec, gemm) {
            // The copy faer's call would read is not needed: freed before the path's own.
            drop(ac);
            // Only the complex scalars have the path, and `pays_on_team` says no for the rest.
            let r = T::team_evd(a, &mut values, vectors.then(|| v.as_mut()), exec, gemm)
                .unwrap_or(Err(SchurError::NoConvergence));
            r.map_err(|e| match e {
                SchurError::OutOfMemory => LinalgError::OutOfMemory { op },
                // The input is finite (checked above): an overflow on the way, or iterations
                // that ran out; no meaningful result either way.
                _ => LinalgError::NoConvergence { op },
            })?;
            unit_columns(v.as_mut());
            return Ok((values, v));
        }
        let ac = ac.fill(|i, j| Complex::new(real(&a[(i, j)]), imag(&a[(i, j)])));
        let req = evd_scratch::<Complex<T::Real>>(
            n,
            ComputeEigenvectors::No,
            want,
            Par::Seq,
            Default::default(),
        );
        scratch::with(op, req, |stack| {
            evd_cplx(
                ac.as_ref(),
                w.as_mut().col_mut(0).as_diagonal_mut(),
                None,
                vectors.then(|| v.as_mut()),
                Par::Seq,
                stack,
                Default::default(),
            )
        })?
        .map_err(failed)?;
        unit_columns(v.as_mut());
        Ok(((0..n).map(|i| w[(i, 0)]).collect(), v))
    }
}

/// Scales every column of `v` to unit 2-norm. faer's back substitution leaves its vectors
/// unnormalized (a real pair's of norm `sqrt(2)`, a defective block's as large as `1 / eps`).
/// The column is divided by its largest part before the sum of squares is formed, so the norm
/// neither overflows nor underflows.
fn unit_columns<R: RealField>(mut v: MatMut<'_, Complex<R>>) {
    for j in 0..v.ncols() {
        let mut big = zero::<R>();
        for i in 0..v.nrows() {
            let x = &v[(i, j)];
            big = max(&big, &max(&abs(&x.re), &abs(&x.im)));
        }
        if big == zero::<R>() || !is_finite(&big) {
            // Nothing to scale: left as faer gave it. A zero column is not met (the solver
            // perturbs zero pivots); a NaN is faer's overflow on entries near 1e300.
            continue;
        }
        let mut sum = zero::<R>();
        for i in 0..v.nrows() {
            let x = &v[(i, j)];
            let (re, im) = (div(&x.re, &big), div(&x.im, &big));
            sum = add(&sum, &add(&mul(&re, &re), &mul(&im, &im)));
        }
        let norm = sqrt(&sum);
        for i in 0..v.nrows() {
            let x = &v[(i, j)];
            let re = div(&div(&x.re, &big), &norm);
            let im = div(&div(&x.im, &big), &norm);
            v[(i, j)] = Complex::new(re, im);
        }
    }
}
