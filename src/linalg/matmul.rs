//! `matmul`: `C = alpha A B` or `C += alpha A B`, checked.

use faer::mat::{AsMatMut, AsMatRef};
use faer::traits::Conjugate;
use faer::Accum;
use teamalg_gates::Family;
use teamalg_kernels::gemm::{self, GemmParams};
use teamalg_kernels::par::Executor;

use super::check::{self, Stored};
use super::{Dim, Field, LinalgError, Options};

/// `C = alpha A B` (`Accum::Replace`) or `C += alpha A B` (`Accum::Add`) on `exec` (a `&Team`,
/// a token, or `&Exec::serial()`). `A` and `B` may be conjugated views.
///
/// Errors: [`LinalgError::ShapeMismatch`] naming `B` when its rows are not `A`'s columns, and
/// `C` when it is not `A`'s rows by `B`'s columns (the output is measured against the inputs);
/// [`LinalgError::NotFinite`] (`A`, `B`, `alpha`, and `C` with `Accum::Add`). Nothing is
/// written then.
///
/// ```
/// use faer::{c64, Accum, Mat};
/// use teamalg::{linalg, Exec};
///
/// let a = Mat::<c64>::from_fn(3, 2, |i, j| c64::new(i as f64, j as f64));
/// let mut g = Mat::<c64>::zeros(2, 2);
/// // The Gram matrix A^H A, with A^H a view (no copy):
/// linalg::matmul(&mut g, Accum::Replace, a.adjoint(), &a, c64::new(1.0, 0.0), &Exec::serial())?;
/// assert!((&g - a.adjoint() * &a).norm_max() < 1e-12);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
pub fn matmul<T: Field, A: Conjugate<Canonical = T>, B: Conjugate<Canonical = T>>(
    c: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
    accum: Accum,
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
    alpha: T,
    exec: &(impl Executor + ?Sized),
) -> Result<(), LinalgError> {
    matmul_with(c, accum, a, b, alpha, exec, &Options::new())
}

/// [`matmul`] with the call's [`Options`].
pub fn matmul_with<T: Field, A: Conjugate<Canonical = T>, B: Conjugate<Canonical = T>>(
    mut c: impl AsMatMut<T = T, Rows = usize, Cols = usize>,
    accum: Accum,
    a: impl AsMatRef<T = A, Rows = usize, Cols = usize>,
    b: impl AsMatRef<T = B, Rows = usize, Cols = usize>,
    alpha: T,
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<(), LinalgError> {
    const OP: &str = "matmul";
    let (a, b, c) = (a.as_mat_ref(), b.as_mat_ref(), c.as_mat_mut());
    shapes(OP, (a.nrows(), a.ncols()), (b.nrows(), b.ncols()), (c.nrows(), c.ncols()))?;
    if options.checks_finite() {
        check::finite(OP, "A", a.canonical(), Stored::All)?;
        check::finite(OP, "B", b.canonical(), Stored::All)?;
        check::finite_scalar(OP, "alpha", &alpha)?;
        if accum == Accum::Add {
            check::finite(OP, "C", c.as_ref(), Stored::All)?;
        }
    }
    let params = GemmParams {
        threshold: options.get(Family::Gemm),
    };
    gemm::matmul(c, accum, a, b, alpha, exec, params);
    Ok(())
}

/// The shapes of a product `C = A B`, for every product the facade makes (dense, sparse,
/// batched): the inputs first (`B` must fit `A`), then the output, `A`'s rows by `B`'s
/// columns; when `C` does not fit, `C` is the operand named, not the input it disagrees with.
pub(crate) fn shapes(
    op: &'static str,
    a: (usize, usize),
    b: (usize, usize),
    c: (usize, usize),
) -> Result<(), LinalgError> {
    check::dim(op, "B", Dim::Rows, a.1, b.0)?;
    check::dim(op, "C", Dim::Rows, a.0, c.0)?;
    check::dim(op, "C", Dim::Cols, b.1, c.1)
}
