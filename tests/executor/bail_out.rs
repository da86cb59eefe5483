//! The bail-out: a call whose member is held off its CPU after the call went parallel gives
//! up after its first losses, and the rest of it runs at width 1 (`kernels/src/exec/call.rs`,
//! `docs/gates.md`, "The bail-out"): for the lookahead driver (LU), a per-step kernel
//! (column-pivoted QR) and a batch. The pools keep no live view, so the gate decides from the
//! model alone and sends each call parallel; the member's CPU is then held by a real-time
//! spinner. (Its own binary: it moves its threads between CPUs.)

#![cfg(target_os = "linux")]

use std::sync::Mutex;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::{c64, Mat};
use teamalg::gates::trace::{self, Decisions, Reason};
use teamalg::kernels::col_piv_qr::{
    col_piv_qr_in_place, col_piv_qr_in_place_scratch, ColPivQrParams,
};
use teamalg::kernels::lu::{lu_in_place, lu_in_place_scratch, LuParams};
use teamalg::kernels::par::Executor;
use teamalg::linalg::{batch, LinalgError};
use teamalg::{Pool, Team};

#[path = "../common/pin.rs"]
mod pin;
use pin::{cpus_of_this_thread, pin_this_thread};
#[path = "../common/spinner.rs"]
#[allow(dead_code)] // its other helpers serve other tests
mod spinner;
use spinner::{busy, Spinner};

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
