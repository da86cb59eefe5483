//! The SVD of each problem of a batch: `A_i = U_i diag(s_i) V_i^H`, thin.

use faer::reborrow::IntoConst;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::svd::{self as faer_svd, ComputeSvdVectors};
use faer::linalg::{temp_mat_scratch, temp_mat_zeroed};
use faer::mat::AsMatMut;
use faer::traits::math_utils::real;
use faer::Par;
use teamalg_gates::Family;
use teamalg_kernels::svd::cost;
use teamalg_kernels::par::Executor;

use super::{drive, length, BatchMut, BatchRef, BatchRun, Problems, Shared, Slots, Status};
use crate::linalg::check::{self, Stored};
use crate::linalg::{Dim, Field, LinalgError, Options, RealOf};

const OP: &str = "batch::svd";

/// The thin SVD of every `a[i]` (`m x n`, `k = min(m, n)`), on `exec`: `s[i]` (`k` entries)
/// gets the singular values in decreasing order; `u`, if given, the left singular vectors
/// (`u[i]` is `m x k`), `v` the right ones (`n x k`); `status[i]` says how problem `i` went.
/// `a[i]` is only read. See [the module](super) for how the batch goes parallel; a spread
/// problem is faer's serial SVD.
///
/// Per problem, before anything of it is written: [`LinalgError::ShapeMismatch`] (`s`, `u`,
/// `v`), [`LinalgError::NotFinite`] (always checked, as the single call does);
/// [`LinalgError::NoConvergence`] (its outputs then hold no result). The call fails only with
/// [`LinalgError::BatchLength`] or [`LinalgError::OutOfMemory`].
///
/// ```
/// use faer::Mat;
/// use teamalg::linalg::batch;
/// use teamalg::Exec;
///
/// let a: Vec<Mat<f64>> = (0..10).map(|k| Mat::from_fn(6, 4, |i, j| ((i * 4 + j + k) % 7) as f64)).collect();
/// let av: Vec<_> = a.iter().map(|m| m.as_ref()).collect();
/// let mut s = vec![[0.0f64; 4]; 10];
/// let mut sv: Vec<&mut [f64]> = s.iter_mut().map(|x| &mut x[..]).collect();
/// let mut status = vec![Ok(()); 10];
/// batch::svd(&av, &mut sv, None, None, &mut status, &Exec::serial())?;
/// assert!(s.iter().all(|x| x[0] >= x[1] && x[1] >= x[2] && x[2] >= x[3]));
/// # Ok::<(), teamalg::linalg::LinalgError>(())
/// ```
pub fn svd<'s1, 'm1: 's1, T: Field>(
    a: impl Into<BatchRef<'s1, 'm1, T>>,
    s: &mut [&mut [RealOf<T>]],
    u: Option<BatchMut<'_, '_, T>>,
    v: Option<BatchMut<'_, '_, T>>,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
) -> Result<BatchRun, LinalgError> {
    svd_with(a, s, u, v, status, exec, &Options::new())
}

/// [`svd`] with the call's [`Options`] (the threshold of [`Family::BidiagSvdDc`] decides the
/// batch's parallelism).
pub fn svd_with<'s1, 'm1: 's1, T: Field>(
    a: impl Into<BatchRef<'s1, 'm1, T>>,
    s: &mut [&mut [RealOf<T>]],
    u: Option<BatchMut<'_, '_, T>>,
    v: Option<BatchMut<'_, '_, T>>,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<BatchRun, LinalgError> {
    let a = a.into();
    length(OP, "s", a.len(), s.len())?;
    if let Some(u) = &u {
        length(OP, "u", a.len(), u.len())?;
    }
    if let Some(v) = &v {
        length(OP, "v", a.len(), v.len())?;
    }
    let problems = Svds {
        a,
        s: Slots::new(s),
        u: u.map(BatchMut::share),
        v: v.map(BatchMut::share),
        options,
    };
    drive::<T, _>(&problems, status, exec, options)
}

struct Svds<'s, 'a, 'w, 'u, 'v, 'o, T: Field> {
    a: BatchRef<'s, 'a, T>,
    s: Slots<'s, &'w mut [RealOf<T>]>,
    u: Option<Shared<'s, 'u, T>>,
    v: Option<Shared<'s, 'v, T>>,
    options: &'o Options,
}

impl<T: Field> Svds<'_, '_, '_, '_, '_, '_, T> {
    /// Problem `i`'s `(m, n)` when its outputs' shapes agree.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn shape(&self, i: usize) -> Result<(usize, usize), LinalgError> {
        let (m, n) = self.a.get(i).shape();
        let k = m.min(n);
        // SAFETY: the caller owns `i`.
        check::dim(OP, "s", Dim::Rows, k, unsafe { self.s.get(i) }.len())?;
        // SAFETY: as above.
        let (u, v) = unsafe {
            (
                self.u.as_ref().map(|x| x.get(i).into_const()),
                self.v.as_ref().map(|x| x.get(i).into_const()),
            )
        };
        for (name, x, rows) in [("u", u, m), ("v", v, n)] {
            if let Some(x) = x {
                check::dim(OP, name, Dim::Rows, rows, x.nrows())?;
                check::dim(OP, name, Dim::Cols, k, x.ncols())?;
            }
        }
        Ok((m, n))
    }

    fn vectors(&self) -> (ComputeSvdVectors, ComputeSvdVectors) {
        let thin = |x: bool| {
            if x {
                ComputeSvdVectors::Thin
            } else {
                ComputeSvdVectors::No
            }
        };
        (thin(self.u.is_some()), thin(self.v.is_some()))
    }
}

impl<T: Field> Problems<T> for Svds<'_, '_, '_, '_, '_, '_, T> {
    type Error = LinalgError;
    const OP: &'static str = OP;
    const SITE: &'static str = "batch/svd";
    const FAMILY: Family = Family::BidiagSvdDc;
    const RATE: Family = Family::Gemm;

    fn count(&self) -> usize {
        self.a.len()
    }

    unsafe fn key(&self, i: usize) -> [usize; 8] {
        let (m, n) = self.a.get(i).shape();
        // SAFETY: called by the owner of `i`.
        let s = unsafe { self.s.get(i) }.len();
        // SAFETY: as above.
        let (u, v) = unsafe {
            (
                self.u.as_ref().map(|x| x.get(i).shape()),
                self.v.as_ref().map(|x| x.get(i).shape()),
            )
        };
        let (u, v) = (u.unwrap_or((usize::MAX, 0)), v.unwrap_or((usize::MAX, 0)));
        [m, n, s, u.0, u.1, v.0, v.1, 0]
    }

    unsafe fn units(&self, i: usize) -> f64 {
        // SAFETY: called by the owner of `i`.
        match unsafe { self.shape(i) } {
            Ok((m, n)) => cost::svd(m, n, self.u.is_some() || self.v.is_some()),
            Err(_) => 0.0,
        }
    }

    unsafe fn scratch(&self, i: usize) -> StackReq {
        // SAFETY: called by the owner of `i`.
        match unsafe { self.shape(i) } {
            Ok((m, n)) => {
                let (cu, cv) = self.vectors();
                StackReq::all_of(&[
                    temp_mat_scratch::<T>(m.min(n), 1),
                    faer_svd::svd_scratch::<T>(m, n, cu, cv, Par::Seq, Default::default()),
                ])
            }
            Err(_) => StackReq::EMPTY,
        }
    }

    unsafe fn serial(&self, i: usize, stack: &mut MemStack) -> Status {
        // SAFETY: the caller owns `i`.
        let (m, n) = unsafe { self.shape(i) }?;
        let a = self.a.get(i);
        check::finite(OP, "A", a, Stored::All)?;
        let (mut d, stack) = temp_mat_zeroed::<T, _, _>(m.min(n), 1, stack);
        let mut d = d.as_mat_mut();
        // SAFETY: as above.
        let (u, v) = unsafe {
            (
                self.u.as_ref().map(|x| x.get(i)),
                self.v.as_ref().map(|x| x.get(i)),
            )
        };
        faer_svd::svd(
            a,
            d.as_mut().col_mut(0).as_diagonal_mut(),
            u,
            v,
            Par::Seq,
            stack,
            Default::default(),
        )
        .map_err(|_| LinalgError::NoConvergence { op: OP })?;
        // SAFETY: as above.
        let s = unsafe { self.s.get(i) };
        for (j, x) in s.iter_mut().enumerate() {
            *x = real(&d[(j, 0)]);
        }
        Ok(())
    }

    unsafe fn on_team(&self, i: usize, exec: &(impl Executor + ?Sized)) -> Status {
        // SAFETY: the caller owns `i`.
        unsafe { self.shape(i) }?;
        // SAFETY: as above.
        let (s, u, v) = unsafe {
            (
                self.s.get(i),
                self.u.as_ref().map(|x| x.get(i)),
                self.v.as_ref().map(|x| x.get(i)),
            )
        };
        crate::linalg::svd_into(self.a.get(i), s, u, v, exec, self.options)
    }
}
