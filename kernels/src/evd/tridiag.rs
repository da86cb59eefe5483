//! The reduction of a self-adjoint matrix to real-diagonal tridiagonal form, `A = Q T Q^H`, on
//! the executor: one section per step, whose participants run the fused pass
//! ([`crate::spectral::fused`]) over bands of columns of equal work, each band with its partial
//! product, summed once. faer's layout in and out, so faer's tridiagonal solver and
//! [`crate::qr::householder::apply_q_in_place`] take the result as they take faer's own. Design record:
//! `docs/svd.md` ("The parallel tridiagonalization").

use crate::exec::call::Call;
use crate::spectral::householder::block_factors;
use faer::linalg::evd::tridiag::{
    tridiag_in_place as faer_tridiag, tridiag_in_place_scratch as faer_tridiag_scratch,
};
use faer::linalg::householder::make_householder_in_place;
use faer::traits::math_utils::{
    add, conj, from_f64, from_real, is_finite, mul, mul_real, one, real, recip, sub, zero,
};
use faer::traits::ComplexField;
use faer::{Mat, MatMut, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::{Executor, Part};
use crate::exec::sections::{self, Busy};
use crate::exec::tiles::Tiles;
use crate::spectral::fused::{column, Band, Fused};
use crate::spectral::passes::Passes;

/// The most bands of a step's pass: enough to balance sixteen participants.
const MAX_BANDS: usize = 16;

/// The columns of a band are at least this many, so that a band's pass outweighs its share of
/// the partial products summed after it.
const BAND_COLUMNS: usize = 64;

/// The fixed cost of one column of the fused pass, in rows: measured at order 512 on the
/// development host, where equal-area bands left the participant with the short columns 1.6x
/// busier than the one with the long ones (`docs/svd.md`).
const COLUMN_COST: f64 = 200.0;

/// The scratch of [`tridiag_in_place`]: faer's, for the serial path.
pub fn tridiag_in_place_scratch<T: ComplexField>(n: usize) -> faer::dyn_stack::StackReq {
    faer_tridiag_scratch::<T>(n, Par::Seq, Default::default())
}

/// Reduces the self-adjoint `a` (`n x n`, lower triangle read) in place to tridiagonal form
/// `A = Q T Q^H`, in faer's layout: `T`'s diagonal and subdiagonal on `a`'s, the Householder
/// vectors of `Q` below the subdiagonal, and the block factors in `h` (`bs x (n - 1)`). When
/// the gate says the call does not pay (family [`Family::TridiagStep`]) this is faer's serial
/// `tridiag_in_place`; otherwise teamalg's own reduction with one section per step, whose
/// results are the same bits on every executor that goes parallel.
///
/// # Panics
/// When `a` is not square or not column-major, or `h` is not `bs x (n - 1)`.
pub fn tridiag_in_place<T>(
    a: MatMut<'_, T>,
    h: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    threshold: Option<ParThreshold>,
    stack: &mut faer::dyn_stack::MemStack,
) where
    T: ComplexField + Scalar + Fused,
{
    let n = a.nrows();
    assert!(a.ncols() == n && h.ncols() == n.saturating_sub(1) && h.nrows() >= 1);
    if n == 0 {
        return;
    }
    let region = Region {
        site: "tridiag",
        dims: [n, n, 0],
        units: crate::evd::cost::tridiag_from(n, 0),
        family: Family::TridiagStep,
        sections: n - 1,
        scope: Scope::Call,
        call_units: crate::evd::cost::tridiag_from(n, 0),
    };
    let call = if n > 2 {
        Some(gate::call::<T>(exec, region, threshold))
    } else {
        None
    };
    let w = call.as_ref().map_or(1, Call::width);
    if w <= 1 {
        faer_tridiag(a, h, Par::Seq, stack, Default::default());
        return;
    }
    exec.warm(w);
    reduce(
        a,
        h,
        Passes {
            exec,
            width: w,
            threshold,
        },
    );
}

/// The per-step vectors: this step's Householder vector and update, the previous step's, the
/// product `B v`, and the bands' partial products.
struct Vectors<T> {
    v: Vec<T>,
    y: Vec<T>,
    vp: Vec<T>,
    yp: Vec<T>,
    upper: Mat<T>,
    z: Mat<T>,
}

/// teamalg's reduction, at most `on.width` participants per step; a call that gives up runs the
/// rest of its steps on the caller (`docs/svd.md`, "The bail-out").
fn reduce<T>(mut a: MatMut<'_, T>, mut h: MatMut<'_, T>, on: Passes<'_, impl Executor + ?Sized>)
where
    T: ComplexField + Scalar + Fused,
{
    let n = a.nrows();
    let mut x = Vectors {
        v: vec![zero::<T>(); n],
        y: vec![zero::<T>(); n],
        vp: vec![zero::<T>(); n],
        yp: vec![zero::<T>(); n],
        upper: Mat::zeros(n, 1),
        z: Mat::zeros(n, MAX_BANDS),
    };
    let mut taus = vec![zero::<T::Real>(); n - 1];
    // k is the step, and indexes the matrix, the vectors and `taus` alike.
    #[allow(clippy::needless_range_loop)]
    for k in 0..n {
        // Column k gets the previous step's update.
        if k > 0 {
            let (cy, cv) = (conj(&x.yp[k]), conj(&x.vp[k]));
            let col = &mut column(a.as_mut(), k)[k..];
            for ((a, vp), yp) in col.iter_mut().zip(&x.vp[k..]).zip(&x.yp[k..]) {
                *a = sub(a, &add(&mul(vp, &cy), &mul(yp, &cv)));
            }
            col[0] = from_real(&real(&col[0]));
        }
        if k + 1 == n {
            break;
        }
        // This step's reflector, from rows k + 1.. of column k.
        let tau = {
            let col = a.as_mut().col_mut(k).subrows_mut(k + 1, n - k - 1);
            let (mut head, tail) = col.split_at_row_mut(1);
            make_householder_in_place(&mut head[0], tail).tau
        };
        // An infinite tau is no reflection (the column below was already zero).
        let tau_inv = if is_finite(&tau) { recip(&tau) } else { zero() };
        taus[k] = tau;
        x.v[k + 1] = one();
        x.v[k + 2..].copy_from_slice(&column(a.as_mut(), k)[k + 2..]);
        let bands = Bands::new(n - k - 1);
        step(a.as_mut(), &mut x, k, &bands, on);
        // p = B v / tau, summing the bands' partial products in band order; then
        // y = p - (v^H p / (2 tau)) v.
        let y = &mut x.y[k + 1..];
        y.copy_from_slice(&column(x.upper.as_mut(), 0)[k + 1..]);
        for b in 0..bands.count {
            let z = &column(x.z.as_mut(), b)[k + 1 + bands.starts[b]..];
            for (y, z) in y[bands.starts[b]..].iter_mut().zip(z) {
                *y = add(y, z);
            }
        }
        let mut vhp = zero::<T>();
        for (y, v) in y.iter_mut().zip(&x.v[k + 1..]) {
            *y = mul_real(y, &tau_inv);
            vhp = add(&vhp, &mul(&conj(v), y));
        }
        let half = from_real::<T>(&mul(&mul(&real(&vhp), &tau_inv), &from_f64(0.5)));
        for (y, v) in y.iter_mut().zip(&x.v[k + 1..]) {
            *y = sub(y, &mul(&half, v));
        }
        std::mem::swap(&mut x.v, &mut x.vp);
        std::mem::swap(&mut x.y, &mut x.yp);
    }
    block_factors(a.as_ref().submatrix(1, 0, n - 1, n - 1), h.as_mut(), &taus);
}

/// The bands of one step's pass over a trailing matrix of order `m`: their count depends on
/// `m` alone, so the partial products are summed in the same order on every executor (the
/// same bits at every width).
struct Bands {
    count: usize,
    /// The first column of each band, then `m`: bands of equal cost (band `b` starts where a
    /// fraction `b / count` of the cost lies to its left).
    starts: [usize; MAX_BANDS + 1],
}

impl Bands {
    fn new(m: usize) -> Self {
        let count = (m / BAND_COLUMNS).clamp(1, MAX_BANDS);
        let mut starts = [m; MAX_BANDS + 1];
        // Column j costs its m - j rows plus a fixed cost per column (COLUMN_COST rows' worth:
        // a short column's pass is mostly setup), so the bands of short columns are wider.
        // The first t columns cost t (m + C + 1/2) - t^2 / 2.
        let (m_f, c) = (m as f64, COLUMN_COST);
        let total = m_f * (m_f + 1.0) / 2.0 + c * m_f;
        let h = m_f + c + 0.5;
        for (b, start) in starts.iter_mut().enumerate().take(count) {
            let target = total * b as f64 / count as f64;
            let t = h - (h * h - 2.0 * target).max(0.0).sqrt();
            *start = (t as usize).min(m);
        }
        Bands { count, starts }
    }
}

/// One step's fused pass over the trailing matrix `B = A[k+1.., k+1..]`, its bands on the
/// executor when the gate says the step pays and the call has not given up, else on
/// the caller (the same bands, so the same bits).
fn step<T>(
    a: MatMut<'_, T>,
    x: &mut Vectors<T>,
    k: usize,
    bands: &Bands,
    on: Passes<'_, impl Executor + ?Sized>,
) where
    T: ComplexField + Scalar + Fused,
{
    let Passes {
        exec,
        width: w,
        threshold,
    } = on;
    let n = a.nrows();
    let m = n - k - 1;
    let region = Region {
        site: "tridiag/step",
        dims: [m, m, k],
        units: (m * m) as f64 / 2.0,
        family: Family::TridiagStep,
        sections: 1,
        scope: Scope::Section,
        call_units: crate::evd::cost::tridiag_from(n, k),
    };
    let w = gate::width::<T>(exec, region, threshold)
        .min(w)
        .min(bands.count);
    let b = a.submatrix_mut(k + 1, k + 1, m, m);
    let (tiles, z, upper) = (
        Tiles::new(b),
        Tiles::new(x.z.as_mut().subrows_mut(k + 1, m)),
        Tiles::new(x.upper.as_mut().subrows_mut(k + 1, m)),
    );
    let (v, vp, yp) = (&x.v[k + 1..], &x.vp[k + 1..], &x.yp[k + 1..]);
    let band = |bi: usize| {
        let (c0, c1) = (bands.starts[bi], bands.starts[bi + 1].max(bands.starts[bi]));
        // SAFETY: band bi owns columns c0..c1 of B (rows c0..m), column bi of z (rows c0..m)
        // and rows c0..c1 of `upper`; the bands partition 0..m and each runs once.
        let (tile, zb, ub) = unsafe {
            (
                tiles.tile(c0, m, c0, c1),
                z.tile(c0, m, bi, bi + 1),
                upper.tile(c0, c1, 0, 1),
            )
        };
        let zb = zb.col_mut(0).try_as_col_major_mut().expect("contiguous");
        let ub = ub.col_mut(0).try_as_col_major_mut().expect("contiguous");
        T::fused_band(Band {
            a: tile,
            pending: (k > 0).then(|| (&vp[c0..], &yp[c0..])),
            v: &v[c0..],
            z: zb.as_slice_mut(),
            upper: ub.as_slice_mut(),
        });
    };
    let busy = Busy::default();
    let body = |part: Part<'_>| {
        let (i, w, count) = (part.index(), part.width(), bands.count);
        busy.time(i, || (i * count / w..(i + 1) * count / w).for_each(&band));
    };
    // At width 1 (and once the call gave up, `exec/call.rs`) the caller works the same bands.
    sections::run(exec, "tridiag", k, w, &busy, &body);
}
