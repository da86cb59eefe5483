//! The SVD of a real upper bidiagonal matrix: implicit-shift bidiagonal QR (Demmel-Kahan, as in
//! LAPACK's `dbdsqr`), its rotations recorded and applied to row strips of `U` and `V` in one
//! barrier-free section per batch. Design record: `docs/svd.md`.

use std::fmt;

use faer::MatMut;
use teamalg_gates::{Family, ParThreshold};

use crate::exec::call;
use crate::exec::claims::Claims;
use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::Executor;
use crate::exec::tiles::Tiles;
use crate::svd::dqds;

mod two_by_two;
use two_by_two::{lartg, las2, lasv2, max, min, sign, times_pow2};

/// Most inner steps per singular value and per value: `6 n^2` in all, as in LAPACK.
const MAX_ITER_FACTOR: usize = 6;

/// The fewest rows a participant claims when applying a batch of rotations.
const MIN_STRIP: usize = 16;

pub use crate::spectral::scalar::{Real, Rotate};

/// Why the solver stopped without a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BidiagSvdError {
    /// `d` or `e` holds an infinity or a NaN; nothing was changed.
    NotFinite,
    /// The iteration reached its limit (`6 n^2` inner steps) with this many superdiagonal
    /// entries still nonzero; `d`, `e`, `U` and `V` hold the partly reduced state.
    NoConvergence {
        /// Superdiagonal entries not yet negligible.
        unconverged: usize,
    },
}

impl fmt::Display for BidiagSvdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BidiagSvdError::NotFinite => write!(f, "the bidiagonal holds an infinity or a NaN"),
            BidiagSvdError::NoConvergence { unconverged } => write!(
                f,
                "the bidiagonal QR iteration did not converge ({unconverged} superdiagonal entries left)"
            ),
        }
    }
}

impl std::error::Error for BidiagSvdError {}

/// Parameters of [`bidiag_svd`].
#[derive(Debug, Clone, Copy)]
pub struct BidiagSvdParams {
    /// Rotations per batch, in multiples of `n`: a batch is applied to `U` and `V` once it
    /// holds `batch * n` rotations (about `batch` full sweeps). At least 1.
    pub batch: usize,
    /// How each batch's section decides to go parallel; `None` leaves it to the executor's
    /// model (family [`Family::HouseholderRank1`]).
    pub threshold: Option<ParThreshold>,
}

impl Default for BidiagSvdParams {
    fn default() -> Self {
        BidiagSvdParams {
            batch: 8,
            threshold: None,
        }
    }
}

/// One plane rotation of columns `j` and `j + 1`: `x_j <- c x_j + s x_{j+1}`,
/// `x_{j+1} <- c x_{j+1} - s x_j`.
#[derive(Debug, Clone, Copy)]
struct Rot<R> {
    j: u32,
    c: R,
    s: R,
}

/// The rotations recorded for `U` and `V`, applied in batches.
struct Recorder<'a, T: Rotate, E: Executor + ?Sized> {
    u: Option<MatMut<'a, T>>,
    v: Option<MatMut<'a, T>>,
    on_u: Vec<Rot<T::RealPart>>,
    on_v: Vec<Rot<T::RealPart>>,
    limit: usize,
    exec: &'a E,
    threshold: Option<ParThreshold>,
}

impl<T: Rotate, E: Executor + ?Sized> Recorder<'_, T, E> {
    fn u(&mut self, j: usize, c: T::RealPart, s: T::RealPart) {
        if self.u.is_some() {
            self.on_u.push(Rot { j: j as u32, c, s });
        }
    }

    fn v(&mut self, j: usize, c: T::RealPart, s: T::RealPart) {
        if self.v.is_some() {
            self.on_v.push(Rot { j: j as u32, c, s });
        }
    }

    /// Applies the batch when it is full (or `now`).
    fn flush(&mut self, now: bool) {
        if now || self.on_u.len() >= self.limit || self.on_v.len() >= self.limit {
            if let Some(u) = self.u.as_mut() {
                apply(u.as_mut(), &self.on_u, self.exec, self.threshold);
            }
            if let Some(v) = self.v.as_mut() {
                apply(v.as_mut(), &self.on_v, self.exec, self.threshold);
            }
            self.on_u.clear();
            self.on_v.clear();
        }
    }
}

/// Applies `rots`, in order, to the columns of `x`: in one section of row strips when the gate
/// says it pays, else on the calling thread.
fn apply<T: Rotate>(
    x: MatMut<'_, T>,
    rots: &[Rot<T::RealPart>],
    exec: &(impl Executor + ?Sized),
    threshold: Option<ParThreshold>,
) {
    let (rows, cols) = (x.nrows(), x.ncols());
    if rots.is_empty() || rows == 0 {
        return;
    }
    let units = 2.0 * rows as f64 * rots.len() as f64;
    let region = Region {
        site: "svd/rotations",
        dims: [rows, cols, rots.len()],
        units,
        family: Family::HouseholderRank1,
        sections: 1,
        scope: Scope::Call,
        call_units: units,
    };
    let call = gate::call::<T>(exec, region, threshold);
    let w = call.width();
    if w <= 1 {
        apply_strip(x, rots);
        return;
    }
    let tiles = Tiles::new(x);
    let claims = Claims::new(0, rows, w, MIN_STRIP);
    call::run(exec, w, &|_| {
        while let Some((r0, r1)) = claims.claim() {
            // SAFETY: the claims hand out disjoint row ranges inside the matrix, so no two
            // live tiles overlap.
            let strip = unsafe { tiles.tile(r0, r1, 0, cols) };
            apply_strip(strip, rots);
        }
    });
}

/// Applies `rots` in order to one strip of rows (column-major: each column's rows contiguous).
fn apply_strip<T: Rotate>(x: MatMut<'_, T>, rots: &[Rot<T::RealPart>]) {
    let rows = x.nrows();
    let cs = x.col_stride();
    let base = x.as_ptr_mut();
    assert_eq!(x.row_stride(), 1, "rotations need column-major storage");
    for r in rots {
        let j = r.j as usize;
        debug_assert!(j + 1 < x.ncols());
        // SAFETY: columns j and j + 1 exist (the rotation's index comes from the solver, which
        // only rotates columns below n, and `x` has n columns), each holds `rows` contiguous
        // entries (row stride 1, checked), and they are distinct columns, so the two slices do
        // not overlap; `x` is borrowed mutably for the whole loop.
        let (a, b) = unsafe {
            (
                std::slice::from_raw_parts_mut(base.offset(j as isize * cs), rows),
                std::slice::from_raw_parts_mut(base.offset((j as isize + 1) * cs), rows),
            )
        };
        for (x, y) in a.iter_mut().zip(b.iter_mut()) {
            T::rotate(x, y, r.c, r.s);
        }
    }
}

/// The SVD of the upper bidiagonal `B` with diagonal `d` (`n` entries) and superdiagonal `e`
/// (`n - 1` entries): on return `d` holds the singular values, non-negative and non-increasing,
/// `u` (`p x n`, if given) is replaced by `u U_B` and `v` (`q x n`) by `v V_B`, where
/// `B = U_B diag(d) V_B^T`. `e` is overwritten (zero on success). The rotations are applied to
/// `u` and `v` in batches, each batch in one section on `exec` when the gate says it pays.
///
/// # Errors
/// [`BidiagSvdError::NotFinite`] (nothing changed) when `d` or `e` is not finite;
/// [`BidiagSvdError::NoConvergence`] after `6 n^2` inner steps.
///
/// # Panics
/// When `e.len() + 1 != d.len()` (for `n > 0`), when `u` or `v` does not have `n` columns, or is
/// not column-major (row stride 1).
///
/// # Example
/// ```
/// use teamalg_kernels::bidiag_svd::{bidiag_svd, BidiagSvdParams};
/// use teamalg_kernels::par::Seq;
///
/// // [3 4; 0 0] has singular values 5 and 0.
/// let (mut d, mut e) = (vec![3.0f64, 0.0], vec![4.0]);
/// bidiag_svd::<f64>(&mut d, &mut e, None, None, &Seq, BidiagSvdParams::default()).unwrap();
/// assert!((d[0] - 5.0).abs() < 1e-15 && d[1] == 0.0);
/// ```
pub fn bidiag_svd<T: Rotate>(
    d: &mut [T::RealPart],
    e: &mut [T::RealPart],
    u: Option<MatMut<'_, T>>,
    v: Option<MatMut<'_, T>>,
    exec: &(impl Executor + ?Sized),
    params: BidiagSvdParams,
) -> Result<(), BidiagSvdError> {
    let n = d.len();
    if n == 0 {
        return Ok(());
    }
    assert_eq!(e.len() + 1, n, "e must have n - 1 entries");
    for m in [&u, &v].into_iter().flatten() {
        assert_eq!(m.ncols(), n, "U and V must have n columns");
        assert!(
            m.nrows() == 0 || m.row_stride() == 1,
            "U and V must be column-major"
        );
    }
    if !d.iter().chain(e.iter()).all(|x| x.is_finite()) {
        return Err(BidiagSvdError::NotFinite);
    }
    let mut rec = Recorder {
        u,
        v,
        on_u: Vec::new(),
        on_v: Vec::new(),
        limit: params.batch.max(1) * n,
        exec,
        threshold: params.threshold,
    };
    // Scale by a power of two (exact) so the largest entry is near one: the absolute floor of
    // the iteration (a multiple of the smallest normal number) then drops nothing of a tiny or
    // huge matrix that it would keep at unit scale.
    let big = d
        .iter()
        .chain(e.iter())
        .fold(T::RealPart::ZERO, |a, x| max(a, x.abs()));
    let k = if big == T::RealPart::ZERO {
        0
    } else {
        -(big.to_f64().log2().round() as i32)
    };
    for x in d.iter_mut().chain(e.iter_mut()) {
        *x = times_pow2(*x, k);
    }
    // Values only: dqds, unless it declines (then the QR below).
    if rec.u.is_none() && rec.v.is_none() {
        let mut values = vec![T::RealPart::ZERO; n];
        if dqds::singular_values(d, e, &mut values) {
            for (x, y) in d.iter_mut().zip(values) {
                *x = times_pow2(y, -k);
            }
            e.fill(T::RealPart::ZERO);
            return Ok(());
        }
    }
    let result = iterate(d, e, &mut rec);
    rec.flush(true);
    for x in d.iter_mut().chain(e.iter_mut()) {
        *x = times_pow2(*x, -k);
    }
    result?;
    finish(d, &mut rec);
    Ok(())
}

/// The QR iteration proper (`dbdsqr`'s main loop, upper bidiagonal, `tol > 0`).
fn iterate<T: Rotate, E: Executor + ?Sized>(
    d: &mut [T::RealPart],
    e: &mut [T::RealPart],
    rec: &mut Recorder<'_, T, E>,
) -> Result<(), BidiagSvdError> {
    type R<T> = <T as Rotate>::RealPart;
    let n = d.len();
    let eps = R::<T>::EPS;
    let nr = R::<T>::from_f64(n as f64);
    let tolmul = R::<T>::from_f64(10f64.max(100f64.min(eps.to_f64().powf(-0.125))));
    let tol = tolmul * eps;
    // The absolute floor: a lower bound of the smallest singular value, times tol.
    let mut sminoa = d[0].abs();
    if sminoa != R::<T>::ZERO {
        let mut mu = sminoa;
        for i in 1..n {
            mu = d[i].abs() * (mu / (mu + e[i - 1].abs()));
            sminoa = min(sminoa, mu);
            if sminoa == R::<T>::ZERO {
                break;
            }
        }
    }
    sminoa /= nr.sqrt();
    let maxit = MAX_ITER_FACTOR * n * n;
    let thresh = max(
        tol * sminoa,
        R::<T>::from_f64(maxit as f64) * R::<T>::SAFE_MIN,
    );
    let hundredth = R::<T>::from_f64(0.01);

    let mut iter = 0usize;
    let mut m = n - 1;
    let (mut oldll, mut oldm) = (usize::MAX, usize::MAX);
    let mut idir = 0;
    'main: while m > 0 {
        if iter > maxit {
            let unconverged = e[..m].iter().filter(|x| **x != R::<T>::ZERO).count();
            return Err(BidiagSvdError::NoConvergence { unconverged });
        }
        // The bottom unreduced block ll..=m.
        let mut smax = d[m].abs();
        let mut ll = 0;
        for l in (0..m).rev() {
            let (abss, abse) = (d[l].abs(), e[l].abs());
            if abse <= thresh {
                e[l] = R::<T>::ZERO;
                if l == m - 1 {
                    m -= 1;
                    continue 'main;
                }
                ll = l + 1;
                break;
            }
            smax = max(smax, max(abss, abse));
        }
        if ll == m - 1 {
            // A 2x2 block: its exact SVD.
            let (smin, smx, sinr, cosr, sinl, cosl) = lasv2(d[m - 1], e[m - 1], d[m]);
            d[m - 1] = smx;
            e[m - 1] = R::<T>::ZERO;
            d[m] = smin;
            rec.v(m - 1, cosr, sinr);
            rec.u(m - 1, cosl, sinl);
            rec.flush(false);
            m = m.saturating_sub(2);
            continue;
        }
        // A new block picks its direction: chase toward the small end.
        if oldll == usize::MAX || ll > oldm || m < oldll {
            idir = if d[ll].abs() >= d[m].abs() { 1 } else { 2 };
        }
        // Convergence tests, relative.
        let mut sminl;
        if idir == 1 {
            if e[m - 1].abs() <= tol * d[m].abs() {
                e[m - 1] = R::<T>::ZERO;
                continue;
            }
            let mut mu = d[ll].abs();
            sminl = mu;
            for l in ll..m {
                if e[l].abs() <= tol * mu {
                    e[l] = R::<T>::ZERO;
                    continue 'main;
                }
                mu = d[l + 1].abs() * (mu / (mu + e[l].abs()));
                sminl = min(sminl, mu);
            }
        } else {
            if e[ll].abs() <= tol * d[ll].abs() {
                e[ll] = R::<T>::ZERO;
                continue;
            }
            let mut mu = d[m].abs();
            sminl = mu;
            for l in (ll..m).rev() {
                if e[l].abs() <= tol * mu {
                    e[l] = R::<T>::ZERO;
                    continue 'main;
                }
                mu = d[l].abs() * (mu / (mu + e[l].abs()));
                sminl = min(sminl, mu);
            }
        }
        oldll = ll;
        oldm = m;
        // The shift: zero when it would cost relative accuracy.
        let mut shift = R::<T>::ZERO;
        if nr * tol * (sminl / smax) > max(eps, hundredth * tol) {
            let (s, sll) = if idir == 1 {
                (las2(d[m - 1], e[m - 1], d[m]).0, d[ll].abs())
            } else {
                (las2(d[ll], e[ll], d[ll + 1]).0, d[m].abs())
            };
            shift = s;
            if sll > R::<T>::ZERO && (shift / sll) * (shift / sll) < eps {
                shift = R::<T>::ZERO;
            }
        }
        iter += m - ll;
        match (idir == 1, shift == R::<T>::ZERO) {
            (true, true) => zero_shift_down(d, e, ll, m, rec),
            (false, true) => zero_shift_up(d, e, ll, m, rec),
            (true, false) => shifted_down(d, e, ll, m, shift, rec),
            (false, false) => shifted_up(d, e, ll, m, shift, rec),
        }
        if idir == 1 {
            if e[m - 1].abs() <= thresh {
                e[m - 1] = R::<T>::ZERO;
            }
        } else if e[ll].abs() <= thresh {
            e[ll] = R::<T>::ZERO;
        }
        rec.flush(false);
    }
    Ok(())
}

/// Demmel-Kahan zero-shift sweep of block `ll..=m`, top to bottom.
fn zero_shift_down<T: Rotate, E: Executor + ?Sized>(
    d: &mut [T::RealPart],
    e: &mut [T::RealPart],
    ll: usize,
    m: usize,
    rec: &mut Recorder<'_, T, E>,
) {
    let one = <T::RealPart as Real>::ONE;
    let (mut cs, mut oldcs, mut oldsn) = (one, one, <T::RealPart as Real>::ZERO);
    for i in ll..m {
        let (c, sn, r) = lartg(d[i] * cs, e[i]);
        cs = c;
        if i > ll {
            e[i - 1] = oldsn * r;
        }
        let (oc, os, di) = lartg(oldcs * r, d[i + 1] * sn);
        (oldcs, oldsn, d[i]) = (oc, os, di);
        rec.v(i, cs, sn);
        rec.u(i, oldcs, oldsn);
    }
    let h = d[m] * cs;
    d[m] = h * oldcs;
    e[m - 1] = h * oldsn;
}

/// Demmel-Kahan zero-shift sweep of block `ll..=m`, bottom to top.
fn zero_shift_up<T: Rotate, E: Executor + ?Sized>(
    d: &mut [T::RealPart],
    e: &mut [T::RealPart],
    ll: usize,
    m: usize,
    rec: &mut Recorder<'_, T, E>,
) {
    let one = <T::RealPart as Real>::ONE;
    let (mut cs, mut oldcs, mut oldsn) = (one, one, <T::RealPart as Real>::ZERO);
    for i in (ll + 1..=m).rev() {
        let (c, sn, r) = lartg(d[i] * cs, e[i - 1]);
        cs = c;
        if i < m {
            e[i] = oldsn * r;
        }
        let (oc, os, di) = lartg(oldcs * r, d[i - 1] * sn);
        (oldcs, oldsn, d[i]) = (oc, os, di);
        rec.u(i - 1, cs, -sn);
        rec.v(i - 1, oldcs, -oldsn);
    }
    let h = d[ll] * cs;
    d[ll] = h * oldcs;
    e[ll] = h * oldsn;
}

/// Shifted implicit QR sweep of block `ll..=m`, top to bottom.
fn shifted_down<T: Rotate, E: Executor + ?Sized>(
    d: &mut [T::RealPart],
    e: &mut [T::RealPart],
    ll: usize,
    m: usize,
    shift: T::RealPart,
    rec: &mut Recorder<'_, T, E>,
) {
    let one = <T::RealPart as Real>::ONE;
    let mut f = (d[ll].abs() - shift) * (sign(one, d[ll]) + shift / d[ll]);
    let mut g = e[ll];
    for i in ll..m {
        let (cosr, sinr, r) = lartg(f, g);
        if i > ll {
            e[i - 1] = r;
        }
        f = cosr * d[i] + sinr * e[i];
        e[i] = cosr * e[i] - sinr * d[i];
        g = sinr * d[i + 1];
        d[i + 1] = cosr * d[i + 1];
        let (cosl, sinl, r) = lartg(f, g);
        d[i] = r;
        f = cosl * e[i] + sinl * d[i + 1];
        d[i + 1] = cosl * d[i + 1] - sinl * e[i];
        if i < m - 1 {
            g = sinl * e[i + 1];
            e[i + 1] = cosl * e[i + 1];
        }
        rec.v(i, cosr, sinr);
        rec.u(i, cosl, sinl);
    }
    e[m - 1] = f;
}

/// Shifted implicit QR sweep of block `ll..=m`, bottom to top.
fn shifted_up<T: Rotate, E: Executor + ?Sized>(
    d: &mut [T::RealPart],
    e: &mut [T::RealPart],
    ll: usize,
    m: usize,
    shift: T::RealPart,
    rec: &mut Recorder<'_, T, E>,
) {
    let one = <T::RealPart as Real>::ONE;
    let mut f = (d[m].abs() - shift) * (sign(one, d[m]) + shift / d[m]);
    let mut g = e[m - 1];
    for i in (ll + 1..=m).rev() {
        let (cosr, sinr, r) = lartg(f, g);
        if i < m {
            e[i] = r;
        }
        f = cosr * d[i] + sinr * e[i - 1];
        e[i - 1] = cosr * e[i - 1] - sinr * d[i];
        g = sinr * d[i - 1];
        d[i - 1] = cosr * d[i - 1];
        let (cosl, sinl, r) = lartg(f, g);
        d[i] = r;
        f = cosl * e[i - 1] + sinl * d[i - 1];
        d[i - 1] = cosl * d[i - 1] - sinl * e[i - 1];
        if i > ll + 1 {
            g = sinl * e[i - 2];
            e[i - 2] = cosl * e[i - 2];
        }
        rec.u(i - 1, cosr, -sinr);
        rec.v(i - 1, cosl, -sinl);
    }
    e[ll] = f;
}

/// Makes the values non-negative (negating `V`'s matching column) and sorts them
/// non-increasing with the columns of `U` and `V`.
fn finish<T: Rotate, E: Executor + ?Sized>(d: &mut [T::RealPart], rec: &mut Recorder<'_, T, E>) {
    let n = d.len();
    for (i, di) in d.iter_mut().enumerate() {
        if *di < <T::RealPart as Real>::ZERO {
            *di = -*di;
            if let Some(v) = rec.v.as_mut() {
                for r in 0..v.nrows() {
                    T::negate(&mut v[(r, i)]);
                }
            }
        }
    }
    // Selection sort: at most n - 1 swaps of columns.
    for i in 0..n {
        let mut k = i;
        for j in i + 1..n {
            if d[j] > d[k] {
                k = j;
            }
        }
        if k != i {
            d.swap(i, k);
            for x in [rec.u.as_mut(), rec.v.as_mut()].into_iter().flatten() {
                for r in 0..x.nrows() {
                    let t = x[(r, i)];
                    x[(r, i)] = x[(r, k)];
                    x[(r, k)] = t;
                }
            }
        }
    }
}
