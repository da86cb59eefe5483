//! `solve_triangular`, and the view of a triangular factor that factorizations hand out.

use std::fmt;

use faer::mat::AsMatRef;
use faer::traits::math_utils::{imag, one, real, zero};
use faer::traits::{ComplexField, Conjugate};
use faer::{Mat, MatMut, MatRef};
use teamalg_gates::Family;
use teamalg_kernels::par::Executor;
use teamalg_kernels::triangular::{self, Diag, SolveParams, SolveSide, Triangle};

use super::check::{self, Stored};
use super::views::conjugate;
use super::{Dim, Field, LinalgError, Options};

/// Overwrites `b` with the solution of `T X = B` (`SolveSide::Left`) or `X T = B`
/// (`SolveSide::Right`), reading `triangle` of `t` (with ones on the diagonal for
/// `Diag::Unit`), on `exec`. `t` may be a conjugated view.
///
/// Errors, all before `b` is written: [`LinalgError::NotSquare`] (`T`),
/// [`LinalgError::ShapeMismatch`] (`B`), [`LinalgError::NotFinite`] (the part of `T` read, and
/// `B`; skipped with [`Options::check_finite`]`(false)`), [`LinalgError::Singular`] (with
/// `Diag::NonUnit`, an exact zero on `T`'s diagonal; `index` is the first such row; checked
/// whatever the options say, in `O(n)`).
///
/// ```
/// use faer::Mat;
/// use teamalg::linalg::{self, Diag, SolveSide, Triangle};
/// use teamalg::Exec;
///
/// let t = Mat::<f64>::from_fn(3, 3, |i, j| if i >= j { 1.0 + i as f64 } else { f64::NAN });
/// let mut b = Mat::<f64>::ones(3, 2);
/// // Only the lower triangle is read: the NaNs above it do not matter.
/// linalg::solve_triangular(&t, &mut b, SolveSide::Left, Triangle::Lower, Diag::NonUnit, &Exec::serial())?;
/// assert_eq!(b[(0, 0)], 1.0);
/// // A zero on the diagonal is refused, and `b` is left as it was.
/// let mut z = t.clone();
/// z[(1, 1)] = 0.0;
/// let err = linalg::solve_triangular(&z, &mut b, SolveSide::Left, Triangle::Lower, Diag::NonUnit, &Exec::serial());
/// assert_eq!(err, Err(linalg::LinalgError::Singular { op: "solve_triangular", index: 1 }));
/// assert_eq!(b[(0, 0)], 1.0);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
pub fn solve_triangular<T: Field, A: Conjugate<Canonical = T>>(
    t: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    b: impl faer::mat::AsMatMut<T = T, Rows = usize, Cols = usize>,
    side: SolveSide,
    triangle: Triangle,
    diag: Diag,
    exec: &(impl Executor + ?Sized),
) -> Result<(), LinalgError> {
    solve_triangular_with(t, b, side, triangle, diag, exec, &Options::new())
}

/// [`solve_triangular`] with the call's [`Options`].
pub fn solve_triangular_with<T: Field, A: Conjugate<Canonical = T>>(
    t: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    mut b: impl faer::mat::AsMatMut<T = T, Rows = usize, Cols = usize>,
    side: SolveSide,
    triangle: Triangle,
    diag: Diag,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<(), LinalgError> {
    let t = t.as_mat_ref();
    let how = How {
        side,
        triangle,
        diag,
        conj: !A::IS_CANONICAL,
    };
    solve(
        "solve_triangular",
        t.canonical(),
        b.as_mat_mut(),
        how,
        exec,
        options,
    )
}

/// Which solve: the side, the triangle read, its diagonal, and whether `T` is conjugated.
#[derive(Clone, Copy)]
struct How {
    side: SolveSide,
    triangle: Triangle,
    diag: Diag,
    conj: bool,
}

/// The checked solve with `t` (conjugated when `how.conj`: conj(T) X = B is
/// T conj(X) = conj(B)).
fn solve<T: Field>(
    op: &'static str,
    t: MatRef<'_, T>,
    mut b: MatMut<'_, T>,
    how: How,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<(), LinalgError> {
    let How {
        side,
        triangle,
        diag,
        conj,
    } = how;
    let params = checked(op, t, b.as_ref(), side, triangle, diag, options)?;
    if conj {
        conjugate(b.as_mut());
    }
    triangular::solve_in_place(t, b.as_mut(), side, triangle, diag, exec, params);
    if conj {
        conjugate(b);
    }
    Ok(())
}

/// The order of `T` when `T` is square and `B` agrees with it on `side`: the shape checks of
/// one triangular solve ([`checked`] runs them first; a batch also sizes its problems by them).
pub(crate) fn order<T>(
    op: &'static str,
    t: MatRef<'_, T>,
    b: MatRef<'_, T>,
    side: SolveSide,
) -> Result<usize, LinalgError> {
    let n = check::square(op, "T", t)?;
    match side {
        SolveSide::Left => check::dim(op, "B", Dim::Rows, n, b.nrows())?,
        SolveSide::Right => check::dim(op, "B", Dim::Cols, n, b.ncols())?,
    }
    Ok(n)
}

/// Every check of one triangular solve, reading `t` and `b` and writing nothing, in the order
/// the errors are documented: the shapes ([`order`]), the finiteness of the part of `T` read
/// and of `B` (when `options` check), and with `Diag::NonUnit` an exact zero on `T`'s diagonal
/// ([`LinalgError::Singular`] with the first such row, whatever the options say). Answers the
/// kernel's parameters from `options`. The single solve, [`TriangularView::solve_in_place`] and
/// each problem of `batch::solve_triangular` call it, with their own `op`.
pub(crate) fn checked<T: Field>(
    op: &'static str,
    t: MatRef<'_, T>,
    b: MatRef<'_, T>,
    side: SolveSide,
    triangle: Triangle,
    diag: Diag,
    options: &Options,
) -> Result<SolveParams, LinalgError> {
    let n = order(op, t, b, side)?;
    if options.checks_finite() {
        let part = match (triangle, diag) {
            (Triangle::Lower, Diag::NonUnit) => Stored::Lower,
            (Triangle::Lower, Diag::Unit) => Stored::StrictLower,
            (Triangle::Upper, Diag::NonUnit) => Stored::Upper,
            (Triangle::Upper, Diag::Unit) => Stored::StrictUpper,
        };
        check::finite(op, "T", t, part)?;
        check::finite(op, "B", b, Stored::All)?;
    }
    // An exact zero on a read diagonal would divide by zero and turn finite data into NaN or
    // infinity: refused whatever `check_finite` says (it is no finiteness check, and costs
    // O(n) beside the O(n^2 k) solve), before `B` is touched. A NaN on the diagonal is not
    // zero: unchecked, it propagates (the NaN policy).
    if diag == Diag::NonUnit {
        let is_zero = |x: &T| real(x) == zero::<T::Real>() && imag(x) == zero::<T::Real>();
        if let Some(index) = (0..n).find(|&i| is_zero(&t[(i, i)])) {
            return Err(LinalgError::Singular { op, index });
        }
    }
    Ok(SolveParams {
        threshold: options.get(Family::TriangularSolve),
    })
}

/// A triangular factor read in place from a factorization's storage: `L` of an [`Lu`](super::Lu)
/// (unit diagonal) or of a [`Cholesky`](super::Cholesky), `U` of an `Lu`. No copy is made:
/// [`get`](Self::get) reads an entry (zero outside the triangle, one on a unit diagonal),
/// [`solve_in_place`](Self::solve_in_place) solves with it, [`to_mat`](Self::to_mat) copies
/// it out.
///
/// ```
/// use faer::Mat;
/// use teamalg::linalg::{self, Triangle};
/// use teamalg::Exec;
///
/// let a = Mat::<f64>::from_fn(2, 2, |i, j| [[4.0, 2.0], [2.0, 5.0]][i][j]);
/// let chol = linalg::Cholesky::new(&a, &Exec::serial())?;
/// let l = chol.l(); // L = [[2, 0], [1, 2]], a view
/// assert_eq!((l.triangle(), l.get(1, 0), l.get(0, 1)), (Triangle::Lower, 1.0, 0.0));
/// assert!((l.to_mat() * l.to_mat().transpose() - &a).norm_max() < 1e-12);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
// `Send` and `Sync` are automatic and sound: a `MatRef` (both when `T: Sync`) and two enums;
// the view only reads.
#[derive(Clone, Copy)]
pub struct TriangularView<'a, T> {
    packed: MatRef<'a, T>,
    triangle: Triangle,
    diag: Diag,
}

impl<T> fmt::Debug for TriangularView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TriangularView")
            .field("rows", &self.packed.nrows())
            .field("cols", &self.packed.ncols())
            .field("triangle", &self.triangle)
            .field("diag", &self.diag)
            .finish()
    }
}

impl<'a, T: ComplexField> TriangularView<'a, T> {
    pub(crate) fn new(packed: MatRef<'a, T>, triangle: Triangle, diag: Diag) -> Self {
        TriangularView {
            packed,
            triangle,
            diag,
        }
    }

    /// Its rows.
    pub fn nrows(&self) -> usize {
        self.packed.nrows()
    }

    /// Its columns.
    pub fn ncols(&self) -> usize {
        self.packed.ncols()
    }

    /// Which triangle holds it.
    pub fn triangle(&self) -> Triangle {
        self.triangle
    }

    /// Whether its diagonal is implicit ones.
    pub fn diag(&self) -> Diag {
        self.diag
    }

    /// The storage it is read from: its triangle, and beyond it entries of another factor (or
    /// unspecified ones). The kernels take it with [`triangle`](Self::triangle) and
    /// [`diag`](Self::diag).
    pub fn packed(&self) -> MatRef<'a, T> {
        self.packed
    }

    /// Entry `(i, j)`: zero outside the triangle, one on a unit diagonal.
    ///
    /// # Panics
    /// When `(i, j)` is out of bounds.
    pub fn get(&self, i: usize, j: usize) -> T {
        assert!(
            i < self.nrows() && j < self.ncols(),
            "({i}, {j}) out of bounds"
        );
        let inside = match self.triangle {
            Triangle::Lower => i >= j,
            Triangle::Upper => i <= j,
        };
        match (inside, i == j && self.diag == Diag::Unit) {
            (_, true) => one(),
            (true, false) => self.packed[(i, j)].clone(),
            (false, false) => zero(),
        }
    }

    /// A copy as a full matrix, zeros outside the triangle.
    pub fn to_mat(&self) -> Mat<T> {
        Mat::from_fn(self.nrows(), self.ncols(), |i, j| self.get(i, j))
    }

    /// Overwrites `b` with the solution of `F X = B` (`SolveSide::Left`) or `X F = B`
    /// (`SolveSide::Right`) for this factor `F`, on `exec` (as [`solve_triangular`]).
    /// Errors as [`solve_triangular`]'s, named `"solve_in_place"`: a factor with an exact zero
    /// on a non-unit diagonal (the `U` of a singular [`Lu`](super::Lu), the `R` of a
    /// rank-deficient QR) is refused with [`LinalgError::Singular`], `b` unchanged.
    ///
    /// ```
    /// use faer::Mat;
    /// use teamalg::linalg::{Lu, SolveSide};
    /// use teamalg::Exec;
    ///
    /// let a = Mat::<f64>::from_fn(4, 4, |i, j| if i == j { 5.0 } else { (i * j) as f64 * 0.1 });
    /// let lu = Lu::new(&a, &Exec::serial())?;
    /// let mut y = Mat::<f64>::ones(4, 1);
    /// lu.l().solve_in_place(y.as_mut(), SolveSide::Left, &Exec::serial())?; // L y = 1
    /// assert!((lu.l().to_mat() * &y - Mat::<f64>::ones(4, 1)).norm_max() < 1e-12);
    /// # Ok::<(), teamalg::linalg::LinalgError>(())
    /// ```
    pub fn solve_in_place(
        &self,
        b: MatMut<'_, T>,
        side: SolveSide,
        exec: &(impl Executor + ?Sized),
    ) -> Result<(), LinalgError>
    where
        T: Field,
    {
        let how = How {
            side,
            triangle: self.triangle,
            diag: self.diag,
            conj: false,
        };
        solve("solve_in_place", self.packed, b, how, exec, &Options::new())
    }
}
