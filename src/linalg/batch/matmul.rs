//! Products for each problem of a batch: `C_i = alpha A_i B_i` or `C_i += alpha A_i B_i`.

use faer::reborrow::IntoConst;
use faer::dyn_stack::{MemStack, StackReq};
use faer::{Accum, Par};
use teamalg_gates::Family;
use teamalg_kernels::gemm::cost;
use teamalg_kernels::par::Executor;

use super::{drive, length, BatchMut, BatchRef, BatchRun, Problems, Shared, Status};
use crate::linalg::check::{self, Stored};
use crate::linalg::{Field, LinalgError, Options};

const OP: &str = "batch::matmul";

/// `C_i = alpha A_i B_i` (`Accum::Replace`) or `C_i += alpha A_i B_i` (`Accum::Add`) for every
/// problem `i`, on `exec`; `status[i]` says how problem `i` went. See [the module](super) for
/// how the batch goes parallel.
///
/// Per problem, checked before `c[i]` is written: [`LinalgError::ShapeMismatch`] and
/// [`LinalgError::NotFinite`] (`A`, `B`, and `C` for `Accum::Add`). The call fails with
/// [`LinalgError::BatchLength`] (`a`, `b` or `status` not as long as `c`) or
/// [`LinalgError::NotFinite`] for `alpha`, before anything is written.
///
/// ```
/// use faer::{Accum, Mat};
/// use teamalg::linalg::batch;
/// use teamalg::Exec;
///
/// let a: Vec<Mat<f64>> = (0..100).map(|k| Mat::from_fn(16, 16, |i, j| (i + j + k) as f64)).collect();
/// let mut c: Vec<Mat<f64>> = (0..100).map(|_| Mat::zeros(16, 16)).collect();
/// let av: Vec<_> = a.iter().map(|m| m.as_ref()).collect();
/// let mut cv: Vec<_> = c.iter_mut().map(|m| m.as_mut()).collect();
/// let mut status = vec![Ok(()); 100];
/// batch::matmul(&mut cv, Accum::Replace, &av, &av, 1.0, &mut status, &Exec::serial())?;
/// assert_eq!(c[3], &a[3] * &a[3]);
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
pub fn matmul<'s1, 'm1: 's1, 's2, 'm2: 's2, 's3, 'm3: 's3, T: Field>(
    c: impl Into<BatchMut<'s1, 'm1, T>>,
    accum: Accum,
    a: impl Into<BatchRef<'s2, 'm2, T>>,
    b: impl Into<BatchRef<'s3, 'm3, T>>,
    alpha: T,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
) -> Result<BatchRun, LinalgError> {
    matmul_with(c, accum, a, b, alpha, status, exec, &Options::new())
}

/// [`matmul`] with the call's [`Options`] (the threshold of [`Family::Gemm`], the
/// finiteness check).
#[allow(clippy::too_many_arguments)] // The product's operands, as `linalg::matmul_with`'s.
pub fn matmul_with<'s1, 'm1: 's1, 's2, 'm2: 's2, 's3, 'm3: 's3, T: Field>(
    c: impl Into<BatchMut<'s1, 'm1, T>>,
    accum: Accum,
    a: impl Into<BatchRef<'s2, 'm2, T>>,
    b: impl Into<BatchRef<'s3, 'm3, T>>,
    alpha: T,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<BatchRun, LinalgError> {
    let (c, a, b) = (c.into(), a.into(), b.into());
    length(OP, "a", c.len(), a.len())?;
    length(OP, "b", c.len(), b.len())?;
    if options.checks_finite() {
        check::finite_scalar(OP, "alpha", &alpha)?;
    }
    let problems = Products {
        count: c.len(),
        c: c.share(),
        a,
        b,
        accum,
        alpha,
        options,
    };
    drive::<T, _>(&problems, status, exec, options)
}

struct Products<'s, 'c, 'a, 'o, T> {
    count: usize,
    c: Shared<'s, 'c, T>,
    a: BatchRef<'s, 'a, T>,
    b: BatchRef<'s, 'a, T>,
    accum: Accum,
    alpha: T,
    options: &'o Options,
}

impl<T: Field> Products<'_, '_, '_, '_, T> {
    /// Problem `i`'s `(m, n, k)` when its shapes agree.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn shape(&self, i: usize) -> Result<(usize, usize, usize), LinalgError> {
        // SAFETY: the caller owns `i`.
        let c = unsafe { self.c.get(i).into_const() };
        let (a, b) = (self.a.get(i), self.b.get(i));
        let (ab, cb) = ((b.nrows(), b.ncols()), (c.nrows(), c.ncols()));
        crate::linalg::matmul::shapes(OP, (a.nrows(), a.ncols()), ab, cb)?;
        Ok((c.nrows(), c.ncols(), a.ncols()))
    }

    /// The shapes and, when asked, the finiteness of problem `i`.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn checked(&self, i: usize) -> Result<(), LinalgError> {
        // SAFETY: the caller owns `i`.
        unsafe { self.shape(i) }?;
        if self.options.checks_finite() {
            check::finite(OP, "A", self.a.get(i), Stored::All)?;
            check::finite(OP, "B", self.b.get(i), Stored::All)?;
            if self.accum == Accum::Add {
                // SAFETY: as above.
                check::finite(OP, "C", unsafe { self.c.get(i).into_const() }, Stored::All)?;
            }
        }
        Ok(())
    }
}

impl<T: Field> Problems<T> for Products<'_, '_, '_, '_, T> {
    type Error = LinalgError;
    const OP: &'static str = OP;
    const SITE: &'static str = "batch/gemm";
    const FAMILY: Family = Family::Gemm;

    fn count(&self) -> usize {
        self.count
    }

    unsafe fn key(&self, i: usize) -> [usize; 8] {
        // SAFETY: called by the owner of `i`.
        let c = unsafe { self.c.get(i) };
        let (a, b) = (self.a.get(i), self.b.get(i));
        [c.nrows(), c.ncols(), a.nrows(), a.ncols(), b.nrows(), b.ncols(), 0, 0]
    }

    unsafe fn units(&self, i: usize) -> f64 {
        // SAFETY: called by the owner of `i`.
        match unsafe { self.shape(i) } {
            Ok((m, n, k)) => cost::gemm(m, n, k),
            Err(_) => 0.0,
        }
    }

    unsafe fn scratch(&self, _: usize) -> StackReq {
        StackReq::EMPTY
    }

    unsafe fn serial(&self, i: usize, _: &mut MemStack) -> Status {
        // SAFETY: the caller owns `i`.
        unsafe { self.checked(i) }?;
        // SAFETY: as above.
        let mut c = unsafe { self.c.get(i) };
        faer::linalg::matmul::matmul(
            c.as_mut(),
            self.accum,
            self.a.get(i),
            self.b.get(i),
            self.alpha,
            Par::Seq,
        );
        Ok(())
    }

    unsafe fn on_team(&self, i: usize, exec: &(impl Executor + ?Sized)) -> Status {
        // SAFETY: the caller owns `i`.
        unsafe { self.checked(i) }?;
        // SAFETY: as above.
        let mut c = unsafe { self.c.get(i) };
        let unchecked = self.options.check_finite(false);
        crate::linalg::matmul_with(
            c.as_mut(),
            self.accum,
            self.a.get(i),
            self.b.get(i),
            self.alpha,
            exec,
            &unchecked,
        )
    }
}
