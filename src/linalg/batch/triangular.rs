//! Triangular solves for each problem of a batch: `T_i X_i = B_i` or `X_i T_i = B_i`.

use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::IntoConst;
use teamalg_gates::Family;
use teamalg_kernels::triangular::cost;
use teamalg_kernels::par::{Executor, Seq};
use teamalg_kernels::triangular::{self, Diag, SolveSide, Triangle};

use super::{drive, length, BatchMut, BatchRef, BatchRun, Problems, Shared, Status};
use crate::linalg::triangular::{checked, order};
use crate::linalg::{Field, LinalgError, Options};

const OP: &str = "batch::solve_triangular";

/// Overwrites every `b[i]` with the solution of `T_i X_i = B_i` (`SolveSide::Left`) or
/// `X_i T_i = B_i` (`SolveSide::Right`), reading `triangle` of `t[i]` with `diag`, on `exec`;
/// `status[i]` says how problem `i` went. See [the module](super) for how the batch goes
/// parallel.
///
/// Per problem, as [`linalg::solve_triangular`](crate::linalg::solve_triangular)'s (the same
/// checks), before `b[i]` is written: [`LinalgError::NotSquare`] (`T`),
/// [`LinalgError::ShapeMismatch`] (`B`), [`LinalgError::NotFinite`] (the triangle read, and
/// `B`; skipped with [`Options::check_finite`]`(false)`), [`LinalgError::Singular`] (with
/// `Diag::NonUnit`, an exact zero on `T_i`'s diagonal; `index` is the first such row; checked
/// whatever the options say). A failed problem leaves `b[i]` as it was and the others are
/// solved. The call fails only with [`LinalgError::BatchLength`].
pub fn solve_triangular<'s1, 'm1: 's1, 's2, 'm2: 's2, T: Field>(
    t: impl Into<BatchRef<'s1, 'm1, T>>,
    b: impl Into<BatchMut<'s2, 'm2, T>>,
    side: SolveSide,
    triangle: Triangle,
    diag: Diag,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
) -> Result<BatchRun, LinalgError> {
    solve_triangular_with(t, b, side, triangle, diag, status, exec, &Options::new())
}

/// [`solve_triangular`] with the call's [`Options`] (the threshold of
/// [`Family::TriangularSolve`], the finiteness check).
#[allow(clippy::too_many_arguments)] // The solve's operands, as `linalg::solve_triangular_with`'s.
pub fn solve_triangular_with<'s1, 'm1: 's1, 's2, 'm2: 's2, T: Field>(
    t: impl Into<BatchRef<'s1, 'm1, T>>,
    b: impl Into<BatchMut<'s2, 'm2, T>>,
    side: SolveSide,
    triangle: Triangle,
    diag: Diag,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<BatchRun, LinalgError> {
    let (t, b) = (t.into(), b.into());
    length(OP, "b", t.len(), b.len())?;
    let problems = Solves {
        count: t.len(),
        t,
        b: b.share(),
        side,
        triangle,
        diag,
        options,
    };
    drive::<T, _>(&problems, status, exec, options)
}

struct Solves<'s, 't, 'b, 'o, T> {
    count: usize,
    t: BatchRef<'s, 't, T>,
    b: Shared<'s, 'b, T>,
    side: SolveSide,
    triangle: Triangle,
    diag: Diag,
    options: &'o Options,
}

impl<T: Field> Solves<'_, '_, '_, '_, T> {
    /// Problem `i`'s order and right-hand sides when its shapes agree.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn shape(&self, i: usize) -> Result<(usize, usize), LinalgError> {
        // SAFETY: the caller owns `i`.
        let b = unsafe { self.b.get(i).into_const() };
        let n = order(OP, self.t.get(i), b, self.side)?;
        Ok((n, b.nrows() * b.ncols() / n.max(1)))
    }

    /// Problem `i` checked as the single solve checks (`checked`: shapes, finiteness, a zero
    /// on the diagonal), then solved on `exec`.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn solve(&self, i: usize, exec: &(impl Executor + ?Sized)) -> Status {
        // SAFETY: the caller owns `i`.
        let mut b = unsafe { self.b.get(i) };
        let t = self.t.get(i);
        let params = checked(
            OP,
            t,
            b.as_ref(),
            self.side,
            self.triangle,
            self.diag,
            self.options,
        )?;
        triangular::solve_in_place(
            t,
            b.as_mut(),
            self.side,
            self.triangle,
            self.diag,
            exec,
            params,
        );
        Ok(())
    }
}

impl<T: Field> Problems<T> for Solves<'_, '_, '_, '_, T> {
    type Error = LinalgError;
    const OP: &'static str = OP;
    const SITE: &'static str = "batch/trsm";
    const FAMILY: Family = Family::TriangularSolve;

    fn count(&self) -> usize {
        self.count
    }

    unsafe fn key(&self, i: usize) -> [usize; 8] {
        // SAFETY: called by the owner of `i`.
        let b = unsafe { self.b.get(i) };
        [
            self.t.get(i).nrows(),
            self.t.get(i).ncols(),
            b.nrows(),
            b.ncols(),
            0,
            0,
            0,
            0,
        ]
    }

    unsafe fn units(&self, i: usize) -> f64 {
        // SAFETY: called by the owner of `i`.
        match unsafe { self.shape(i) } {
            Ok((n, k)) => cost::solve(n, k),
            Err(_) => 0.0,
        }
    }

    unsafe fn scratch(&self, _: usize) -> StackReq {
        StackReq::EMPTY
    }

    unsafe fn serial(&self, i: usize, _: &mut MemStack) -> Status {
        // SAFETY: the caller owns `i`.
        unsafe { self.solve(i, &Seq) }
    }

    unsafe fn on_team(&self, i: usize, exec: &(impl Executor + ?Sized)) -> Status {
        // SAFETY: the caller owns `i`.
        unsafe { self.solve(i, exec) }
    }
}
