//! A narrow section on a wide team wakes only the members it addresses. Its own binary: it
//! reads the process-wide wait counters and the members' own scheduler counts.

use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use teamalg::Pool;
use teamalg::wait::counters;

/// Times thread `tid` of this process gave up its CPU to wait (`voluntary_ctxt_switches`):
/// every sleep of a worker adds one, and so every wake that ends one.
#[cfg(target_os = "linux")]
fn waits_of(tid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .map(|v| v.trim().parse().unwrap())
        .unwrap()
}

#[cfg(target_os = "linux")]
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
    // Each participant's thread, by index: 1 is the narrow sections' member, 2 the one they
    // do not address.
    let tids = Mutex::new([0i32; 3]);
    team.exec(3)
        .broadcast(|i| {
            // SAFETY: `gettid` has no preconditions.
            tids.lock().unwrap()[i] = unsafe { libc::gettid() };
        })
        .unwrap();
    let tids = tids.into_inner().unwrap();
    const SECTIONS: u64 = 30;
    // The scenario needs the addressed member to fall asleep between sections; on a loaded host
    // it may not get a CPU to do so before the next section, so rounds are run until it has
    // slept SECTIONS / 2 times in all (events counted, not times). The property itself is
    // checked in every round.
    let (mut slept, mut wakes, mut member_waits) = (0, 0, 0);
    for round in 0..40 {
        thread::sleep(Duration::from_millis(20));
        let before = counters::snapshot();
        let (member, unaddressed) = (waits_of(tids[1]), waits_of(tids[2]));
        for _ in 0..SECTIONS {
            team.exec(2).broadcast(|_| {}).unwrap(); // leader and the first member only
            thread::sleep(Duration::from_millis(3)); // the member goes back to sleep
        }
        let d = counters::snapshot() - before;
        let member = waits_of(tids[1]) - member;
        let unaddressed = waits_of(tids[2]) - unaddressed;
        // The unaddressed member sleeps through all of it: woken once per section, it would
        // wait again once per section. (A few for the scheduler's own reasons are allowed.)
        assert!(
            unaddressed <= 3,
            "round {round}: the unaddressed member waited {unaddressed} times in {SECTIONS} \
             sections (the addressed one {member}): it was woken; {d:?}"
        );
        slept += d.member_sleeps;
        wakes += d.wakes;
        member_waits += member;
        if slept >= SECTIONS / 2 {
            // Each section that found the member asleep woke it, and it waited again after.
            assert!(wakes >= SECTIONS / 2, "{wakes} wakes for {slept} sleeps");
            // (A sleep whose wake came before the member blocked is no wait of the OS's.)
            assert!(
                member_waits >= slept / 2,
                "the member waited {member_waits} times for {slept} sleeps"
            );
            return;
        }
        eprintln!(
            "round {round}: the member slept {} times of {SECTIONS} ({slept} in all)",
            d.member_sleeps
        );
    }
    panic!("the member slept {slept} times between sections in forty rounds");
}
