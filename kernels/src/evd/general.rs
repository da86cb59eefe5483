//! The eigendecomposition of a general complex matrix, `A V = V diag(w)`: faer's Hessenberg
//! reduction `A = Z H Z^H` (serial), teamalg's Schur form `H = Q T Q^H` with its far updates
//! on the executor ([`crate::evd::schur`]), the eigenvectors `X` of `T` in column chunks on the
//! executor, and `V = (Z Q) X` by the executor's GEMM. Design record: `docs/general-evd.md`.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::hessenberg::{hessenberg_in_place, hessenberg_in_place_scratch};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use teamalg_gates::ParThreshold;

use crate::evd::schur::scalar::Cplx;
use crate::evd::schur::{schur_in_place, triangular_eigenvectors, SchurError, SchurParams};
use crate::exec::par::Executor;
use crate::gemm::{matmul, GemmParams};
use crate::qr::householder::apply_q_in_place;
use crate::spectral::scalar::Real;

/// Parameters of [`complex_evd`].
#[derive(Debug, Clone, Copy, Default)]
pub struct GeneralEvdParams {
    /// The Schur iterations' parameters.
    pub schur: SchurParams,
    /// How forming `Z` (family `Qr`) and the eigenvectors of `T` (family
    /// `TriangularSolve`) decide to go parallel.
    pub vectors: Option<ParThreshold>,
    /// How `V = Z X` decides to go parallel (family `Gemm`).
    pub gemm: Option<ParThreshold>,
}

/// The eigenvalues of the square `a` into `w`, and, when `v` is given, its eigenvectors
/// (columns of `v`, scaled so that the `k`-th has a unit entry in the Schur basis; the facade
/// normalizes them).
///
/// # Errors
/// As [`schur_in_place`]: a non-finite `a` (its Hessenberg form) or iterations that ran out;
/// also [`SchurError::NoConvergence`] when the eigenvectors' back substitution overflowed,
/// and [`SchurError::OutOfMemory`] when one of its three `n x n` work matrices cannot be
/// allocated.
/// `w` and `v` then hold no result.
///
/// # Panics
/// When the shapes disagree.
pub fn complex_evd<C: Cplx>(
    a: MatRef<'_, C>,
    w: &mut [C],
    v: Option<MatMut<'_, C>>,
    exec: &(impl Executor + ?Sized),
    params: GeneralEvdParams,
) -> Result<(), SchurError> {
    let n = a.nrows();
    assert!(a.ncols() == n && w.len() == n, "complex_evd: shapes");
    if let Some(v) = &v {
        assert!(
            v.nrows() == n && v.ncols() == n,
            "complex_evd: V is not n x n"
        );
    }
    if n == 0 {
        return Ok(());
    }
    let mut h = try_zeros::<C>(n, n)?;
    h.copy_from(a);
    // Near either end of the exponent range, the whole problem is scaled by a power of two
    // (LAPACK's `zgeev`): the eigenvectors' pivot floor and the deflation tests assume a
    // matrix of moderate size. The eigenvalues are scaled back; the vectors need not be.
    let mut big = 0.0f64;
    for j in 0..n {
        for i in 0..n {
            big = big.max(h[(i, j)].abs1().to_f64());
        }
    }
    let e = crate::evd::schur::exponent_for::<C>(big);
    let unscale = <C::R as Real>::from_f64(2f64.powi(-e));
    if e != 0 {
        let f = <C::R as Real>::from_f64(2f64.powi(e));
        for j in 0..n {
            for i in 0..n {
                h[(i, j)] = h[(i, j)].scale(f);
            }
        }
    }
    let bs = recommended_block_size::<C>(n - 1, n - 1).max(1);
    let mut hh = Mat::<C>::zeros(bs, n - 1);
    let mut mem = MemBuffer::new(hessenberg_in_place_scratch::<C>(
        n,
        bs,
        Par::Seq,
        Default::default(),
    ));
    hessenberg_in_place(
        h.as_mut(),
        hh.as_mut(),
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    );
    let Some(mut v) = v else {
        schur_in_place(h.as_mut(), None, exec, params.schur)?;
        for (i, wi) in w.iter_mut().enumerate() {
            *wi = h[(i, i)].scale(unscale);
        }
        return Ok(());
    };
    // Z = Q I: the reflectors applied to the identity's columns, in chunks on the executor.
    let mut z = try_zeros::<C>(n, n)?;
    z.as_mut().diagonal_mut().fill(C::ONE);
    if n > 1 {
        apply_q_in_place(
            h.as_ref().submatrix(1, 0, n - 1, n - 1),
            hh.as_ref(),
            z.as_mut().submatrix_mut(1, 1, n - 1, n - 1),
            false,
            exec,
            params.vectors,
        );
    }
    schur_in_place(h.as_mut(), Some(z.as_mut()), exec, params.schur)?;
    for (i, wi) in w.iter_mut().enumerate() {
        *wi = h[(i, i)].scale(unscale);
    }
    let mut x = try_zeros::<C>(n, n)?;
    triangular_eigenvectors(h.as_ref(), x.as_mut(), exec, params.vectors);
    // The back substitution does not rescale (LAPACK's `ztrevc` does): a strongly non-normal
    // `T` can overflow it, and then there is no result to give.
    let finite = (0..n).all(|j| {
        x.col(j)
            .iter()
            .all(|e| e.re().is_finite() && e.im().is_finite())
    });
    if !finite {
        return Err(SchurError::NoConvergence);
    }
    matmul(
        v.as_mut(),
        Accum::Replace,
        z.as_ref(),
        x.as_ref(),
        C::ONE,
        exec,
        GemmParams {
            threshold: params.gemm,
        },
    );
    Ok(())
}

/// An `m x n` matrix of zeros, or [`SchurError::OutOfMemory`] when it cannot be allocated.
fn try_zeros<C: Cplx>(m: usize, n: usize) -> Result<Mat<C>, SchurError> {
    let mut x = Mat::new();
    x.try_reserve(m, n).map_err(|_| SchurError::OutOfMemory)?;
    x.resize_with(m, n, |_, _| C::ZERO);
    Ok(x)
}

/// Below this order the general EVD stays faer's serial call. Through the facade on a held
/// team of two (`kernels --kernels eigen`, `docs/perf/runs/kernels-log.md`), c64 at 192 took
/// 0.92 of faer on a quiet machine but 1.07 (held team) and 1.12 (pool per call) beside one
/// busy process, where 256 took 1.03 and 1.04.
pub const TEAM_FROM: usize = 256;

/// Whether the general EVD of order `n` goes through teamalg's path on `exec`: from
/// [`TEAM_FROM`] on, when the gate sends the Schur iterations' far updates to at least two
/// participants and the contention signal found room for them or a crowd too brief to believe
/// (or the caller's `threshold` decides). Otherwise faer's serial call: teamalg's Schur form is slower than faer's on one
/// thread, so a team that cannot run at full speed loses to it (beside one busy process, with
/// the gate's own weighing alone, 1.03 to 1.09 of faer at 256 to 512).
pub fn team_pays<C: Cplx>(
    n: usize,
    exec: &(impl Executor + ?Sized),
    threshold: Option<ParThreshold>,
) -> bool {
    if n < TEAM_FROM {
        return false;
    }
    let units = crate::evd::schur::cost(n, n);
    let region = crate::exec::gate::Region {
        site: "eigen",
        dims: [n, n, n],
        units,
        family: teamalg_gates::Family::Gemm,
        sections: n,
        scope: crate::exec::gate::Scope::Call,
        call_units: units,
    };
    let w = crate::exec::gate::weigh::<C>(exec, region, threshold);
    let forced = matches!(threshold, Some(ParThreshold::Fixed(_)));
    w.width >= 2 && (forced || w.contention.found_room())
}

/// The scalars of the general EVD: the complex ones go through teamalg's path where it pays
/// ([`team_pays`]); the real ones have no Schur form of teamalg's yet.
pub trait TeamEvd: Sized + crate::spectral::scalar::sealed::Sealed {
    /// The eigenvalues' and eigenvectors' type.
    type Cplx;
    /// The eigenvalues into `w` and, when `v` is given, the eigenvectors, on `exec`, by
    /// teamalg's path; `None` for a scalar without one (the real ones). Ask
    /// [`pays_on_team`](TeamEvd::pays_on_team) first.
    /// `threshold` is the call's for family `Gemm` (the Schur iterations' far updates), and
    /// sends the call to teamalg's path from [`TEAM_FROM`] on when it forces a width.
    fn team_evd<E: Executor + ?Sized>(
        a: MatRef<'_, Self>,
        w: &mut [Self::Cplx],
        v: Option<MatMut<'_, Self::Cplx>>,
        exec: &E,
        threshold: Option<ParThreshold>,
    ) -> Option<Result<(), SchurError>>;

    /// Whether [`team_evd`](TeamEvd::team_evd) would take teamalg's path for order `n` now
    /// (asked first by a caller that frees memory it would not need then).
    fn pays_on_team<E: Executor + ?Sized>(
        n: usize,
        exec: &E,
        threshold: Option<ParThreshold>,
    ) -> bool;
}

macro_rules! real_evd {
    ($r:ty) => {
        impl TeamEvd for $r {
            type Cplx = num_complex::Complex<$r>;
            fn team_evd<E: Executor + ?Sized>(
                _: MatRef<'_, Self>,
                _: &mut [Self::Cplx],
                _: Option<MatMut<'_, Self::Cplx>>,
                _: &E,
                _: Option<ParThreshold>,
            ) -> Option<Result<(), SchurError>> {
                None
            }
            fn pays_on_team<E: Executor + ?Sized>(
                _: usize,
                _: &E,
                _: Option<ParThreshold>,
            ) -> bool {
                false
            }
        }
    };
}

macro_rules! complex_team_evd {
    ($r:ty) => {
        impl TeamEvd for num_complex::Complex<$r> {
            type Cplx = Self;
            fn team_evd<E: Executor + ?Sized>(
                a: MatRef<'_, Self>,
                w: &mut [Self],
                v: Option<MatMut<'_, Self>>,
                exec: &E,
                threshold: Option<ParThreshold>,
            ) -> Option<Result<(), SchurError>> {
                let params = GeneralEvdParams {
                    schur: SchurParams {
                        threshold,
                        ..SchurParams::default()
                    },
                    ..GeneralEvdParams::default()
                };
                Some(complex_evd(a, w, v, exec, params))
            }
            fn pays_on_team<E: Executor + ?Sized>(
                n: usize,
                exec: &E,
                threshold: Option<ParThreshold>,
            ) -> bool {
                team_pays::<Self>(n, exec, threshold)
            }
        }
    };
}

real_evd!(f32);
real_evd!(f64);
complex_team_evd!(f32);
complex_team_evd!(f64);
