//! Cholesky and its solve, for each problem of a batch: `A_i X_i = B_i` with `A_i` Hermitian
//! positive definite.

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::{self, LltError};
use faer::linalg::cholesky::llt::solve;
use faer::{Conj, Par};
use teamalg_gates::Family;
use teamalg_kernels::cholesky::cost;
use teamalg_kernels::par::Executor;

use super::systems::Systems;
use super::{drive, BatchMut, BatchRun, Problems, Status};
use crate::linalg::check::{self, Stored};
use crate::linalg::{hermitian, Dim, Field, LinalgError, Options};

const OP: &str = "batch::cholesky_solve";

/// Solves `A_i X_i = B_i` for every problem `i` by Cholesky (`A_i = L_i L_i^H`), on `exec`:
/// `a[i]` is read from the triangle [`Options::side`] names (lower by default) and its lower
/// triangle overwritten by `L_i`; `b[i]` is overwritten by the solution; `status[i]` says how
/// problem `i` went. See [the module](super) for how the batch goes parallel.
///
/// Per problem, before it is touched: [`LinalgError::NotSquare`], [`LinalgError::ShapeMismatch`]
/// (`B`'s rows), [`LinalgError::NotFinite`] (the triangle read, and `B`),
/// [`LinalgError::NotHermitian`] when [`Options::check_hermitian`] asks; while factoring,
/// [`LinalgError::NotPositiveDefinite`] (`a[i]` then holds a partial factorization, as the
/// in-place [`cholesky`](crate::linalg::cholesky) leaves it, and `b[i]` is unchanged). The
/// call fails only with [`LinalgError::BatchLength`] or [`LinalgError::OutOfMemory`].
pub fn cholesky_solve<'s1, 'm1: 's1, 's2, 'm2: 's2, T: Field>(
    a: impl Into<BatchMut<'s1, 'm1, T>>,
    b: impl Into<BatchMut<'s2, 'm2, T>>,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
) -> Result<BatchRun, LinalgError> {
    cholesky_solve_with(a, b, status, exec, &Options::new())
}

/// [`cholesky_solve`] with the call's [`Options`] (the threshold of [`Family::Cholesky`], the
/// side read, the checks).
pub fn cholesky_solve_with<'s1, 'm1: 's1, 's2, 'm2: 's2, T: Field>(
    a: impl Into<BatchMut<'s1, 'm1, T>>,
    b: impl Into<BatchMut<'s2, 'm2, T>>,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<BatchRun, LinalgError> {
    let problems = CholeskySolve(Systems::new(OP, a.into(), b.into(), options)?);
    drive::<T, _>(&problems, status, exec, options)
}

struct CholeskySolve<'s, 'a, 'b, 'o, T>(Systems<'s, 'a, 'b, 'o, T>);

impl<T: Field> CholeskySolve<'_, '_, '_, '_, T> {
    /// Problem `i`'s order and right-hand sides when its shapes agree.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn shape(&self, i: usize) -> Result<(usize, usize), LinalgError> {
        // SAFETY: the caller owns `i`.
        let (a, b) = unsafe { self.0.read(i) };
        let n = check::square(OP, "A", a)?;
        check::dim(OP, "B", Dim::Rows, n, b.nrows())?;
        Ok((n, b.ncols()))
    }

    /// Every check of problem `i`, then its lower triangle made to hold `A`.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn ready(&self, i: usize) -> Result<(), LinalgError> {
        // SAFETY: the caller owns `i`.
        unsafe { self.shape(i) }?;
        // SAFETY: as above.
        let (mut a, b) = unsafe { self.0.write(i) };
        hermitian::check(OP, a.as_ref(), self.0.options, false)?;
        if self.0.options.checks_finite() {
            check::finite(OP, "B", b.as_ref(), Stored::All)?;
        }
        hermitian::to_lower(a.as_mut(), self.0.options);
        Ok(())
    }
}

impl<T: Field> Problems<T> for CholeskySolve<'_, '_, '_, '_, T> {
    type Error = LinalgError;
    const OP: &'static str = OP;
    const SITE: &'static str = "batch/cholesky";
    const FAMILY: Family = Family::Cholesky;

    fn count(&self) -> usize {
        self.0.count()
    }

    unsafe fn key(&self, i: usize) -> [usize; 8] {
        // SAFETY: called by the owner of `i`.
        unsafe { self.0.key(i) }
    }

    unsafe fn units(&self, i: usize) -> f64 {
        // SAFETY: called by the owner of `i`.
        match unsafe { self.shape(i) } {
            // The factorization's multiply-adds and the solve's, in Cholesky's unit.
            Ok((n, k)) => cost::llt(n) + cost::solve(n, k),
            Err(_) => 0.0,
        }
    }

    unsafe fn scratch(&self, i: usize) -> StackReq {
        // SAFETY: called by the owner of `i`.
        match unsafe { self.shape(i) } {
            Ok((n, k)) => StackReq::any_of(&[
                factor::cholesky_in_place_scratch::<T>(n, Par::Seq, Default::default()),
                solve::solve_in_place_scratch::<T>(n, k, Par::Seq),
            ]),
            Err(_) => StackReq::EMPTY,
        }
    }

    unsafe fn serial(&self, i: usize, stack: &mut MemStack) -> Status {
        // SAFETY: the caller owns `i`.
        unsafe { self.ready(i) }?;
        // SAFETY: as above.
        let (mut a, mut b) = unsafe { self.0.write(i) };
        factor::cholesky_in_place(
            a.as_mut(),
            Default::default(),
            Par::Seq,
            stack,
            Default::default(),
        )
        .map_err(
            |LltError::NonPositivePivot { index }| LinalgError::NotPositiveDefinite {
                op: OP,
                index,
            },
        )?;
        solve::solve_in_place_with_conj(a.as_ref(), Conj::No, b.as_mut(), Par::Seq, stack);
        Ok(())
    }

    unsafe fn on_team(&self, i: usize, exec: &(impl Executor + ?Sized)) -> Status {
        // SAFETY: the caller owns `i`.
        unsafe { self.ready(i) }?;
        // SAFETY: as above.
        let (mut a, mut b) = unsafe { self.0.write(i) };
        // Checked, and the lower triangle now holds `A`.
        let lower = self
            .0
            .options
            .check_finite(false)
            .check_hermitian(false)
            .side(faer::Side::Lower);
        let llt = crate::linalg::cholesky_with(a.as_mut(), exec, &lower).map_err(|e| e.named(OP))?;
        llt.solve_in_place(b.as_mut(), exec).map_err(|e| e.named(OP))
    }
}
