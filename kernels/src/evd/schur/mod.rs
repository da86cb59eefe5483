//! The complex Schur form of an upper Hessenberg matrix, `H = Q T Q^H`, by multishift QR
//! sweeps with aggressive early deflation (LAPACK's `zlaqr0`, faer's `multishift_qr`), with
//! the sweeps' and the deflation windows' far updates on the executor. Design record:
//! `docs/general-evd.md`.
//!
//! - `small.rs`: single-shift QR (`zlahqr`), for blocks below [`MULTISHIFT_FROM`] and for the
//!   deflation windows;
//! - `deflate.rs`: aggressive early deflation, which also gives the sweeps their shifts;
//! - `sweep.rs`: a chain of bulges chased window by window;
//! - `far.rs`: a window's unitary applied to the rest of `H` and to `Q`, on the team.

mod deflate;
mod far;
pub mod scalar;
mod small;
mod sweep;
mod vectors;

pub use self::vectors::triangular_eigenvectors;

use std::fmt;

use faer::reborrow::ReborrowMut;
use faer::{Mat, MatMut};
use teamalg_gates::{Family, ParThreshold};

use self::deflate::deflate;
use self::far::Team;
use self::scalar::Cplx;
use self::small::{lahqr, negligible, Reach};
use self::sweep::{sweep, window};
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;
use crate::spectral::scalar::Real;

/// Blocks of fewer rows are finished by single-shift QR.
pub const MULTISHIFT_FROM: usize = 75;

/// A deflation window that deflated more than this percentage of its rows skips the sweep:
/// faer's value (LAPACK's `NIBBLE` is 14, with which every iteration here was a window's
/// Schur form and no sweep ran, `docs/general-evd.md`).
const NIBBLE: usize = 50;

/// Iterations without a deflation between two exceptional shift sets (LAPACK's `KEXSH`).
const EXCEPTIONAL: usize = 6;

/// Parameters of [`schur_in_place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SchurParams {
    /// How the far updates decide to go parallel (family `Gemm`); `None` leaves it to the
    /// executor's model.
    pub threshold: Option<ParThreshold>,
    /// Shifts per sweep; `None`: [`shift_count`].
    pub shifts: Option<usize>,
    /// Rows of the deflation window; `None`: [`deflation_window`].
    pub window: Option<usize>,
}

/// Why [`schur_in_place`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchurError {
    /// `H` (on and above its subdiagonal) holds an infinity or a NaN; nothing was changed.
    NotFinite,
    /// The iterations ran out before every eigenvalue converged.
    NoConvergence,
    /// A work matrix of the general EVD could not be allocated ([`crate::evd::general`]).
    OutOfMemory,
}

impl fmt::Display for SchurError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SchurError::NotFinite => "the Hessenberg matrix holds an infinity or a NaN",
            SchurError::NoConvergence => "the Schur iterations did not converge",
            SchurError::OutOfMemory => "a work matrix could not be allocated",
        })
    }
}

impl std::error::Error for SchurError {}

/// The shifts per sweep for a matrix of order `n`: half of faer's table (its
/// `recommended_shift_count`), whose bulges carry two shifts each in three rows where these
/// carry one in two. Measured with `schur_phases` (`docs/general-evd.md`, "Tuning"): at 512,
/// 16 shifts took 145 to 153 ms where 32 took 158 to 167 ms.
pub fn shift_count(n: usize) -> usize {
    match n {
        0..30 => 2,
        30..60 => 2,
        60..150 => 6,
        150..590 => 16,
        590..3000 => 32,
        3000..6000 => 64,
        _ => 128,
    }
}

/// The deflation window for a matrix of order `n` (the same table).
pub fn deflation_window(n: usize) -> usize {
    match n {
        0..30 => 2,
        30..60 => 4,
        60..150 => 10,
        150..590 => (n as f64 / (n as f64).log2()) as usize,
        590..3000 => 96,
        3000..6000 => 192,
        _ => 384,
    }
}

/// Reduces the upper Hessenberg `h` to upper triangular `T` by unitary similarity
/// (`H = Q T Q^H`), and, when `z` is given, replaces it by `z Q` (give the Hessenberg
/// reduction's unitary to get `A = (Z Q) T (Z Q)^H`). Entries of `h` below the subdiagonal
/// are taken as zero. The eigenvalues are `T`'s diagonal.
///
/// `h` and `z` may have any strides; the iterations run on column-major copies of those that
/// are not column-major.
///
/// # Errors
/// [`SchurError::NotFinite`] when `h` holds an infinity or a NaN on or above its subdiagonal
/// (checked first: such a matrix would iterate to the limit); [`SchurError::NoConvergence`]
/// when the iterations run out (`30 max(10, n)` of them); `h` and `z` then hold a partial
/// reduction.
///
/// # Panics
/// When `h` is not square, or `z` has another column count.
pub fn schur_in_place<C: Cplx>(
    mut h: MatMut<'_, C>,
    mut z: Option<MatMut<'_, C>>,
    exec: &(impl Executor + ?Sized),
    params: SchurParams,
) -> Result<(), SchurError> {
    let n = h.nrows();
    assert!(h.ncols() == n, "schur: H is {}x{}", n, h.ncols());
    if let Some(z) = &z {
        assert!(
            z.ncols() == n,
            "schur: Z has {} columns for H of order {n}",
            z.ncols()
        );
    }
    if upper_hessenberg(n).any(|(i, j)| {
        let x = h[(i, j)];
        !(x.re().is_finite() && x.im().is_finite())
    }) {
        return Err(SchurError::NotFinite);
    }
    if h.row_stride() != 1 {
        let mut copy = h.to_owned();
        let r = schur_in_place(copy.as_mut(), z, exec, params);
        h.copy_from(copy.as_ref());
        return r;
    }
    if let Some(zz) = z.as_mut().filter(|z| z.row_stride() != 1) {
        let mut copy = zz.to_owned();
        let r = schur_in_place(h, Some(copy.as_mut()), exec, params);
        zz.copy_from(copy.as_ref());
        return r;
    }
    for j in 0..n {
        for i in j + 2..n {
            h[(i, j)] = C::ZERO;
        }
    }
    if n <= 1 {
        return Ok(());
    }
    // A matrix near either end of the exponent range is scaled by a power of two first (as
    // LAPACK's `zgeev` scales before `zhseqr`): the deflation tests' floor, `safe_min n / ulp`,
    // would otherwise call every subdiagonal of a tiny matrix negligible.
    let e = scale_exponent::<C>(&h);
    if e != 0 {
        scale_hessenberg(&mut h, <C::R as Real>::from_f64(2f64.powi(e)));
    }
    let r = iterate(h.rb_mut(), z, exec, params);
    if e != 0 {
        scale_hessenberg(&mut h, <C::R as Real>::from_f64(2f64.powi(-e)));
    }
    r
}

/// The exponent `e` of the power of two that brings the largest entry of the Hessenberg part
/// of `h` near 1 ([`exponent_for`]).
fn scale_exponent<C: Cplx>(h: &MatMut<'_, C>) -> i32 {
    let n = h.nrows();
    let big = upper_hessenberg(n)
        .map(|(i, j)| h[(i, j)].abs1().to_f64())
        .fold(0.0f64, f64::max);
    exponent_for::<C>(big)
}

/// The exponent `e` of the power of two that brings `big` (a matrix's largest entry) near 1
/// when it lies outside `[sqrt(safe_min) / ulp, its reciprocal]`; 0 when it lies inside (or
/// is zero).
pub(crate) fn exponent_for<C: Cplx>(big: f64) -> i32 {
    let ulp = 2.0 * <C::R as Real>::EPS.to_f64();
    let small = <C::R as Real>::SAFE_MIN.to_f64().sqrt() / ulp;
    if big == 0.0 || (small..=1.0 / small).contains(&big) {
        return 0;
    }
    // The largest power of two the real type holds, against overflow of the factor itself.
    let reach = if ulp > 1e-10 { 126 } else { 1022 };
    (-(big.log2().floor() as i32)).clamp(-reach, reach)
}

/// Multiplies the upper Hessenberg part of `h` by `f`.
fn scale_hessenberg<C: Cplx>(h: &mut MatMut<'_, C>, f: C::R) {
    for (i, j) in upper_hessenberg(h.nrows()) {
        h[(i, j)] = h[(i, j)].scale(f);
    }
}

/// The positions `(i, j)` of an upper Hessenberg matrix of order `n` (`i <= j + 1`), column
/// by column.
fn upper_hessenberg(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).flat_map(move |j| (0..(j + 2).min(n)).map(move |i| (i, j)))
}

/// The iterations on a column-major, finite, scaled Hessenberg `h` of order 2 or more.
fn iterate<C: Cplx>(
    mut h: MatMut<'_, C>,
    mut z: Option<MatMut<'_, C>>,
    exec: &(impl Executor + ?Sized),
    params: SchurParams,
) -> Result<(), SchurError> {
    let n = h.nrows();
    let reach = Reach { top: 0, end: n };
    if n < MULTISHIFT_FROM {
        return lahqr(&mut h, z.as_mut(), 0, n - 1, reach).map_err(|_| SchurError::NoConvergence);
    }
    let zrows = z.as_ref().map_or(0, |z| z.nrows());
    let call_units = cost(n, zrows);
    let region = Region {
        site: "schur",
        dims: [n, n, zrows],
        units: call_units,
        family: Family::Gemm,
        sections: n,
        scope: Scope::Call,
        call_units,
    };
    let call = gate::call::<C>(exec, region, params.threshold);
    let team = Team {
        exec,
        width: call.width(),
        call_units,
        threshold: params.threshold,
    };
    if team.width > 1 {
        exec.warm(team.width);
    }
    // At most n - 1 shifts and n rows of window are ever used: larger requests are clamped
    // before the scratch is sized from them.
    let nsr = params
        .shifts
        .unwrap_or_else(|| shift_count(n))
        .clamp(1, n - 1);
    let nwr = params
        .window
        .unwrap_or_else(|| deflation_window(n))
        .clamp(2, n);
    let mut u = [
        Mat::<C>::zeros(window(nsr), window(nsr)),
        Mat::<C>::zeros(window(nsr), window(nsr)),
    ];
    let itmax = 30 * n.max(10);
    let mut since_deflation = 1usize;
    // Rows kbot + 1.. have converged.
    let mut kbot = n - 1;
    for _ in 0..itmax {
        // The active block: up from kbot to a negligible subdiagonal (set to zero).
        let mut ktop = 0;
        for k in (1..=kbot).rev() {
            if negligible(&h, k, 0, kbot) {
                h[(k, k - 1)] = C::ZERO;
                ktop = k;
                break;
            }
        }
        let nh = kbot + 1 - ktop;
        if nh < MULTISHIFT_FROM {
            // The whole block as one deflation window: its Schur form on a copy, then the far
            // parts by products. Single-shift QR in place only if the window's failed.
            let d = deflate(&mut h, z.as_mut(), ktop, kbot, nh, reach, &team);
            if d.deflated < nh {
                lahqr(&mut h, z.as_mut(), ktop, kbot, reach)
                    .map_err(|_| SchurError::NoConvergence)?;
            }
            if ktop == 0 {
                return Ok(());
            }
            kbot = ktop - 1;
            since_deflation = 1;
            continue;
        }
        let d = deflate(&mut h, z.as_mut(), ktop, kbot, nwr.min(nh), reach, &team);
        if d.deflated > 0 {
            since_deflation = 1;
            if d.deflated > kbot {
                return Ok(());
            }
            kbot -= d.deflated;
        } else {
            since_deflation += 1;
        }
        let nw = nwr.min(nh);
        let left = kbot + 1 - ktop;
        let sweep_due =
            d.deflated == 0 || (100 * d.deflated <= nw * NIBBLE && left > MULTISHIFT_FROM.min(nw));
        if !sweep_due || left < 2 {
            continue;
        }
        let ns = nsr.min(left - 1).max(1);
        let shifts = if since_deflation % EXCEPTIONAL == 0 {
            exceptional(&h, ktop, kbot, ns)
        } else if d.shifts.len() >= ns.div_ceil(2).max(1) {
            let s = &d.shifts;
            s[s.len().saturating_sub(ns)..].to_vec()
        } else {
            bottom_eigenvalues(&h, ktop, kbot, ns)
                .unwrap_or_else(|| exceptional(&h, ktop, kbot, ns))
        };
        sweep(
            &mut h,
            z.as_mut(),
            ktop,
            kbot,
            &shifts,
            reach,
            &mut u,
            &team,
        );
    }
    Err(SchurError::NoConvergence)
}

/// Shifts that break a cycle: the bottom diagonal moved by the subdiagonal's size.
fn exceptional<C: Cplx>(h: &MatMut<'_, C>, ktop: usize, kbot: usize, ns: usize) -> Vec<C> {
    let q = <C::R as Real>::from_f64(0.75);
    (0..ns)
        .map(|i| {
            let k = kbot - i.min(kbot - ktop - 1);
            h[(k, k)] + C::new(q * h[(k, k - 1)].abs1(), <C::R as Real>::ZERO)
        })
        .collect()
}

/// The eigenvalues of the trailing `ns x ns` block of the active block, as shifts.
fn bottom_eigenvalues<C: Cplx>(
    h: &MatMut<'_, C>,
    ktop: usize,
    kbot: usize,
    ns: usize,
) -> Option<Vec<C>> {
    let ns = ns.min(kbot + 1 - ktop).max(2);
    let k0 = kbot + 1 - ns;
    let mut b = Mat::<C>::from_fn(ns, ns, |i, j| {
        if i <= j + 1 {
            h[(k0 + i, k0 + j)]
        } else {
            C::ZERO
        }
    });
    lahqr(&mut b.as_mut(), None, 0, ns - 1, Reach { top: 0, end: ns }).ok()?;
    Some((0..ns).map(|i| b[(i, i)]).collect())
}

/// The multiply-adds of the far updates the call is expected to make: about `10 n^3` for `T`
/// and `Z` together, `7 n^3` without `Z` (a sweep's window products over the whole matrix,
/// some ten sweeps' worth of chains).
pub fn cost(n: usize, zrows: usize) -> f64 {
    let n = n as f64;
    7.0 * n * n * n + 3.0 * n * n * zrows as f64
}
