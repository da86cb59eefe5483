//! loom models of the executor's park/wake protocols, run on the shipped code through the
//! `sync` facade:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom
//! ```
//!
//! Each model guards one wake. `scripts/loom-mutants.sh` removes that wake from a scratch copy
//! of the tree and checks that the model then fails; the expected failure is written beside
//! each model.

#![cfg(loom)]

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use loom::thread;

use teamalg::loom_api::{Fork, Parker, Queue};

/// A waker sets a flag and unparks; the owner parks until it sees the flag.
///
/// Guards the signal in `Parker::unpark` (`self.cvar.notify_one()`). Without it, loom reports
/// a deadlock: the owner sleeps on the condition variable and nobody signals it (checked with
/// `scripts/loom-mutants.sh parker`).
#[test]
fn parker_no_lost_wakeup() {
    loom::model(|| {
        let parker = Arc::new(Parker::new());
        let flag = Arc::new(AtomicBool::new(false));
        let waker = {
            let (parker, flag) = (parker.clone(), flag.clone());
            thread::spawn(move || {
                flag.store(true, Release);
                parker.unpark();
            })
        };
        while !flag.load(Acquire) {
            parker.park();
        }
        waker.join().unwrap();
    });
}

/// A token left by an early `unpark` makes the next `park` return (no sleep, no loss).
#[test]
fn parker_token_is_kept() {
    loom::model(|| {
        let parker = Arc::new(Parker::new());
        let waker = {
            let parker = parker.clone();
            thread::spawn(move || parker.unpark())
        };
        waker.join().unwrap();
        parker.park(); // must not block: the token is there
    });
}

/// The fork claim protocol: an owner queues a fork of two jobs that two helpers may join;
/// everyone claims, the owner unlinks and sleeps until the fork settles. Every job runs once
/// and the owner wakes.
///
/// Guards the wake in `Fork::detach` (`(*owner).unpark()`, by the last helper to leave).
/// Without it, loom reports a deadlock: the owner parks while a helper still holds the fork
/// and nobody wakes it (checked with `scripts/loom-mutants.sh fork`).
#[test]
fn fork_two_claimers() {
    loom::model(|| {
        let queue = Arc::new(Queue::new());
        let owner = Arc::new(Parker::new());
        let ran = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let helpers: Vec<_> = (0..2)
            .map(|_| {
                let queue = queue.clone();
                thread::spawn(move || {
                    if let Some(b) = queue.attach() {
                        // SAFETY: attached, so the fork is alive until `detach`.
                        unsafe { (*b).run_jobs() };
                        // SAFETY: attached above; last access.
                        unsafe { Fork::detach(b) };
                    }
                })
            })
            .collect();
        {
            let r = ran.clone();
            let job = move |i: usize| {
                r[i].fetch_add(1, Relaxed);
            };
            let fork = Fork::new(2, 2, &owner, &job, 0);
            // SAFETY: the fork is unlinked and settled before this block ends.
            unsafe { queue.push(&fork) };
            fork.run_jobs();
            queue.unlink(&fork);
            while !fork.settled() {
                owner.park();
            }
        }
        for h in helpers {
            h.join().unwrap();
        }
        assert_eq!(ran[0].load(Relaxed), 1);
        assert_eq!(ran[1].load(Relaxed), 1);
    });
}

/// An owner that claims nothing (`install`): it must not return before the one helper has
/// claimed, run and left. Guards the same wake as `fork_two_claimers`, and the order of the
/// two reads in `Fork::settled` (reading `attached` first lets the owner return while the
/// helper still runs; loom then finds the job not yet run).
#[test]
fn fork_owner_waits_for_its_only_helper() {
    loom::model(|| {
        let queue = Arc::new(Queue::new());
        let owner = Arc::new(Parker::new());
        let ran = Arc::new(AtomicUsize::new(0));
        let helper = {
            let queue = queue.clone();
            thread::spawn(move || {
                loop {
                    if let Some(b) = queue.attach() {
                        // SAFETY: attached, so the fork is alive until `detach`.
                        unsafe { (*b).run_jobs() };
                        // SAFETY: attached above; last access.
                        unsafe { Fork::detach(b) };
                        return;
                    }
                    thread::yield_now();
                }
            })
        };
        {
            let r = ran.clone();
            let job = move |_: usize| {
                r.fetch_add(1, Relaxed);
            };
            let fork = Fork::new(1, 1, &owner, &job, 0);
            // SAFETY: the helper's attachment unlinks the fork, and the owner waits until it
            // has left.
            unsafe { queue.push(&fork) };
            while !fork.settled() {
                owner.park();
            }
            assert_eq!(
                ran.load(Relaxed),
                1,
                "the owner returned before the job ran"
            );
        }
        helper.join().unwrap();
    });
}

use teamalg::loom_api::{Participant, Roster, Section, Slot};

/// The participants' parkers of a modelled section (0 is the leader).
struct Parkers(Vec<Parker>);

impl Roster for Parkers {
    fn parker(&self, i: usize) -> &Parker {
        &self.0[i]
    }
}

fn parkers(n: usize) -> Arc<Parkers> {
    Arc::new(Parkers((0..n).map(|_| Parker::new()).collect()))
}

/// Runs `job` as a section of `width` on `width - 1` member threads and the calling leader.
fn run_section(
    width: usize,
    job: &(dyn Fn(Participant<'_>) + Sync),
) -> Option<Box<dyn std::any::Any + Send>> {
    let roster = parkers(width);
    let section = Section::new(width, job, &*roster, &roster.0[0], 0);
    let addr = &section as *const Section<'_> as usize;
    let members: Vec<_> = (1..width)
        .map(|i| {
            thread::spawn(move || {
                // SAFETY: the leader joins (waits for every member's last access) before the
                // section goes away.
                unsafe { Section::run_member(addr as *const Section<'static>, i) }
            })
        })
        .collect();
    section.run_share(0);
    section.join(&roster.0[0], false);
    let panic = section.take_panic();
    for m in members {
        m.join().unwrap();
    }
    panic
}

/// A leader asleep in its join is woken by the last of its two members.
///
/// Guards the leader's unpark in `Section::run_member`. Without it loom reports a deadlock
/// (checked with `scripts/loom-mutants.sh join`).
#[test]
fn section_join_woken_by_the_last_of_two_members() {
    loom::model(|| {
        let ran = Arc::new([
            AtomicUsize::new(0),
            AtomicUsize::new(0),
            AtomicUsize::new(0),
        ]);
        let r = ran.clone();
        let panic = run_section(3, &move |p: Participant<'_>| {
            r[p.index()].fetch_add(1, Relaxed);
        });
        assert!(panic.is_none());
        for r in ran.iter() {
            assert_eq!(r.load(Relaxed), 1);
        }
    });
}

/// Two consecutive barrier rounds: after each, both participants see the other's write.
///
/// Guards the last arrival's wake in `Section::barrier`. Without it loom reports a deadlock
/// (checked with `scripts/loom-mutants.sh barrier`).
#[test]
fn section_two_barrier_rounds() {
    loom::model(|| {
        let cells = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let c = cells.clone();
        let panic = run_section(2, &move |p: Participant<'_>| {
            let (me, other) = (p.index(), 1 - p.index());
            c[me].store(1, Relaxed);
            p.barrier();
            assert!(c[other].load(Relaxed) >= 1);
            c[me].store(2, Relaxed);
            p.barrier();
            assert_eq!(c[other].load(Relaxed), 2);
        });
        assert!(panic.is_none());
    });
}

/// A panic in the leader's share cancels the section and wakes the member asleep at a barrier;
/// the join completes and the panic is kept for the leader.
///
/// Guards the wake in `Section::cancel`. Without it loom reports a deadlock (checked with
/// `scripts/loom-mutants.sh cancel`).
#[test]
fn section_cancellation_wakes_a_barrier_sleeper() {
    std::panic::set_hook(Box::new(|_| {}));
    loom::model(|| {
        // The leader fails; the member may be asleep at the barrier, and only the
        // cancellation can wake it (the leader's own wake-ups come from the join).
        let panic = run_section(2, &|p: Participant<'_>| {
            if p.index() == 0 {
                panic!("leader fails");
            }
            p.barrier();
            unreachable!("the barrier was cancelled");
        });
        let msg = panic.expect("the leader's panic is kept");
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"leader fails"));
    });
    let _ = std::panic::take_hook();
}

/// A member thread's loop on its slot, as in the pool's worker loop: take a share, else sleep.
/// Returns how many times it woke from a real park.
fn member_loop(slot: &Slot, parker: &Parker, sleepers: &AtomicUsize) -> usize {
    let mut seen = 0;
    let mut woke = 0;
    loop {
        if let Some(share) = slot.take_share(&mut seen) {
            if let Some((section, index)) = share {
                // SAFETY: published to this slot and claimed by us; the leader waits for us.
                unsafe { Section::run_member(section, index) };
            }
            return woke;
        }
        if slot.sleep(parker, sleepers, seen, || false).parked() {
            woke += 1;
        }
    }
}

/// A publish racing a member that is going to sleep: the member runs its share.
///
/// Guards the unpark in `Slot::publish`. Without it loom reports a deadlock (checked with
/// `scripts/loom-mutants.sh publish`).
#[test]
fn slot_publish_races_member_sleep() {
    loom::model(|| {
        let roster = parkers(2);
        let slot = Arc::new(Slot::new());
        let sleepers = Arc::new(AtomicUsize::new(0));
        slot.set_parker(&roster.0[1]);
        let member = {
            let (roster, slot, sleepers) = (roster.clone(), slot.clone(), sleepers.clone());
            thread::spawn(move || member_loop(&slot, &roster.0[1], &sleepers))
        };
        let ran = AtomicUsize::new(0);
        let job = |p: Participant<'_>| {
            ran.fetch_add(p.index() + 1, Relaxed);
        };
        let section = Section::new(2, &job, &*roster, &roster.0[0], 0);
        let woke = slot.publish(&section, 1, &sleepers);
        section.run_share(0);
        section.join(&roster.0[0], woke);
        assert_eq!(ran.load(Relaxed), 3);
        member.join().unwrap();
    });
}

/// Publishing to one slot leaves another slot's sleeping member asleep.
///
/// Guards the unpark in `Slot::publish` too (without it the addressed member never wakes:
/// deadlock, checked with `scripts/loom-mutants.sh publish-one`); the assertion checks that the
/// other member was not woken.
#[test]
fn slot_publish_wakes_only_its_slot() {
    loom::model(|| {
        let roster_a = parkers(2);
        let roster_b = parkers(2);
        let (a, b) = (Arc::new(Slot::new()), Arc::new(Slot::new()));
        let sleepers = Arc::new(AtomicUsize::new(0));
        a.set_parker(&roster_a.0[1]);
        b.set_parker(&roster_b.0[1]);
        let spawn = |slot: &Arc<Slot>, roster: &Arc<Parkers>| {
            let (slot, roster, sleepers) = (slot.clone(), roster.clone(), sleepers.clone());
            thread::spawn(move || member_loop(&slot, &roster.0[1], &sleepers))
        };
        let (ma, mb) = (spawn(&a, &roster_a), spawn(&b, &roster_b));
        let b_woke = Arc::new(AtomicUsize::new(0));
        let job = |_: Participant<'_>| {};
        {
            let section = Section::new(2, &job, &*roster_a, &roster_a.0[0], 0);
            let woke = a.publish(&section, 1, &sleepers);
            section.run_share(0);
            section.join(&roster_a.0[0], woke);
        }
        ma.join().unwrap();
        // B has not been published to: it must still be waiting, never woken.
        {
            let section = Section::new(2, &job, &*roster_b, &roster_b.0[0], 0);
            let woke = b.publish(&section, 1, &sleepers);
            section.run_share(0);
            section.join(&roster_b.0[0], woke);
        }
        b_woke.store(mb.join().unwrap(), Relaxed);
        assert!(b_woke.load(Relaxed) <= 1, "B woke before its own publish");
    });
}

/// A warm-up wake of a member that announced its sleep: the member leaves its sleep.
///
/// Guards the unpark in `Slot::wake`. Without it loom reports a deadlock: the member parks and
/// nobody unparks it (checked with `scripts/loom-mutants.sh warm`).
#[test]
fn slot_wake_ends_member_sleep() {
    loom::model(|| {
        let roster = parkers(1);
        let slot = Arc::new(Slot::new());
        let sleepers = Arc::new(AtomicUsize::new(0));
        slot.set_parker(&roster.0[0]);
        let member = {
            let (roster, slot, sleepers) = (roster.clone(), slot.clone(), sleepers.clone());
            thread::spawn(move || slot.sleep(&roster.0[0], &sleepers, 0, || false))
        };
        // A warm-up is best effort (a wake it misses costs time, not correctness: the publish
        // wakes the member then), so the model retries until it finds the announced sleep.
        while !slot.wake(&sleepers) {
            thread::yield_now();
        }
        member.join().unwrap();
        assert_eq!(sleepers.load(Relaxed), 0);
    });
}

/// A leader done with its share claims the share of a member that has not started and runs it;
/// the member that arrives later leaves the section alone. Every share runs exactly once.
///
/// Guards the claim in `Slot::take_share`. Without it (the worker takes every share it sees)
/// the member runs a share the leader already ran, and the count fails (checked with
/// `scripts/loom-mutants.sh steal`).
#[test]
fn slot_leader_steals_a_share_once() {
    loom::model(|| {
        let roster = parkers(2);
        let slot = Arc::new(Slot::new());
        let sleepers = Arc::new(AtomicUsize::new(0));
        slot.set_parker(&roster.0[1]);
        let ran = Arc::new(AtomicUsize::new(0));
        let runs = Arc::new(AtomicUsize::new(0));
        let member = {
            let (roster, slot, sleepers) = (roster.clone(), slot.clone(), sleepers.clone());
            thread::spawn(move || member_loop(&slot, &roster.0[1], &sleepers))
        };
        {
            let (ran, runs) = (ran.clone(), runs.clone());
            let job = move |p: Participant<'_>| {
                ran.fetch_add(p.index() + 1, Relaxed);
                runs.fetch_add(1, Relaxed);
            };
            let section = Section::new(2, &job, &*roster, &roster.0[0], 0);
            let woke = slot.publish(&section, 1, &sleepers);
            section.run_share(0);
            if !section.done() && slot.steal() {
                section.run_stolen(1);
            }
            section.join(&roster.0[0], woke);
            // The section lives until the member is gone, so a member that wrongly runs a
            // stolen share is counted rather than touching freed memory.
            member.join().unwrap();
        }
        assert_eq!((ran.load(Relaxed), runs.load(Relaxed)), (3, 2));
    });
}

/// An idle worker going to sleep races a caller that queues a fork and wakes idle workers
/// (`Slot::sleep` with the queue as its condition against `wake_for_queue`). The caller's
/// fork is one job it does not claim itself (as `install`), so the worker must end up
/// running it: either its re-check sees the queued fork, or the caller sees its flag and
/// wakes it.
///
/// Guards the unpark in `wake_for_queue`. Without it loom reports a deadlock: the worker
/// sleeps with its flag raised and the caller waits for a job nobody runs (checked with
/// `scripts/loom-mutants.sh idle-wake`). It also guards the two `SeqCst` fences the race is
/// decided by: without the caller's (`idle-fence`) or the sleeper's (`idle-fence-sleeper`),
/// loom finds an order in which the caller misses the flag and the worker misses the fork,
/// and reports the deadlock.
#[test]
fn idle_worker_woken_for_queued_work() {
    use teamalg::loom_api::wake_for_queue;
    loom::model(|| {
        let queue = Arc::new(Queue::new());
        let slot = Arc::new(Slot::new());
        let sleepers = Arc::new(AtomicUsize::new(0));
        let worker_parker = Arc::new(Parker::new());
        slot.set_parker(&worker_parker);
        let worker = {
            let (queue, slot, sleepers, parker) = (
                queue.clone(),
                slot.clone(),
                sleepers.clone(),
                worker_parker.clone(),
            );
            thread::spawn(move || {
                loop {
                    if let Some(b) = queue.attach() {
                        // SAFETY: attached, so the fork is alive until `detach`.
                        unsafe { (*b).run_jobs() };
                        // SAFETY: attached above; last access.
                        unsafe { Fork::detach(b) };
                        return;
                    }
                    slot.sleep(&parker, &sleepers, 0, || queue.has_work());
                }
            })
        };
        let owner = Parker::new();
        let ran = AtomicUsize::new(0);
        {
            let job = |_: usize| {
                ran.fetch_add(1, Relaxed);
            };
            let fork = Fork::new(1, 1, &owner, &job, 0);
            // SAFETY: the worker's attachment unlinks the fork, and the owner waits until it
            // has left.
            unsafe { queue.push(&fork) };
            wake_for_queue([&*slot], &sleepers, 1);
            while !fork.settled() {
                owner.park();
            }
        }
        assert_eq!(ran.load(Relaxed), 1);
        worker.join().unwrap();
    });
}
