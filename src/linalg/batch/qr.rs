//! QR least squares for each problem of a batch: `X_i` minimizing `||A_i X_i - B_i||`.

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::qr::no_pivoting::{factor, solve};
use faer::linalg::{temp_mat_scratch, temp_mat_zeroed};
use faer::mat::AsMatMut;
use faer::{Conj, MatMut, MatRef, Par};
use teamalg_gates::Family;
use teamalg_kernels::qr::cost;
use teamalg_kernels::par::Executor;

use super::systems::Systems;
use super::{drive, BatchMut, BatchRun, Problems, Status};
use crate::linalg::check;
use crate::linalg::condition::triangular_rcond_in;
use crate::linalg::qr::deficiency;
use crate::linalg::{Dim, Field, LinalgError, Options};

const OP: &str = "batch::lstsq";

/// Least squares for every problem `i` by Householder QR, on `exec`: `a[i]` (`m x n`,
/// `m >= n`) is overwritten by its factors and `b[i]` (`m x k`) by `Q^H B`, whose first `n`
/// rows are the `X_i` minimizing `||A_i X_i - B_i||` column by column (the last `m - n` hold
/// the residuals' coordinates), as [`Qr::lstsq_in_place`](crate::linalg::Qr::lstsq_in_place)
/// leaves them; `status[i]` says how problem `i` went. See [the module](super) for how the
/// batch goes parallel.
///
/// Per problem, before it is touched: [`LinalgError::NotTall`], [`LinalgError::ShapeMismatch`]
/// (`B`'s rows), [`LinalgError::NotFinite`]; after factoring, [`LinalgError::RankDeficient`]
/// (`R` singular, exactly or to rounding, as the single call decides it), `b[i]` then
/// unchanged. The call fails only with
/// [`LinalgError::BatchLength`] or [`LinalgError::OutOfMemory`].
pub fn lstsq<'s1, 'm1: 's1, 's2, 'm2: 's2, T: Field>(
    a: impl Into<BatchMut<'s1, 'm1, T>>,
    b: impl Into<BatchMut<'s2, 'm2, T>>,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
) -> Result<BatchRun, LinalgError> {
    lstsq_with(a, b, status, exec, &Options::new())
}

/// [`lstsq`] with the call's [`Options`] (the threshold of [`Family::Qr`], the finiteness
/// check).
pub fn lstsq_with<'s1, 'm1: 's1, 's2, 'm2: 's2, T: Field>(
    a: impl Into<BatchMut<'s1, 'm1, T>>,
    b: impl Into<BatchMut<'s2, 'm2, T>>,
    status: &mut [Status],
    exec: &(impl Executor + ?Sized),
    options: &Options,
) -> Result<BatchRun, LinalgError> {
    let problems = LeastSquares(Systems::new(OP, a.into(), b.into(), options)?);
    drive::<T, _>(&problems, status, exec, options)
}

struct LeastSquares<'s, 'a, 'b, 'o, T>(Systems<'s, 'a, 'b, 'o, T>);

impl<T: Field> LeastSquares<'_, '_, '_, '_, T> {
    /// Problem `i`'s `(m, n, k)` when its shapes agree.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn shape(&self, i: usize) -> Result<(usize, usize, usize), LinalgError> {
        // SAFETY: the caller owns `i`.
        let (a, b) = unsafe { self.0.read(i) };
        let (m, n) = a.shape();
        if m < n {
            return Err(LinalgError::NotTall {
                op: OP,
                rows: m,
                cols: n,
            });
        }
        check::dim(OP, "B", Dim::Rows, m, b.nrows())?;
        Ok((m, n, b.ncols()))
    }

    /// The shapes and, when asked, the finiteness of problem `i`.
    ///
    /// # Safety
    ///
    /// The caller owns index `i`.
    unsafe fn checked(&self, i: usize) -> Result<(usize, usize, usize), LinalgError> {
        // SAFETY: the caller owns `i`.
        let shape = unsafe { self.shape(i) }?;
        // SAFETY: as above.
        unsafe { self.0.finite(OP, i) }?;
        Ok(shape)
    }
}

/// Refuses an `R` (`n x n`) singular, exactly or to rounding, with `RankDeficient`, as
/// [`Qr`](crate::linalg::Qr)'s solves do (an exact zero on the diagonal makes the estimate 0);
/// `work` is the condition estimate's column (`n x 1`).
fn full_rank<T: Field>(r: MatRef<'_, T>, work: MatMut<'_, T>) -> Result<(), LinalgError> {
    // The single call's rule and rank; only its error path allocates.
    match deficiency(r, || triangular_rcond_in(r, work)) {
        None => Ok(()),
        Some(rank) => Err(LinalgError::RankDeficient {
            op: OP,
            rank,
            of: r.nrows(),
        }),
    }
}

impl<T: Field> Problems<T> for LeastSquares<'_, '_, '_, '_, T> {
    type Error = LinalgError;
    const OP: &'static str = OP;
    const SITE: &'static str = "batch/qr";
    const FAMILY: Family = Family::Qr;

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
            Ok((m, n, k)) => cost::lstsq(m, n, k),
            Err(_) => 0.0,
        }
    }

    unsafe fn scratch(&self, i: usize) -> StackReq {
        // SAFETY: called by the owner of `i`.
        match unsafe { self.shape(i) } {
            Ok((m, n, k)) => {
                let bs = factor::recommended_block_size::<T>(m, n);
                StackReq::all_of(&[
                    temp_mat_scratch::<T>(bs, n),
                    StackReq::any_of(&[
                        factor::qr_in_place_scratch::<T>(m, n, bs, Par::Seq, Default::default()),
                        temp_mat_scratch::<T>(n, 1),
                        solve::solve_lstsq_in_place_scratch::<T>(m, n, bs, k, Par::Seq),
                    ]),
                ])
            }
            Err(_) => StackReq::EMPTY,
        }
    }

    unsafe fn serial(&self, i: usize, stack: &mut MemStack) -> Status {
        // SAFETY: the caller owns `i`.
        let (m, n, _) = unsafe { self.checked(i) }?;
        // SAFETY: as above.
        let (mut a, mut b) = unsafe { self.0.write(i) };
        let bs = factor::recommended_block_size::<T>(m, n);
        let (mut h, stack) = temp_mat_zeroed::<T, _, _>(bs, n, stack);
        let mut h = h.as_mat_mut();
        factor::qr_in_place(a.as_mut(), h.as_mut(), Par::Seq, stack, Default::default());
        {
            let (mut work, _) = temp_mat_zeroed::<T, _, _>(n, 1, stack);
            full_rank(a.as_ref().subrows(0, n), work.as_mat_mut())?;
        }
        solve::solve_lstsq_in_place_with_conj(
            a.as_ref(),
            h.as_ref(),
            a.as_ref(),
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
        let unchecked = self.0.options.check_finite(false);
        let qr = crate::linalg::qr_with(a.as_mut(), exec, &unchecked).map_err(|e| e.named(OP))?;
        // The single call's refusal, named as the batch's as the serial path names it.
        qr.lstsq_in_place(b.as_mut(), exec).map_err(|e| e.named(OP))
    }
}
