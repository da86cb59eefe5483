//! A warm-up after the leader changed CPUs keeps its member awake. The warm-up moves a
//! sleeping member off the leader's CPU of now; the member must then not find itself "on its
//! leader's CPU" by the CPU the leader had at its last section, or it cedes that CPU and goes
//! straight back to sleep (rule 2 of `docs/waiting.md`), and a stream of small calls after a
//! pause, whose warm-ups are all the wake it gets, stays serial. (Its own binary: it moves its
//! threads between CPUs.)

#![cfg(target_os = "linux")]

use std::thread;
use std::time::Duration;

use teamalg::Pool;
use teamalg::kernels::par::Executor;
use teamalg::wait::counters;

#[path = "../common/pin.rs"]
mod pin;
use pin::{cpus_of_this_thread, pin_this_thread};

#[test]
fn a_member_warmed_from_another_cpu_stays_awake() {
    let cpus = cpus_of_this_thread();
    assert!(
        cpus.len() >= 2,
        "this test needs two CPUs (CI has two); found {cpus:?}"
    );
    let (first, second) = (cpus[0], cpus[1]);
    // The member spins "for ever" (about 100 s): any sleep seen here is one the protocol chose.
    // No live view: on a busy host the contention signal would send its waits to sleep, a rule
    // this test is not about.
    let team = Pool::builder()
        .threads(2)
        .spin_polls(u32::MAX)
        .live_view(false)
        .build()
        .unwrap()
        .into_team(2)
        .unwrap();
    // Sections led from `first`: the member is moved off it, to `second`.
    pin_this_thread(first);
    team.exec(2)
        .team(|t| (0..20).for_each(|_| t.run(|_| {})))
        .unwrap();
    // The leader rests (as a reduction that took its sections back does): the member sleeps.
    team.rest();
    thread::sleep(Duration::from_millis(50));
    assert!(
        Executor::wake_cost(&team) > Duration::ZERO,
        "the member did not sleep after rest"
    );

    // The leader now runs on `second`, where the member slept, and warms its team: the member
    // is moved to `first` and must spin there.
    pin_this_thread(second);
    let before = counters::snapshot();
    assert_eq!(team.warm(2), 1, "the warm-up woke the member");
    thread::sleep(Duration::from_millis(50));
    let d = counters::snapshot() - before;
    assert_eq!(
        d.cedes, 0,
        "the member ceded a CPU its leader had left: {d:?}"
    );
    assert_eq!(
        Executor::wake_cost(&team),
        Duration::ZERO,
        "the warmed member went back to sleep: {d:?}"
    );
}
