//! Triangular solves for each problem of a batch: `T_i X_i = B_i` or `X_i T_i = B_i`.

use faer::reborrow::IntoConst;
use faer::dyn_stack::{MemStack, StackReq};
use teamalg_gates::Family;
use teamalg_kernels::par::{Executor, Seq};
use teamalg_kernels::triangular::{self, Diag, SolveParams, SolveSide, Triangle};

use super::{drive, length, BatchMut, BatchRef, BatchRun, Problems, Shared, Status};
use crate::linalg::check::{self, Stored};
use crate::linalg::{Dim, Field, LinalgError, Options};

const OP: &str = "batch::solve_triangular";

/// Overwrites every `b[i]` with the solution of `T_i X_i = B_i` (`SolveSide::Left`) or
/// `X_i T_i = B_i` (`SolveSide::Right`), reading `triangle` of `t[i]` with `diag`, on `exec`;
/// `status[i]` says how problem `i` went. See [the module](super) for how the batch goes
/// parallel.
///
/// Per problem, before `b[i]` is written: [`LinalgError::NotSquare`] (`T`),
/// [`LinalgError::ShapeMismatch`] (`B`), [`LinalgError::NotFinite`] (the triangle read, and
/// `B`). The call fails only with [`LinalgError::BatchLength`].
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
        let n = check::square(OP, "T", self.t.get(i))?;
        match self.side {
            SolveSide::Left => check::dim(OP, "B", Dim::Rows, n, b.nrows())?,
            SolveSide::Right => check::dim(OP, "B", Dim::Cols, n, b.ncols())?,
        }
        Ok((n, b.nrows() * b.ncols() / n.max(1)))
    }

    /// Problem `i` checked, then solved on `exec`.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn solve(&self, i: usize, exec: &(impl Executor + ?Sized)) -> Status {
        // SAFETY: the caller owns `i`.
        unsafe { self.shape(i) }?;
        // SAFETY: as above.
        let mut b = unsafe { self.b.get(i) };
        let t = self.t.get(i);
        if self.options.checks_finite() {
            let part = match (self.triangle, self.diag) {
                (Triangle::Lower, Diag::NonUnit) => Stored::Lower,
                (Triangle::Lower, Diag::Unit) => Stored::StrictLower,
                (Triangle::Upper, Diag::NonUnit) => Stored::Upper,
                (Triangle::Upper, Diag::Unit) => Stored::StrictUpper,
            };
            check::finite(OP, "T", t, part)?;
            check::finite(OP, "B", b.as_ref(), Stored::All)?;
        }
        let params = SolveParams {
            threshold: self.options.get(Family::TriangularSolve),
        };
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
    const OP: &'static str = OP;
    const SITE: &'static str = "batch/trsm";
    const FAMILY: Family = Family::TriangularSolve;

    fn count(&self) -> usize {
        self.count
    }

    unsafe fn key(&self, i: usize) -> [usize; 8] {
        // SAFETY: called by the owner of `i`.
        let b = unsafe { self.b.get(i) };
        [self.t.get(i).nrows(), self.t.get(i).ncols(), b.nrows(), b.ncols(), 0, 0, 0, 0]
    }

    unsafe fn units(&self, i: usize) -> f64 {
        // SAFETY: called by the owner of `i`.
        match unsafe { self.shape(i) } {
            Ok((n, k)) => n as f64 * n as f64 * k as f64 / 2.0,
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
