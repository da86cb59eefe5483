//! The self-adjoint EVD of each problem of a batch: `A_i = U_i diag(w_i) U_i^H`.

use faer::reborrow::IntoConst;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::evd::{self as faer_evd, ComputeEigenvectors};
use faer::linalg::{temp_mat_scratch, temp_mat_zeroed};
use faer::mat::AsMatMut;
use faer::traits::math_utils::real;
use faer::Par;
use teamalg_gates::Family;
use teamalg_kernels::evd::cost;
use teamalg_kernels::par::Executor;

use super::{drive, length, BatchMut, BatchRef, BatchRun, Problems, Shared, Slots, Status};
use crate::linalg::check::{self, Stored};
use crate::linalg::{Dim, Field, LinalgError, Options, RealOf};

const OP: &str = "batch::self_adjoint_eigen";

/// The eigenvalues (and, if `u` is given, eigenvectors) of every self-adjoint `a[i]`, read
/// from its lower triangle, on `exec`: `w[i]` (`n` entries) gets the eigenvalues in
/// increasing order, `u[i]` (`n x n`) the eigenvectors; `status[i]` says how problem `i`
/// went. `a[i]` is only read. See [the module](super) for how the batch goes parallel; a
/// spread problem is faer's serial EVD.
///
/// Per problem, before anything of it is written: [`LinalgError::NotSquare`],
/// [`LinalgError::ShapeMismatch`] (`w`, `u`), [`LinalgError::NotFinite`] (the lower triangle,
/// always checked); [`LinalgError::NoConvergence`]. The call fails only with
/// [`LinalgError::BatchLength`] or [`LinalgError::OutOfMemory`].
pub fn self_adjoint_eigen<'s1, 'm1: 's1, T: Field>(
    a: impl Into<BatchRef<'s1, 'm1, T>>,
    w: &mut [&mut [RealOf<T>]],
    u: Option<BatchMut<'_, '_, T>>,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
) -> Result<BatchRun, LinalgError> {
    self_adjoint_eigen_with(a, w, u, status, exec, &Options::new())
}

/// [`self_adjoint_eigen`] with the call's [`Options`] (the threshold of
/// [`Family::TridiagEvdDc`] decides the batch's parallelism).
pub fn self_adjoint_eigen_with<'s1, 'm1: 's1, T: Field>(
    a: impl Into<BatchRef<'s1, 'm1, T>>,
    w: &mut [&mut [RealOf<T>]],
    u: Option<BatchMut<'_, '_, T>>,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<BatchRun, LinalgError> {
    let a = a.into();
    length(OP, "w", a.len(), w.len())?;
    if let Some(u) = &u {
        length(OP, "u", a.len(), u.len())?;
    }
    let problems = Evds {
        a,
        w: Slots::new(w),
        u: u.map(BatchMut::share),
        options,
    };
    drive::<T, _>(&problems, status, exec, options)
}

struct Evds<'s, 'a, 'w, 'u, 'o, T: Field> {
    a: BatchRef<'s, 'a, T>,
    w: Slots<'s, &'w mut [RealOf<T>]>,
    u: Option<Shared<'s, 'u, T>>,
    options: &'o Options,
}

impl<T: Field> Evds<'_, '_, '_, '_, '_, T> {
    /// Problem `i`'s order when its outputs' shapes agree.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn shape(&self, i: usize) -> Result<usize, LinalgError> {
        let n = check::square(OP, "A", self.a.get(i))?;
        // SAFETY: the caller owns `i`.
        check::dim(OP, "w", Dim::Rows, n, unsafe { self.w.get(i) }.len())?;
        if let Some(u) = &self.u {
            // SAFETY: as above.
            let u = unsafe { u.get(i).into_const() };
            check::dim(OP, "u", Dim::Rows, n, u.nrows())?;
            check::dim(OP, "u", Dim::Cols, n, u.ncols())?;
        }
        Ok(n)
    }

    fn vectors(&self) -> ComputeEigenvectors {
        if self.u.is_some() {
            ComputeEigenvectors::Yes
        } else {
            ComputeEigenvectors::No
        }
    }
}

impl<T: Field> Problems<T> for Evds<'_, '_, '_, '_, '_, T> {
    type Error = LinalgError;
    const OP: &'static str = OP;
    const SITE: &'static str = "batch/evd";
    const FAMILY: Family = Family::TridiagEvdDc;
    const RATE: Family = Family::Gemm;

    fn count(&self) -> usize {
        self.a.len()
    }

    unsafe fn key(&self, i: usize) -> [usize; 8] {
        let (r, c) = self.a.get(i).shape();
        // SAFETY: called by the owner of `i`.
        let w = unsafe { self.w.get(i) }.len();
        // SAFETY: as above.
        let u = unsafe { self.u.as_ref().map(|x| x.get(i).shape()) };
        let u = u.unwrap_or((usize::MAX, 0));
        [r, c, w, u.0, u.1, 0, 0, 0]
    }

    unsafe fn units(&self, i: usize) -> f64 {
        // SAFETY: called by the owner of `i`.
        match unsafe { self.shape(i) } {
            Ok(n) => cost::evd(n, self.u.is_some()),
            Err(_) => 0.0,
        }
    }

    unsafe fn scratch(&self, i: usize) -> StackReq {
        // SAFETY: called by the owner of `i`.
        match unsafe { self.shape(i) } {
            Ok(n) => StackReq::all_of(&[
                temp_mat_scratch::<T>(n, 1),
                faer_evd::self_adjoint_evd_scratch::<T>(
                    n,
                    self.vectors(),
                    Par::Seq,
                    Default::default(),
                ),
            ]),
            Err(_) => StackReq::EMPTY,
        }
    }

    unsafe fn serial(&self, i: usize, stack: &mut MemStack) -> Status {
        // SAFETY: the caller owns `i`.
        let n = unsafe { self.shape(i) }?;
        let a = self.a.get(i);
        check::finite(OP, "A", a, Stored::Lower)?;
        let (mut d, stack) = temp_mat_zeroed::<T, _, _>(n, 1, stack);
        let mut d = d.as_mat_mut();
        // SAFETY: as above.
        let u = unsafe { self.u.as_ref().map(|x| x.get(i)) };
        faer_evd::self_adjoint_evd(
            a,
            d.as_mut().col_mut(0).as_diagonal_mut(),
            u,
            Par::Seq,
            stack,
            Default::default(),
        )
        .map_err(|_| LinalgError::NoConvergence { op: OP })?;
        // SAFETY: as above.
        let w = unsafe { self.w.get(i) };
        for (j, x) in w.iter_mut().enumerate() {
            *x = real(&d[(j, 0)]);
        }
        Ok(())
    }

    unsafe fn on_team(&self, i: usize, exec: &(impl Executor + ?Sized)) -> Status {
        // SAFETY: the caller owns `i`.
        unsafe { self.shape(i) }?;
        // SAFETY: as above.
        let (w, u) = unsafe { (self.w.get(i), self.u.as_ref().map(|x| x.get(i))) };
        crate::linalg::self_adjoint_eigen_into(self.a.get(i), w, u, exec, self.options)
    }
}
