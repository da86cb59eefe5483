//! The eigendecomposition of a self-adjoint matrix, `A = U diag(w) U^H`: the tridiagonalization
//! on the executor ([`crate::tridiag`]), faer's tridiagonal solver (implicit QL for values only, divide and
//! conquer with vectors from order 128), then the back-transformation `U = Q Z` in column
//! chunks on the executor ([`crate::qr::apply_q_in_place`]). Design record: `docs/svd.md`
//! ("The self-adjoint EVD").

use std::fmt;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::evd::{
    self_adjoint_evd_scratch as faer_evd_scratch, tridiagonal_self_adjoint_evd, ComputeEigenvectors,
};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::linalg::{temp_mat_scratch, temp_mat_zeroed};
use faer::mat::AsMatMut;
use faer::traits::ComplexField;
use faer::{MatMut, MatRef, Par};
use teamalg_gates::ParThreshold;

use crate::bidiag_svd::{Real, Rotate};
use crate::par::Executor;
use crate::qr::apply_q_in_place;
use crate::tridiag::{tridiag_in_place, tridiag_in_place_scratch};

/// Parameters of [`self_adjoint_evd`].
#[derive(Debug, Clone, Copy, Default)]
pub struct EvdParams {
    /// How the tridiagonalization decides to go parallel (family `TridiagStep`); `None`
    /// leaves it to the executor's model.
    pub tridiag: Option<ParThreshold>,
    /// How the back-transformation decides to go parallel (family `Qr`); `None` leaves it to
    /// the executor's model.
    pub threshold: Option<ParThreshold>,
}

/// Why [`self_adjoint_evd`] failed. In either case `w` and `u` hold no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvdError {
    /// The lower triangle of the input holds an infinity or a NaN.
    NotFinite,
    /// faer's tridiagonal solver did not converge within its iteration limit.
    NoConvergence,
}

impl fmt::Display for EvdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvdError::NotFinite => write!(f, "the matrix holds an infinity or a NaN"),
            EvdError::NoConvergence => write!(f, "the tridiagonal eigensolver did not converge"),
        }
    }
}

impl std::error::Error for EvdError {}

/// The eigendecomposition of the self-adjoint `a` (`n x n`), of which only the lower triangle
/// is read (the imaginary parts of its diagonal are taken as zero): `w` (`n` entries) gets the
/// eigenvalues, non-decreasing, and `u`, if given (`n x n`, column-major), the orthonormal
/// eigenvectors, so that `A U = U diag(w)`.
///
/// # Errors
/// [`EvdError::NotFinite`] when the lower triangle of `a` holds an infinity or a NaN;
/// [`EvdError::NoConvergence`] from the tridiagonal solver.
///
/// # Panics
/// When `a` is not square or `w` or `u` has the wrong shape.
///
/// # Example
/// ```
/// use faer::mat;
/// use teamalg_kernels::evd::{self_adjoint_evd, EvdParams};
/// use teamalg_kernels::par::Seq;
///
/// let a = mat![[2.0f64, 1.0], [1.0, 2.0]];
/// let mut w = [0.0; 2];
/// let mut u = faer::Mat::zeros(2, 2);
/// self_adjoint_evd(a.as_ref(), &mut w, Some(u.as_mut()), &Seq, EvdParams::default()).unwrap();
/// // The eigenvalues of [2 1; 1 2] are 1 and 3, with eigenvectors (1, -1) and (1, 1) / sqrt 2.
/// assert!((w[0] - 1.0).abs() < 1e-14 && (w[1] - 3.0).abs() < 1e-14);
/// assert!((u[(0, 1)] - u[(1, 1)]).abs() < 1e-14);
/// ```
pub fn self_adjoint_evd<T>(
    a: MatRef<'_, T>,
    w: &mut [<T as Rotate>::Real],
    u: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    params: EvdParams,
) -> Result<(), EvdError>
where
    T: Rotate + ComplexField,
{
    let mut buf = MemBuffer::new(self_adjoint_evd_scratch::<T>(a.nrows(), u.is_some()));
    self_adjoint_evd_with_scratch(a, w, u, exec, params, MemStack::new(&mut buf))
}

/// The scratch [`self_adjoint_evd_with_scratch`] needs for order `n`, with or without vectors:
/// the tridiagonal matrix, its Householder factors and faer's own scratch.
pub fn self_adjoint_evd_scratch<T: ComplexField>(n: usize, vectors: bool) -> StackReq {
    if n == 0 {
        return StackReq::EMPTY;
    }
    let want = if vectors {
        ComputeEigenvectors::Yes
    } else {
        ComputeEigenvectors::No
    };
    let bs = recommended_block_size::<T>(n, n);
    StackReq::all_of(&[
        temp_mat_scratch::<T>(n, n),
        temp_mat_scratch::<T>(bs, n.saturating_sub(1)),
        temp_mat_scratch::<T>(n, 3),
        StackReq::any_of(&[
            tridiag_in_place_scratch::<T>(n),
            // faer's whole-EVD scratch covers its tridiagonal solver.
            faer_evd_scratch::<T>(n, want, Par::Seq, Default::default()),
        ]),
    ])
}

/// [`self_adjoint_evd`] in the caller's scratch ([`self_adjoint_evd_scratch`]): the matrices
/// come from it; what is still allocated is far smaller: the back-transformation's per-chunk
/// scratch and, when the reduction runs in parallel, its step vectors.
///
/// # Errors
/// As [`self_adjoint_evd`].
///
/// # Panics
/// As [`self_adjoint_evd`], and when `stack` is smaller than [`self_adjoint_evd_scratch`].
pub fn self_adjoint_evd_with_scratch<T>(
    a: MatRef<'_, T>,
    w: &mut [<T as Rotate>::Real],
    u: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    params: EvdParams,
    stack: &mut MemStack,
) -> Result<(), EvdError>
where
    T: Rotate + ComplexField,
{
    let n = a.nrows();
    assert_eq!(a.ncols(), n, "a must be square");
    assert_eq!(w.len(), n, "w must have n entries");
    if let Some(u) = &u {
        assert!(u.nrows() == n && u.ncols() == n, "u must be n x n");
    }
    for j in 0..n {
        for i in j..n {
            let (re, im) = a[(i, j)].parts();
            if !re.is_finite() || !im.is_finite() {
                return Err(EvdError::NotFinite);
            }
        }
    }
    if n == 0 {
        return Ok(());
    }
    let bs = recommended_block_size::<T>(n, n);
    let (mut trid, stack) = temp_mat_zeroed::<T, _, _>(n, n, stack);
    let mut trid = trid.as_mat_mut();
    let (mut h, stack) = temp_mat_zeroed::<T, _, _>(bs, n - 1, stack);
    let mut h = h.as_mat_mut();
    let (mut cols, stack) = temp_mat_zeroed::<T, _, _>(n, 3, stack);
    let mut cols = cols.as_mat_mut();
    // The lower triangle, with a real diagonal: faer's tridiagonalization reads it alone.
    for j in 0..n {
        trid[(j, j)] = T::from_parts(a[(j, j)].parts().0, <T as Rotate>::Real::ZERO);
        for i in j + 1..n {
            trid[(i, j)] = a[(i, j)];
        }
    }
    tridiag_in_place(trid.as_mut(), h.as_mut(), exec, params.tridiag, stack);
    for i in 0..n {
        cols[(i, 0)] = trid[(i, i)];
        if i + 1 < n {
            cols[(i, 1)] = trid[(i + 1, i)];
        }
    }
    let (tri, mut vals) = cols.split_at_col_mut(2);
    let mut u = u;
    tridiagonal_self_adjoint_evd(
        tri.as_ref().col(0).as_diagonal(),
        tri.as_ref().col(1).as_diagonal(),
        vals.as_mut().col_mut(0).as_diagonal_mut(),
        u.as_mut().map(|u| u.as_mut()),
        Par::Seq,
        stack,
        Default::default(),
    )
    .map_err(|_| EvdError::NoConvergence)?;
    if let Some(mut u) = u {
        if n > 1 {
            apply_q_in_place(
                trid.as_ref().submatrix(1, 0, n - 1, n - 1),
                h.as_ref(),
                u.as_mut().subrows_mut(1, n - 1),
                false,
                exec,
                params.threshold,
            );
        }
    }
    for (wi, v) in w.iter_mut().zip(vals.col(0).iter()) {
        *wi = v.parts().0;
    }
    Ok(())
}
