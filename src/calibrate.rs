//! Host calibration: measure what a section costs on this machine, per kind of token and
//! width, and keep it in a host profile that pools load (`PoolBuilder::profile`,
//! `TEAMALG_PROFILE`).
//!
//! Each cost is the overhead of one section whose participants each run a 10 us busy share,
//! sections back to back: the median over about a thousand sections of (section time - 10 us).
//!
//! The serial rates of the families that faer serves serially today (GEMM, LU with partial
//! pivoting, matrix-vector products, tridiagonalization; `f64` and `c64`) are timed at n = 256
//! on one thread (`Par::Seq`), the median of five runs, in nanoseconds per unit of the family.
//! [`gemm_single_ratio`] checks the rule that `f32` and `c32` take half.

use std::time::{Duration, Instant};

use faer::linalg::matmul::matmul;
use faer::{c64, Accum, Mat, Par};
use teamalg_gates::{
    DispatchCosts, DispatchKind, Family, Fingerprint, HostProfile, Rate, WidthCosts, MAX_ANCHORS,
};

use crate::{Exec, Pool};

/// The share each participant runs per section.
pub const SHARE: Duration = Duration::from_micros(10);
const ROUNDS: usize = 7;
const SECTIONS: usize = 150;

/// The widths measured on a machine with `cpus` CPUs: 2, 3, 4, 6, 8, 12, ... up to `cpus`
/// (always included), at most [`MAX_ANCHORS`].
pub fn anchor_widths(cpus: usize) -> Vec<usize> {
    let mut w = vec![];
    let mut k = 2;
    while k < cpus {
        w.push(k);
        // 2, 3, 4, 6, 8, 12, 16, 24, ...: steps of a half then a third of a power of two.
        k = if k.is_power_of_two() {
            k + k / 2
        } else {
            k / 3 * 4
        };
    }
    if cpus >= 2 {
        w.push(cpus);
    }
    while w.len() > MAX_ANCHORS {
        w.remove(w.len() / 2);
    }
    w
}

/// What a calibration step measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Sections of a kind of token at a width.
    Dispatch(DispatchKind, usize),
    /// The serial rate of a kernel family.
    Rate(Family),
}

/// One step of a calibration, for a progress display.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// 1-based step number.
    pub done: usize,
    /// Steps in all.
    pub total: usize,
    /// What is measured.
    pub what: Measure,
}

/// The families whose rates calibration measures.
pub const RATED: [Family; 4] = [
    Family::Gemm,
    Family::LuPartial,
    Family::Matvec,
    Family::TridiagStep,
];

/// Size of the matrices timed for rates.
const RATE_N: usize = 256;

/// Median of five timings of `f`, in ns, after one unmeasured run.
fn median_ns(mut f: impl FnMut()) -> f64 {
    f();
    let mut v: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[2]
}

fn real(n: usize, seed: f64) -> Mat<f64> {
    Mat::from_fn(n, n, |i, j| {
        let x = ((i * 7 + j * 13) as f64 * seed).sin();
        if i == j {
            x + n as f64
        } else {
            x
        }
    })
}

fn cplx(n: usize, seed: f64) -> Mat<c64> {
    let (re, im) = (real(n, seed), real(n, seed * 1.7));
    Mat::from_fn(n, n, |i, j| c64::new(re[(i, j)], im[(i, j)]))
}

/// The Hermitian part of `a` (plus a dominant diagonal, already in `a`).
fn hermitian(a: &Mat<f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| a[(i.min(j), i.max(j))])
}

fn hermitian_c(a: &Mat<c64>) -> Mat<c64> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Less => a[(i, j)],
        std::cmp::Ordering::Equal => c64::new(a[(i, i)].re, 0.0),
        std::cmp::Ordering::Greater => a[(j, i)].conj(),
    })
}

/// Reduces a copy of `a` to tridiagonal form, one thread.
fn tridiagonalize<T: faer::traits::ComplexField>(a: &Mat<T>) {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::evd::tridiag::{tridiag_in_place, tridiag_in_place_scratch};
    let n = a.nrows();
    let mut m = a.clone();
    let mut h = Mat::<T>::zeros(1, n - 1);
    let mut buf = MemBuffer::new(tridiag_in_place_scratch::<T>(
        n,
        Par::Seq,
        Default::default(),
    ));
    tridiag_in_place(
        m.as_mut(),
        h.as_mut(),
        Par::Seq,
        MemStack::new(&mut buf),
        Default::default(),
    );
    std::hint::black_box(&m);
}

/// Median time of `c = a * b` (serial), in ns.
fn gemm_ns<T: faer::traits::ComplexField>(a: &Mat<T>, b: &Mat<T>, one: T) -> f64 {
    let mut c = Mat::<T>::zeros(a.nrows(), b.ncols());
    median_ns(|| {
        matmul(
            c.as_mut(),
            Accum::Replace,
            a.as_ref(),
            b.as_ref(),
            one.clone(),
            Par::Seq,
        )
    })
}

/// How long an `f32` GEMM takes against an `f64` one, and a `c32` against a `c64` (the rule
/// says about one half each).
pub fn gemm_single_ratio() -> (f64, f64) {
    let n = RATE_N;
    let (a, b) = (real(n, 0.31), real(n, 0.57));
    let (ca, cb) = (cplx(n, 0.31), cplx(n, 0.57));
    let single = |m: &Mat<f64>| Mat::<f32>::from_fn(n, n, |i, j| m[(i, j)] as f32);
    let csingle = |m: &Mat<c64>| {
        Mat::<faer::c32>::from_fn(n, n, |i, j| {
            faer::c32::new(m[(i, j)].re as f32, m[(i, j)].im as f32)
        })
    };
    let d64 = gemm_ns(&a, &b, 1.0);
    let d32 = gemm_ns(&single(&a), &single(&b), 1.0f32);
    let z64 = gemm_ns(&ca, &cb, c64::new(1.0, 0.0));
    let z32 = gemm_ns(&csingle(&ca), &csingle(&cb), faer::c32::new(1.0, 0.0));
    (d32 / d64, z32 / z64)
}

/// ns per unit of `family` for `f64` and `c64` on this machine, one thread.
pub fn measure_rate(family: Family) -> Rate {
    let n = RATE_N;
    let (a, b) = (real(n, 0.31), real(n, 0.57));
    let (ca, cb) = (cplx(n, 0.31), cplx(n, 0.57));
    let cube = (n * n * n) as f64;
    let one = c64::new(1.0, 0.0);
    let (ns_real, ns_cplx, units) = match family {
        Family::Gemm => (gemm_ns(&a, &b, 1.0), gemm_ns(&ca, &cb, one), cube),
        Family::LuPartial => (
            median_ns(|| drop(std::hint::black_box(a.partial_piv_lu()))),
            median_ns(|| drop(std::hint::black_box(ca.partial_piv_lu()))),
            2.0 / 3.0 * cube,
        ),
        Family::Matvec => {
            let x = Mat::<f64>::from_fn(n, 1, |i, _| (i as f64 * 0.9).sin());
            let cx = Mat::<c64>::from_fn(n, 1, |i, _| c64::new((i as f64).sin(), (i as f64).cos()));
            (gemm_ns(&a, &x, 1.0), gemm_ns(&ca, &cx, one), (n * n) as f64)
        }
        Family::TridiagStep => {
            // Whole tridiagonalization: the steps' units, rem^2 / 2 each, sum to about n^3 / 6.
            let (sym, csym) = (hermitian(&a), hermitian_c(&ca));
            (
                median_ns(|| tridiagonalize(&sym)),
                median_ns(|| tridiagonalize(&csym)),
                cube / 6.0,
            )
        }
        other => return other.rate(),
    };
    Rate {
        real: ns_real / units,
        cplx: ns_cplx / units,
    }
}

fn busy(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// The per-section overhead of `section`: the median over `ROUNDS * SECTIONS` timed sections
/// of (section time - share). A median, not a mean: on a shared host a few sections in which a
/// participant was descheduled would otherwise decide the row.
fn overhead(mut section: impl FnMut()) -> u32 {
    for _ in 0..SECTIONS / 5 {
        section();
    }
    let mut each = Vec::with_capacity(ROUNDS * SECTIONS);
    for _ in 0..ROUNDS * SECTIONS {
        let t = Instant::now();
        section();
        each.push(t.elapsed().as_nanos() as f64 - SHARE.as_nanos() as f64);
    }
    each.sort_by(f64::total_cmp);
    each[each.len() / 2].clamp(1.0, u32::MAX as f64) as u32
}

fn measure(kind: DispatchKind, width: usize) -> u32 {
    let pool = Pool::builder()
        .threads(width)
        .build()
        .expect("a pool for calibration");
    match kind {
        DispatchKind::Team => {
            let team = pool.into_team(width).expect("a team for calibration");
            let token = team.exec(width);
            token
                .team(|t| overhead(|| t.run(|_| busy(SHARE))))
                .expect("a team token forms its team")
        }
        DispatchKind::InPool => Exec::new(&pool, width)
            .expect("budget")
            .install(|mut e| overhead(|| e.reborrow().for_ranges(width, 1, |_| busy(SHARE)))),
        DispatchKind::Outside => overhead(|| {
            Exec::new(&pool, width)
                .expect("budget")
                .for_ranges(width, 1, |_| busy(SHARE))
        }),
    }
}

/// Measures this machine's dispatch costs at [`anchor_widths`] of its CPUs and the serial
/// rates of [`RATED`], reporting each step to `progress`, and returns them as a host profile.
/// Takes a few seconds on an idle machine, more under load.
pub fn calibrate(mut progress: impl FnMut(Step)) -> HostProfile {
    let widths = anchor_widths(crate::available_cpus());
    let total = widths.len() * DispatchKind::ALL.len() + RATED.len();
    let mut rows = Vec::new();
    let mut done = 0;
    for kind in DispatchKind::ALL {
        let mut anchors = Vec::new();
        for &width in &widths {
            done += 1;
            progress(Step {
                done,
                total,
                what: Measure::Dispatch(kind, width),
            });
            anchors.push((width as u16, measure(kind, width)));
        }
        rows.push(anchors);
    }
    let mut rates = Vec::new();
    for family in RATED {
        done += 1;
        progress(Step {
            done,
            total,
            what: Measure::Rate(family),
        });
        rates.push((family, measure_rate(family)));
    }
    let defaults = DispatchCosts::host_default();
    let row = |i: usize, kind| {
        if rows[i].is_empty() {
            // One CPU: nothing dispatches in parallel; keep the class row.
            *defaults.row(kind)
        } else {
            WidthCosts::new(&rows[i]).expect("anchor widths increase")
        }
    };
    HostProfile {
        fingerprint: Fingerprint::current(),
        costs: DispatchCosts::new(
            row(0, DispatchKind::Team),
            row(1, DispatchKind::InPool),
            row(2, DispatchKind::Outside),
        ),
        rates,
    }
}
