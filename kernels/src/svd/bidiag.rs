//! The reduction of a general matrix to upper bidiagonal form, `A = U B V^H`, on the executor:
//! faer's one-stage algorithm (Householder reflectors from the left and the right, each step's
//! update delayed and fused with the next product), with its two passes over the trailing
//! matrix run as sections on the same bands of rows: the fused update and `u^H A`, then
//! `A conj(v)`. faer's layout in and out, so the SVD's back-transformations take the result as
//! they take faer's own. Design record: `docs/svd.md` ("The parallel bidiagonalization").

use std::time::{Duration, Instant};

use faer::linalg::householder::make_householder_in_place;
use faer::linalg::matmul::matmul;
use faer::linalg::svd::bidiag::{
    bidiag_in_place as faer_bidiag, bidiag_in_place_scratch as faer_bidiag_scratch,
};
use faer::traits::math_utils::{add, conj, is_finite, mul, mul_real, one, recip, sub, zero};
use faer::traits::ComplexField;
use faer::{Accum, ColMut, ColRef, Mat, MatMut, MatRef, Par};
use teamalg_gates::{Family, ParThreshold, Scalar};

use crate::exec::gate::{self, Region, Scope};
use crate::exec::par::{Executor, Part};
use crate::exec::sections::{self, Busy};
use crate::exec::tiles::Tiles;
use crate::spectral::fused::{Fused, Pending, Rows};
use crate::spectral::householder::block_factors;
use crate::spectral::watch::{Passes, Watch};

/// The most row bands of a step's passes: enough to balance sixteen participants.
const MAX_BANDS: usize = 16;

/// The rows of a band are at least this many, so that a band's pass outweighs its share of
/// the partial products summed after it.
const BAND_ROWS: usize = 64;

/// How many rows the lead's band has for each row of another band. The lead's rows measured
/// faster: it wrote the step's vectors and works on the next row between the passes, so its
/// band is warm in its cache; with equal bands the member was busy 1.35 times as long in the
/// passes at order 1024 (`cargo run --release -p teamalg-tools --bin kernels -- --kernels bidiag --sections`).
const LEAD_WEIGHT: f64 = 1.3;

/// Units of work (family [`Family::BidiagStep`]: an element of the trailing matrix, read by
/// both passes) of the steps from `k` on, for an `m x n` matrix.
fn units_from(m: usize, n: usize, k: usize) -> f64 {
    (k..m.min(n))
        .map(|s| ((m - s - 1) * (n.saturating_sub(s + 1))) as f64)
        .sum()
}

/// The scratch of [`bidiag_in_place`]: faer's, for the serial path.
pub fn bidiag_in_place_scratch<T: ComplexField>(m: usize, n: usize) -> faer::dyn_stack::StackReq {
    faer_bidiag_scratch::<T>(m, n, Par::Seq, Default::default())
}

/// Reduces `a` (`m x n`) in place to upper bidiagonal form `A = U B V^H`, in faer's layout:
/// `B` on the diagonal and superdiagonal, the left Householder vectors below the diagonal,
/// the right ones right of the superdiagonal, and the block factors in `hl`
/// (`bsl x min(m, n)`) and `hr` (`bsr x (min(m, n) - 1)`). When the gate says the call does
/// not pay (family [`Family::BidiagStep`]) this is faer's serial `bidiag_in_place`; otherwise
/// the same algorithm with its two passes per step on the executor.
///
/// # Panics
/// When `a` is not column-major, or `hl` or `hr` has the wrong number of columns.
pub fn bidiag_in_place<T>(
    a: MatMut<'_, T>,
    hl: MatMut<'_, T>,
    hr: MatMut<'_, T>,
    exec: &(impl Executor + ?Sized),
    threshold: Option<ParThreshold>,
    stack: &mut faer::dyn_stack::MemStack,
) where
    T: ComplexField + Scalar + Fused,
{
    let (m, n) = (a.nrows(), a.ncols());
    let size = m.min(n);
    assert!(hl.ncols() == size && hr.ncols() == size.saturating_sub(1));
    assert!(hl.nrows() >= 1 && (size < 2 || hr.nrows() >= 1));
    let units = units_from(m, n, 0);
    let region = Region {
        site: "bidiag",
        dims: [m, n, 0],
        units,
        family: Family::BidiagStep,
        sections: 2 * size,
        scope: Scope::Call,
        call_units: units,
    };
    let w = if size > 2 {
        gate::width::<T>(exec, region, threshold)
    } else {
        1
    };
    if w <= 1 {
        faer_bidiag(a, hl, hr, Par::Seq, stack, Default::default());
        return;
    }
    exec.warm(w);
    reduce(
        a,
        hl,
        hr,
        Passes {
            exec,
            width: w,
            threshold,
            watch: &Watch::default(),
        },
    );
}

/// teamalg's reduction, at most `on.width` participants per pass: faer's steps, in its order; `on.watch`
/// may take the sections to the caller (`docs/svd.md`, "The watch").
fn reduce<T>(
    mut a: MatMut<'_, T>,
    mut hl: MatMut<'_, T>,
    mut hr: MatMut<'_, T>,
    on: Passes<'_, impl Executor + ?Sized>,
) where
    T: ComplexField + Scalar + Fused,
{
    let (m, n) = (a.nrows(), a.ncols());
    let size = m.min(n);
    // y (one entry per column) and z (one per row): the halves of each step's delayed update.
    let mut y = Mat::<T>::zeros(n, 1);
    let mut z = Mat::<T>::zeros(m, 1);
    // The bands' partial products of y.
    let mut parts = Mat::<T>::zeros(n, MAX_BANDS);
    // Row k, worked on as a contiguous copy (gathered once, scattered once: in column-major
    // storage each of its entries is a cache line and, across the row, a page of its own); the
    // previous step's row (its right reflector) stays as `vp`; `row` is the conjugated row.
    let (mut r, mut vp, mut row) = (
        vec![zero::<T>(); n],
        vec![zero::<T>(); n],
        vec![zero::<T>(); n],
    );
    let (mut taus_l, mut taus_r) = (vec![zero::<T::Real>(); size], Vec::new());
    for k in 0..size {
        for (j, x) in r.iter_mut().enumerate().skip(k + 1) {
            *x = a[(k, j)];
        }
        if k > 0 {
            // Row k and column k get the previous step's update.
            let (y1, z1) = (y[(k, 0)], z[(k, 0)]);
            let up0 = a[(k, k - 1)];
            a[(k, k)] = sub(&a[(k, k)], &add(&mul(&up0, &y1), &z1));
            for i in k + 1..m {
                let d = add(&mul(&a[(i, k - 1)], &y1), &z[(i, 0)]);
                a[(i, k)] = sub(&a[(i, k)], &d);
            }
            for j in k + 1..n {
                let d = add(&mul(&up0, &y[(j, 0)]), &mul(&z1, &vp[j]));
                r[j] = sub(&r[j], &d);
            }
        } else {
            vp.fill(zero());
        }
        let tl = {
            let col = a.as_mut().col_mut(k).subrows_mut(k, m - k);
            let (mut head, tail) = col.split_at_row_mut(1);
            make_householder_in_place(&mut head[0], tail).tau
        };
        let tl_inv = recip(&tl);
        taus_l[k] = tl;
        // y = u^H A22, with the previous update applied on the way.
        update_pass(a.as_mut(), &mut y, &mut parts, &z, &vp, k, on);
        for j in k + 1..n {
            let yj = mul_real(&add(&y[(j, 0)], &r[j]), &tl_inv);
            y[(j, 0)] = yj;
            r[j] = sub(&r[j], &yj);
        }
        let norm = ColRef::from_slice(&r[k + 1..]).norm_l2();
        if norm != zero::<T::Real>() {
            let inv = recip(&norm);
            for x in r.iter_mut().skip(k + 1) {
                *x = mul_real(x, &inv);
            }
        }
        for (j, x) in row.iter_mut().enumerate().skip(k + 1) {
            *x = conj(&r[j]);
        }
        // z = A22 conj(row).
        product_pass(a.as_ref(), &mut z, &row, k, on);
        if k + 1 == size {
            for j in k + 1..n {
                a[(k, j)] = r[j];
            }
            break;
        }
        let info = {
            let (head, tail) = r[k + 1..].split_at_mut(1);
            make_householder_in_place(&mut head[0], ColMut::from_slice_mut(tail))
        };
        let (tr, hbi) = (info.tau, info.head_with_beta_inv);
        let tr_inv = recip(&tr);
        taus_r.push(tr);
        let beta = r[k + 1];
        r[k + 1] = mul_real(&beta, &norm);
        let mut b = y[(k + 1, 0)];
        for j in k + 2..n {
            b = add(&b, &mul(&y[(j, 0)], &conj(&r[j])));
        }
        for j in k + 1..n {
            a[(k, j)] = r[j];
        }
        let finite = is_finite(&hbi);
        let (cbeta, chbi) = (conj(&beta), conj(&hbi));
        for i in k + 1..m {
            let (zi, ui, ai) = (z[(i, 0)], a[(i, k)], a[(i, k + 1)]);
            let w = if finite {
                sub(&mul(&sub(&zi, &mul(&ai, &cbeta)), &chbi), &mul(&ui, &b))
            } else {
                sub(&ai, &mul(&ui, &b))
            };
            z[(i, 0)] = mul_real(&w, &tr_inv);
        }
        // The next step's pending right reflector.
        std::mem::swap(&mut vp, &mut r);
    }
    block_factors(a.as_ref().subcols(0, size), hl.as_mut(), &taus_l);
    if size > 1 {
        let basis = a.as_ref().submatrix(0, 1, size - 1, n - 1).transpose();
        block_factors(basis, hr.as_mut(), &taus_r);
    }
}

/// The row bands of one step's passes over `A22` (`mm` rows from row `k + 1`), one per
/// participant: fewer bands of equal rows measured faster than many small ones, whose short
/// column segments cost a setup each, so the partial products of `u^H A22` (summed in band
/// order) round by the width. Both passes give a participant the same rows, so they stay in
/// its cache between them, and the top band (the lead's) holds the next step's row, which the
/// lead works on between the passes.
struct Bands {
    count: usize,
    starts: [usize; MAX_BANDS + 1],
}

impl Bands {
    fn new(mm: usize, k: usize, w: usize) -> Self {
        let count = w.min(mm / BAND_ROWS).clamp(1, MAX_BANDS);
        let mut starts = [mm; MAX_BANDS + 1];
        starts[0] = 0;
        // The lead's band is LEAD_WEIGHT times the others'.
        let total = LEAD_WEIGHT + (count - 1) as f64;
        for (b, start) in starts.iter_mut().enumerate().take(count).skip(1) {
            // Edges on whole cache lines of a column (eight entries from an aligned start),
            // so that no line is written by two participants.
            let share = (LEAD_WEIGHT + (b - 1) as f64) / total;
            let row = k + 1 + (share * mm as f64) as usize;
            *start = (row.div_ceil(8) * 8 - (k + 1)).min(mm);
        }
        Bands { count, starts }
    }

    /// Rows of band `b`, counted from `A22`'s first.
    fn rows(&self, b: usize) -> (usize, usize) {
        (self.starts[b], self.starts[b + 1].max(self.starts[b]))
    }
}

/// The bands of step `k`'s pass `site` over `A22` (of an `m x n` matrix): as many as the gate
/// gives participants (at most `w`), each of at least [`BAND_ROWS`] rows.
fn bands<T: Scalar>(
    exec: &(impl Executor + ?Sized),
    site: &'static str,
    [m, n, k]: [usize; 3],
    w: usize,
    threshold: Option<ParThreshold>,
) -> Bands {
    let (mm, nn) = (m - k - 1, n - k - 1);
    let region = Region {
        site,
        dims: [mm, nn, k],
        units: (mm * nn) as f64,
        family: Family::BidiagStep,
        sections: 1,
        scope: Scope::Section,
        call_units: units_from(m, n, k),
    };
    let w = gate::width::<T>(exec, region, threshold)
        .min(w)
        .min((mm / BAND_ROWS).max(1));
    Bands::new(mm, k, w)
}

/// Step `k`'s first pass over `A22 = A[k+1.., k+1..]`: the previous step's update
/// (`A22 -= up y^T + z vp`, for `k > 0`), then `y = A22^H u`, bands of rows shared out and
/// their partial products summed in band order.
fn update_pass<T>(
    a: MatMut<'_, T>,
    y: &mut Mat<T>,
    parts: &mut Mat<T>,
    z: &Mat<T>,
    vp: &[T],
    k: usize,
    on: Passes<'_, impl Executor + ?Sized>,
) where
    T: ComplexField + Scalar + Fused,
{
    let Passes {
        exec,
        width: w,
        threshold,
        watch,
    } = on;
    let (m, n) = (a.nrows(), a.ncols());
    let (mm, nn) = (m - k - 1, n - k - 1);
    if nn == 0 {
        return;
    }
    if mm == 0 {
        y.as_mut().subrows_mut(k + 1, nn).fill(zero());
        return;
    }
    let bands = bands::<T>(exec, "bidiag/update", [m, n, k], w, threshold);
    let (left, right) = a.split_at_col_mut(k + 1);
    let left = left.as_ref();
    let slice = |j: usize| {
        left.col(j)
            .subrows(k + 1, mm)
            .try_as_col_major()
            .expect("column-major")
            .as_slice()
    };
    let u = slice(k);
    let up = (k > 0).then(|| slice(k - 1));
    let zs = &z
        .col(0)
        .try_as_col_major()
        .expect("column-major")
        .as_slice()[k + 1..];
    let ys = &y
        .col(0)
        .try_as_col_major()
        .expect("column-major")
        .as_slice()[k + 1..];
    let vp = &vp[k + 1..];
    let tiles = Tiles::new(right.subrows_mut(k + 1, mm));
    let ps = Tiles::new(parts.as_mut().subrows_mut(0, nn));
    let band = |b: usize| {
        let (r0, r1) = bands.rows(b);
        // SAFETY: band b owns rows r0..r1 of A22 and column b of `parts`; the bands partition
        // 0..mm and each runs once.
        let (at, pt) = unsafe { (tiles.tile(r0, r1, 0, nn), ps.tile(0, nn, b, b + 1)) };
        let pt = pt.col_mut(0).try_as_col_major_mut().expect("contiguous");
        T::fused_rows(Rows {
            a: at,
            pending: up.map(|up| Pending {
                up: &up[r0..r1],
                z: &zs[r0..r1],
                y: ys,
                vp,
            }),
            u: &u[r0..r1],
            out: pt.as_slice_mut(),
        });
    };
    run(exec, "bidiag/update", k, &bands, &band, watch);
    let mut yc = y.as_mut().col_mut(0).subrows_mut(k + 1, nn);
    yc.copy_from(parts.as_ref().col(0).subrows(0, nn));
    for b in 1..bands.count {
        let p = parts.as_ref().col(b).subrows(0, nn);
        for (yi, pi) in yc.as_mut().iter_mut().zip(p.iter()) {
            *yi = add(yi, pi);
        }
    }
}

/// Step `k`'s second pass: `z = A22 conj(row)` (`row` indexed like the columns of `a`), bands
/// of rows shared out, each through faer's serial matrix-vector product.
fn product_pass<T>(
    a: MatRef<'_, T>,
    z: &mut Mat<T>,
    row: &[T],
    k: usize,
    on: Passes<'_, impl Executor + ?Sized>,
) where
    T: ComplexField + Scalar + Fused,
{
    let Passes {
        exec,
        width: w,
        threshold,
        watch,
    } = on;
    let (m, n) = (a.nrows(), a.ncols());
    let (mm, nn) = (m - k - 1, n - k - 1);
    if mm == 0 {
        return;
    }
    if nn == 0 {
        z.as_mut().subrows_mut(k + 1, mm).fill(zero());
        return;
    }
    let a22 = a.submatrix(k + 1, k + 1, mm, nn);
    let x = MatRef::from_column_major_slice(&row[k + 1..], nn, 1);
    let bands = bands::<T>(exec, "bidiag/product", [m, n, k], w, threshold);
    let zs = Tiles::new(z.as_mut().subrows_mut(k + 1, mm));
    let band = |b: usize| {
        let (r0, r1) = bands.rows(b);
        // SAFETY: band b owns rows r0..r1 of z; the bands partition 0..mm and each runs once.
        let zt = unsafe { zs.tile(r0, r1, 0, 1) };
        matmul(
            zt,
            Accum::Replace,
            a22.subrows(r0, r1 - r0),
            x,
            one::<T>(),
            Par::Seq,
        );
    };
    run(exec, "bidiag/product", k, &bands, &band, watch);
}

/// Runs `band` over `bands`, one participant each: on the caller, band after band, when
/// there is one band or the call's watch has taken its sections to the caller (the same
/// bands, so the same bits).
fn run(
    exec: &(impl Executor + ?Sized),
    site: &'static str,
    k: usize,
    bands: &Bands,
    band: &(dyn Fn(usize) + Sync),
    watch: &Watch,
) {
    let busy = Busy::default();
    let body = |part: Part<'_>| {
        let (i, w, count) = (part.index(), part.width(), bands.count);
        busy.time(i, || (i * count / w..(i + 1) * count / w).for_each(band));
    };
    if bands.count <= 1 || !watch.parallel() {
        return sections::run(exec, site, k, 1, &busy, &body);
    }
    let start = Instant::now();
    sections::run(exec, site, k, bands.count, &busy, &body);
    let wall = start.elapsed();
    // The lead worked band 0; at that pace it would have done every row alone in `alone`.
    let (lo, hi) = bands.rows(0);
    let rows = bands.starts[bands.count];
    let alone = busy.times().0.as_nanos() as f64 * rows as f64 / (hi - lo).max(1) as f64;
    if watch.record(wall, Duration::from_nanos(alone as u64)) {
        exec.rest();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use faer::Mat;

    use super::*;

    /// Two participants on scoped threads, one per section.
    struct Two;

    impl Executor for Two {
        fn width(&self) -> usize {
            2
        }
        fn dispatch_cost(&self, _: usize) -> Duration {
            Duration::from_nanos(1)
        }
        fn run(&self, width: usize, f: &(dyn Fn(Part<'_>) + Sync)) {
            std::thread::scope(|s| {
                for i in 1..width {
                    s.spawn(move || f(Part::new(i, width, None)));
                }
                f(Part::new(0, width, None));
            });
        }
        fn has_barrier(&self) -> bool {
            false
        }
    }

    fn reduced(watch: &Watch) -> (Mat<f64>, Mat<f64>, Mat<f64>) {
        let (m, n) = (230, 200);
        // Full rank (a splitmix hash): past a zero column the reflectors follow rounding.
        let mut a = Mat::from_fn(m, n, |i, j| {
            let z = ((i * n + j) as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let z = (z ^ (z >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            (z >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        });
        let bs = 8;
        let mut hl = Mat::zeros(bs, n);
        let mut hr = Mat::zeros(bs, n - 1);
        let fixed = Some(ParThreshold::Fixed(0));
        let on = Passes {
            exec: &Two,
            width: 2,
            threshold: fixed,
            watch,
        };
        reduce(a.as_mut(), hl.as_mut(), hr.as_mut(), on);
        (a, hl, hr)
    }

    /// Sections the watch takes to the caller work the same bands: the same bits.
    #[test]
    fn the_caller_works_the_same_bands() {
        let (parallel, off) = (reduced(&Watch::steady()), reduced(&Watch::off()));
        assert!(parallel == off);
    }
}
