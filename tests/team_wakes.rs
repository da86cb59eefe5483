//! A narrow section on a wide team wakes only the members it addresses. Its own binary: it
//! reads the process-wide wait counters.

use std::thread;
use std::time::Duration;

use teamalg::wait::counters;
use teamalg::Pool;

#[test]
fn narrow_sections_do_not_wake_unaddressed_members() {
    // Tiny spin budget: members sleep a few microseconds after each section.
    let team = Pool::builder()
        .threads(3)
        .spin_polls(10)
        .build()
        .unwrap()
        .into_team(3)
        .unwrap();
    team.exec(3).broadcast(|_| {}).unwrap();
    thread::sleep(Duration::from_millis(20));
    let before = counters::snapshot();
    const SECTIONS: u64 = 30;
    for _ in 0..SECTIONS {
        team.exec(2).broadcast(|_| {}).unwrap(); // leader and the first member only
        thread::sleep(Duration::from_millis(3)); // the member goes back to sleep
    }
    let d = counters::snapshot() - before;
    // Each section wakes its one member (and perhaps the napping leader); waking the
    // unaddressed member too would add one more per section.
    assert!(d.member_sleeps >= SECTIONS / 2, "{d:?}");
    assert!(
        d.wakes <= 2 * SECTIONS,
        "unaddressed members were woken: {d:?}"
    );
    assert!(d.wakes >= SECTIONS / 2, "{d:?}");
}
