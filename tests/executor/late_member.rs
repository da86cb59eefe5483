//! A member the OS does not run: the team's member is bound to a CPU that a real-time spinner
//! holds, the leader runs on another. The leader must not wait for the member: after its own
//! share it runs the member's unstarted share itself (`dispatch::run_on`, `STEAL_AFTER`), the
//! results keep their bits, and the live view records the loss, so the gate's next decision
//! sees it (`Decision::late`). (Its own binary: it moves its threads between CPUs.)

#![cfg(target_os = "linux")]

use std::time::Duration;

use faer::{Accum, Mat, Par};
use teamalg::Pool;
use teamalg::gates::trace::{self, Reason};
use teamalg::gates::{Family, ParThreshold};
use teamalg::kernels::gate::{self, Region, Scope};
use teamalg::kernels::gemm::{GemmParams, matmul};
use teamalg::kernels::par::Executor;

#[path = "../common/pin.rs"]
mod pin;
use pin::{cpus_of_this_thread, pin_this_thread};
#[path = "../common/spinner.rs"]
mod spinner;
use spinner::{Spinner, busy, caller_runs_every_chunk};

#[test]
fn a_member_that_cannot_run_leaves_its_work_to_the_leader() {
    let cpus = cpus_of_this_thread();
    assert!(
        cpus.len() >= 2,
        "this test needs two CPUs (CI has two); found {cpus:?}"
    );
    let (here, there) = (cpus[0], cpus[1]);
    // The pool's CPU set is its builder's: the member is bound to `there` alone.
    pin_this_thread(there);
    let team = Pool::builder()
        .threads(2)
        .build()
        .expect("pool")
        .into_team(2)
        .expect("team");
    pin_this_thread(here);
    // A first section while nothing holds `there`: the member is hot.
    Executor::run(&team, 2, &|_| busy(Duration::from_micros(50)));

    let spinner = Spinner::hold(there);
    // Not a speed check: a leader that waits for the member waits until the kernel's
    // real-time budget runs out (950 ms of every second), 100 times the rounds' work.
    let took = caller_runs_every_chunk(&team, 8, Duration::from_micros(100));
    assert!(
        took < Duration::from_millis(500),
        "the leader waited for a member that could not run: 8 rounds of 0.8 ms took {took:?}"
    );

    // A GEMM forced parallel keeps the bits of faer's serial product.
    let n = 192;
    let a = Mat::<f64>::from_fn(n, n, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0 + 0.25);
    let b = Mat::<f64>::from_fn(n, n, |i, j| ((i * 5 + j) % 13) as f64 * 0.5 - 3.0);
    let mut ours = Mat::<f64>::zeros(n, n);
    let forced = GemmParams {
        threshold: Some(ParThreshold::Fixed(0)),
    };
    matmul(
        ours.as_mut(),
        Accum::Replace,
        a.as_ref(),
        b.as_ref(),
        1.0,
        &team,
        forced,
    );
    let mut want = Mat::<f64>::zeros(n, n);
    faer::linalg::matmul::matmul(
        want.as_mut(),
        Accum::Replace,
        a.as_ref(),
        b.as_ref(),
        1.0,
        Par::Seq,
    );
    assert!(ours == want, "the same bits as faer serial");

    // The live view saw the loss: the gate now weighs it, and a region that pays on a quiet
    // machine (a few hundred microseconds, several sections) runs serially.
    let region = Region {
        site: "test/late",
        dims: [0; 3],
        units: 2.0e7,
        family: Family::Gemm,
        sections: 8,
        scope: Scope::Section,
        call_units: 2.0e7,
    };
    let (w, seen) = trace::collect(|| gate::width::<f64>(&team, region, None));
    drop(spinner);
    let d = &seen[0];
    assert!(
        d.late > Duration::ZERO,
        "the live view saw no lateness: {d:?}"
    );
    assert_eq!(w, 1, "{d:?}");
    assert!(
        matches!(d.reason, Reason::Late | Reason::WakeNotPaid),
        "{:?}",
        d.reason
    );
}
