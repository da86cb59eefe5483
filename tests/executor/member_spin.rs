//! When a team member spins and when it sleeps, told by the process-wide wait counters (so the
//! scenarios run one after another in one test). The teams spin "for ever" (`u32::MAX` polls,
//! about 100 s on the development VM), so any sleep seen here is one the protocol chose.

use std::thread;
use std::time::Duration;

use teamalg::wait::counters;
use teamalg::{Pool, Team};

/// A team whose member spins "for ever". No live view: on a busy host the contention signal
/// would send its waits to sleep (`docs/gates.md`, "Contention"), a sleep this test does not
/// count on; the rules here are the leader's moves, cedes and rests.
fn spinning_team() -> Team {
    Pool::builder()
        .threads(2)
        .spin_polls(u32::MAX)
        .live_view(false)
        .build()
        .unwrap()
        .into_team(2)
        .unwrap()
}

#[test]
fn members_spin_only_while_their_leader_may_come_back() {
    if teamalg::available_cpus() < 2 {
        // A team of two on one CPU is throttled: its members never spin long.
        eprintln!("skipped: needs two CPUs");
        return;
    }
    // 1. A member whose leader goes on to lead another team stops spinning at once (without
    //    that, a held team's member kept a CPU from the team its leader built per call; here
    //    it would spin for about 100 s). A warm-up then finds it asleep.
    let held = spinning_team();
    // A few sections first: a member that started on the leader's CPU is moved off it.
    held.exec(2)
        .team(|t| (0..20).for_each(|_| t.run(|_| {})))
        .unwrap();
    let before = counters::snapshot();
    let other = spinning_team();
    other.exec(2).team(|t| t.run(|_| {})).unwrap();
    thread::sleep(Duration::from_millis(50));
    drop(other);
    // The other team's worker goes back to the reserve, where it spins a while: an awake
    // worker beyond the CPUs, which would throttle the held member's spin (`SpinPlace`) and
    // send it to sleep in step 2. Retire it, so step 2 sees only the held team.
    teamalg::reserve::trim();
    let d = counters::snapshot() - before;
    assert!(
        d.leaves >= 1,
        "no member left for its leader's other team: {d:?}"
    );
    let before = counters::snapshot();
    assert_eq!(
        held.warm(2),
        1,
        "the held team's member kept spinning after its leader moved on"
    );

    // 2. Warmed up, it spins again (a fresh wait, not straight back to sleep), and the next
    //    section needs no wake.
    thread::sleep(Duration::from_millis(50));
    held.exec(2).team(|t| t.run(|_| {})).unwrap();
    let d = counters::snapshot() - before;
    // On a busy host the member may land on its leader's CPU and cede it (rule 2 of
    // `docs/waiting.md`): a sleep, and a wake for the section, that the protocol chose, at
    // most once for the one section (and once in the gap before it). Any other sleep or wake
    // is a failure.
    assert!(d.cedes <= 2, "the member ceded {} times: {d:?}", d.cedes);
    assert_eq!(
        d.member_sleeps,
        1 + d.cedes,
        "the warm-up's wake ends one sleep, a cede adds one: {d:?}"
    );
    assert_eq!(
        d.wakes,
        1 + d.cedes,
        "only the warm-up woke the member (and the section one that ceded): {d:?}"
    );

    // 3. A leader that rests its team (a reduction that took its sections back to the
    //    caller) lets the member sleep at once: without it the member would spin for about
    //    100 s here. The next section wakes it and runs.
    held.exec(2).team(|t| t.run(|_| {})).unwrap();
    let before = counters::snapshot();
    held.rest();
    thread::sleep(Duration::from_millis(50));
    let d = counters::snapshot() - before;
    assert!(d.leaves >= 1, "the member kept spinning after rest: {d:?}");
    assert_eq!(held.warm(2), 1, "the member was not asleep after rest");
    let ran = std::sync::atomic::AtomicUsize::new(0);
    held.exec(2)
        .team(|t| {
            t.run(|_| {
                ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            })
        })
        .unwrap();
    assert_eq!(ran.into_inner(), 2);
}
