//! The eigendecomposition of a self-adjoint matrix, `A = U diag(w) U^H`: the tridiagonalization
//! on the executor ([`crate::evd::tridiag`]); the tridiagonal solver: with vectors from order 128,
//! split once with its halves solved at once and merged on the executor (`tridiag_dc`), else
//! faer's (implicit QL for values only, divide and conquer with vectors); then the
//! back-transformation `U = Q Z` in column chunks on the executor
//! ([`crate::qr::householder::apply_q_in_place`]). Design record: `docs/svd.md` ("The self-adjoint EVD").

pub mod cost;
pub mod general;
pub mod schur;
pub mod tridiag;
pub(crate) mod tridiag_dc;

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
use teamalg_gates::{Family, ParThreshold};

use crate::evd::tridiag::{tridiag_in_place, tridiag_in_place_scratch};
use crate::exec::call::Call;
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;
use crate::gemm::GemmParams;
use crate::qr::householder::apply_q_in_place;
use crate::spectral::scalar::{Real, Rotate};

/// Parameters of [`self_adjoint_evd`].
#[derive(Debug, Clone, Copy, Default)]
pub struct EvdParams {
    /// How the tridiagonalization decides to go parallel (family `TridiagStep`); `None`
    /// leaves it to the executor's model.
    pub tridiag: Option<ParThreshold>,
    /// How the back-transformation decides to go parallel (family `Qr`); `None` leaves it to
    /// the executor's model.
    pub threshold: Option<ParThreshold>,
    /// How the tridiagonal solver decides to split its matrix in two halves solved at once
    /// (family `TridiagEvdDc`, with vectors from order 128); `None` leaves it to the
    /// executor's model.
    pub solver: Option<ParThreshold>,
    /// How the GEMMs of the split solver's merge decide to go parallel (family `Gemm`); `None`
    /// leaves it to the executor's model.
    pub gemm: Option<ParThreshold>,
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
    w: &mut [<T as Rotate>::RealPart],
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
            split_scratch::<T>(n, vectors),
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
    w: &mut [<T as Rotate>::RealPart],
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
        trid[(j, j)] = T::from_parts(a[(j, j)].parts().0, <T as Rotate>::RealPart::ZERO);
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
    let call = match u {
        Some(_) if n >= tridiag_dc::MIN_ORDER => {
            let units = n as f64 * n as f64;
            let region = Region {
                site: "evd/solver",
                dims: [n, n, n],
                units,
                family: Family::TridiagEvdDc,
                // The halves, the roots, the vectors and the product.
                sections: 4,
                scope: Scope::Call,
                call_units: units,
            };
            Some(gate::call::<<T as Rotate>::RealPart>(
                exec,
                region,
                params.solver,
            ))
        }
        _ => None,
    };
    let width = call.as_ref().map_or(1, Call::width);
    if let (Some(u), true) = (u.as_mut(), width > 1) {
        let split = tridiag_dc::Divide {
            width,
            gemm: GemmParams {
                threshold: params.gemm,
            },
        };
        split_solve(tri.as_ref(), w, u.as_mut(), split, exec, stack)?;
    } else {
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
        for (wi, v) in w.iter_mut().zip(vals.col(0).iter()) {
            *wi = v.parts().0;
        }
    }
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
    Ok(())
}

/// The scratch of [`split_solve`] for order `n` (none without vectors or below the order it
/// splits at).
fn split_scratch<T: ComplexField>(n: usize, vectors: bool) -> StackReq {
    if !vectors || n < tridiag_dc::MIN_ORDER {
        return StackReq::EMPTY;
    }
    StackReq::all_of(&[
        temp_mat_scratch::<T::Real>(n, n),
        temp_mat_scratch::<T::Real>(n, 3),
        tridiag_dc::solve_scratch::<T::Real>(n),
    ])
}

/// The tridiagonal solver split in two halves on `split.width` participants
/// ([`tridiag_dc::solve`]), on the real tridiagonal matrix: a complex off-diagonal is made real
/// by a diagonal unitary similarity, whose phases then scale the rows of the vectors (as
/// faer's solver does).
fn split_solve<T: Rotate + ComplexField>(
    tri: MatRef<'_, T>,
    w: &mut [<T as Rotate>::RealPart],
    mut u: MatMut<'_, T>,
    split: tridiag_dc::Divide,
    exec: &(impl Executor + ?Sized),
    stack: &mut MemStack,
) -> Result<(), EvdError> {
    let n = tri.nrows();
    let zero = <T as Rotate>::RealPart::ZERO;
    let (mut z, stack) = temp_mat_zeroed::<<T as Rotate>::RealPart, _, _>(n, n, stack);
    let mut z = z.as_mat_mut();
    let (mut vecs, stack) = temp_mat_zeroed::<<T as Rotate>::RealPart, _, _>(n, 3, stack);
    let mut vecs = vecs.as_mat_mut();
    // The phases: p_0 = 1, p_i = e_(i-1) p_(i-1) / |e_(i-1) p_(i-1)| (1 where that is zero).
    let mut phase = vec![T::from_parts(<T as Rotate>::RealPart::ONE, zero); n];
    for i in 0..n {
        vecs[(i, 0)] = tri[(i, 0)].parts().0;
        if i + 1 < n {
            let (er, ei) = tri[(i, 1)].parts();
            vecs[(i, 1)] = if <T as ComplexField>::IS_REAL {
                er
            } else {
                er.hypot(ei)
            };
            if !<T as ComplexField>::IS_REAL {
                let (pr, pi) = phase[i].parts();
                let (xr, xi) = (er * pr - ei * pi, er * pi + ei * pr);
                let r = xr.hypot(xi);
                phase[i + 1] = if r == zero {
                    T::from_parts(<T as Rotate>::RealPart::ONE, zero)
                } else {
                    T::from_parts(xr / r, xi / r)
                };
            }
        }
    }
    let (tri_real, mut vals) = vecs.as_mut().split_at_col_mut(2);
    let tri_real = tri_real.as_ref();
    let diag = tri_real
        .col(0)
        .try_as_col_major()
        .expect("column-major")
        .as_slice();
    let off = tri_real
        .col(1)
        .try_as_col_major()
        .expect("column-major")
        .as_slice();
    let vals = vals
        .as_mut()
        .col_mut(0)
        .try_as_col_major_mut()
        .expect("column-major")
        .as_slice_mut();
    tridiag_dc::solve(diag, off, vals, z.as_mut(), split, exec, stack)
        .map_err(|_| EvdError::NoConvergence)?;
    w.copy_from_slice(vals);
    for j in 0..n {
        for i in 0..n {
            let x = z[(i, j)];
            u[(i, j)] = if <T as ComplexField>::IS_REAL {
                T::from_parts(x, zero)
            } else {
                let (pr, pi) = phase[i].parts();
                T::from_parts(pr * x, pi * x)
            };
        }
    }
    Ok(())
}
