//! The bail-out: a call whose member is held off its CPU after the call went parallel gives
//! up after its first losses, and the rest of it runs at width 1 (`kernels/src/exec/call.rs`,
//! `docs/gates.md`, "The bail-out"): for the lookahead driver (LU), a per-step kernel
//! (column-pivoted QR), the reductions (bidiagonalization and tridiagonalization, forced to
//! their full width) and a batch. The pools keep no live view, so the gate decides from the
//! model alone and sends each call parallel; the member's CPU is then held by a real-time
//! spinner. (Its own binary: it moves its threads between CPUs.)

#![cfg(target_os = "linux")]

use std::sync::Mutex;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::tridiag::tridiag_in_place as faer_tridiag;
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::linalg::svd::bidiag::bidiag_in_place as faer_bidiag;
use faer::{Mat, Par, c64};
use teamalg::gates::ParThreshold;
use teamalg::gates::trace::{self, Decisions, Reason};
use teamalg::kernels::bidiag::{bidiag_in_place, bidiag_in_place_scratch};
use teamalg::kernels::col_piv_qr::{
    ColPivQrParams, col_piv_qr_in_place, col_piv_qr_in_place_scratch,
};
use teamalg::kernels::lu::{LuParams, lu_in_place, lu_in_place_scratch};
use teamalg::kernels::par::Executor;
use teamalg::kernels::sections;
use teamalg::kernels::tridiag::{tridiag_in_place, tridiag_in_place_scratch};
use teamalg::linalg::{LinalgError, batch};
use teamalg::{Pool, Team};

#[path = "../common/pin.rs"]
mod pin;
use pin::{cpus_of_this_thread, pin_this_thread};
#[path = "../common/spinner.rs"]
#[allow(dead_code)] // its other helpers serve other tests
mod spinner;
use spinner::{Spinner, busy};

/// One test at a time: each holds a CPU with a real-time spinner and moves its threads.
static ONE: Mutex<()> = Mutex::new(());

/// A team of two whose member may run on `there` alone, led from `here`; no live view.
fn team(here: usize, there: usize) -> Team {
    pin_this_thread(there);
    let team = Pool::builder()
        .threads(2)
        .live_view(false)
        .build()
        .expect("pool")
        .into_team(2)
        .expect("team");
    pin_this_thread(here);
    // A first section while nothing holds `there`: the member is hot.
    Executor::run(&team, 2, &|_| busy(std::time::Duration::from_micros(50)));
    team
}

fn two_cpus() -> (usize, usize) {
    let cpus = cpus_of_this_thread();
    assert!(
        cpus.len() >= 2,
        "this test needs two CPUs (CI has two); found {cpus:?}"
    );
    (cpus[0], cpus[1])
}

fn matrix<T: From<f64>>(n: usize) -> Mat<T> {
    Mat::from_fn(n, n, |i, j| {
        T::from(if i == j {
            n as f64
        } else {
            ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.5
        })
    })
}

/// The call went parallel at entry, gave up, and every decision after it is serial.
fn gave_up_after_going_parallel(d: &Decisions) {
    assert!(d[0].width > 1, "parallel at entry: {d}");
    let first = d
        .iter()
        .position(|x| x.reason == Reason::GaveUp)
        .unwrap_or_else(|| panic!("the call never gave up: {d}"));
    assert!(first > 0, "{d}");
    assert!(
        d[first..].iter().all(|x| x.width == 1),
        "parallel after giving up: {d}"
    );
}

#[test]
fn the_lookahead_driver_gives_up() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let (here, there) = two_cpus();
    let team = team(here, there);
    let n = 512;
    let mut a = matrix::<f64>(n);
    let mut swaps = vec![0; n];
    let mut buf = MemBuffer::new(lu_in_place_scratch::<f64>(n, n));
    let spinner = Spinner::hold(there);
    let (_, d) = trace::collect(|| {
        lu_in_place(
            a.as_mut(),
            &mut swaps,
            &team,
            LuParams::default(),
            MemStack::new(&mut buf),
        )
    });
    drop(spinner);
    gave_up_after_going_parallel(&d);
}

#[test]
fn a_per_step_kernel_gives_up() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let (here, there) = two_cpus();
    let team = team(here, there);
    let n = 512;
    let mut a = matrix::<c64>(n);
    let mut h = Mat::<c64>::zeros(1, n);
    let (mut perm, mut perm_inv) = (vec![0; n], vec![0; n]);
    let mut buf = MemBuffer::new(col_piv_qr_in_place_scratch::<c64>(n, n));
    let spinner = Spinner::hold(there);
    let (_, d) = trace::collect(|| {
        col_piv_qr_in_place(
            a.as_mut(),
            h.as_mut(),
            &mut perm,
            &mut perm_inv,
            &team,
            ColPivQrParams::default(),
            MemStack::new(&mut buf),
        )
    });
    drop(spinner);
    gave_up_after_going_parallel(&d);
}

#[test]
fn a_batch_gives_up() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let (here, there) = two_cpus();
    let team = team(here, there);
    let n = 512;
    // Two problems of half the batch each: each runs on the whole team, one after the other.
    let mut a: Vec<Mat<f64>> = (0..2).map(|_| matrix(n)).collect();
    let mut b: Vec<Mat<f64>> = (0..2)
        .map(|_| Mat::from_fn(n, 1, |i, _| i as f64))
        .collect();
    let mut status = vec![Err(LinalgError::NoConvergence { op: "unset" }); 2];
    let spinner = Spinner::hold(there);
    let (run, d) = trace::collect(|| {
        let mut av: Vec<_> = a.iter_mut().map(|m| m.as_mut()).collect();
        let mut bv: Vec<_> = b.iter_mut().map(|m| m.as_mut()).collect();
        batch::lu_solve(&mut av[..], &mut bv[..], &mut status, &team)
    });
    drop(spinner);
    let run = run.expect("the batch ran");
    assert_eq!(run.on_team, 2, "both problems on the whole team: {d}");
    assert!(status.iter().all(Result::is_ok));
    // The second problem's LU asks at entry after the first gave up.
    let entries: Vec<_> = d.iter().filter(|x| x.site == "lu").collect();
    assert_eq!(entries.len(), 2, "{d}");
    assert!(entries[0].width > 1, "the first problem went parallel: {d}");
    assert_eq!(entries[1].reason, Reason::GaveUp, "{d}");
    assert_eq!(entries[1].width, 1, "{d}");
}

/// The sections of a forced call from its first step with two bands on (`k + 1 + 128 <= n`):
/// after the call's watch saw twelve losing sections (a forced width's `call::LOSING_FORCED`),
/// all on the caller.
fn the_watch_decided(all: &[sections::SectionTiming], n: usize) {
    let two_bands: Vec<_> = all.iter().filter(|s| s.k + 1 + 128 <= n).collect();
    let first_alone = two_bands.iter().position(|s| s.width == 1);
    assert!(
        matches!(first_alone, Some(i) if i >= 12),
        "the watch did not decide after twelve losing sections: {first_alone:?}"
    );
    assert!(
        two_bands[first_alone.unwrap()..]
            .iter()
            .all(|s| s.width == 1)
    );
}

/// The bidiagonalization of `a` on `team` forced to its full width, or faer's serial one.
fn bidiagonal(a: &Mat<f64>, team: Option<&Team>) -> Mat<f64> {
    let (m, n) = (a.nrows(), a.ncols());
    let bs = recommended_block_size::<f64>(m, n);
    let (mut a, mut hl, mut hr) = (a.clone(), Mat::zeros(bs, n), Mat::zeros(bs, n - 1));
    let mut buf = MemBuffer::new(bidiag_in_place_scratch::<f64>(m, n));
    let stack = MemStack::new(&mut buf);
    match team {
        Some(team) => bidiag_in_place(
            a.as_mut(),
            hl.as_mut(),
            hr.as_mut(),
            team,
            Some(ParThreshold::Fixed(0)),
            stack,
        ),
        None => faer_bidiag(
            a.as_mut(),
            hl.as_mut(),
            hr.as_mut(),
            Par::Seq,
            stack,
            Default::default(),
        ),
    }
    a
}

/// The tridiagonalization of `a` (its lower triangle) on `team` forced to its full width, or
/// faer's serial one.
fn tridiagonal(a: &Mat<f64>, team: Option<&Team>) -> Mat<f64> {
    let n = a.nrows();
    let bs = recommended_block_size::<f64>(n - 1, n - 1);
    let (mut a, mut h) = (a.clone(), Mat::zeros(bs, n - 1));
    let mut buf = MemBuffer::new(tridiag_in_place_scratch::<f64>(n));
    let stack = MemStack::new(&mut buf);
    match team {
        Some(team) => tridiag_in_place(
            a.as_mut(),
            h.as_mut(),
            team,
            Some(ParThreshold::Fixed(0)),
            stack,
        ),
        None => faer_tridiag(a.as_mut(), h.as_mut(), Par::Seq, stack, Default::default()),
    }
    Mat::from_fn(n, n, |i, j| if i >= j { a[(i, j)] } else { 0.0 })
}

/// A forced reduction whose member cannot run: the call gives up after its first losing
/// sections and takes them to the caller, and the result is faer's to rounding.
fn a_reduction_gives_up(reduce: fn(&Mat<f64>, Option<&Team>) -> Mat<f64>) {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let (here, there) = two_cpus();
    let team = team(here, there);
    let n = 600;
    // Entries from a hash: `matrix`'s are periodic, of low rank off the diagonal, and a
    // reflection of a zero column is rounding noise that no two codes share.
    let b = Mat::<f64>::from_fn(n, n, |i, j| {
        ((i as u64 * 0x9e37_79b9 + j as u64 * 0x85eb_ca6b) % 1000) as f64 / 1000.0 - 0.5
    });
    let a = &b + b.transpose();
    let spinner = Spinner::hold(there);
    let (ours, seen) = sections::collect(|| reduce(&a, Some(&team)));
    drop(spinner);
    the_watch_decided(&seen, n);
    let want = reduce(&a, None);
    let err = (&ours - &want).norm_max();
    assert!(err <= 1e-12 * n as f64 * want.norm_max(), "error {err:e}");
}

#[test]
fn the_bidiagonalization_gives_up() {
    a_reduction_gives_up(bidiagonal);
}

#[test]
fn the_tridiagonalization_gives_up() {
    a_reduction_gives_up(tridiagonal);
}
