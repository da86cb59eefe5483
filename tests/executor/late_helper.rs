//! A plain token whose helpers the OS does not run: the pool's workers are bound to a CPU that a
//! real-time spinner holds, the caller runs on another. The caller runs every chunk itself
//! (the chunks are claimed, so none waits for a helper), and the fork is recorded in the
//! pool's live view as a section that gave up its parallelism, so the gate's next decision on a
//! plain token of that pool sees it (`Decision::late`) and keeps a region serial that pays on a
//! quiet machine. (Its own binary: it moves its threads between CPUs.)

#![cfg(target_os = "linux")]

use std::time::Duration;

use teamalg::gates::Family;
use teamalg::gates::trace::{self, Reason};
use teamalg::kernels::gate::{self, Region, Scope};
use teamalg::{Exec, Pool};

#[path = "../common/pin.rs"]
mod pin;
use pin::{cpus_of_this_thread, pin_this_thread};
#[path = "../common/spinner.rs"]
mod spinner;
use spinner::{Spinner, caller_runs_every_chunk};

/// A region that pays on a quiet machine: a few hundred microseconds in several sections.
fn region() -> Region {
    Region {
        site: "test/late-helper",
        dims: [0; 3],
        units: 2.0e7,
        family: Family::Gemm,
        sections: 8,
        scope: Scope::Section,
        call_units: 2.0e7,
    }
}

#[test]
fn helpers_that_cannot_run_turn_a_plain_token_serial() {
    let cpus = cpus_of_this_thread();
    assert!(
        cpus.len() >= 2,
        "this test needs two CPUs (CI has two); found {cpus:?}"
    );
    let (here, there) = (cpus[0], cpus[1]);
    // The pool's CPU set is its builder's: its workers are bound to `there` alone.
    pin_this_thread(there);
    let pool = Pool::builder().threads(2).build().expect("pool");
    pin_this_thread(here);
    let token = Exec::new(&pool, 2).expect("token");
    // While nothing holds `there`, the region goes parallel.
    let (w, seen) = trace::collect(|| gate::width::<f64>(&token, region(), None));
    assert_eq!(w, 2, "quiet: {:?}", seen[0]);

    let spinner = Spinner::hold(there);
    // Not a speed check: a caller that waited for a helper would wait until the kernel's
    // real-time budget runs out (950 ms of every second).
    let took = caller_runs_every_chunk(&token, 6, Duration::from_micros(400));
    assert!(
        took < Duration::from_millis(500),
        "the caller waited for helpers that could not run: 6 rounds of 3.2 ms took {took:?}"
    );

    let (w, seen) = trace::collect(|| gate::width::<f64>(&token, region(), None));
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
