//! Bunch-Kaufman, `P A P^T = L B L^H` of a Hermitian indefinite matrix: [`Lblt::new`] and
//! its solves.

use std::cmp::Ordering;

use faer::mat::AsMatRef;
use faer::traits::math_utils::{abs2, conj, from_real, mul_real, real, recip, zero};
use faer::traits::Conjugate;
use faer::{Mat, MatMut, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::lblt::{lblt_in_place, lblt_in_place_scratch, LbltParams};
use teamalg_kernels::par::{Executor, Seq};
use teamalg_kernels::triangular::{self, Diag, SolveParams, SolveSide, Triangle};

use super::check;
use super::condition::{self, Guard};
use super::views::conjugate;
use super::inertia::Inertia;
use super::perm::Perm;
use super::solves::{faer_solvers, solve_forms};
use super::{det, hermitian, scratch};
use super::{Dim, Field, LinalgError, Options, TriangularView};

/// The Bunch-Kaufman factorization `P A P^T = L B L^H` of a Hermitian matrix (LAPACK's
/// `sytrf`/`hetrf`, faer's `Lblt` with partial pivoting): `L` unit lower triangular, `B`
/// block diagonal with blocks of order 1 and 2, `P` a symmetric permutation. Any Hermitian
/// matrix has one, indefinite or singular, at half an LU's work, and it keeps the
/// symmetry: the solver for symmetric indefinite systems (saddle points, KKT systems,
/// shifted eigenproblems). The inertia (the signs of `A`'s eigenvalues) comes from `B`.
/// The factorization is blocked, its trailing updates on `exec` where the gate says they pay
/// (family `Lblt`); its solves run their triangular solves on `exec`.
///
/// ```
/// use faer::Mat;
/// use teamalg::{linalg::Lblt, Exec};
///
/// // A saddle point system [[H, C^T], [C, 0]]: a zero diagonal, no LDL^H without pivoting.
/// let a = Mat::<f64>::from_fn(3, 3, |i, j| [[2.0, 0.0, 1.0], [0.0, 2.0, 1.0], [1.0, 1.0, 0.0]][i][j]);
/// let f = Lblt::new(&a, &Exec::serial())?;
/// let inertia = f.inertia();
/// assert_eq!((inertia.positive, inertia.negative, inertia.zero), (2, 1, 0));
/// let b = Mat::<f64>::from_fn(3, 1, |i, _| [3.0, 3.0, 2.0][i]);
/// let x = f.solve(&b, &Exec::serial())?;
/// assert!((&a * &x - &b).norm_max() < 1e-12);
/// assert!((f.reconstruct() - &a).norm_max() < 1e-12);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
// `Send` and `Sync` are automatic and sound: `Mat`s, index vectors, plain values and the
// guard (a `OnceLock`); a shared `&Lblt` only reads them.
#[derive(Debug)]
pub struct Lblt<T> {
    /// `L` below the diagonal, `B`'s diagonal on it.
    factors: Mat<T>,
    /// `B`'s subdiagonal: entry `i` is `B[(i + 1, i)]`, nonzero at the first index of each
    /// block of order 2.
    subdiag: Vec<T>,
    perm: Perm,
    options: Options,
    guard: Guard,
}

impl<T: Field> Lblt<T> {
    /// Factors a copy of the Hermitian `a` (read from the triangle [`Options::side`] names,
    /// the lower by default). A singular matrix is factored too (its solves then report
    /// [`LinalgError::Singular`]). Errors: [`LinalgError::NotSquare`],
    /// [`LinalgError::OutOfMemory`] (the copy is sized before anything is read),
    /// [`LinalgError::NotFinite`] (when the options check; faer's pivoting has no meaning on
    /// NaN), [`LinalgError::NotHermitian`] (when the options check).
    pub fn new<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
    ) -> Result<Self, LinalgError> {
        Self::new_with(a, exec, &Options::new())
    }

    /// [`Lblt::new`] with the call's [`Options`] (which its solves keep).
    pub fn new_with<A: Conjugate<Canonical = T>>(
        a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
        exec: &(impl Executor + ?Sized),
        options: &Options,
    ) -> Result<Self, LinalgError> {
        let a = a.as_mat_ref();
        // The shape first (free), then the size: an `a` too large to copy is refused before
        // anything is read.
        check::square("lblt", "A", a)?;
        let mut factors = scratch::copy("lblt", a)?;
        hermitian::check("lblt", factors.as_ref(), options, false)?;
        hermitian::to_lower(factors.as_mut(), options);
        let guard = Guard::measure(factors.as_ref(), options, check::Stored::Lower);
        let n = factors.nrows();
        let mut subdiag = vec![zero::<T>(); n];
        let mut swaps = vec![0usize; n];
        let params = LbltParams {
            block_size: 0,
            threshold: options.get(Family::Lblt),
        };
        let req = lblt_in_place_scratch::<T>(n, params);
        scratch::with("lblt", req, |stack| {
            lblt_in_place(factors.as_mut(), &mut subdiag, &mut swaps, exec, params, stack);
        })?;
        // P is the interchanges' product, applied from the first: row i of P A P^T is row
        // fwd[i] of A.
        let mut fwd: Vec<usize> = (0..n).collect();
        for (i, &p) in swaps.iter().enumerate() {
            fwd.swap(i, p);
        }
        Ok(Lblt {
            factors,
            subdiag,
            perm: Perm::from_forward(fwd),
            options: *options,
            guard,
        })
    }

    /// The factored matrix: `L` strictly below the diagonal, `B`'s diagonal on it.
    pub fn factors(&self) -> MatRef<'_, T> {
        self.factors.as_ref()
    }

    /// `L`, unit lower triangular: a view into the factors.
    pub fn l(&self) -> TriangularView<'_, T> {
        TriangularView::new(self.factors(), Triangle::Lower, Diag::Unit)
    }

    /// `B`, block diagonal (blocks of order 1 and 2), as a matrix.
    pub fn b(&self) -> Mat<T> {
        let n = self.factors.nrows();
        let mut b = Mat::<T>::zeros(n, n);
        for i in 0..n {
            b[(i, i)] = self.factors[(i, i)];
            if i + 1 < n && self.subdiag[i] != zero() {
                b[(i + 1, i)] = self.subdiag[i];
                b[(i, i + 1)] = conj(&self.subdiag[i]);
            }
        }
        b
    }

    /// `P`: row `i` of `P A P^T` is row `p().arrays().0[i]` of `A`, and so for columns.
    pub fn p(&self) -> faer::perm::PermRef<'_, usize> {
        self.perm.as_ref()
    }

    /// `B`'s blocks: `(i, 1)` for a block of order 1 at `i`, `(i, 2)` for one at `i, i + 1`.
    fn blocks(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let n = self.factors.nrows();
        let mut i = 0;
        std::iter::from_fn(move || {
            if i >= n {
                return None;
            }
            let size = if i + 1 < n && self.subdiag[i] != zero() { 2 } else { 1 };
            let at = i;
            i += size;
            Some((at, size))
        })
    }

    /// A block's determinant: `d` or `d0 d1 - |s|^2` (real: the blocks are Hermitian).
    fn block_det(&self, i: usize, size: usize) -> T::Real {
        let d0 = real(&self.factors[(i, i)]);
        if size == 1 {
            return d0;
        }
        let d1 = real(&self.factors[(i + 1, i + 1)]);
        d0 * d1 - abs2(&self.subdiag[i])
    }

    /// The signs of `A`'s eigenvalues, from `B`'s blocks (Sylvester's law of inertia): a
    /// block of order 2 with a negative determinant has one of each sign; with a positive
    /// one, two of its diagonal's sign.
    pub fn inertia(&self) -> Inertia {
        let sign = |x: T::Real| x.partial_cmp(&zero()).unwrap_or(Ordering::Equal);
        let mut signs = Vec::with_capacity(self.factors.nrows());
        for (i, size) in self.blocks() {
            let d0 = real(&self.factors[(i, i)]);
            if size == 1 {
                signs.push(sign(d0));
                continue;
            }
            let d1 = real(&self.factors[(i + 1, i + 1)]);
            match sign(self.block_det(i, 2)) {
                Ordering::Less => signs.extend([Ordering::Greater, Ordering::Less]),
                Ordering::Greater => signs.extend([sign(d0), sign(d0)]),
                Ordering::Equal => signs.extend([Ordering::Equal, sign(d0 + d1)]),
            }
        }
        Inertia::of_signs(signs.into_iter())
    }

    /// The first block of `B` that is singular, if any.
    fn singular_block(&self) -> Option<usize> {
        self.blocks()
            .find(|&(i, size)| self.block_det(i, size) == zero())
            .map(|(i, _)| i)
    }

    /// `det(A)`: the product of `B`'s blocks' determinants (`P`'s signs cancel). Never an
    /// error; a `Result` as every factorization's determinant.
    pub fn determinant(&self) -> Result<T, LinalgError> {
        let dets: Vec<T> = self
            .blocks()
            .map(|(i, s)| from_real(&self.block_det(i, s)))
            .collect();
        Ok(det::product(dets.into_iter(), false))
    }

    /// `(sign, ln|det(A)|)`: see [`FullPivLu::slogdet`](super::FullPivLu::slogdet).
    pub fn slogdet(&self) -> Result<(T, T::Real), LinalgError> {
        let dets: Vec<T> = self
            .blocks()
            .map(|(i, s)| from_real(&self.block_det(i, s)))
            .collect();
        Ok(det::slogdet(dets.into_iter(), false))
    }

    /// `ln|det(A)|`.
    pub fn log_abs_det(&self) -> Result<T::Real, LinalgError> {
        self.slogdet().map(|(_, l)| l)
    }

    /// An estimate of `1 / (||A||_1 ||A^-1||_1)` given `a_norm = ||A||_1`, as
    /// [`Lu::rcond`](super::Lu::rcond); zero when `B` is singular. Errors:
    /// [`LinalgError::NotANorm`].
    pub fn rcond(&self, a_norm: T::Real) -> Result<T::Real, LinalgError> {
        condition::norm_arg::<T>(&a_norm)?;
        Ok(self.estimate(a_norm))
    }

    /// The estimate behind [`Self::rcond`], for a checked `a_norm`.
    fn estimate(&self, a_norm: T::Real) -> T::Real {
        let n = self.factors.nrows();
        if n > 0 && self.singular_block().is_some() {
            return zero();
        }
        let p = SolveParams::default();
        let inverse = condition::norm1_estimate::<T>(n, |mut x, _| self.plain_solve(x.as_mut(), &Seq, p));
        condition::reciprocal::<T>(n, a_norm, inverse)
    }

    /// `A` again: `P^T L B L^H P` (serially; a check, not a kernel).
    pub fn reconstruct(&self) -> Mat<T> {
        let l = self.l().to_mat();
        let lbl = &l * self.b() * l.adjoint();
        let p = self.perm.forward();
        let mut a = Mat::<T>::zeros(lbl.nrows(), lbl.ncols());
        for j in 0..lbl.ncols() {
            for i in 0..lbl.nrows() {
                a[(p[i], p[j])] = lbl[(i, j)];
            }
        }
        a
    }

    /// The solves' parameters once `B` is nonsingular and `b` a finite right-hand side with
    /// the order's rows.
    fn ready(&self, op: &'static str, b: &MatMut<'_, T>) -> Result<SolveParams, LinalgError> {
        let n = self.factors.nrows();
        check::dim(op, "B", Dim::Rows, n, b.nrows())?;
        if let Some(index) = self.singular_block() {
            return Err(LinalgError::Singular { op, index });
        }
        if self.options.checks_finite() {
            check::finite(op, "B", b.as_ref(), check::Stored::All)?;
        }
        self.guard
            .check::<T>(op, &self.options, |norm| self.estimate(norm))?;
        Ok(SolveParams {
            threshold: self.options.get(Family::TriangularSolve),
        })
    }

    /// `A X = B`, unchecked: `P`, `L`, `B`'s blocks, `L^H`, `P^T`.
    fn plain_solve(&self, mut b: MatMut<'_, T>, exec: &(impl Executor + ?Sized), p: SolveParams) {
        let f = self.factors();
        self.perm.gather_rows(b.as_mut());
        let left = SolveSide::Left;
        triangular::solve_in_place(f, b.as_mut(), left, Triangle::Lower, Diag::Unit, exec, p);
        for (i, size) in self.blocks() {
            if size == 1 {
                let d_inv = recip(&real(&f[(i, i)]));
                for j in 0..b.ncols() {
                    b[(i, j)] = mul_real(&b[(i, j)], &d_inv);
                }
                continue;
            }
            // [[d0, conj(s)], [s, d1]]^-1 = [[d1, -conj(s)], [-s, d0]] / det.
            let (d0, d1) = (real(&f[(i, i)]), real(&f[(i + 1, i + 1)]));
            let s = self.subdiag[i];
            let det_inv = recip(&self.block_det(i, 2));
            for j in 0..b.ncols() {
                let (y0, y1) = (b[(i, j)], b[(i + 1, j)]);
                let x0 = mul_real(&y0, &d1) - conj(&s) * y1;
                let x1 = mul_real(&y1, &d0) - s * y0;
                b[(i, j)] = mul_real(&x0, &det_inv);
                b[(i + 1, j)] = mul_real(&x1, &det_inv);
            }
        }
        // L^H X = Y  <=>  L^T conj(X) = conj(Y).
        conjugate(b.as_mut());
        triangular::solve_in_place(f.transpose(), b.as_mut(), left, Triangle::Upper, Diag::Unit, exec, p);
        conjugate(b.as_mut());
        self.perm.scatter_rows(b);
    }

    /// `A^T X = B`, unchecked: `A^T = conj(A)`.
    fn transpose_solve(
        &self,
        mut b: MatMut<'_, T>,
        exec: &(impl Executor + ?Sized),
        p: SolveParams,
    ) {
        conjugate(b.as_mut());
        self.plain_solve(b.as_mut(), exec, p);
        conjugate(b);
    }
}

solve_forms!(Lblt);
faer_solvers!(Lblt);
