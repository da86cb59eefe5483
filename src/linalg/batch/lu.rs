//! LU with partial pivoting and its solve, for each problem of a batch: `A_i X_i = B_i`.

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::{factor, solve};
use faer::traits::math_utils::zero;
use faer::{Conj, Par};
use teamalg_gates::Family;
use teamalg_kernels::lu::cost;
use teamalg_kernels::par::Executor;

use super::systems::Systems;
use super::{drive, BatchMut, BatchRun, Problems, Status};
use crate::linalg::check;
use crate::linalg::{Dim, Field, LinalgError, Options};

const OP: &str = "batch::lu_solve";

/// Solves `A_i X_i = B_i` for every problem `i` by LU with partial pivoting, on `exec`:
/// `a[i]` (square) is overwritten by its factors (`L` below the diagonal, `U` on and above),
/// `b[i]` by the solution, and `status[i]` says how problem `i` went. See [the
/// module](super) for how the batch goes parallel.
///
/// Per problem, checked before it is touched: [`LinalgError::NotSquare`] (`A`),
/// [`LinalgError::ShapeMismatch`] (`B`'s rows), [`LinalgError::NotFinite`]; after factoring,
/// [`LinalgError::Singular`] with the first zero pivot of `U` (`a[i]` then holds the factors
/// and `b[i]` is unchanged). The call fails only with [`LinalgError::BatchLength`] (`b` or
/// `status` not as long as `a`, before anything is read) or [`LinalgError::OutOfMemory`].
pub fn lu_solve<'s1, 'm1: 's1, 's2, 'm2: 's2, T: Field>(
    a: impl Into<BatchMut<'s1, 'm1, T>>,
    b: impl Into<BatchMut<'s2, 'm2, T>>,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
) -> Result<BatchRun, LinalgError> {
    lu_solve_with(a, b, status, exec, &Options::new())
}

/// [`lu_solve`] with the call's [`Options`]: the threshold of [`Family::LuPartial`] decides
/// the batch's parallelism as it decides a single LU's, and the finiteness check can be
/// turned off.
pub fn lu_solve_with<'s1, 'm1: 's1, 's2, 'm2: 's2, T: Field>(
    a: impl Into<BatchMut<'s1, 'm1, T>>,
    b: impl Into<BatchMut<'s2, 'm2, T>>,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<BatchRun, LinalgError> {
    let problems = LuSolve(Systems::new(OP, a.into(), b.into(), options)?);
    drive::<T, _>(&problems, status, exec, options)
}

struct LuSolve<'s, 'a, 'b, 'o, T>(Systems<'s, 'a, 'b, 'o, T>);

impl<T: Field> LuSolve<'_, '_, '_, '_, T> {
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

    /// The shapes and, when asked, the finiteness of problem `i`.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn checked(&self, i: usize) -> Result<(usize, usize), LinalgError> {
        // SAFETY: the caller owns `i`.
        let shape = unsafe { self.shape(i) }?;
        // SAFETY: as above.
        unsafe { self.0.finite(OP, i) }?;
        Ok(shape)
    }
}

/// The scratch of faer's serial LU and solve of order `n` with `k` right-hand sides, with the
/// two pivot vectors.
fn serial_scratch<T: Field>(n: usize, k: usize) -> StackReq {
    StackReq::all_of(&[
        StackReq::new::<usize>(n),
        StackReq::new::<usize>(n),
        factor::lu_in_place_scratch::<usize, T>(n, n, Par::Seq, Default::default()),
        solve::solve_in_place_scratch::<usize, T>(n, k, Par::Seq),
    ])
}

impl<T: Field> Problems<T> for LuSolve<'_, '_, '_, '_, T> {
    type Error = LinalgError;
    const OP: &'static str = OP;
    const SITE: &'static str = "batch/lu";
    const FAMILY: Family = Family::LuPartial;

    fn count(&self) -> usize {
        self.0.count()
    }

    unsafe fn key(&self, i: usize) -> [usize; 8] {
        // SAFETY: called by the owner of `i`.
        unsafe { self.0.key(i) }
    }

    unsafe fn units(&self, i: usize) -> f64 {
        // SAFETY: called by the owner of `i` (the plan before the section, or the participant
        // that claimed `i`).
        match unsafe { self.shape(i) } {
            // The factorization's multiply-adds and the solve's, in LU's unit.
            Ok((n, k)) => cost::partial(n, n) + cost::solve(n, k),
            Err(_) => 0.0,
        }
    }

    unsafe fn scratch(&self, i: usize) -> StackReq {
        // SAFETY: as in `units`.
        match unsafe { self.shape(i) } {
            Ok((n, k)) => serial_scratch::<T>(n, k),
            Err(_) => StackReq::EMPTY,
        }
    }

    unsafe fn serial(&self, i: usize, stack: &mut MemStack) -> Status {
        // SAFETY: the caller owns `i`.
        let (n, _) = unsafe { self.checked(i) }?;
        // SAFETY: as above.
        let (mut a, mut b) = unsafe { self.0.write(i) };
        let (mut perm, stack) = stack.make_with(n, |_| 0usize);
        let (mut perm_inv, stack) = stack.make_with(n, |_| 0usize);
        let (_, p) = factor::lu_in_place(
            a.as_mut(),
            &mut perm,
            &mut perm_inv,
            Par::Seq,
            stack,
            Default::default(),
        );
        if let Some(index) = (0..n).find(|&k| a[(k, k)] == zero::<T>()) {
            return Err(LinalgError::Singular { op: OP, index });
        }
        solve::solve_in_place_with_conj(
            a.as_ref(),
            a.as_ref(),
            p,
            Conj::No,
            b.as_mut(),
            Par::Seq,
            stack,
        );
        Ok(())
    }

    unsafe fn on_team(&self, i: usize, exec: &(impl Executor + ?Sized)) -> Status {
        // SAFETY: the caller owns `i`.
        unsafe { self.checked(i) }?;
        // SAFETY: as above.
        let (mut a, mut b) = unsafe { self.0.write(i) };
        // The input was checked above.
        let unchecked = self.0.options.check_finite(false);
        let lu = crate::linalg::lu_with(a.as_mut(), exec, &unchecked)?;
        lu.solve_in_place(b.as_mut(), exec)
    }
}
